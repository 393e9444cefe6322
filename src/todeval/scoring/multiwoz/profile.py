"""How MultiWOZ corpus scores are shown: score files (``todeval score multiwoz -o``) and
generation runs (``todeval run multiwoz-turns``)."""

from __future__ import annotations

from todeval.results.profile import BenchmarkProfile, Column, DetailView

_METRICS = (
    ("inform", "Inform"),
    ("success", "Success"),
    ("bleu", "BLEU"),
    ("combined", "Combined"),
)
_NOTES = ("Scores on the evaluator's 0-100 scale; Combined = (Inform + Success) / 2 + BLEU.",)


def corpus_profile(benchmark: str, *, run: bool) -> BenchmarkProfile:
    """Ranked by Combined; generation runs also show format failures, cost and transcripts."""
    columns = tuple(Column(metric=f"multiwoz.{m}", title=t, kind="score") for m, t in _METRICS)
    if run:
        columns += (
            Column(metric="multiwoz.format_failure_rate", title="Format failures %", kind="score"),
        )
    return BenchmarkProfile(
        benchmark=benchmark,
        primary="multiwoz.combined",
        primary_title="Combined",
        columns=columns,
        cost=run,
        group_noun="domain group",
        notes=_NOTES,
        details=(DetailView(key="turns", title="Predicted turns", layout="rows"),) if run else (),
    )


SCORE_PROFILE = corpus_profile("multiwoz", run=False)
