"""How MultiWOZ corpus scores are shown: score files (``todeval score multiwoz -o``) and
generation runs (``todeval run multiwoz-turns``)."""

from __future__ import annotations

from todeval.results.profile import BenchmarkProfile
from todeval.scoring._corpus_profile import corpus_profile as _profile

_METRICS = (
    ("inform", "Inform"),
    ("success", "Success"),
    ("bleu", "BLEU"),
    ("combined", "Combined"),
)
_NOTES = ("Scores on the evaluator's 0-100 scale; Combined = (Inform + Success) / 2 + BLEU.",)


def corpus_profile(benchmark: str, *, run: bool) -> BenchmarkProfile:
    return _profile(
        benchmark, "multiwoz", _METRICS, run=run, group_noun="domain group", notes=_NOTES
    )


SCORE_PROFILE = corpus_profile("multiwoz", run=False)
