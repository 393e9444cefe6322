"""The Python API: what the command line does, from Python.

    import todeval.api as td

    result = td.run("booking", {"system": "rule", "user": "agenda", "limit": 10}, out="runs/x")
    result.summary.metrics["booking.booking_accuracy"].micro.value
    td.resume("runs/x")                      # continue a run from its manifest
    run = td.load("runs/x")                  # manifest, summary, episodes
    comparison = td.compare(["runs/a", "runs/b"])
    td.report(["runs/a", "runs/b"], "report.html")

Every function raises :class:`todeval.errors.TodevalError` subclasses for expected problems
(unknown benchmark, malformed files, a refused resume), as the CLI's one-line errors do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from todeval.core.files import write_output
from todeval.core.imports import load_reference
from todeval.core.records import EpisodeRecord, Manifest, Summary
from todeval.errors import BadInputError, UsageError, choice_error
from todeval.registry import discover
from todeval.results.compare import compare_runs
from todeval.results.comparison_record import Comparison
from todeval.runner.execute import RunResult, execute_plan, release_plan
from todeval.runner.options import RuntimeOptions
from todeval.runner.plan import RunPlan
from todeval.runner.store import RunDirectory

PlanFactory = Callable[[dict[str, Any], RuntimeOptions | None], RunPlan]


def benchmarks() -> list[str]:
    """The names of the registered benchmarks (built-in and installed plug-ins)."""
    return sorted(discover().benchmarks)


def build_plan(
    benchmark: str,
    config: Mapping[str, Any] | BaseModel | None = None,
    runtime: RuntimeOptions | None = None,
) -> RunPlan:
    """The run plan of ``benchmark`` for ``config`` (the fields of its config model); a key
    the config model does not have (``"sytem"``) is a usage error naming the valid keys."""
    return _plan(benchmark, config, runtime, check_keys=True)


def _plan(
    benchmark: str,
    config: Mapping[str, Any] | BaseModel | None,
    runtime: RuntimeOptions | None,
    *,
    check_keys: bool,
) -> RunPlan:
    entries = discover().benchmarks
    if benchmark not in entries:
        raise choice_error("benchmark", benchmark, list(entries))
    found = load_reference(entries[benchmark].spec, what="benchmark spec")
    factory: PlanFactory = getattr(found, "plan", found)  # type: ignore[arg-type]
    fields = config.model_dump(mode="json") if isinstance(config, BaseModel) else dict(config or {})
    plan = factory(fields, runtime)
    unknown = sorted(set(fields) - set(plan.config)) if check_keys else []
    if unknown:
        release_plan(plan)
        valid = ", ".join(sorted(plan.config))
        keys = ", ".join(repr(k) for k in unknown)
        raise UsageError(f"unknown {benchmark} config key(s) {keys}; valid keys: {valid}")
    return plan


def run(
    benchmark: str,
    config: Mapping[str, Any] | BaseModel | None = None,
    *,
    out: str | Path,
    max_concurrency: int = 8,
    executor: str = "local",
    ray_address: str | None = None,
    quiet: bool = True,
    runtime: RuntimeOptions | None = None,
    review: bool = True,
    _check_keys: bool = True,
) -> RunResult:
    """Run (or continue) a benchmark into the run directory ``out``; an unknown config key
    is refused (a usage error), as :func:`build_plan` does. With ``review`` each failed
    episode is written with its verdict (who failed) when the benchmark has a reviewer."""
    runtime = runtime or RuntimeOptions(out=Path(out))
    if runtime.max_concurrency is None:  # the calls in flight per endpoint follow it
        runtime = replace(runtime, max_concurrency=max_concurrency)
    plan = _plan(benchmark, config, runtime, check_keys=_check_keys)
    return execute_plan(
        plan,
        Path(out),
        max_concurrency=max_concurrency,
        quiet=quiet,
        command=["api.run", benchmark],
        executor=executor,
        ray_address=ray_address,
        review=review,
    )


def resume(run_dir: str | Path, **options: Any) -> RunResult:
    """Continue the run in ``run_dir`` with the config its manifest records (``options`` as for
    :func:`run`: max_concurrency, executor, ray_address, quiet, runtime)."""
    manifest = RunDirectory(Path(run_dir)).read_manifest()
    # a manifest of an older version may hold keys this version's config no longer has
    return run(manifest.benchmark, manifest.config, out=run_dir, _check_keys=False, **options)


@dataclass
class LoadedResults:
    """A run directory's contents."""

    path: Path
    manifest: Manifest
    summary: Summary | None

    def episodes(self, *, light: bool = False) -> Iterator[EpisodeRecord]:
        """The episode records, streamed (``light`` drops events and details)."""
        return RunDirectory(self.path).iter_episodes(light=light)


def load(run_dir: str | Path) -> LoadedResults:
    """Read a run directory (its manifest must exist)."""
    path = Path(run_dir)
    store = RunDirectory(path)
    if not store.exists():
        raise BadInputError(f"{path}: not a run directory (no manifest.json)")
    return LoadedResults(path, store.read_manifest(), store.read_summary())


def compare(run_dirs: Sequence[str | Path], **options: Any) -> Comparison:
    """Paired comparison of every run with the first (``todeval compare``).

    Options as :func:`todeval.results.compare.compare_runs`: ``metrics``, ``resamples``,
    ``seed``, ``level``, and ``shared_tasks=True`` to compare runs over different selections
    of one task set on the tasks both scored (refused otherwise, naming the differing field)."""
    return compare_runs(run_dirs, **options)


def report(
    inputs: Sequence[str | Path],
    output: str | Path,
    *,
    title: str | None = None,
    transcripts: int | Literal["all"] = 50,
) -> Path:
    """Write the self-contained HTML report of runs, panels and summaries (``todeval report``).

    ``transcripts``: how many transcripts to embed per run, failures first (``"all"``: every
    episode; the report says what it left out)."""
    from todeval.report import DEFAULT_TITLE, build_html, cap_value, load_inputs
    from todeval.results.rescore import refuse_mixed_versions, run_scorer_version

    try:
        cap_value(transcripts)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    loaded = load_inputs([Path(p) for p in inputs], transcripts=transcripts)
    refuse_mixed_versions(  # runs graded by different scorer versions are not shown together
        [(str(r.path), r.manifest.benchmark, run_scorer_version(r.path)) for r in loaded.runs]
    )
    html = build_html(loaded, title=title or DEFAULT_TITLE)
    path = Path(output)
    write_output(path, html)  # whole or not at all; BadInputError when it cannot be written
    return path


__all__ = [
    "LoadedResults",
    "benchmarks",
    "build_plan",
    "compare",
    "load",
    "report",
    "resume",
    "run",
]
