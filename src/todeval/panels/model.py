"""``panel.json``: one pydantic model, shared by the panel runner (writer) and the report (reader).

A panel plays every player of the **subject** role (the agent under test) against every player
of the **varied** role (the simulators it is scored against) and records, per subject member,
its score under each varied member and the spread of those scores, and with two or more
subject members the stability of their ranking.

Schema versions:

* **2** (0.2.0): role names are data (``subject``, ``varied``, ``members`` per role), so any
  benchmark with two roles writes the same file;
* **1** (0.1.0): still read. Its keys name the roles of the only benchmark that wrote it --
  ``systems`` and ``users`` are the members of the roles ``system`` and ``user`` (``per_user``,
  ``best_user``, ``worst_user``, ``top_system``) -- a fact of that file format, migrated by
  :meth:`PanelSummary._migrate`. A schema-1 file without ``benchmark`` takes it from its
  metric's namespace (metric names are ``<benchmark>.<name>``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_validator

from todeval.core import safejson
from todeval.core.files import write_output
from todeval.core.records import Estimate
from todeval.core.userfiles import read_user_text
from todeval.errors import BadInputError

PANEL_FILE = "panel.json"
PANEL_SCHEMA_VERSION = 2
"""2 (0.2.0): role names as data. 1 (0.1.0): ``systems``/``users``; read and migrated."""

PAIR_SEPARATOR = "|"
"""Keys of ``runs`` are ``'<subject member>|<varied member>'``."""

# schema 1 (0.1.0): the keys that named the two roles, and the roles they name
_V1_SUBJECT, _V1_VARIED = "system", "user"


def pair_key(subject: str, varied: str) -> str:
    return f"{subject}{PAIR_SEPARATOR}{varied}"


class PairDifference(BaseModel):
    """One subject member's score under varied member b minus under a, over shared tasks."""

    diff: float
    ci_low: float
    ci_high: float
    p_value: float = Field(description="two-sided paired bootstrap p")

    @property
    def separated(self) -> bool:
        return self.ci_low > 0 or self.ci_high < 0


class SubjectSpread(BaseModel):
    """One subject member's scores across the varied members."""

    per_member: dict[str, Estimate] = Field(
        default_factory=dict, description="per varied member: the metric (micro, 95% CI)"
    )
    spread_max_min: float | None = Field(
        None, description="max - min over varied members (the clem:todd paper's definition)"
    )
    std_sample: float | None = Field(
        None, description="sample standard deviation (n - 1) over varied members"
    )
    best: str | None = Field(None, description="the varied member it scores highest under")
    worst: str | None = Field(None, description="the varied member it scores lowest under")
    n_tasks: int | None = Field(
        None, description="tasks scored under every varied member (what the intervals resample)"
    )
    spread_ci: tuple[float, float] | None = Field(
        None, description="95% paired bootstrap interval of max - min (tasks resampled)"
    )
    std_ci: tuple[float, float] | None = Field(
        None, description="95% paired bootstrap interval of the sample std"
    )
    differences: dict[str, PairDifference] = Field(
        default_factory=dict,
        description="'<varied a>|<varied b>' -> b - a with its paired 95% interval",
    )


class RankStability(BaseModel):
    """How the ranking of subject members changes with the varied member."""

    rankings: dict[str, list[str]] = Field(
        default_factory=dict,
        description="per varied member: subject members, best first (ties in name order)",
    )
    ranking_text: dict[str, str] = Field(
        default_factory=dict, description="per varied member: 'a > b = c', ties shown as '='"
    )
    kendall_tau: dict[str, float | None] = Field(
        default_factory=dict,
        description="'<varied a>|<varied b>' -> Kendall tau-b; null when a ranking is all ties",
    )
    kendall_tau_ci: dict[str, tuple[float, float] | None] = Field(
        default_factory=dict,
        description="'<varied a>|<varied b>' -> 95% bootstrap interval of tau-b (tasks every "
        "pair scored, resampled together); null when it cannot be computed",
    )
    tau_tasks: int | None = Field(None, description="the tasks the tau intervals resample")
    top: dict[str, str] = Field(
        default_factory=dict, description="per varied member: the best; tied tops joined by ' = '"
    )
    top_changes: bool | None = Field(
        None, description="no subject member is (jointly) best under every varied member"
    )

    def text(self, varied: str) -> str:
        """The ranking under one varied member, ties as ``=`` where known."""
        return self.ranking_text.get(varied) or " > ".join(self.rankings.get(varied, []))


class SimulatorFaults(BaseModel):
    """One simulator's fault rate over a panel's runs (``todeval review``'s reading)."""

    episodes: int
    with_fault: int
    rate: float | None
    low: float | None
    high: float | None


class PanelSummary(BaseModel):
    """``panel.json``."""

    schema_version: int = PANEL_SCHEMA_VERSION
    benchmark: str
    metric: str = Field(description="the metric compared (its micro estimate)")
    subject: str = Field(description="the role under test, e.g. system or guesser")
    varied: str = Field(description="the role whose players vary, e.g. user or host")
    members: dict[str, list[str]] = Field(description="role -> member names, in panel order")
    runs: dict[str, str] = Field(
        default_factory=dict,
        description="'<subject member>|<varied member>' -> run directory (relative to the file)",
    )
    spread: dict[str, SubjectSpread] = Field(default_factory=dict, description="per subject member")
    rank_stability: RankStability | None = Field(
        None, description="with two or more subject members that are not controls"
    )
    controls: list[str] = Field(
        default_factory=list,
        description="subject members played by a privileged player (controls): in the spread, "
        "never in the rankings",
    )
    simulator_faults: dict[str, SimulatorFaults] = Field(
        default_factory=dict,
        description="per varied member, when the varied role is the benchmark reviewer's "
        "simulator: the share of its episodes (over every subject) with a simulator fault",
    )

    @property
    def subjects(self) -> list[str]:
        return self.members.get(self.subject, [])

    @property
    def varied_members(self) -> list[str]:
        return self.members.get(self.varied, [])

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        version = data.get("schema_version", 1 if "systems" in data else PANEL_SCHEMA_VERSION)
        if not isinstance(version, int) or version > PANEL_SCHEMA_VERSION:
            raise ValueError(
                f"schema_version {version!r} is newer than this todeval reads "
                f"({PANEL_SCHEMA_VERSION}); upgrade todeval"
            )
        if version >= 2:
            return data
        return _from_v1(data)


def _from_v1(data: dict[str, Any]) -> dict[str, Any]:
    """A schema-1 file (0.1.0) in the schema-2 shape."""
    for key in ("systems", "users", "metric"):
        if key not in data:
            raise ValueError(f"a schema-1 panel file needs '{key}'")
    metric = data["metric"]
    benchmark = data.get("benchmark") or (
        metric.split(".", 1)[0] if isinstance(metric, str) else None
    )

    def spread(sp: Any) -> Any:
        if not isinstance(sp, dict):
            return sp
        return {
            "per_member": sp.get("per_user", {}),
            "spread_max_min": sp.get("spread_max_min"),
            "std_sample": sp.get("std_sample"),
            "best": sp.get("best_user"),
            "worst": sp.get("worst_user"),
        }

    ranks = data.get("rank_stability")
    if isinstance(ranks, dict):
        ranks = {
            "rankings": ranks.get("rankings", {}),
            "ranking_text": ranks.get("ranking_text", {}),
            "kendall_tau": ranks.get("kendall_tau", {}),
            "top": ranks.get("top_system", {}),
            "top_changes": ranks.get("top_changes"),
        }
    spreads = data.get("spread", {})
    return {
        "schema_version": PANEL_SCHEMA_VERSION,
        "benchmark": benchmark,
        "metric": metric,
        "subject": _V1_SUBJECT,
        "varied": _V1_VARIED,
        "members": {_V1_SUBJECT: data["systems"], _V1_VARIED: data["users"]},
        "runs": data.get("runs", {}),
        "spread": {k: spread(v) for k, v in spreads.items()}
        if isinstance(spreads, dict)
        else spreads,
        "rank_stability": ranks,
    }


def is_panel_data(data: Any) -> bool:
    """Whether parsed JSON looks like a ``panel.json`` of any schema version."""
    if not isinstance(data, dict) or "runs" not in data:
        return False
    return "members" in data or {"systems", "users"} <= data.keys()


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "top level"
    return f"{where}: {err['msg']}"


def parse_panel(data: Any, source: Path | str) -> PanelSummary:
    """A parsed ``panel.json``; a malformed one is a one-line :class:`BadInputError`."""
    try:
        return PanelSummary.model_validate(data)
    except ValidationError as exc:
        raise BadInputError(f"{source}: not a valid panel file ({_first_error(exc)})") from None


def read_panel(path: Path) -> PanelSummary:
    """Read ``panel.json`` (schema 1 or 2)."""
    try:
        data = safejson.loads(read_user_text(path, what="panel summary"))
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read ({exc.strerror})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{path}: not valid JSON ({exc})") from None
    return parse_panel(data, path)


def panel_json(panel: PanelSummary) -> str:
    return panel.model_dump_json(indent=2) + "\n"


def write_panel(directory: Path, panel: PanelSummary) -> Path:
    """Write ``<directory>/panel.json`` atomically (a reader never sees half a file)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / PANEL_FILE
    write_output(path, panel_json(panel))
    return path
