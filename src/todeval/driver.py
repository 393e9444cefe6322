"""The one ``todeval run`` driver: a single run or a panel, ``--quiet``, and what is printed.

A benchmark's CLI keeps its own arguments and their mapping to its config; everything after
that is the same for every benchmark and lives here (issue 28):

* a panel option (``--<role>s``, ``--panel FILE``) on a benchmark whose profile declares panel
  roles runs a panel into ``runs/panel-...`` (:mod:`todeval.panels`);
* otherwise one run into ``--out`` (or the config's default directory), with the start line
  on stderr, the runner's progress and notes;
* ``--quiet`` prints nothing but warnings and errors;
* after the run: "already holds a complete run" when nothing was left to play, then the
  benchmark's closing text (by default the profile's primary and column metrics as a summary
  table, the usage table and the run directory).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from todeval.console.tables import summary_table, usage_table
from todeval.dialogue.prompts import read_overrides
from todeval.errors import UsageError
from todeval.panels.cli import members_from_args
from todeval.panels.members import assign_by_field, member_by_field
from todeval.panels.run import default_panel_out, panel_roles, run_panel
from todeval.results.profile import BenchmarkProfile
from todeval.runner.command import execute_from_args
from todeval.runner.execute import RunResult
from todeval.runner.options import RunSettings, RuntimeOptions, runtime_options
from todeval.runner.plan import RunPlan
from todeval.runner.selection import LIMIT_MODES


@runtime_checkable
class RunConfig(Protocol):
    """What the driver reads of a benchmark's config (a :class:`RunSettings` with a default
    run directory)."""

    def default_out(self) -> str: ...


C = TypeVar("C", bound=RunSettings)


def run_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The config fields every run shares, checked: seed, trials, limit, limit_mode, ids (and
    protocol and prompt overrides where the command has them)."""
    if args.max_concurrency < 1:
        raise UsageError("--max-concurrency must be at least 1")
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be at least 1")
    if args.trials < 1:
        raise UsageError("--trials must be at least 1")
    if not 0 <= args.seed < 2**63:
        raise UsageError("--seed must be a whole number from 0 to 2**63 - 1")
    if getattr(args, "max_tokens", None) is not None and args.max_tokens < 1:
        raise UsageError("--max-tokens must be at least 1")
    settings: dict[str, Any] = {
        "seed": args.seed,
        "trials": args.trials,
        "limit": args.limit,
        "limit_mode": getattr(args, "limit_mode", LIMIT_MODES[0]),
        "ids": args.ids,
    }
    if hasattr(args, "protocol"):
        settings["protocol"] = args.protocol
    if getattr(args, "prompts", None):
        settings["prompt_overrides"] = read_overrides(args.prompts)
    return settings


def default_closing(profile: BenchmarkProfile) -> Callable[[RunResult, Path], str]:
    """The profile's metrics as a summary table, the usage table and the run directory."""

    def closing(result: RunResult, out: Path) -> str:
        headline = list(dict.fromkeys([profile.primary, *(c.metric for c in profile.columns)]))
        parts = [summary_table(result.summary, headline, by_group=[profile.primary])]
        usage = usage_table(result.summary)
        if usage:
            parts.append("\n" + usage)
        parts.append(f"\nrun directory: {out}")
        return "\n".join(parts)

    return closing


@dataclass(frozen=True)
class RunCommand(Generic[C]):
    """What one benchmark's ``todeval run`` needs beyond its arguments."""

    profile: BenchmarkProfile
    build: Callable[[C, RuntimeOptions], RunPlan]
    """The plan of a config (the panel check builds it without a cache)."""
    start_line: Callable[[C, RunPlan], str]
    """What runs, said on stderr before it starts (``-> <run dir>`` is added)."""
    closing: Callable[[RunResult, Path], str] | None = None
    """The text printed after the run (default: :func:`default_closing`)."""
    warnings: Callable[[RunPlan], Sequence[str]] = lambda plan: ()
    """Warnings about the plan, printed on stderr even under ``--quiet``."""
    panel_parts: Callable[[C], Sequence[str]] = field(default=lambda config: ())
    """The words naming a panel's default directory after ``runs/panel-``."""
    panel_ids: Callable[[C], Sequence[str] | None] = field(default=lambda config: None)
    """The id selection a panel's default directory is suffixed with."""
    default_out: Callable[[C], str] | None = None
    """The run directory when ``--out`` is not given (default: the config's ``default_out()``)."""

    def execute(self, config: C, out: Path, args: argparse.Namespace) -> RunResult:
        plan = self.build(config, runtime_options(args, out))
        for warning in self.warnings(plan):
            print(f"warning: {warning}", file=sys.stderr)
        return execute_from_args(plan, out, args, start_line=self.start_line(config, plan))


def drive(args: argparse.Namespace, config: C, command: RunCommand[C]) -> int:
    """Run ``config`` as ``todeval run`` does: a panel when a panel option was given, else one
    run; then print the closing text unless ``--quiet``."""
    profile = command.profile
    if profile.panel is not None:
        roles = panel_roles(profile)
        members = members_from_args(args, roles, lambda r: member_by_field(config, r))
        if members is not None:
            default = default_panel_out(
                members.subjects,
                config,
                *command.panel_parts(config),
                ids=command.panel_ids(config),
            )
            run_panel(
                profile,
                config,
                members,
                assign=assign_by_field,
                check=lambda c: command.build(c, RuntimeOptions(cache=False)),
                execute=lambda c, run_dir: command.execute(c, run_dir, args),
                out=Path(args.out or default),
                show=not args.quiet,
            )
            return 0
    if command.default_out is not None:
        default = command.default_out(config)
    elif isinstance(config, RunConfig):
        default = config.default_out()
    else:
        raise TypeError(f"{type(config).__name__} has no default_out() for the run directory")
    out = Path(args.out or default)
    result = command.execute(config, out, args)
    if args.quiet:
        return 0
    if result.already_complete:
        print(f"{out} already holds a complete run with this config; its summary:")
    closing = command.closing or default_closing(profile)
    print(closing(result, out))
    return 0


__all__ = ["RunCommand", "default_closing", "drive", "run_settings"]
