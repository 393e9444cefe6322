"""The declared controls of a benchmark and the results of playing them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from todeval.validation.search import AdversaryFamily, AdversaryResult

Kind = Literal["floor", "ceiling"]
Aggregate = Literal["micro", "macro"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Control(_Frozen):
    """One control: what it does, how it is played, the metric it is judged by and its band.

    Exactly one of ``run`` and ``score`` says how it is played:

    * ``run`` -- a config for ``todeval.api.run(benchmark, run)``: the benchmark's own run with
      the control as a player (``benchmark`` defaults to the suite's);
    * ``score`` -- ``"module:function"`` with ``function(job: ControlJob) -> Summary``, for a
      control that is not a run (a prediction file for a corpus scorer).
    """

    name: str = Field(description="unique in the suite, e.g. 'dump/en' or 'first-row/strict'")
    kind: Kind
    description: str = Field(description="what the control does, in one line")
    metric: str = Field(description="the headline metric in the summary, e.g. toy.success")
    aggregate: Aggregate = "micro"
    low: float = Field(description="the band's lower end (inclusive)")
    high: float = Field(description="the band's upper end (inclusive)")
    run: Mapping[str, Any] | None = None
    benchmark: str | None = Field(None, description="the benchmark `run` is for (default: suite)")
    score: str | None = None
    group: str = Field("", description="a variant the control belongs to (en, strict, ...)")

    @model_validator(mode="after")
    def _one_way(self) -> Control:
        if (self.run is None) == (self.score is None):
            raise ValueError(f"control {self.name!r}: give exactly one of run and score")
        if self.low > self.high:
            raise ValueError(f"control {self.name!r}: band [{self.low}, {self.high}] is empty")
        return self

    @property
    def band(self) -> str:
        return f"[{self.low:g}, {self.high:g}]"


class ControlSuite(_Frozen):
    """A benchmark's controls and adversary families (the suite's name is what ``todeval
    validate NAME`` takes)."""

    name: str
    controls: tuple[Control, ...]
    adversaries: tuple[AdversaryFamily, ...] = ()
    """Families of skill-less agents ``validate`` searches for the best (:mod:`.search`)."""
    notes: tuple[str, ...] = ()
    options: dict[str, str] = {}
    """Config keys a user may set on every run control with a flag of their own name (``todeval
    validate NAME --KEY VALUE``, the same as ``--set KEY=VALUE``): key -> what it does."""

    @model_validator(mode="after")
    def _unique(self) -> ControlSuite:
        names = [c.name for c in self.controls] + [f.name for f in self.adversaries]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(
                f"suite {self.name!r}: controls or families named twice: {', '.join(twice)}"
            )
        return self


class ControlJob(BaseModel):
    """What a ``score`` function is handed: the control, the seed and a directory of its own
    (for the files it writes)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    control: Control
    seed: int
    workdir: Path
    limit: int | None = None


class ControlResult(BaseModel):
    """One control's measured headline."""

    name: str
    kind: Kind
    group: str = ""
    description: str
    metric: str
    aggregate: Aggregate
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0
    low: float
    high: float
    passed: bool
    run_dir: str | None = None
    error: str | None = None
    seconds: float = 0.0


class ValidationReport(BaseModel):
    """``todeval validate NAME -o FILE``: every control's result."""

    suite: str
    seed: int
    limit: int | None = None
    passed: bool
    results: list[ControlResult]
    adversaries: list[AdversaryResult] = Field(default_factory=list)
    """Each searched family's best agent (empty with ``--no-search``)."""
    notes: list[str] = Field(default_factory=list)
