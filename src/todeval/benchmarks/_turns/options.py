"""Configuration, CLI options and dialogue selection shared by the generation runs."""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from todeval.errors import UsageError
from todeval.runner.files import models_file_digest
from todeval.runner.options import add_generation_arguments

if TYPE_CHECKING:
    from todeval.backends import RetryPolicy
    from todeval.backends.scripted import ReplyFunction


class TurnsConfig(BaseModel):
    """What determines a generation run's results (hashed to guard resumes)."""

    model: str
    models_file: str | None = None
    models_file_sha256: str | None = None
    dialogue_ids: list[str] | None = None
    limit: int | None = Field(None, ge=1)
    seed: int = 0
    constrained: bool = False
    temperature: float = 0.0
    max_tokens: int | None = Field(None, ge=1)
    prompt_version: str = ""
    resamples: int = Field(2000, ge=1, description="bootstrap resamples of the summary")

    def run_name(self, benchmark: str, *parts: str) -> str:
        """The default run directory: ``runs/<benchmark>-<parts>-<model>-s<seed>...``."""
        name = "-".join([f"runs/{benchmark}", *parts, slug(self.model), f"s{self.seed}"])
        if self.constrained:
            name += "-constrained"
        if self.limit is not None:
            name += f"-n{self.limit}"
        if self.dialogue_ids:
            digest = hashlib.sha256(",".join(sorted(self.dialogue_ids)).encode()).hexdigest()
            name += f"-ids{digest[:8]}"
        return name


@dataclass(frozen=True)
class RuntimeOptions:
    """How a run executes, never what it produces (not hashed)."""

    out: Path | None = None
    cache: bool = True
    cache_path: str | None = None
    retry: RetryPolicy | None = None
    script: ReplyFunction | None = None  # the reply function of a ``scripted:`` model (tests)


def slug(name: str) -> str:
    """A directory-safe form of a model spec (URLs dropped)."""
    name = name.split("@", 1)[0]
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def select_ids(
    available: Sequence[str],
    wanted: Sequence[str] | None,
    limit: int | None,
    canonical: Callable[[str], str] = str,
) -> list[str]:
    """The dialogues of a run, in corpus order: ``wanted`` (if given), then the first ``limit``.

    Unknown ids are a usage error naming them.
    """
    chosen = list(available)
    if wanted:
        known = set(available)
        asked = [canonical(w) for w in wanted]
        unknown = [w for w, a in zip(wanted, asked, strict=True) if a not in known]
        if unknown:
            listed = ", ".join(repr(u) for u in unknown[:5])
            more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            raise UsageError(f"unknown dialogue id(s): {listed}{more}")
        keep = set(asked)
        chosen = [d for d in chosen if d in keep]
    if limit is not None:
        if limit < 1:
            raise UsageError("--limit must be at least 1")
        chosen = chosen[:limit]
    return chosen


def add_common_arguments(parser: argparse.ArgumentParser, benchmark: str) -> None:
    """Options every generation run takes."""
    parser.add_argument(
        "--model",
        required=True,
        metavar="SPEC",
        help="the model: openai:<model>@<url>, openai:<model>, llamacpp:smollm2, "
        "llamacpp:<file.gguf>, scripted:<file>, or a name from --models-file",
    )
    parser.add_argument(
        "--models-file", default=None, metavar="FILE", help="TOML or YAML file of named models"
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N dialogues")
    parser.add_argument(
        "--dialogue-ids", nargs="+", default=None, metavar="ID", help="only these dialogues"
    )
    parser.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    parser.add_argument(
        "--max-concurrency", type=int, default=8, help="dialogues in flight (default 8)"
    )
    add_generation_arguments(
        parser,
        constrained_help="send the JSON schema to the backend to enforce "
        "(default: described in the prompt)",
    )
    parser.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help=f"run directory (default runs/{benchmark}-...-<model>-s<seed>)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress output")


def common_config(args: argparse.Namespace) -> dict[str, Any]:
    """The :class:`TurnsConfig` fields from parsed common options."""
    if args.max_concurrency < 1:
        raise UsageError("--max-concurrency must be at least 1")
    if args.max_tokens is not None and args.max_tokens < 1:
        raise UsageError("--max-tokens must be at least 1")
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be at least 1")
    return {
        "model": args.model,
        "models_file": args.models_file,
        "models_file_sha256": models_file_digest(args.models_file),
        "dialogue_ids": args.dialogue_ids,
        "limit": args.limit,
        "seed": args.seed,
        "constrained": args.constrained,
        "temperature": args.temperature,
        "max_tokens": args.max_tokens,
    }


def runtime_options(args: argparse.Namespace, out: Path) -> RuntimeOptions:
    return RuntimeOptions(out=out, cache=not args.no_cache, cache_path=args.cache_path)
