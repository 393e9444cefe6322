"""Versioned, benchmark-neutral records written to a run directory.

A run directory holds three files:

* ``manifest.json`` -- :class:`Manifest`: what was run (config, versions, hashes, sessions);
* ``episodes.jsonl`` -- one :class:`EpisodeRecord` per line, appended when the episode ends;
* ``summary.json`` -- :class:`Summary`: aggregated metrics with confidence intervals.

Metric names are namespaced by benchmark (``<benchmark>.<metric>``, e.g. ``toy.success``) so that
families never collide. The schema version is bumped on any incompatible change.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from todeval.core.events import MODEL_CALL
from todeval.core.events import Event as Event  # re-exported: records hold events
from todeval.core.identity import RoleIdentity, Selection, legacy_roles, legacy_selection
from todeval.core.outcome import Outcome

SCHEMA_VERSION = 2
"""2 (0.2.0): the manifest's typed run identity (``roles``, ``selection``, ``protocol``).
1 (0.1.0): still read; the identity is derived from the config (:mod:`todeval.core.identity`)."""


FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
"""A float that is a real number: a NaN or infinite metric, cost or latency is refused when a
record is built or read, so one bad value can never turn an aggregate into ``nan``."""
Amount = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0)]


class CallUsage(BaseModel):
    """Accounting for one model call."""

    role: str = Field(description="user, system, or a module name such as system.intent")
    model: str = ""
    prompt_tokens: Count = 0
    completion_tokens: Count = 0
    estimated: bool = Field(False, description="token counts estimated (server gave none)")
    tokens_unknown: bool = Field(
        False, description="token counts not reported and not estimated (an external agent)"
    )
    latency_s: Amount = 0.0
    cached: bool = False
    cost_usd: Amount = 0.0
    flops: Amount = 0.0


class ModelCall(CallUsage):
    """One model call with what was sent and what came back.

    A :class:`CallUsage` for every sum; the episode log also records it as a ``model_call``
    event under the turn it was made in (:mod:`todeval.core.events`).
    """

    messages: list[dict[str, Any]] = Field(default_factory=list, description="chat messages sent")
    reply: str = Field("", description="the raw reply text")
    tool_calls: list[dict[str, str]] = Field(
        default_factory=list, description="tool calls in the reply: id, name, raw arguments"
    )
    finish_reason: str = "stop"

    def event_data(self) -> dict[str, Any]:
        """The ``model_call`` event's data (:class:`todeval.core.events.ModelCallPayload`)."""
        return self.model_dump(exclude={"flops"})


class RoleUsage(BaseModel):
    """Summed accounting for one role in one episode."""

    calls: Count = 0
    cached_calls: Count = 0
    prompt_tokens: Count = 0
    completion_tokens: Count = 0
    estimated: bool = False
    tokens_unknown_calls: Count = Field(
        0, description="calls whose token counts are unknown (counted as 0 in the totals)"
    )
    latency_s: Amount = 0.0
    cost_usd: Amount = 0.0
    flops: Amount = 0.0
    call_latencies_s: list[Amount] = Field(
        default_factory=list, description="latency of each uncached call (timing: may differ)"
    )

    def add(self, call: CallUsage) -> None:
        if not call.cached:
            self.call_latencies_s.append(round(call.latency_s, 6))
        self.calls += 1
        self.cached_calls += int(call.cached)
        self.prompt_tokens += call.prompt_tokens
        self.completion_tokens += call.completion_tokens
        self.estimated = self.estimated or call.estimated
        self.tokens_unknown_calls += int(call.tokens_unknown)
        self.latency_s += call.latency_s
        self.cost_usd += call.cost_usd
        self.flops += call.flops

    @property
    def token_marks(self) -> str:
        """``~`` when counts were estimated, ``?`` when some are unknown (shown after counts)."""
        return ("~" if self.estimated else "") + ("?" if self.tokens_unknown_calls else "")


def sum_usage(calls: list[CallUsage]) -> dict[str, RoleUsage]:
    """Group call accounting by role."""
    out: dict[str, RoleUsage] = {}
    for call in calls:
        out.setdefault(call.role, RoleUsage()).add(call)
    return dict(sorted(out.items()))


class Timing(BaseModel):
    started_at: str = Field(description="ISO 8601 UTC")
    ended_at: str = Field(description="ISO 8601 UTC")
    duration_s: float


def without_call_text(record: EpisodeRecord) -> EpisodeRecord:
    """``record`` with the messages and replies of its model calls left out (accounting kept):
    what a run started with ``--no-record-calls`` writes."""
    if not any(e.type == MODEL_CALL for e in record.events):
        return record
    events = [
        e.model_copy(update={"data": {**e.data, "messages": None, "reply": None, "tool_calls": []}})
        if e.type == MODEL_CALL
        else e
        for e in record.events
    ]
    return record.model_copy(update={"events": events})


Side = Literal["agent", "simulator"]
Verdict = Literal["agent", "simulator", "both", "unclear", "none"]


class Fault(BaseModel):
    """One fault a review found: whose, what kind, where, and the text (or call) that shows it."""

    side: Side
    kind: str
    turn: int
    evidence: str = Field(description="the text (or call) that shows it")


class EpisodeReview(BaseModel):
    """Who failed, as the benchmark's reviewer saw it when the episode was written
    (:mod:`todeval.review`; ``todeval review`` re-reads finished runs the same way)."""

    verdict: Verdict
    faults: list[Fault] = Field(default_factory=list)


class EpisodeRecord(BaseModel):
    """One finished episode: one line of ``episodes.jsonl``."""

    schema_version: int = SCHEMA_VERSION
    benchmark: str
    episode_id: str = Field(description="unique in the run: '<task_id>#<trial>'")
    task_id: str
    trial: int
    seed: int = Field(description="the episode's seed, derived from run seed, task id, trial")
    group: str = Field("", description="the task's group for macro averages (e.g. hotel+train)")
    outcome: Outcome
    termination: str | None = Field(
        None,
        description="why the episode stopped, typed: done, turn_cap, inner_loop_cap, "
        "format_violation, simulator_error, system_error, infrastructure (none in 0.1.0 runs)",
    )
    reason: str = Field("", description="why the episode ended, in a few words")
    metrics: dict[str, FiniteFloat] = Field(
        default_factory=dict, description="finite numbers only (NaN and infinity refused)"
    )
    turns: int = 0
    events: list[Event] = Field(default_factory=list)
    usage: dict[str, RoleUsage] = Field(default_factory=dict)
    timing: Timing
    labels: dict[str, str] = Field(
        default_factory=dict, description="categorical labels, e.g. failure_class; counted"
    )
    details: dict[str, Any] = Field(
        default_factory=dict, description="benchmark-specific extras (booked slots, goal, ...)"
    )
    review: EpisodeReview | None = Field(
        None,
        description="the episode's verdict and faults (who failed; 'none' for a success), when "
        "the benchmark has a reviewer; written by the runner (older runs: failures only)",
    )
    scorer_version: str | None = Field(
        None,
        description="the version of the benchmark's scoring that gave the metrics and labels "
        "(BenchmarkSpec.scorer_version; None: not recorded, a run before scorer versions)",
    )
    channels: dict[str, str] | None = Field(
        None,
        description="how each role's player ran in this episode (RoleIdentity.channel: "
        "built-in, in-process, endpoint or isolated), by role, as the manifest's roles say; "
        "written by the runner (None: not recorded, a run before per-record channels)",
    )

    @model_serializer(mode="wrap")
    def _without_empty_review(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A record without a review (a scorer version, channels) is written as before they
        existed."""
        data: dict[str, Any] = handler(self)
        for key in ("review", "scorer_version", "channels"):
            if data.get(key, 0) is None:
                del data[key]
        return data

    @property
    def key(self) -> tuple[str, int]:
        return (self.task_id, self.trial)


def episode_id(task_id: str, trial: int) -> str:
    return f"{task_id}#{trial}"


class Estimate(BaseModel):
    """A point estimate with its 95% confidence interval."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = Field(description="number of episodes (micro, by_group) or groups (macro)")
    wilson_low: float | None = Field(
        None, description="95% Wilson score interval (binary metrics only; a check on the CI)"
    )
    wilson_high: float | None = Field(
        None, description="95% Wilson score interval (binary metrics only; a check on the CI)"
    )
    n_tasks: int | None = Field(
        None, description="tasks behind the episodes, when some task had several trials"
    )
    n_effective: float | None = Field(
        None,
        description="with trials: the effective sample size the Wilson interval is taken over "
        "(between n_tasks and n; correlated trials of a task are not independent episodes)",
    )

    @property
    def collapsed(self) -> bool:
        """The bootstrap interval has no width (every resample agrees, e.g. 117/117)."""
        return self.ci_low is not None and self.ci_low == self.ci_high

    def shown_interval(self) -> tuple[float | None, float | None, bool]:
        """(low, high, is_wilson): the interval to show -- the bootstrap CI, or the Wilson score
        interval where a 0/1 metric's bootstrap collapsed."""
        if self.collapsed and self.wilson_low is not None and self.wilson_high is not None:
            return self.wilson_low, self.wilson_high, True
        return self.ci_low, self.ci_high, False


class MetricSummary(BaseModel):
    micro: Estimate = Field(description="mean over episodes; CI from a task bootstrap")
    macro: Estimate | None = Field(
        None, description="mean over non-empty groups; CI resampling tasks within each group"
    )
    by_group: dict[str, Estimate] = Field(default_factory=dict)


class CIMethod(BaseModel):
    method: str = "percentile bootstrap over tasks"
    level: float = 0.95
    resamples: int = 2000
    seed: int = 0


class SummaryTable(BaseModel):
    """A table a benchmark adds to its summary (per-label scores, a confusion matrix, ...),
    shown as it is by the report: the report knows its shape, not its meaning."""

    name: str = Field(description="short id, unique in the summary (part of element ids)")
    title: str
    caption: str = ""
    columns: list[str]
    rows: list[list[str | int | float | None]]
    digits: int = Field(3, description="decimals of the float cells")


class Consistency(BaseModel):
    """How the tasks' trials agree on a 0/1 metric."""

    metric: str
    always: int = Field(description="tasks whose every trial scored 1")
    never: int = Field(description="tasks whose every trial scored 0")
    flaky: int = Field(description="tasks with both 0 and 1 among their trials")
    flaky_tasks: list[str] = Field(default_factory=list, description="ids of the flaky tasks")

    @property
    def tasks(self) -> int:
        return self.always + self.never + self.flaky


class VarianceSplit(BaseModel):
    """One metric's variance, between tasks and within a task's trials."""

    metric: str
    between: float = Field(description="variance of the task means net of trial noise")
    within: float = Field(description="pooled variance of trials around their task's mean")
    within_share: float | None = Field(
        description="within / (between + within); null when both are 0"
    )
    ci_low: float | None = Field(None, description="percentile bootstrap over tasks")
    ci_high: float | None = None


class TrialsSummary(BaseModel):
    """``summary.json``'s ``trials``: present when some task was played more than once."""

    max_trials: int
    tasks: int = Field(description="tasks with at least one scored episode")
    consistency: Consistency | None = Field(
        None, description="of the benchmark's success metric (0/1), when it has one"
    )
    variance: list[VarianceSplit] = Field(default_factory=list)

    def tables(self) -> list[SummaryTable]:
        """The trials as tables (the report shows them beside the benchmark's own)."""
        out = []
        if self.consistency is not None:
            c = self.consistency
            rows: list[list[str | int | float | None]] = [
                [label, count, count / c.tasks if c.tasks else None]
                for label, count in (("always", c.always), ("never", c.never), ("flaky", c.flaky))
            ]
            out.append(
                SummaryTable(
                    name="trials-consistency",
                    title=f"Trials: consistency of {c.metric}",
                    caption=f"Tasks whose {self.max_trials} trials all scored 1 (always), all 0 "
                    "(never), or both (flaky).",
                    columns=["tasks", "count", "share"],
                    rows=rows,
                )
            )
        if self.variance:
            out.append(
                SummaryTable(
                    name="trials-variance",
                    title="Trials: variance between tasks and within a task's trials",
                    caption="within share = within / (between + within), with a 95% percentile "
                    "bootstrap interval over tasks; near 1, one trial per task is mostly noise.",
                    columns=["metric", "between", "within", "within share", "CI low", "CI high"],
                    rows=[
                        [v.metric, v.between, v.within, v.within_share, v.ci_low, v.ci_high]
                        for v in self.variance
                    ],
                )
            )
        return out


class Summary(BaseModel):
    """``summary.json``: aggregated metrics of a run."""

    schema_version: int = SCHEMA_VERSION
    benchmark: str
    n_episodes: int
    outcomes: dict[str, int]
    excluded: dict[str, int] = Field(
        default_factory=dict, description="episodes left out of every metric, by outcome"
    )
    metrics: dict[str, MetricSummary]
    ci: CIMethod = Field(default_factory=CIMethod)
    usage: dict[str, RoleUsage] = Field(
        default_factory=dict, description="per role totals (call_latencies_s left empty)"
    )
    cost: dict[str, float | None] = Field(
        default_factory=dict,
        description="usd_total, usd_per_episode, usd_per_success, flops_total, flop_usd_total, "
        "flop_usd_per_episode, flop_usd_per_success, tokens_total, new_calls, cached_calls",
    )
    labels: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="per label (e.g. failure_class): value -> episodes"
    )
    latency: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="per role: p50, p90, p99, max, mean of call latency (s)"
    )
    timing: dict[str, float] = Field(default_factory=dict, description="may differ between runs")
    tables: list[SummaryTable] = Field(
        default_factory=list, description="benchmark tables shown as they are in the report"
    )
    protocol: str | None = Field(
        None, description="the rules the run was played by (as in the manifest), if any"
    )
    trials: TrialsSummary | None = Field(
        None, description="with several trials per task: consistency and variance split"
    )
    scorer_version: str | None = Field(
        None, description="the version of the benchmark's scoring (None: not recorded)"
    )


class Session(BaseModel):
    started_at: str
    ended_at: str | None = None
    host: str
    episodes_run: int = 0
    command: list[str] = Field(default_factory=list)
    executor: str = Field("local", description="local, or ray (with the cluster's size)")


class Manifest(BaseModel):
    """``manifest.json``: what a run is, so it can be resumed, compared and reproduced."""

    schema_version: int = SCHEMA_VERSION
    benchmark: str
    config: dict[str, Any]
    config_hash: str
    task_set_hash: str
    task_set_aliases: list[str] = Field(
        default_factory=list,
        description="the hashes older versions gave the same task set (compare matches them)",
    )
    n_tasks: int
    seed: int
    players: dict[str, Any] = Field(
        default_factory=dict, description="as the benchmark reported them, with model infos"
    )
    roles: dict[str, RoleIdentity] = Field(
        default_factory=dict, description="role -> player, model, prompts (schema 2)"
    )
    selection: Selection = Field(default_factory=Selection, description="which tasks (schema 2)")
    protocol: str | None = Field(None, description="the rule set played under (schema 2)")
    package_version: str
    git_commit: str | None = None
    sessions: list[Session] = Field(default_factory=list)

    @model_validator(mode="after")
    def _derive_identity(self) -> Manifest:
        """A schema-1 manifest (0.1.0) gets its identity derived from config and players."""
        if self.schema_version < 2:
            if not self.roles:
                self.roles = legacy_roles(self.players, self.config)
            if self.selection == Selection():
                self.selection = legacy_selection(self.config, self.n_tasks)
            if self.protocol is None and isinstance(self.config.get("protocol"), str):
                self.protocol = self.config["protocol"]
        return self


def contradictions(record: EpisodeRecord) -> list[str]:
    """Where ``record`` disagrees with itself (empty when it does not): its last
    ``episode_end`` event must say its outcome and reason, and a ``who_failed`` label belongs
    to an episode that did not succeed. Checked on every write of ``episodes.jsonl``."""
    found: list[str] = []
    ends = [e for e in record.events if e.kind == "episode_end"]
    if ends:
        said = ends[-1].data
        if said.get("outcome") != record.outcome.value:
            found.append(
                f"its episode_end event says {said.get('outcome')!r}, the record "
                f"{record.outcome.value!r}"
            )
        elif said.get("reason") != record.reason:
            found.append(
                f"its episode_end event gives the reason {said.get('reason')!r}, the record "
                f"{record.reason!r}"
            )
    if record.outcome.value == "success" and "who_failed" in record.labels:
        found.append(f"it succeeded but is labelled who_failed={record.labels['who_failed']!r}")
    return found
