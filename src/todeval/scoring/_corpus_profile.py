"""One builder for the profiles of corpus scorers: score files and generation runs."""

from __future__ import annotations

from collections.abc import Sequence

from todeval.results.profile import BenchmarkProfile, Column, DetailView


def corpus_profile(
    benchmark: str,
    prefix: str,
    metrics: Sequence[tuple[str, str]],
    *,
    run: bool,
    group_noun: str,
    notes: Sequence[str],
) -> BenchmarkProfile:
    """Scores on the 0-100 scale ranked by ``<prefix>.combined``; generation runs (``run``)
    also show format failures, cost and the predicted turns beside each transcript."""
    columns = tuple(Column(metric=f"{prefix}.{m}", title=t, kind="score") for m, t in metrics)
    if run:
        columns += (
            Column(metric=f"{prefix}.format_failure_rate", title="Format failures %", kind="score"),
        )
    return BenchmarkProfile(
        benchmark=benchmark,
        primary=f"{prefix}.combined",
        primary_title="Combined",
        columns=columns,
        cost=run,
        # every score is better higher, but format failures; richness (lengths, entropy)
        # describes the replies
        better={
            prefix: "higher",
            f"{prefix}.format_failure_rate": "lower",
            f"{prefix}.richness": "neither",
        },
        group_noun=group_noun,
        notes=tuple(notes),
        details=(DetailView(key="turns", title="Predicted turns", layout="rows"),) if run else (),
    )
