"""How In-Car corpus scores are shown: score files (``todeval score incar -o``) and generation
runs (``todeval run incar-turns``)."""

from __future__ import annotations

from todeval.results.profile import BenchmarkProfile, Column, DetailView

_METRICS = (("match", "Match"), ("succ_f1", "SuccF1"), ("bleu", "BLEU"), ("combined", "Combined"))
_NOTES = ("Scores on the 0-100 scale; Combined = (Match + SuccF1) / 2 + BLEU.",)


def corpus_profile(benchmark: str, *, run: bool) -> BenchmarkProfile:
    """Ranked by Combined; generation runs also show format failures, cost and transcripts."""
    columns = tuple(Column(metric=f"incar.{m}", title=t, kind="score") for m, t in _METRICS)
    if run:
        columns += (
            Column(metric="incar.format_failure_rate", title="Format failures %", kind="score"),
        )
    return BenchmarkProfile(
        benchmark=benchmark,
        primary="incar.combined",
        primary_title="Combined",
        columns=columns,
        cost=run,
        group_noun="domain",
        notes=_NOTES,
        details=(DetailView(key="turns", title="Predicted turns", layout="rows"),) if run else (),
    )


SCORE_PROFILE = corpus_profile("incar", run=False)
