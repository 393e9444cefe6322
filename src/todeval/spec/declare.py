"""What a benchmark declares: its config, tasks, roles, one episode, profile and controls.

A :class:`~todeval.spec.build.BenchmarkSpec` (built from these parts) says what a benchmark
*is*; :func:`todeval.spec.build.build_plan`
does what every benchmark's run needs from it (prompt digest and its refusal on change, task
selection, the model pool, role identities, the task-set hash, jobs, interactivity, closing the
run's resources). The spec is all a benchmark hands the framework: the CLI driver, the Python
API and Ray workers build the same plan from it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord
from todeval.dialogue.episode import EpisodeEnd, EpisodeLog, EpisodeStreams
from todeval.dialogue.participants import Role
from todeval.dialogue.prompts import PromptSet
from todeval.runner.options import RunSettings, RuntimeOptions

if TYPE_CHECKING:
    from todeval.agents.hub import AgentHub
    from todeval.backends.pool import ModelPool

C = TypeVar("C", bound=RunSettings)
T = TypeVar("T")
Closer = Callable[[], Awaitable[None]]


def _attr(name: str, default: Any = None) -> Callable[[Any], Any]:
    return lambda obj: getattr(obj, name, default)


@dataclass(frozen=True)
class Tasks(Generic[C, T]):
    """Where a benchmark's tasks come from and how they are named, grouped and hashed.

    ``load(config)`` returns every task of the config's task set, in the set's order. The
    framework selects from them (the config's ids, ``--limit`` stratified over ``group``) and
    hashes the selected tasks' ``content`` into the run's task-set hash: one compact JSON line
    per task (:func:`todeval.spec.build.task_set_hash`)."""

    load: Callable[[C], Sequence[T]]
    task_id: Callable[[T], str] = field(default=_attr("task_id", ""))
    group: Callable[[T], str] = field(default=_attr("group", ""))
    set_name: Callable[[C], str | None] = field(default=_attr("task_set"))
    """The task set's name as the run's selection records it."""
    ids: Callable[[C], Sequence[str] | None] = field(default=_attr("ids"))
    """The task ids the config asks for (``None``: all)."""
    canonical: Callable[[C, Sequence[T]], Callable[[str], str]] | None = None
    """How a user's spelling of an id maps to a task id (default: as typed)."""
    content: Callable[[RunContext[C, T], T], Any] | None = None
    """The JSON-able content of a task that its results depend on (default: a pydantic model's
    fields, a dataclass's fields, or the object itself)."""
    legacy_hash: Callable[[RunContext[C, T], Sequence[T]], str] | None = None
    """The hash older versions recorded for the same tasks (their run directories resume)."""
    noun: str = "task"
    grouped_jobs: bool = True
    """Whether episodes carry their task's group (per-group figures, clustered intervals)."""


@dataclass(frozen=True)
class AgentSeat:
    """A role an external agent can play (``--<role> agent --<role>-url URL``)."""

    url_key: str
    channel_key: str
    hub: Callable[[Any], AgentHub] | None = None
    """The hub of a run's agent, from the config (default: one without tools)."""
    url_also_for: tuple[str, ...] = ()
    """Players besides ``agent`` that read the URL."""


@dataclass(frozen=True)
class RoleSpec(Generic[C]):
    """One role: who plays it (a config field naming a player of ``role``), its model, what
    identifies it in the manifest and which prompt templates it reads.

    ``role=None`` declares a role that is recorded but not built as a player (a judge the
    benchmark calls itself, a model the episode prompts directly)."""

    name: str
    role: Role[Any] | None
    player_key: str | None = None
    """The config field naming the player (``None``: ``player`` is fixed)."""
    model_key: str | None = None
    identity_keys: tuple[str, ...] = ()
    """More config fields that say who plays the role (URL, mode, replay file...)."""
    player: Callable[[C], str] | None = None
    """The player's name as the manifest records it (default: the ``player_key`` field)."""
    templates: Callable[[C, PromptSet], Sequence[str]] | None = None
    """The templates the role reads (default: all of the benchmark's)."""
    reads_prompts: Callable[[C], bool] | None = None
    """Whether the player reads the templates (default: when ``model_key`` names a model)."""
    options: Callable[[RunContext[C, Any]], Mapping[str, Any]] | None = None
    """More :class:`~todeval.dialogue.participants.PlayerOptions` fields (``extra``,
    ``module_model``, ``privileged``) from the run context."""
    agent: AgentSeat | None = None

    def chosen(self, config: C) -> str:
        """The player the config names (a built-in name or ``package.module:Class``)."""
        if self.player_key is None:
            return self.player(config) if self.player is not None else ""
        return str(getattr(config, self.player_key) or "")

    def player_name(self, config: C) -> str:
        """The player as the manifest records it."""
        return self.player(config) if self.player is not None else self.chosen(config)

    def model_of(self, config: C) -> str | None:
        value = getattr(config, self.model_key, None) if self.model_key else None
        return value if isinstance(value, str) else None


@dataclass
class RunContext(Generic[C, T]):
    """What the framework built for a run, handed to the benchmark's hooks and episodes."""

    config: C
    runtime: RuntimeOptions
    tasks: dict[str, T]
    """The selected tasks by id, in the set's order."""
    available: list[T]
    """Every task of the set (what baselines are fitted on)."""
    models: ModelPool
    prompts: PromptSet | None
    shared: Any = None
    """What the spec's ``prepare`` returned."""
    players_info: dict[str, Any] = field(default_factory=dict)
    """More entries of the manifest's ``players`` (a judge's name, warnings)."""
    closers: list[Closer] = field(default_factory=list)
    """Called when the run ends, last added first (the model pool's is always last)."""


@dataclass(frozen=True)
class Episode(Generic[C, T]):
    """One episode to play: its task, the players (fresh, by role), its seeded streams."""

    run: RunContext[C, T]
    task: T
    players: dict[str, Any]
    streams: EpisodeStreams
    trial: int

    benchmark: str = ""
    group: str = ""
    score: Rescore[C, T] | None = None
    """The spec's ``rescore``: scores a record the episode closes without metrics."""

    @property
    def config(self) -> C:
        return self.run.config

    def record(
        self,
        log: EpisodeLog,
        end: EpisodeEnd,
        *,
        metrics: dict[str, float] | None = None,
        labels: dict[str, str] | None = None,
        details: dict[str, Any] | None = None,
    ) -> EpisodeRecord:
        """The episode's record: ``log`` closed with ``end`` (its ``episode_end`` event), the
        benchmark, streams and task group filled in.

        Without ``metrics`` and with a spec that declares ``rescore``, the record is scored by
        it (its metrics and labels): the episode is scored as a stored one is re-graded, by one
        scorer, so playing and ``todeval rescore`` cannot disagree."""
        log.finish(end)
        record = log.record(
            benchmark=self.benchmark,
            streams=self.streams,
            end=end,
            group=self.group,
            metrics=metrics,
            labels=labels,
            details=details,
        )
        if metrics is not None or self.score is None:
            return record
        scored = self.score(self.run, self.task, record)
        return record.model_copy(
            update={"metrics": dict(scored.metrics), "labels": {**(labels or {}), **scored.labels}}
        )


@dataclass(frozen=True)
class Rescored:
    """One stored episode scored again by the installed scorer (a spec's ``rescore``).

    ``metrics`` and ``labels`` replace the record's; ``outcome`` and ``reason`` replace its
    outcome and reason when the scorer decides them (``None``: kept); ``details`` are keys of
    the record's details replaced (the per-domain scores, say), every other detail is kept."""

    metrics: dict[str, float]
    labels: dict[str, str] = field(default_factory=dict)
    outcome: Outcome | None = None
    reason: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


Rescore = Callable[[RunContext[C, T], T, EpisodeRecord], Rescored]
"""A benchmark's scorer over a stored episode: ``rescore(context, task, record)`` recomputes the
record's metrics and labels from its events and details alone (no player, no model call), with
the run's context (tasks, ``shared`` from the spec's ``prepare``) and the record's task."""
