"""Per-dialogue In-Car statistics: Match, SuccF1 slot types and BLEU n-gram counts.

Rules (the GALAXY/SPACE-3 form of the lineage's evaluator, re-implemented):

* **Match** -- the generated constraints of the last turn whose generated response contains
  ``[value`` (else of the last given turn) against the gold constraints of the last gold turn
  whose response contains ``[value``. Dialogues without such a gold turn, or whose gold
  constraints there are empty after normalization, are skipped. Normalization removes filler
  words (:data:`FILLER_WORDS`, as substrings) and keeps a value only if its slot is informable
  and the remaining text is a lexicon entity. The value sets match when each value of one side
  is :func:`similar` to some value of the other, ignoring unmatched values that contain one of
  :data:`IGNORABLE_PARTS`; two empty sets match, an empty and a non-empty one do not.
* **SuccF1** -- per dialogue, the set of slot types of ``[value_X]`` tokens (except
  ``[value_name]``) in the responses as the lineage cleans them (:func:`lineage_text`: wrapped
  and re-delexicalized, predictions taken as given, not re-normalized), the type being the
  first word of ``X`` (``poi_type`` → ``poi``, ``weather_attribute`` → ``weather``);
  true/false positives and false negatives are summed over dialogues (micro P, R, F1).
* **BLEU** -- sufficient statistics per turn, both for sacrebleu (13a, defaults) on the
  normalized responses and for the lineage's corpus BLEU (GALAXY ``KvretEvaluator``: its own
  BLEU-4 over whitespace tokens of :func:`lineage_text`, one reference per hypothesis, no
  smoothing beyond its 1e-7 terms; :func:`lineage_bleu`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from sacrebleu.metrics.bleu import BLEU

from todeval.scoring.incar._delex import redelexicalize
from todeval.scoring.incar._ontology import ALL_INFORMABLE, Lexicon

FILLER_WORDS: tuple[str, ...] = (
    "good",
    "great",
    "quickest",
    "shortest",
    "route",
    "week",
    "fastest",
    "nearest",
    "next",
    "closest",
    "way",
    "mile",
    "activity",
    "restaurant",
    "appointment",
)
IGNORABLE_PARTS: tuple[str, ...] = ("temperature", "week", "est ", "quick", "reminder", "near")
START, END = "<sos_r>", "<eos_r>"  # GALAXY's response tokens
N_BLEU_STATS = 10  # correct 1-4, total 1-4, hypothesis length, reference length


def normalize_state(state: Mapping[str, str], lexicon: Lexicon) -> list[str]:
    """Constraint values that Match compares (filler words removed, known entities only)."""
    values: list[str] = []
    for slot, value in state.items():
        if slot not in ALL_INFORMABLE:
            continue
        for filler in FILLER_WORDS:
            value = " ".join(value.replace(filler, "").split())
        if value in lexicon.entities:
            values.append(value)
    return values


def similar(a: str, b: str) -> bool:
    """Equal, one a substring of the other, or the same first or last word."""
    if a == b or a in b or b in a:
        return True
    wa, wb = a.split(), b.split()
    return bool(wa and wb) and (wa[0] == wb[0] or wa[-1] == wb[-1])


def _covered(values: set[str], others: set[str]) -> bool:
    for value in values:
        if any(similar(value, other) for other in others):
            continue
        if not any(part in value for part in IGNORABLE_PARTS):
            return False
    return True


def same_constraints(generated: Iterable[str], gold: Iterable[str]) -> bool:
    """Loose set equality of two lists of constraint values."""
    gen, ref = set(generated), set(gold)
    if not gen and not ref:
        return True
    if not gen or not ref:
        return False
    return _covered(gen, ref) and _covered(ref, gen)


def match_dialogue(
    gen_responses: Sequence[str],
    gen_states: Sequence[Mapping[str, str]],
    gold_responses: Sequence[str],
    gold_states: Sequence[Mapping[str, str]],
    lexicon: Lexicon,
) -> bool | None:
    """Match of one dialogue; ``None`` when the dialogue does not count."""
    gold_idx = [i for i, r in enumerate(gold_responses) if "[value" in r]
    if not gold_idx:
        return None
    gold = normalize_state(gold_states[gold_idx[-1]], lexicon)
    if not gold:
        return None
    gen_idx = [i for i, r in enumerate(gen_responses) if "[value" in r]
    gen_state = gen_states[gen_idx[-1]] if gen_idx else gen_states[-1]
    return same_constraints(normalize_state(gen_state, lexicon), gold)


def slot_types(responses: Iterable[str]) -> set[str]:
    """SuccF1 slot types of already re-delexicalized responses."""
    types: set[str] = set()
    for response in responses:
        for token in response.split():
            if "[value_" in token and token.endswith("]") and token != "[value_name]":
                parts = token[1:-1].split("_")
                if len(parts) > 1:
                    types.add(parts[1])
    return types


def succ_counts(generated: set[str], gold: set[str]) -> tuple[int, int, int]:
    """True positives, false positives, false negatives of one dialogue's slot types."""
    return len(generated & gold), len(generated - gold), len(gold - generated)


def lineage_text(response: str, lexicon: Lexicon) -> str:
    """A response as the lineage's evaluator sees it (its ``clean`` step, for SuccF1 and BLEU).

    Any ``<sos_r> `` and `` <eos_r>`` already present are removed (GALAXY's tokens; a ``<go_r>``
    is kept as a word, as GALAXY keeps it), the response is wrapped in ``<sos_r>`` … ``<eos_r>``
    and then every lexicon entity still present as words becomes a
    placeholder (on the wrapped text, in lexicon order). The response is not normalized first.
    """
    text = response.replace(f"{START} ", "").replace(f" {END}", "")
    return redelexicalize(f"{START} {text} {END}", lexicon)


def _ngrams(tokens: list[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def lineage_bleu_stats(hypothesis: str, reference: str) -> list[float]:
    """Clipped n-gram matches, n-gram counts and lengths for the lineage BLEU (one turn)."""
    hyp, ref = hypothesis.split(), reference.split()
    correct, total = [], []
    for n in range(1, 5):
        hyp_counts, ref_counts = _ngrams(hyp, n), _ngrams(ref, n)
        total.append(float(sum(hyp_counts.values())))
        correct.append(float(sum(min(c, ref_counts[g]) for g, c in hyp_counts.items())))
    return [*correct, *total, float(len(hyp)), float(len(ref))]


def lineage_bleu(sums: np.ndarray) -> np.ndarray:
    """Lineage corpus BLEU (0-100) from summed statistics, one row per (re)sample.

    Brevity penalty 1 if the hypotheses are longer than the references, else exp(1 - r/c);
    n-gram precisions ``correct / (total + 1e-7) + 1e-7``; uniform weights over 1-4-grams.
    """
    sums = np.atleast_2d(sums)
    correct, total = sums[:, 0:4], sums[:, 4:8]
    hyp_len, ref_len = sums[:, 8], sums[:, 9]
    precisions = correct / (total + 1e-7) + 1e-7
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.where(hyp_len > ref_len, 1.0, np.exp(1.0 - ref_len / np.maximum(hyp_len, 1e-12)))
    score = bp * np.exp(0.25 * np.log(precisions).sum(axis=1)) * 100.0
    return np.where(hyp_len > 0, score, 0.0)


class SacreBleuStats:
    """Per-turn sacrebleu statistics (13a tokenization) and corpus BLEU from their sums."""

    def __init__(self) -> None:
        self._bleu = BLEU(effective_order=True)

    def turn(self, hypothesis: str, reference: str) -> list[float]:
        score = self._bleu.sentence_score(hypothesis, [reference])
        return [
            *map(float, score.counts),
            *map(float, score.totals),
            float(score.sys_len),
            float(score.ref_len),
        ]

    @staticmethod
    def corpus(sums: np.ndarray) -> np.ndarray:
        """sacrebleu corpus BLEU (exp smoothing, as ``corpus_score``) for each row of sums."""
        rows = np.atleast_2d(sums)
        out = np.empty(len(rows))
        for i, row in enumerate(rows):
            correct = [round(x) for x in row[0:4]]
            total = [round(x) for x in row[4:8]]
            score = BLEU.compute_bleu(
                correct, total, round(row[8]), round(row[9]), smooth_method="exp"
            )
            out[i] = score.score
        return out


def prf(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> tuple[np.ndarray, ...]:
    """Micro precision, recall and F1 on a 0-100 scale (the lineage's 1e-8 guards)."""
    precision = tp / (tp + fp + 1e-8)
    recall = tp / (tp + fn + 1e-8)
    score = 2 * precision * recall / (precision + recall + 1e-8)
    return 100.0 * precision, 100.0 * recall, 100.0 * score


def combined(match: np.ndarray, succ_f1: np.ndarray, bleu: np.ndarray) -> np.ndarray:
    """Combined = (Match + SuccF1) × 0.5 + BLEU."""
    return np.asarray((match + succ_f1) * 0.5 + bleu, dtype=float)
