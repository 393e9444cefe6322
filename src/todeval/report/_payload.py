"""The data the page's script renders (transcripts), embedded as inert JSON.

The JSON goes into ``<script type="application/json">``, which browsers never execute; ``<``,
``>``, ``&`` and U+2028/U+2029 are written as ``\\uXXXX`` escapes so that no text inside can close
the element or be read as markup. The page reads it with ``JSON.parse(el.textContent)``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from todeval.core.records import EpisodeRecord, Event
from todeval.report._inputs import RunInput
from todeval.report._markup import Markup

PAYLOAD_SCHEMA_VERSION = 1
DATA_ELEMENT_ID = "todeval-data"


class EpisodeView(BaseModel):
    run: str = Field(description="run key")
    id: str
    task: str
    trial: int
    group: str
    outcome: str
    reason: str
    turns: int
    seed: str = Field(description="as text: the 64-bit seed does not fit a JS number")
    labels: dict[str, str]
    metrics: dict[str, float]
    events: list[Event]
    details: dict[str, Any]
    usage: dict[str, dict[str, Any]]
    duration_s: float
    started_at: str


class RunView(BaseModel):
    key: str
    benchmark: str
    system: str
    user: str
    models: str
    task_set: str
    n_episodes: int
    provisional: bool
    primary: str = Field(description="the benchmark's primary metric")


class Payload(BaseModel):
    schema_version: int = PAYLOAD_SCHEMA_VERSION
    title: str
    generated_at: str
    live: bool = False
    version: str = ""
    poll_ms: int = 2000
    runs: list[RunView]
    episodes: list[EpisodeView]


def episode_view(run: str, r: EpisodeRecord) -> EpisodeView:
    return EpisodeView(
        run=run,
        id=r.episode_id,
        task=r.task_id,
        trial=r.trial,
        group=r.group,
        outcome=r.outcome.value,
        reason=r.reason,
        turns=r.turns,
        seed=str(r.seed),
        labels=r.labels,
        metrics=r.metrics,
        events=r.events,
        details=r.details,
        usage={role: u.model_dump(exclude={"call_latencies_s"}) for role, u in r.usage.items()},
        duration_s=r.timing.duration_s,
        started_at=r.timing.started_at,
    )


def run_view(run: RunInput, primary: str) -> RunView:
    return RunView(
        key=run.key,
        benchmark=run.summary.benchmark,
        system=run.system,
        user=run.user_label,
        models=run.models,
        task_set=run.task_set,
        n_episodes=len(run.episodes),
        provisional=run.provisional,
        primary=primary,
    )


_JSON_ESCAPES = str.maketrans(
    {
        "<": "\\u003c",
        ">": "\\u003e",
        "&": "\\u0026",
        "\u2028": "\\u2028",
        "\u2029": "\\u2029",
    }
)


def script_safe_json(text: str) -> str:
    """JSON text that is inert inside a ``<script>`` element (and still the same JSON)."""
    return text.translate(_JSON_ESCAPES)


def embed(payload: Payload) -> Markup:
    data = script_safe_json(payload.model_dump_json())
    return Markup(f'<script type="application/json" id="{DATA_ELEMENT_ID}">{data}</script>')
