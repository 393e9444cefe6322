"""Plain-text tables of a summary, for the terminal.

An estimate prints as ``value [low, high]`` with its bootstrap CI. Where that interval has
collapsed (``ci_low == ci_high``: every task agrees, e.g. 117/117) and the estimate carries a
Wilson score interval (0/1 metrics), the Wilson interval is shown instead, marked ``W``:
``1.000 [0.968, 1.000]W``; tables that show one say so in their footer (:data:`WILSON_NOTE`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from todeval.core.records import Estimate, Summary, TrialsSummary

WILSON_MARK = "W"
WILSON_NOTE = "W: the bootstrap interval collapsed (every task agrees); Wilson score interval shown"


def shows_wilson(est: Estimate | None) -> bool:
    """``est``'s bootstrap CI collapsed to a point and it has a Wilson interval to show (the
    rule of :meth:`Estimate.shown_interval`, which the report applies too)."""
    return est is not None and est.value is not None and est.shown_interval()[2]


def fmt_estimate(est: Estimate | None, digits: int = 3) -> str:
    """``value [low, high]``: the bootstrap CI, or the Wilson interval marked ``W`` where the
    bootstrap collapsed (:func:`shows_wilson`)."""
    if est is None or est.value is None:
        return "-"
    low, high, wilson = est.shown_interval()
    if low is None or high is None:
        return f"{est.value:.{digits}f}"
    mark = WILSON_MARK if wilson else ""
    return f"{est.value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]{mark}"


def wilson_note(estimates: Iterable[Estimate | None]) -> list[str]:
    """The footer line saying what ``W`` means, if any of ``estimates`` shows it."""
    return [WILSON_NOTE] if any(shows_wilson(e) for e in estimates) else []


def render_rows(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines.extend(
        "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )
    return "\n".join(lines)


def summary_table(
    summary: Summary, metrics: Sequence[str] | None = None, by_group: Sequence[str] = ()
) -> str:
    """Metrics with micro and macro estimates (95% CIs), then per-group rows for some metrics."""
    names = [m for m in (metrics or sorted(summary.metrics)) if m in summary.metrics]
    rows = []
    shown: list[Estimate | None] = []
    for name in names:
        m = summary.metrics[name]
        rows.append([name, fmt_estimate(m.micro), str(m.micro.n), fmt_estimate(m.macro)])
        shown += [m.micro, m.macro]
    micro = [(name, summary.metrics[name].micro) for name in names]
    out = [
        render_rows(["metric", "micro (episodes) [95% CI]", "n", "macro (groups) [95% CI]"], rows)
    ]
    for name in by_group:
        if name not in summary.metrics or not summary.metrics[name].by_group:
            continue
        group_rows = [
            [g, fmt_estimate(e), str(e.n)] for g, e in summary.metrics[name].by_group.items()
        ]
        shown += summary.metrics[name].by_group.values()
        out.append(f"\n{name} by group")
        out.append(render_rows(["group", "value [95% CI]", "n"], group_rows))
    outcomes = ", ".join(f"{k} {v}" for k, v in summary.outcomes.items() if v)
    out.append(f"\n{summary.n_episodes} episodes: {outcomes}")
    if summary.excluded:
        excl = ", ".join(f"{k} {v}" for k, v in summary.excluded.items())
        out.append(f"excluded from metrics: {excl}")
    out.append(
        f"CIs: {summary.ci.method}, {summary.ci.resamples} resamples, seed {summary.ci.seed}, "
        f"level {summary.ci.level:.2f}; macro = mean over non-empty groups; Wilson: a "
        "closed-form check for 0/1 metrics (trust it near 0 and 1)"
    )
    out += wilson_note(shown)
    out += trials_note(micro)
    if summary.trials is not None:
        out += ["", trials_table(summary.trials, names)]
    return "\n".join(out)


def trials_table(trials: TrialsSummary, metrics: Sequence[str]) -> str:
    """How the trials agree (the success metric's always/never/flaky tasks) and, for
    ``metrics``, the share of their variance within a task's trials."""
    lines = []
    c = trials.consistency
    if c is not None and c.tasks:
        lines.append(
            f"trials ({trials.max_trials} per task at most), {c.metric}: always {c.always}, "
            f"never {c.never}, flaky {c.flaky} of {c.tasks} tasks "
            f"({c.flaky / c.tasks:.0%} flaky: what one trial gets by luck)"
        )
    rows = []
    for v in trials.variance:
        if v.metric not in metrics:
            continue
        share = "-" if v.within_share is None else f"{v.within_share:.3f}"
        if v.ci_low is not None and v.ci_high is not None:
            share += f" [{v.ci_low:.3f}, {v.ci_high:.3f}]"
        rows.append([v.metric, f"{v.between:.4g}", f"{v.within:.4g}", share])
    if rows:
        header = ["metric", "between tasks", "within trials", "within share [95% CI]"]
        lines.append(render_rows(header, rows))
    return "\n".join(lines)


def trials_note(estimates: Iterable[tuple[str, Estimate | None]]) -> list[str]:
    """With several trials per task: the line saying that the intervals count tasks, and the
    effective sample size each 0/1 metric's Wilson interval is taken over (``estimates``:
    metric name and its micro estimate)."""
    clustered = [(name, e) for name, e in estimates if e is not None and e.n_tasks is not None]
    if not clustered:
        return []
    first = clustered[0][1]
    line = (
        f"trials: n counts episodes ({first.n} over {first.n_tasks} tasks); every interval "
        "resamples tasks (a task's trials move together)"
    )
    wilson = [
        (name, e.n_effective)
        for name, e in clustered
        if e.n_effective is not None and e.wilson_low is not None
    ]
    if wilson:
        sizes = ", ".join(f"{name} {n:g}" for name, n in wilson)
        line += (
            f". Wilson (0/1 metrics) is taken over the effective sample size, from "
            f"{first.n_tasks} (a task's trials always agree: each task counts once) to "
            f"{first.n} (they vary as much as separate tasks: each episode counts): {sizes}"
        )
    return [line]


def usage_table(summary: Summary) -> str:
    """Per-role accounting (tokens, cost, FLOPs, latency) and cost per episode and success."""
    if not summary.usage:
        return ""
    rows = []
    for role, u in summary.usage.items():
        lat = summary.latency.get(role, {})
        rows.append(
            [
                role,
                str(u.calls),
                str(u.calls - u.cached_calls),
                f"{u.prompt_tokens:,}{u.token_marks}",
                f"{u.completion_tokens:,}{u.token_marks}",
                f"{u.cost_usd:.4f}" + ("?" if u.tokens_unknown_calls else ""),
                f"{u.flops:.3g}",
                f"{lat['p50']:.3f}" if lat else "-",
                f"{lat['p90']:.3f}" if lat else "-",
            ]
        )
    header = [
        "role",
        "calls",
        "new",
        "prompt tok",
        "completion tok",
        "usd",
        "FLOPs",
        "p50 s",
        "p90 s",
    ]
    lines = [render_rows(header, rows)]
    cost = summary.cost

    def money(key: str) -> str:
        value = cost.get(key)
        return "-" if value is None else f"${value:.4f}"

    lines.append(
        f"cost per episode {money('usd_per_episode')}, per successful episode "
        f"{money('usd_per_success')}; FLOP cost (at $0.05/PFLOP) per episode "
        f"{money('flop_usd_per_episode')}, per success {money('flop_usd_per_success')}"
    )
    if any(u.estimated for u in summary.usage.values()):
        lines.append("~ token counts estimated (characters / 4): the server reported none")
    unknown = {r: n for r, u in summary.usage.items() if (n := u.tokens_unknown_calls)}
    if unknown:
        said = ", ".join(f"{r} {n}" for r, n in unknown.items())
        lines.append(
            f"? token counts unknown for some calls ({said}): the agent reported no usage; "
            "counted as 0, so tokens and cost are lower bounds"
        )
    return "\n".join(lines)
