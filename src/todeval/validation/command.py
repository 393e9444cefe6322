"""``todeval validate NAME``: play a benchmark's declared controls and check their bands.

Every control of the suite registered as ``NAME`` is played offline with the run's seed (a
``run`` control through :func:`todeval.api.run`, its episodes concurrent; a ``score`` control
by its function), then judged by its headline: inside the band is PASS. The table shows the
control, its kind (floor or ceiling), the headline with its 95% CI, the band and the verdict;
``-o FILE`` writes the :class:`~todeval.validation.ValidationReport` as JSON. Exit 0 when every
control passed, 4 when one did not (the benchmark is refused as valid).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from todeval.core.files import write_output
from todeval.core.imports import load_reference
from todeval.core.records import Estimate, Summary
from todeval.errors import EXIT_OK, EXIT_REFUSED, TodevalError, UsageError, choice_error
from todeval.registry import Registry, discover
from todeval.runner.options import QUIET_HELP
from todeval.validation.controls import (
    Control,
    ControlJob,
    ControlResult,
    ControlSuite,
    ValidationReport,
)
from todeval.validation.search import (
    AdversaryFamily,
    AdversaryResult,
    describe,
    estimate_text,
    run_family,
)

ScoreFunction = Callable[[ControlJob], Summary]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("suite", metavar="NAME", help="the benchmark whose controls to play")
    parser.add_argument(
        "--only",
        metavar="NAMES",
        help="comma-separated control names or groups (default: every control)",
    )
    parser.add_argument("--seed", type=int, default=0, help="the runs' seed (default 0)")
    parser.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="at most N tasks per run control (a quick look; the bands are set for full runs)",
    )
    parser.add_argument(
        "--max-concurrency", type=int, default=8, metavar="N", help="episodes at once (default 8)"
    )
    parser.add_argument("--out", metavar="DIR", help="keep every control's run directory under DIR")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the results as JSON here")
    parser.add_argument(
        "--budget",
        type=int,
        metavar="EPISODES",
        help="episodes each adversary family's search may spend (default: the family's own)",
    )
    parser.add_argument(
        "--no-search",
        action="store_true",
        help="play the named controls only, without searching the adversary families",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=None,
        metavar="KEY=VALUE",
        help="play every run control with this config value (repeatable), e.g. --set "
        "domain=./my-pack to play booking's controls on your own domain pack; the adversary "
        "search is not run then",
    )
    parser.add_argument(
        "--list", action="store_true", help="list the controls and adversary families and exit"
    )
    parser.set_defaults(_takes_extras=True)  # --KEY VALUE for the options a suite declares
    parser.add_argument("--quiet", action="store_true", help=QUIET_HELP)


def load_suite(name: str, registry: Registry | None = None) -> ControlSuite:
    """The suite registered as ``name``; a usage error listing the suites otherwise."""
    suites = (registry or discover()).control_suites
    if name not in suites:
        raise choice_error("control suite", name, sorted(suites))
    suite = load_reference(suites[name], what="control suite")
    if isinstance(suite, tuple | list) and all(isinstance(c, Control) for c in suite):
        suite = ControlSuite(name=name, controls=tuple(suite))  # a list of controls
    elif not isinstance(suite, ControlSuite) and hasattr(suite, "adversaries"):  # a spec
        suite = ControlSuite(
            name=name,
            controls=tuple(getattr(suite, "controls", ())),
            adversaries=tuple(suite.adversaries),
        )
    if not isinstance(suite, ControlSuite) or suite.name != name:
        raise UsageError(f"{suites[name]} is not the control suite {name!r}")
    return suite


def select(suite: ControlSuite, only: str | None) -> list[Control]:
    """The controls ``--only`` names (by name or group); every control without it."""
    return _chosen(suite, only)[0]


def select_families(suite: ControlSuite, only: str | None) -> list[AdversaryFamily]:
    """The adversary families ``--only`` names (by name or group); every family without it."""
    return _chosen(suite, only)[1]


def _chosen(suite: ControlSuite, only: str | None) -> tuple[list[Control], list[AdversaryFamily]]:
    if not only:
        return list(suite.controls), list(suite.adversaries)
    wanted = [w.strip() for w in only.split(",") if w.strip()]
    pairs = [(c.name, c.group) for c in suite.controls]
    pairs += [(f.name, f.group) for f in suite.adversaries]
    known = {name for name, _ in pairs} | {group for _, group in pairs if group}
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise choice_error("control or family", unknown[0], sorted(known))
    return (
        [c for c in suite.controls if c.name in wanted or c.group in wanted],
        [f for f in suite.adversaries if f.name in wanted or f.group in wanted],
    )


def headline(summary: Summary, control: Control) -> Estimate:
    """The control's metric in ``summary``; a clear error when the summary lacks it."""
    metric = summary.metrics.get(control.metric)
    if metric is None:
        raise UsageError(f"control {control.name!r}: the summary has no metric {control.metric!r}")
    estimate = metric.macro if control.aggregate == "macro" else metric.micro
    if estimate is None:
        raise UsageError(f"control {control.name!r}: {control.metric} has no macro average")
    return estimate


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "control"


def play(
    suite: ControlSuite,
    control: Control,
    *,
    seed: int,
    limit: int | None,
    max_concurrency: int,
    workdir: Path,
) -> tuple[Summary, Path]:
    """Play one control; its summary and the directory it wrote."""
    where = workdir / _slug(control.name)
    if control.run is not None:
        from todeval import api

        config: dict[str, Any] = {"seed": seed, **dict(control.run)}
        if limit is not None:
            config["limit"] = limit
        result = api.run(
            control.benchmark or suite.name,
            config,
            out=where,
            max_concurrency=max_concurrency,
            quiet=True,
            review=False,  # a control fails by design: whose fault is not the question
        )
        return result.summary, where
    assert control.score is not None
    function: ScoreFunction = load_reference(  # type: ignore[assignment]
        control.score, what="control score function"
    )
    where.mkdir(parents=True, exist_ok=True)
    return function(ControlJob(control=control, seed=seed, workdir=where, limit=limit)), where


def _result(control: Control, **measured: object) -> ControlResult:
    """The control's declaration with what was measured (value, CI, n, verdict, error)."""
    declared = control.model_dump(
        include={"name", "kind", "group", "description", "metric", "aggregate", "low", "high"}
    )
    return ControlResult.model_validate({**declared, **measured})


def judge(control: Control, summary: Summary) -> ControlResult:
    est = headline(summary, control)
    ok = est.value is not None and control.low <= est.value <= control.high
    return _result(
        control, value=est.value, ci_low=est.ci_low, ci_high=est.ci_high, n=est.n, passed=ok
    )


def failed(control: Control, error: str) -> ControlResult:
    return _result(control, value=None, passed=False, error=error)


def validate(
    suite: ControlSuite,
    controls: Sequence[Control],
    *,
    seed: int = 0,
    limit: int | None = None,
    max_concurrency: int = 8,
    workdir: Path,
    progress: Callable[[str], None] | None = None,
    families: Sequence[AdversaryFamily] = (),
    budget: int | None = None,
    all_tasks: bool = False,
) -> ValidationReport:
    """Play ``controls`` of ``suite`` one after the other and judge each; then search each of
    ``families`` (``budget`` episodes each, default the family's) and judge its best agent."""
    results: list[ControlResult] = []
    for i, control in enumerate(controls, 1):
        started = time.monotonic()
        try:
            summary, where = play(
                suite,
                control,
                seed=seed,
                limit=limit,
                max_concurrency=max_concurrency,
                workdir=workdir,
            )
            result = judge(control, summary).model_copy(update={"run_dir": str(where)})
        except TodevalError as exc:  # a control that cannot be played fails, with its cause
            result = failed(control, exc.message)
        result = result.model_copy(update={"seconds": round(time.monotonic() - started, 3)})
        results.append(result)
        if progress is not None:
            verdict = "PASS" if result.passed else "FAIL"
            progress(f"[{i}/{len(controls)}] {control.name}: {_value(result)} {verdict}")
    searched: list[AdversaryResult] = []
    for i, family in enumerate(families, 1):

        def step(line: str, i: int = i) -> None:
            if progress is not None:
                progress(f"[search {i}/{len(families)}] {line}")

        found = run_family(
            family,
            benchmark=suite.name,
            seed=seed,
            budget=budget,
            limit=limit,
            max_concurrency=max_concurrency,
            workdir=workdir / "search",
            progress=step,
            all_tasks=all_tasks,
        )
        searched.append(found)
        if progress is not None:
            best = describe(found.best.params) if found.best else f"error: {found.error}"
            verdict = "PASS" if found.passed else "FAIL"
            progress(f"[search {i}/{len(families)}] {family.name}: best {best} {verdict}")
    return ValidationReport(
        suite=suite.name,
        seed=seed,
        limit=limit,
        passed=all(r.passed for r in results) and all(a.passed for a in searched),
        results=results,
        adversaries=searched,
        notes=list(suite.notes),
    )


def _value(result: ControlResult) -> str:
    if result.value is None:
        return f"error: {result.error}" if result.error else "-"
    return estimate_text(result.value, result.ci_low, result.ci_high)


def table(report: ValidationReport) -> str:
    """The console table: control, kind, metric, headline with CI, band, n, verdict."""
    from todeval.console.tables import render_rows

    header = ["control", "kind", "metric", "headline [95% CI]", "band", "n", "verdict"]
    rows = [
        [
            r.name,
            r.kind,
            r.metric + (" (macro)" if r.aggregate == "macro" else ""),
            _value(r),
            f"[{r.low:g}, {r.high:g}]",
            str(r.n) if r.value is not None else "-",
            "PASS" if r.passed else "FAIL",
        ]
        for r in report.results
    ]
    failed_n = sum(not r.passed for r in report.results)
    verdict = (
        f"{report.suite}: all {len(report.results)} controls inside their bands"
        if failed_n == 0
        else f"{report.suite}: {failed_n} of {len(report.results)} controls FAILED"
    )
    limit = [f"(--limit {report.limit}: bands are set for full runs)"] if report.limit else []
    parts = [render_rows(header, rows), *report.notes, *limit, verdict]
    if report.adversaries:
        parts += ["", family_table(report.adversaries)]
    return "\n".join(parts)


def family_table(searched: Sequence[AdversaryResult]) -> str:
    """The adversary search's table: family, the best agent found, its headline, band, verdict."""
    from todeval.console.tables import render_rows

    header = [
        "family",
        "agents",
        "played",
        "best agent found",
        "headline [95% CI]",
        "band",
        "verdict",
    ]
    rows = []
    for a in searched:
        best = a.best
        shown = (
            estimate_text(best.value, best.ci_low, best.ci_high) if best else f"error: {a.error}"
        )
        rows.append(
            [
                a.name,
                str(a.size),
                f"{len(a.trials)} ({a.episodes} ep.)",
                describe(best.params) if best else "-",
                shown,
                f"[{a.low:g}, {a.high:g}]",
                "PASS" if a.passed else "FAIL",
            ]
        )
    failed_n = sum(not a.passed for a in searched)
    verdict = (
        f"adversary search: the best agent of each of {len(searched)} families is inside its band"
        if failed_n == 0
        else f"adversary search: {failed_n} of {len(searched)} families FAILED"
    )
    return "\n".join([render_rows(header, rows), verdict])


def overrides_of(pairs: list[str] | None) -> dict[str, str]:
    """``--set KEY=VALUE`` pairs as a dict; a usage error for a malformed one."""
    found: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set {pair!r}: expected KEY=VALUE")
        found[key.strip()] = value
    return found


def with_overrides(controls: list[Control], overrides: dict[str, str]) -> list[Control]:
    """Every run control played with ``overrides`` in its config (a control that is not a run
    is left out: it has no config to change); controls that become the same run are played
    once, under the first one's name, which says what was set."""
    if not overrides:
        return controls
    said = ", ".join(f"{k}={v}" for k, v in overrides.items())
    seen: set[str] = set()
    out: list[Control] = []
    for c in controls:
        if c.run is None:
            continue
        run = {**c.run, **overrides}
        key = json.dumps([c.benchmark, c.metric, c.aggregate, run], sort_keys=True, default=str)
        if key in seen:
            continue
        seen.add(key)
        out.append(c.model_copy(update={"run": run, "name": f"{c.name} [{said}]"}))
    return out


def suite_options(suite: ControlSuite, extras: Sequence[str], parser: Any) -> list[str]:
    """``--KEY VALUE`` / ``--KEY=VALUE`` for the options ``suite`` declares, as ``KEY=VALUE``
    pairs; anything else is the parser's usual unrecognized-arguments error."""
    pairs: list[str] = []
    rest = list(extras)
    while rest:
        flag = rest.pop(0)
        key, eq, value = flag[2:].partition("=") if flag.startswith("--") else ("", "", "")
        if key not in suite.options:
            import difflib  # only on this error path

            close = difflib.get_close_matches(key, list(suite.options), n=1, cutoff=0.75)
            if close:
                raise UsageError(f"unrecognized arguments: {flag}; did you mean --{close[0]}?")
            if hasattr(parser, "unknown"):
                parser.unknown([flag, *rest])  # did you mean one of the command's flags
            raise UsageError(f"unrecognized arguments: {' '.join([flag, *rest])}")
        if not eq:
            if not rest or rest[0].startswith("--"):
                raise UsageError(f"--{key} needs a value: {suite.options[key]}")
            value = rest.pop(0)
        pairs.append(f"{key}={value}")
    return pairs


def run_command(args: argparse.Namespace) -> int:
    suite = load_suite(args.suite)
    extras = suite_options(suite, getattr(args, "_extras", []), getattr(args, "_parser", None))
    overrides = overrides_of([*(getattr(args, "set", None) or []), *extras])
    controls = with_overrides(select(suite, args.only), overrides)
    no_search = args.no_search or bool(overrides)
    families = [] if no_search else select_families(suite, args.only)
    if args.list:
        from todeval.console.tables import render_rows

        rows = [[c.name, c.kind, c.group, c.band, c.description] for c in controls]
        rows += [
            [f.name, f"family ({f.size} agents)", f.group, f.band, f.description] for f in families
        ]
        print(render_rows(["control", "kind", "group", "band", "what it does"], rows))
        return EXIT_OK
    if args.budget is not None and args.budget < 1:
        raise UsageError("--budget must be at least 1 episode")
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be at least 1")
    if args.max_concurrency < 1:
        raise UsageError("--max-concurrency must be at least 1")

    def say(line: str) -> None:
        if not args.quiet:
            print(f"validate {suite.name} {line}", file=sys.stderr, flush=True)

    def go(workdir: Path) -> ValidationReport:
        return validate(
            suite,
            controls,
            seed=args.seed,
            limit=args.limit,
            max_concurrency=args.max_concurrency,
            workdir=workdir,
            progress=say,
            families=families,
            budget=args.budget,
        )

    if args.out:
        report = go(Path(args.out))
    else:
        with tempfile.TemporaryDirectory(prefix="todeval-validate-") as tmp:
            report = go(Path(tmp))
            report = report.model_copy(
                update={"results": [r.model_copy(update={"run_dir": None}) for r in report.results]}
            )
    if not args.quiet:
        print(table(report))
    else:
        failed = [r.name for r in report.results if not r.passed]
        failed += [a.name for a in report.adversaries if not a.passed]
        if failed:
            print(
                f"todeval: validate {suite.name}: {len(failed)} control(s) or family(ies) FAIL: "
                + ", ".join(failed),
                file=sys.stderr,
            )
    if args.output:
        write_output(args.output, report.model_dump_json(indent=2) + "\n")
    return EXIT_OK if report.passed else EXIT_REFUSED


__all__ = [
    "add_arguments",
    "family_table",
    "headline",
    "load_suite",
    "run_command",
    "select",
    "select_families",
    "table",
    "validate",
]
