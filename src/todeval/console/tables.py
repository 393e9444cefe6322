"""Plain-text tables of a summary, for the terminal."""

from __future__ import annotations

from collections.abc import Sequence

from todeval.core.records import Estimate, Summary


def fmt_estimate(est: Estimate | None, digits: int = 3) -> str:
    if est is None or est.value is None:
        return "-"
    if est.ci_low is None or est.ci_high is None:
        return f"{est.value:.{digits}f}"
    return f"{est.value:.{digits}f} [{est.ci_low:.{digits}f}, {est.ci_high:.{digits}f}]"


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
    for name in names:
        m = summary.metrics[name]
        rows.append([name, fmt_estimate(m.micro), str(m.micro.n), fmt_estimate(m.macro)])
    out = [
        render_rows(["metric", "micro (episodes) [95% CI]", "n", "macro (groups) [95% CI]"], rows)
    ]
    for name in by_group:
        if name not in summary.metrics or not summary.metrics[name].by_group:
            continue
        group_rows = [
            [g, fmt_estimate(e), str(e.n)] for g, e in summary.metrics[name].by_group.items()
        ]
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
    return "\n".join(out)


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
                f"{u.prompt_tokens:,}" + ("~" if u.estimated else ""),
                f"{u.completion_tokens:,}" + ("~" if u.estimated else ""),
                f"{u.cost_usd:.4f}",
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
    return "\n".join(lines)
