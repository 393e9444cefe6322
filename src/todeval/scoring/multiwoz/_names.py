"""The metric names the command line and the scorer share (no pydantic import: the command's
parser and the scorer's first steps need them before the result models)."""

from __future__ import annotations

from typing import Literal

Metric = Literal["inform", "success", "bleu", "richness", "dst"]
METRICS: tuple[Metric, ...] = ("inform", "success", "bleu", "richness", "dst")
