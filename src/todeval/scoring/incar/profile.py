"""How In-Car corpus scores are shown: score files (``todeval score incar -o``) and generation
runs (``todeval run incar-turns``)."""

from __future__ import annotations

from todeval.results.profile import BenchmarkProfile
from todeval.scoring._corpus_profile import corpus_profile as _profile

_METRICS = (
    ("match", "Match"),
    ("succ_f1", "SuccF1"),
    ("bleu", "BLEU (modern, sacrebleu)"),
    ("combined", "Combined (modern)"),
    ("bleu_lineage", "BLEU (lineage)"),
    ("combined_lineage", "Combined (lineage)"),
)
_NOTES = (
    "Scores on the 0-100 scale; Combined = (Match + SuccF1) / 2 + BLEU.",
    "Lineage BLEU and Combined are computed as GALAXY's KvretEvaluator computes them (set "
    "these beside published tables); modern BLEU is sacrebleu 13a on normalized text.",
)


def corpus_profile(benchmark: str, *, run: bool) -> BenchmarkProfile:
    return _profile(benchmark, "incar", _METRICS, run=run, group_noun="domain", notes=_NOTES)


SCORE_PROFILE = corpus_profile("incar", run=False)
