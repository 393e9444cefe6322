"""The text metrics of a scoring pass: Moses normalisation, then corpus BLEU (with per-dialogue
statistics for the bootstrap) and lexical richness. What the forked child computes; plain data
in and out (no pydantic), so it can start before the predictions are validated."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from todeval.scoring.multiwoz._bleu import N_STATS, corpus_bleu, tokenize_13a, turn_statistics
from todeval.scoring.multiwoz._normalize import moses_round_trip
from todeval.scoring.multiwoz._richness import Richness, richness, tokenize


@dataclass(frozen=True)
class TextScores:
    """What the text metrics give: corpus BLEU and per-dialogue BLEU statistics, per-turn
    token counts and the richness figures (each only when asked for)."""

    bleu: float | None
    bleu_stats: list[list[int]]
    lengths: list[list[int]]
    richness: Richness | None


def text_scores(
    texts: Sequence[str],
    turn_texts: Sequence[Sequence[int]],
    references: Callable[[], list[list[str]]],
    *,
    bleu: bool,
    lexical: bool,
) -> TextScores:
    """Moses-normalise ``texts`` (canonicalised responses) and score BLEU and richness.

    ``turn_texts`` gives, per dialogue, the index in ``texts`` of each turn's response;
    ``references`` returns, per dialogue, its 13a-tokenised references (called only for BLEU).
    """
    if not bleu and not lexical:
        return TextScores(bleu=None, bleu_stats=[], lengths=[], richness=None)
    round_trip = moses_round_trip()
    normalized = [round_trip(t) for t in texts]
    corpus = None
    per_dialogue: list[list[int]] = []
    if bleu:
        import numpy as np

        hyp_tokens = [tokenize_13a(t.rstrip()).split() for t in normalized]
        hyps: list[list[str]] = []
        refs: list[list[str]] = []
        bounds = [0]
        for indexes, dialogue_refs in zip(turn_texts, references(), strict=True):
            for i, ref in zip(indexes, dialogue_refs, strict=False):
                hyps.append(hyp_tokens[i])
                refs.append(ref.split())
            bounds.append(len(hyps))
        per_turn = turn_statistics(hyps, refs)
        cumulative = np.vstack([np.zeros((1, N_STATS), dtype=np.int64), per_turn.cumsum(axis=0)])
        sums = cumulative[bounds[1:]] - cumulative[bounds[:-1]]
        per_dialogue = [[int(v) for v in row] for row in sums]
        corpus = corpus_bleu(tuple(int(v) for v in per_turn.sum(axis=0)))
    lengths: list[list[int]] = []
    scores = None
    if lexical:
        tokens = [tokenize(t) for t in normalized]
        lengths = [[len(tokens[i]) for i in indexes] for indexes in turn_texts]
        scores = richness(tokens[i] for indexes in turn_texts for i in indexes)
    return TextScores(bleu=corpus, bleu_stats=per_dialogue, lengths=lengths, richness=scores)
