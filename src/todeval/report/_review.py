"""The "Who failed" section: each run's failures split by the agent under test and the
simulator, by the benchmark's registered reviewer (:mod:`todeval.review`), with the simulator
fault rate and the conditional success where the simulator spoiled nothing.

The verdicts are those stored in the records (written as the run went), gathered while the
report read the episodes (:attr:`RunInput.reviews`); the reviewer reviews only the episodes
without one. A run loaded without gathering them is reviewed here, whole."""

from __future__ import annotations

from collections.abc import Sequence

from todeval.errors import TodevalError
from todeval.report._blocks import (
    Numbering,
    head_row,
    note,
    num_cell,
    table,
    table_caption,
    txt_cell,
)
from todeval.report._inputs import RunInput
from todeval.report.markup import Markup, el, join
from todeval.results.profile import ProfileBook
from todeval.review import Review, Reviewer, Share, Tally, summarise


def _cell(share: Share) -> Markup:
    if share.value is None:
        return num_cell(f"{share.k}/{share.n}")
    return num_cell(
        f"{share.value:.3f}",
        el("span", {"class": "ci"}, f" [{share.low:.3f}, {share.high:.3f}]"),
        el("span", {"class": "ci"}, f" {share.k}/{share.n}"),
    )


def _reviews(run: RunInput, reference: str) -> tuple[Reviewer, list[Review] | Tally] | None:
    """The run's reviewer and reviews: those gathered as it was read, else (not gathered, or
    its reviewer did not answer one record at a time) the run reviewed whole; ``None`` when
    the reviewer cannot read it or there is nothing to review."""
    from todeval.review.reading import load_reviewer, review_with

    gathered = run.reviews
    if isinstance(gathered, str):
        return None
    try:
        if gathered is not None and not gathered.needs_rereading:
            if gathered.unreadable is not None or not gathered.counts:
                return None
            return gathered.reviewer, gathered.counts
        reviewer = gathered.reviewer if gathered is not None else load_reviewer(reference)
        return reviewer, review_with(reviewer, run.path)
    except TodevalError:
        return None


def who_failed_section(
    runs: Sequence[RunInput], num: Numbering, profiles: ProfileBook
) -> Markup | None:
    """One table row per run whose benchmark's profile names a reviewer (``None`` without
    any)."""
    rows: list[Markup] = []
    names: set[tuple[str, str]] = set()
    for r in runs:
        reference = profiles.get(r.manifest.benchmark).reviewer
        if reference is None:
            continue
        found = _reviews(r, reference)
        if found is None:
            continue  # a run the reviewer cannot read: the leaderboard still shows it
        reviewer, reviews = found
        s = summarise(reviewer, reviews)
        names.add((reviewer.agent, reviewer.simulator))
        rows.append(
            el(
                "tr",
                {"id": f"who-{r.key}"},
                txt_cell(r.key),
                num_cell(str(s.failed)),
                *(_cell(s.verdicts[v]) for v in ("agent", "simulator", "both", "unclear")),
                _cell(s.simulator_fault_rate),
                _cell(s.success),
                _cell(s.success_unspoiled),
            )
        )
    if not rows:
        return None
    agent, simulator = sorted(names)[0] if len(names) == 1 else ("agent", "simulator")
    head = head_row(
        [
            "run",
            "failed",
            f"{agent} failed",
            f"{simulator} failed",
            "both",
            "unclear",
            f"episodes with a {simulator} fault",
            "success",
            f"success where the {simulator} spoiled nothing (conditional)",
        ]
    )
    caption = table_caption(
        num,
        "Who failed, by the rule review (todeval review): the verdicts are shares of the failed "
        "episodes, the fault rate and both successes shares of all episodes; 95% Wilson "
        "intervals. The last column drops the episodes with a simulator fault, so it is "
        "conditional: a diagnostic beside the leaderboard, not a score to rank by.",
    )
    body = table({"class": "lb compact", "id": "who-failed"}, caption, head, rows)
    return join(
        [
            note(
                "Each failed episode's verdict says whose faults the review found in it "
                "(docs/user-simulators.md, \u201cWho failed\u201d)."
            ),
            el("div", {"class": "tscroll"}, body),
        ]
    )


__all__ = ["who_failed_section"]
