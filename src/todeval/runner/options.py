"""Command-line options shared by every command that calls models."""

from __future__ import annotations

from typing import Any

# argparse's _ArgumentGroup and ArgumentParser share add_argument; neither is a public base.
ArgumentTarget = Any


def add_generation_arguments(target: ArgumentTarget, *, constrained_help: str) -> None:
    """--constrained, --temperature, --max-tokens, --no-cache and --cache-path."""
    target.add_argument("--constrained", action="store_true", help=constrained_help)
    target.add_argument("--temperature", type=float, default=0.0, help="sampling temperature")
    target.add_argument("--max-tokens", type=int, default=None, help="cap on tokens per call")
    target.add_argument("--no-cache", action="store_true", help="bypass the response cache")
    target.add_argument(
        "--cache-path",
        default=None,
        metavar="FILE",
        help="response cache file (default: ~/.cache/todeval/responses.sqlite)",
    )


__all__ = ["add_generation_arguments"]
