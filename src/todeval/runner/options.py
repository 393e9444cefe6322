"""What every run command shares: its command-line options, the run settings they give, and
the runtime options that change how a run executes but never its results.

``add_run_arguments`` gives every benchmark the same options -- ``--seed``, ``--trials``,
``--limit`` and ``--limit-mode``, the id selection, ``--max-concurrency``, ``--executor``,
``--ray-address``, ``--out``, ``--no-review``, ``--quiet``, and, where the benchmark declares them,
``--protocol`` and ``--prompts`` -- and :func:`todeval.driver.run_settings` reads them back into
the fields of a benchmark's config (the runner never reads prompt files).
``add_generation_arguments`` adds the options of commands that call models.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, Field

from todeval.errors import RefusedError
from todeval.runner.selection import LIMIT_MODES, LimitMode

if TYPE_CHECKING:
    from todeval.backends.pool import ModelPool
    from todeval.backends.retry import RetryPolicy
    from todeval.backends.scripted import ReplyFunction

# argparse's _ArgumentGroup and ArgumentParser share add_argument; neither is a public base.
ArgumentTarget = Any


@dataclass(frozen=True)
class RuntimeOptions:
    """How a run executes, never what it produces (not hashed)."""

    out: Path | None = None
    cache: bool = True
    cache_path: str | None = None
    retry: RetryPolicy | None = None
    script: ReplyFunction | None = None  # the reply function of a ``scripted:`` model (tests)
    record_calls: bool = True  # keep each model call's messages and reply in the transcript
    # episodes in flight (--max-concurrency): the calls in flight allowed per endpoint when the
    # models file sets no lower connection_limit (None: the backend's default)
    max_concurrency: int | None = None
    # --isolate: every package.module:Class player in an OS sandbox (todeval.dialogue.isolation);
    # isolate_env: variables passed into the sandbox by name
    isolate: bool = False
    isolate_env: tuple[str, ...] = ()


QUIET_HELP = "print nothing but warnings and errors (results go to the output files only)"
"""``--quiet`` means this for every command that has it."""


def model_pool(models_file: str | None, runtime: RuntimeOptions, *, seed: int) -> ModelPool:
    """The run's :class:`~todeval.backends.pool.ModelPool` with the runtime's cache and retry."""
    from todeval.backends.pool import ModelPool

    return ModelPool(
        models_file,
        cache=runtime.cache,
        cache_path=runtime.cache_path,
        retry=runtime.retry,
        script=runtime.script,
        seed=seed,
        concurrency=runtime.max_concurrency,
    )


def runtime_options(args: argparse.Namespace, out: Path | None = None) -> RuntimeOptions:
    """Runtime options from parsed run and generation arguments."""
    wait = getattr(args, "max_retry_wait", None)
    retry = None
    if wait is not None:
        from todeval.backends.retry import RetryPolicy

        retry = RetryPolicy(max_wait_s=wait)
    concurrency = getattr(args, "max_concurrency", None)
    return RuntimeOptions(
        out=out,
        cache=not getattr(args, "no_cache", False),
        cache_path=getattr(args, "cache_path", None),
        retry=retry,
        record_calls=not getattr(args, "no_record_calls", False),
        max_concurrency=concurrency if isinstance(concurrency, int) else None,
        isolate=bool(getattr(args, "isolate", False)),
        isolate_env=tuple(getattr(args, "isolate_env", None) or ()),
    )


def _retry_wait(text: str) -> float:
    """``--max-retry-wait``: a finite number of seconds from 0 to a day."""
    from todeval.backends.types import MAX_RETRY_WAIT_S

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= value <= MAX_RETRY_WAIT_S:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be from 0 to {MAX_RETRY_WAIT_S:g} seconds")
    return value


def add_generation_arguments(
    target: ArgumentTarget, *, constrained_help: str, transcripts: bool = True
) -> None:
    """--constrained, --temperature, --max-tokens, --no-cache, --cache-path and (for commands
    writing transcripts) --no-record-calls."""
    target.add_argument("--constrained", action="store_true", help=constrained_help)
    target.add_argument("--temperature", type=float, default=0.0, help="sampling temperature")
    target.add_argument("--max-tokens", type=int, default=None, help="cap on tokens per call")
    target.add_argument("--no-cache", action="store_true", help="bypass the response cache")
    target.add_argument(
        "--max-retry-wait",
        type=_retry_wait,
        default=None,
        metavar="SECONDS",
        help="what one model call may wait in all between its attempts (backoffs and the "
        "server's Retry-After); a longer wait fails the call (default: the models file's "
        "max_retry_wait_s, else 60)",
    )
    target.add_argument(
        "--cache-path",
        default=None,
        metavar="FILE",
        help="response cache file (default: ~/.cache/todeval/responses.sqlite)",
    )
    if not transcripts:
        return
    target.add_argument(
        "--no-record-calls",
        action="store_true",
        help="leave each model call's messages and reply out of the transcripts (its tokens, "
        "latency and cache hit are still recorded)",
    )


def add_run_arguments(
    parser: argparse.ArgumentParser,
    *,
    unit: str = "tasks",
    ids_flag: str = "--task-ids",
    default_out: str = "runs/<benchmark>-...-s<seed>",
    protocols: Sequence[str] = (),
    prompts: bool = False,
) -> None:
    """The options every ``todeval run <benchmark>`` takes.

    ``protocols`` (default first) adds ``--protocol``; ``prompts`` adds ``--prompts DIR``.
    """
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help=f"only N {unit}: spread over the task groups (seeded), or see --limit-mode",
    )
    parser.add_argument(
        "--limit-mode",
        choices=list(LIMIT_MODES),
        default=LIMIT_MODES[0],
        help="how --limit draws: stratified over the task groups in proportion to their size, "
        f"seeded from --seed (default), or the first N {unit} in the set's order",
    )
    parser.add_argument(
        ids_flag, nargs="+", default=None, metavar="ID", dest="ids", help=f"only these {unit}"
    )
    parser.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    parser.add_argument("--trials", type=int, default=1, help="episodes per task (default 1)")
    if protocols:
        parser.add_argument(
            "--protocol",
            choices=list(protocols),
            default=protocols[0],
            help=f"the rules episodes are played by (default {protocols[0]})",
        )
    if prompts:
        parser.add_argument(
            "--prompts",
            default=None,
            metavar="DIR",
            help="directory of <template>.txt files overriding the LLM players' prompts",
        )
    parser.add_argument(
        "--max-concurrency", type=int, default=8, help="episodes in flight (default 8)"
    )
    parser.add_argument(
        "--executor",
        choices=["local", "ray"],
        default="local",
        help="run episodes in this process (default) or on a Ray cluster",
    )
    parser.add_argument(
        "--ray-address",
        default=None,
        help="address of an existing Ray cluster (default: start a local one)",
    )
    parser.add_argument(
        "--out", default=None, metavar="DIR", help=f"run directory (default {default_out})"
    )
    parser.add_argument(
        "--isolate",
        action="store_true",
        help="play every package.module:Class player in an OS sandbox (bubblewrap) that cannot "
        "read the package's data, the run directory or this environment; recorded as the "
        "role's channel",
    )
    parser.add_argument(
        "--isolate-env",
        action="append",
        default=None,
        metavar="NAME",
        help="pass this environment variable into the sandbox (repeatable; e.g. the player's "
        "own API key variable)",
    )
    parser.add_argument(
        "--no-review",
        action="store_true",
        help="write failed episodes without their verdict (who failed: the agent or the "
        "simulator; todeval review RUN_DIR gives it later)",
    )
    parser.add_argument("--quiet", action="store_true", help=QUIET_HELP)


def generation_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The config fields of ``add_generation_arguments``."""
    return {
        "constrained": args.constrained,
        "temperature": args.temperature,
        "max_tokens": args.max_tokens,
    }


class RunSettings(BaseModel):
    """Config fields every run has (a benchmark's config may subclass this)."""

    seed: int = 0
    trials: int = Field(1, ge=1)
    limit: int | None = Field(None, ge=1)
    limit_mode: LimitMode = Field(
        "stratified",
        description="how `limit` draws: stratified over the task groups (seeded from `seed`) "
        "or the first `limit` in the set's order",
    )
    protocol: str = ""
    prompts_sha256: str | None = Field(
        None, description="digest of the effective prompt templates (part of the config hash)"
    )
    prompt_overrides: dict[str, str] | None = Field(
        None, description="templates replaced with --prompts, by name (their text)"
    )


class GenerationSettings(RunSettings):
    """Run settings plus how LLM players sample (``add_generation_arguments``' options)."""

    constrained: bool = False
    temperature: float = 0.0
    max_tokens: int | None = None


S = TypeVar("S", bound=RunSettings)


def pin_prompts(config: S, digest: str, what: str) -> S:
    """``config`` with ``prompts_sha256`` set to ``digest`` (the templates the run reads); a
    :class:`~todeval.errors.RefusedError` when the config already names another digest: a run
    continued (CLI, ``api.resume``, a Ray worker) after ``what`` templates changed."""
    if config.prompts_sha256 not in (None, digest):
        raise RefusedError(f"this todeval's {what} prompt templates differ from the run's")
    return config.model_copy(update={"prompts_sha256": digest})


__all__ = [
    "GenerationSettings",
    "RunSettings",
    "RuntimeOptions",
    "add_generation_arguments",
    "add_run_arguments",
    "generation_settings",
    "model_pool",
    "pin_prompts",
    "runtime_options",
]
