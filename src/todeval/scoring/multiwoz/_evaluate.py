"""``evaluate``: score a MultiWOZ prediction file or mapping with the standard rules.

Order of work (so that the text metrics can run in a child process meanwhile): as soon as the
file is read, a child is forked that canonicalises the placeholders of the raw responses,
Moses-normalises them and computes BLEU and richness (:func:`text_scores`); the parent
meanwhile validates the predictions (importing pydantic and the result models only then) and
scores Inform/Success, which only look for canonical placeholder words (``NAME``, ``PHONE``,
...) that the Moses round trip never creates or removes, so the parent scores them on the
canonicalised text. The child's result is used only once validation has passed: then the raw
responses are the validated ones; without a child (or if it fails) the same is computed
in-process from the validated predictions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from todeval.errors import UsageError, choice_error
from todeval.scoring.multiwoz._background import BackgroundCall
from todeval.scoring.multiwoz._corpus import CorpusData
from todeval.scoring.multiwoz._database import VenueDatabase
from todeval.scoring.multiwoz._domains import ACTIVE_DOMAIN_MODES, ActiveDomainsMode
from todeval.scoring.multiwoz._io import read_prediction_file, validate_predictions
from todeval.scoring.multiwoz._names import METRICS, Metric
from todeval.scoring.multiwoz._normalize import canonicalize_placeholders
from todeval.scoring.multiwoz._text import TextScores, text_scores

if TYPE_CHECKING:  # pydantic models: imported once the text metrics' child is started
    from todeval.scoring.multiwoz._models import MultiwozResult

DEFAULT_METRICS: tuple[Metric, ...] = METRICS


def parse_metrics(metrics: Iterable[str]) -> list[Metric]:
    """Validated metric names in canonical order (``UsageError`` for unknown ones)."""
    wanted = set()
    for m in metrics:
        if m not in METRICS:
            raise choice_error("metric", m, METRICS)
        wanted.add(m)
    if not wanted:
        raise UsageError(f"no metric selected; choose from {', '.join(METRICS)}")
    return [m for m in METRICS if m in wanted]


def evaluate(
    predictions: Mapping[str, Any] | str | Path,
    *,
    metrics: Iterable[str] = DEFAULT_METRICS,
    active_domains: ActiveDomainsMode = "given",
    corpus: CorpusData | None = None,
    database: VenueDatabase | None = None,
    parallel: bool = False,
    while_waiting: Callable[[], object] | None = None,
) -> MultiwozResult:
    """Score predictions in the community format against the MultiWOZ test set.

    ``predictions`` is a path to a ``.json``/``.json.gz`` file or the parsed mapping
    ``{dialogue_id: [{"response", "state"?, "active_domains"?}, ...]}``. Missing dialogues
    and turns are fine (only given turns count); if any turn lacks a state, the gold
    MultiWOZ 2.2 states are used for every turn. ``active_domains`` chooses where the active
    domains come from (``given``, ``state`` or ``placeholders``). Pass a shared
    ``corpus``/``database`` to reuse loaded data across calls. ``parallel=True`` runs the Moses
    normalisation in a forked child process (POSIX; same results, less wall time).
    ``while_waiting`` is called once after Inform/Success, before the text metrics are
    collected (with ``parallel``, while the child may still be working): a caller can prepare
    what it does next there, e.g. import its modules.

    Raises :class:`~todeval.errors.BadInputError` for malformed predictions and
    :class:`~todeval.errors.UsageError` for unknown options.
    """
    chosen = parse_metrics(metrics)
    if active_domains not in ACTIVE_DOMAIN_MODES:
        raise choice_error("active-domains mode", str(active_domains), ACTIVE_DOMAIN_MODES)
    corpus = corpus if corpus is not None else CorpusData()
    if isinstance(predictions, str | Path):
        source = str(predictions)
        raw = read_prediction_file(predictions)
    else:
        source = "<predictions>"
        raw = predictions
    bleu, lexical = "bleu" in chosen, "richness" in chosen
    text_in_child = parallel and (bleu or lexical) and isinstance(raw, Mapping)
    if text_in_child and bleu:
        # BLEU counts with numpy and a caller's summary needs it too: imported once, here,
        # the forked child inherits it instead of importing it again
        import numpy  # noqa: F401

    def texts_of(dialogues: Mapping[str, Any], response: Callable[[Any], str]) -> TextScores:
        return _text_scores_of(dialogues, response, corpus, bleu=bleu, lexical=lexical)

    job = BackgroundCall(
        lambda: texts_of(raw, lambda turn: turn["response"]),  # the child: raw JSON as read
        parallel=text_in_child,
        in_process=lambda: texts_of(parsed, lambda turn: turn.response),
    )
    try:
        known = {d: len(turns) for d, turns in corpus.booked_domains.items()}
        parsed = validate_predictions(raw, source, known)
        from todeval.scoring.multiwoz._scorer import Scorer

        scorer = Scorer(parsed, chosen, active_domains, corpus, database)
        return scorer.run(source, job, while_waiting)
    finally:
        job.close()


def _text_scores_of(
    dialogues: Mapping[str, Any],
    response: Callable[[Any], str],
    corpus: CorpusData,
    *,
    bleu: bool,
    lexical: bool,
) -> TextScores:
    """:func:`text_scores` of every turn's canonicalised response (``response(turn)``), each
    distinct text normalised once."""
    canonical: dict[str, int] = {}  # raw response -> index of its canonical text
    index: dict[str, int] = {}  # canonical text -> its index in unique
    unique: list[str] = []
    turn_texts: list[list[int]] = []
    for turns in dialogues.values():
        row = []
        for turn in turns:
            text = response(turn)
            i = canonical.get(text)
            if i is None:
                form = canonicalize_placeholders(text)
                i = index.get(form)
                if i is None:
                    i = index[form] = len(unique)
                    unique.append(form)
                canonical[text] = i
            row.append(i)
        turn_texts.append(row)
    ids = list(dialogues)
    return text_scores(
        unique,
        turn_texts,
        lambda: [corpus.tokenized_references[d] for d in ids],
        bleu=bleu,
        lexical=lexical,
    )
