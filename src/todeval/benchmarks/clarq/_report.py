"""The plain-text tables of ``todeval score clarq`` and ``todeval data clarq``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from todeval.benchmarks.clarq._scoring import METRICS, ClarqSummary
from todeval.benchmarks.clarq._tasks import DEPTH_GROUPS, ClarqTask, TaskLoad, label_key
from todeval.console.tables import render_rows
from todeval.core.records import Estimate


def _value(est: Estimate | None, digits: int = 4) -> str:
    if est is None or est.value is None:
        return "-"
    return f"{est.value:.{digits}f}"


def _interval(low: float | None, high: float | None, digits: int = 4) -> str:
    if low is None or high is None:
        return "-"
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def format_summary(summary: ClarqSummary) -> str:
    """Headline metrics with CIs, routes, the judge's share, per depth and per task type."""
    n = summary.n_episodes - sum(summary.excluded.values())  # a run's excluded episodes
    r = summary.routes
    j = summary.judge
    where = "recorded verdicts" if j.model == j.recorded_model else "its own verdicts"
    mode = "online" if j.online else "offline"
    lines = [
        f"ClarQ-LLM ({summary.language or '?'}): {', '.join(summary.sources) or '(records)'}",
        f"{n} dialogues; judge {j.model} ({where}, {mode}): decided {j.decided} of {n} "
        f"outcomes ({100 * j.share_decided:.1f}%), {j.unjudged} unjudged"
        + (
            f", {j.from_release} judge questions decided by the release record"
            if j.from_release
            else ""
        )
        + "".join(f"; {k}: {v} left out" for k, v in summary.excluded.items()),
        "",
    ]
    rows = []
    for name, title in METRICS.items():
        m = summary.metrics[name]
        rows.append(
            [
                title,
                _value(m.micro),
                str(m.micro.n),
                _interval(m.micro.ci_low, m.micro.ci_high),
                _interval(m.micro.wilson_low, m.micro.wilson_high),
                _value(m.macro),
            ]
        )
    lines.append(
        render_rows(["metric", "value", "n", "95% CI (type clusters)", "Wilson", "macro"], rows)
    )
    lines += [
        "",
        f"routes: exact {r.exact}, member {r.member}, substring {r.substring}, "
        f"no prediction {r.no_prediction}, judge {r.judge} ({r.judge_success} success, "
        f"{r.judge_failure} failure, {r.unjudged} unjudged)"
        + (f", no purpose {r.no_purpose}" if r.no_purpose else "")
        + (f", missing {r.missing}" if r.missing else ""),
    ]
    if r.unjudged and summary.success_bounds:
        low, high = summary.success_bounds
        lines.append(f"S with every unjudged dialogue failed / succeeded: {low:.4f} / {high:.4f}")
    depth_rows = []
    for group in [*DEPTH_GROUPS, "unknown"]:
        cells = [summary.by_depth.get(name, {}).get(group) for name in METRICS]
        if all(c is None for c in cells):
            continue
        count = max(c.n for c in cells if c is not None)
        depth_rows.append([group, str(count), *(_value(c) for c in cells)])
    if depth_rows:
        lines += ["", render_rows(["depth", "n", *METRICS.values()], depth_rows)]
    type_rows = []
    for task_type in summary.task_types:
        cells = [summary.metrics[name].by_group.get(task_type) for name in METRICS]
        count = max((c.n for c in cells if c is not None), default=0)
        type_rows.append([task_type, str(count), *(_value(c) for c in cells)])
    if type_rows:
        lines += ["", render_rows(["task type", "n", *METRICS.values()], type_rows)]
    lines += [
        "",
        f"CIs: {summary.ci.method}; {summary.ci.resamples} resamples, seed {summary.ci.seed}. "
        "AQD is signed (negative: the seeker stopped early); read it with S.",
    ]
    lines += [f"warning: {w}" for w in summary.warnings]
    return "\n".join(lines)


def _sizes(tasks: Sequence[ClarqTask]) -> str:
    counts = Counter(len(t.nodes) for t in tasks)
    return " ".join(f"{k}:{counts[k]}" for k in sorted(counts))


def _depths(tasks: Sequence[ClarqTask]) -> str:
    counts = Counter(t.depth for t in tasks)
    return " ".join(f"{k}:{counts[k]}" for k in sorted(counts))


def _original_key(label: str) -> tuple[float, float]:
    parts = label.split(".")
    return (int(parts[0]), float("inf") if len(parts) == 1 else int(parts[1]))


def _ties(task: ClarqTask) -> tuple[bool, bool]:
    """(two labels tie under the original's sort key, two tied labels can be available at
    once: neither is the other's ancestor)."""
    labels = [n.label for n in task.nodes]
    tie = live = False
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            if _original_key(a) == _original_key(b):
                tie = True
                live = live or not (b.startswith(a + ".") or a.startswith(b + "."))
    return tie, live


def format_check(loads: Sequence[TaskLoad], source: str) -> str:
    """Per language and split: tasks, types, tree sizes and depths; then every failure."""
    rows = []
    notes = []
    for load in loads:
        for split in ("test", "dev"):
            tasks = load.split(split)
            if not tasks:
                continue
            nodes = sum(len(t.nodes) for t in tasks)
            rows.append(
                [
                    load.lang,
                    split,
                    str(len(tasks)),
                    str(len({t.type_number for t in tasks})),
                    f"{nodes} ({nodes / len(tasks):.2f})",
                    _sizes(tasks),
                    _depths(tasks),
                    "yes" if all(t.has_purposes for t in tasks) else "no",
                ]
            )
            ties = [t for t in tasks if _ties(t)[0]]
            live = [t.task_id for t in tasks if _ties(t)[1]]
            reordered = [
                t
                for t in tasks
                if [n.label for n in t.nodes] != sorted((n.label for n in t.nodes), key=label_key)
            ]
            if ties or reordered:
                notes.append(
                    f"{load.lang} {split}: {len(ties)} tasks whose labels tie under the "
                    f"original's sort key ({len(live)} with tied nodes available at once"
                    + (f": {', '.join(live)}" if live else "")
                    + f"); {len(reordered)} list their labels out of label order. "
                    "todeval releases in label order."
                )
    header = ["lang", "split", "tasks", "types", "responses (mean)", "tree sizes",
              "depths", "purposes"]  # fmt: skip
    lines = [f"ClarQ-LLM tasks ({source})", render_rows(header, rows)]
    lines += ["", *notes] if notes else []
    failures = [(load.lang, f) for load in loads for f in load.failures]
    if failures:
        lines += ["", f"{len(failures)} failed to load:"]
        lines += [f"  {lang} {f.where}: {f.error}" for lang, f in failures]
    else:
        lines += ["", "every task loaded"]
    return "\n".join(lines)


def format_task(task: ClarqTask) -> str:
    """One task: background, response 0 and the tree in label order."""
    b = task.background
    lines = [
        f"{task.task_id}  (type {task.type_number}, depth {task.depth}, {len(task.nodes)} "
        "required responses)",
        f"role: {b.role}; task: {b.task}",
        f"items: {'; '.join(b.items) or '-'}",
        f"skills: {'; '.join(b.skills) or '-'}",
        f"scenes: {'; '.join(b.scenes) or '-'}",
        f"0: {task.opening}",
    ]
    for node in sorted(task.nodes, key=lambda n: label_key(n.label)):
        indent = "  " * node.depth
        lines.append(f"{indent}{node.label}: {node.text}")
        if node.purpose:
            lines.append(f"{indent}  purpose: {node.purpose}")
    return "\n".join(lines)


__all__ = ["format_check", "format_summary", "format_task"]
