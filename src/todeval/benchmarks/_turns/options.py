"""Configuration, CLI options and dialogue selection shared by the generation runs."""

from __future__ import annotations

import argparse
from typing import Any

from pydantic import Field

from todeval.driver import run_settings
from todeval.errors import UsageError
from todeval.runner.files import models_file_digest
from todeval.runner.naming import run_dir_name
from todeval.runner.options import (
    RunSettings,
    RuntimeOptions,
    add_generation_arguments,
    add_run_arguments,
    generation_settings,
)

__all__ = [
    "RuntimeOptions",
    "TurnsConfig",
    "add_common_arguments",
    "common_config",
]


class TurnsConfig(RunSettings):
    """What determines a generation run's results (hashed to guard resumes)."""

    model: str
    models_file: str | None = None
    models_file_sha256: str | None = None
    dialogue_ids: list[str] | None = None
    trials: int = Field(1, ge=1, le=1, description="one generation per dialogue (see docs)")
    constrained: bool = False
    temperature: float = 0.0
    max_tokens: int | None = Field(None, ge=1)
    prompt_version: str = ""
    resamples: int = Field(2000, ge=1, description="bootstrap resamples of the summary")

    def run_name(self, benchmark: str, *parts: str) -> str:
        """The default run directory: ``runs/<benchmark>-<parts>-<model>-s<seed>...``."""
        return run_dir_name(
            benchmark,
            [*parts, self.model],
            seed=self.seed,
            constrained=self.constrained,
            limit=self.limit,
            limit_mode=self.limit_mode,
            ids=self.dialogue_ids,
        )


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
    add_run_arguments(
        parser,
        unit="dialogues",
        ids_flag="--dialogue-ids",
        default_out=f"runs/{benchmark}-...-<model>-s<seed>",
        prompts=True,
    )
    add_generation_arguments(
        parser,
        constrained_help="send the JSON schema to the backend to enforce "
        "(default: described in the prompt)",
    )


def common_config(args: argparse.Namespace) -> dict[str, Any]:
    """The :class:`TurnsConfig` fields from parsed common options."""
    settings = run_settings(args)
    if settings["trials"] != 1:
        raise UsageError(
            "--trials must be 1 for a generation run: its corpus metrics are defined over one "
            "prediction file (use --seed for another sample)"
        )
    return {
        **settings,
        **generation_settings(args),
        "dialogue_ids": settings.pop("ids"),
        "model": args.model,
        "models_file": args.models_file,
        "models_file_sha256": models_file_digest(args.models_file),
    }
