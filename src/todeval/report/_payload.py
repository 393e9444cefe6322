"""The data the page's script renders (runs, benchmark profiles, transcripts), as inert JSON.

Transcripts are rendered from each benchmark's profile (event views, detail layouts, labels,
roles, group noun), sent here as data: the script knows no benchmark. A static report embeds a
bounded set of episodes (``mode="embedded"``); ``todeval view`` embeds none and the script
fetches them from ``/api/*`` (``mode="api"``).

The JSON goes into ``<script type="application/json">``, which browsers never execute; ``<``,
``>``, ``&`` and U+2028/U+2029 are written as ``\\uXXXX`` escapes so that no text inside can close
the element or be read as markup. The page reads it with ``JSON.parse(el.textContent)``.

A static report's transcripts above :data:`COMPRESS_ABOVE` characters of JSON (a leaderboard's
worth: 100 runs x 50 transcripts is ~45 MB) go in ``episodes_gz`` instead of ``episodes``: the
same JSON array, gzipped and base64-encoded (~7x smaller), which the page's script inflates
with the browser's ``DecompressionStream`` before it lists them. Base64 holds no ``<`` or ``&``.
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from todeval.report._inputs import RunInput
from todeval.report._transcripts import EpisodeView
from todeval.report._transcripts import episode_view as episode_view  # where it was defined
from todeval.report._transcripts import script_safe_json as script_safe_json
from todeval.report.markup import Markup
from todeval.results.profile import BenchmarkProfile, DetailView, EventView, LabelSpec, RoleView

PAYLOAD_SCHEMA_VERSION = 3  # 3: episodes_gz
DATA_ELEMENT_ID = "todeval-data"
COMPRESS_ABOVE = 4_000_000
"""Embedded transcripts longer than this (characters of JSON) are gzipped (``episodes_gz``)."""
GZIP_LEVEL = 6


DataMode = Literal["embedded", "api"]


class EpisodeRow(BaseModel):
    """One line of the episode list (``/api/episodes``): no transcript."""

    run: str
    id: str
    outcome: str
    group: str
    labels: dict[str, str]
    turns: int


class RoleLine(BaseModel):
    """Who played a role of a run, with the role's display title (``User sim.: agenda``)."""

    role: str
    title: str
    label: str


class RunView(BaseModel):
    key: str
    benchmark: str
    roles: list[RoleLine]
    task_set: str
    n_episodes: int = Field(description="episodes on disk")
    n_shown: int = Field(description="transcripts embedded (static) or indexed (view)")
    provisional: bool
    primary: str = Field(description="the benchmark's primary metric")


class ProfileView(BaseModel):
    """What the page's script needs of a benchmark profile to render its transcripts."""

    benchmark: str
    title: str
    group_noun: str
    roles: list[RoleView]
    subject: str | None = Field(description="the role whose messages sit on the right")
    failure: str | None = Field(description="the label that classifies failures")
    labels: list[LabelSpec]
    events: dict[str, EventView]
    details: list[DetailView]


class Payload(BaseModel):
    schema_version: int = PAYLOAD_SCHEMA_VERSION
    title: str
    generated_at: str
    live: bool = False
    mode: DataMode = Field(
        "embedded", description="embedded: episodes below; api: fetched from /api/* (view)"
    )
    version: str = ""
    poll_ms: int = 2000
    transcripts_cap: int | None = Field(None, description="per-run cap (None: all)")
    runs: list[RunView]
    profiles: dict[str, ProfileView]
    episodes_gz: str = Field(
        "", description="more episodes: their JSON array, gzipped, base64 (a big static report)"
    )
    episodes: list[EpisodeView]


def profile_view(p: BenchmarkProfile) -> ProfileView:
    subject = p.panel.subject if p.panel else (p.roles[0].name if p.roles else None)
    return ProfileView(
        benchmark=p.benchmark,
        title=p.display,
        group_noun=p.group_noun,
        roles=list(p.roles),
        subject=subject,
        failure=p.failure_label(),
        labels=list(p.labels),
        events=dict(p.events),
        details=list(p.details),
    )


def run_view(run: RunInput, profile: BenchmarkProfile, n_shown: int | None = None) -> RunView:
    roles = [
        RoleLine(role=role, title=profile.role_title(role), label=identity.label)
        for role, identity in run.manifest.roles.items()
    ]
    return RunView(
        key=run.key,
        benchmark=run.summary.benchmark,
        roles=roles,
        task_set=run.task_set,
        n_episodes=run.n_episodes,
        n_shown=len(run.transcripts) if n_shown is None else n_shown,
        provisional=run.provisional,
        primary=profile.primary,
    )


def gzip_base64(views: Sequence[str], level: int = GZIP_LEVEL) -> str:
    """``views`` (JSON texts) as one JSON array, gzipped and base64-encoded, compressed as
    it goes (the joined array is never held). The gzip header carries no time: the same
    views give the same text."""
    packer = zlib.compressobj(level, zlib.DEFLATED, 31)
    chunks = [packer.compress(b"[")]
    for i, view in enumerate(views):
        chunks.append(packer.compress(("," + view if i else view).encode("utf-8")))
    chunks.append(packer.compress(b"]"))
    chunks.append(packer.flush())
    return base64.b64encode(b"".join(chunks)).decode("ascii")


def embed(
    payload: Payload, episodes: Sequence[str] = (), compress_above: int | None = COMPRESS_ABOVE
) -> Markup:
    """The payload as an inert JSON element; ``episodes`` (:class:`EpisodeView` s already as
    script-safe JSON, :attr:`Transcripts.views`) go after ``payload.episodes``, or, above
    ``compress_above`` characters in all (None: never), into ``episodes_gz``."""
    if episodes and compress_above is not None and sum(map(len, episodes)) > compress_above:
        packed = payload.model_copy(update={"episodes_gz": gzip_base64(episodes)})
        data = script_safe_json(packed.model_dump_json())
        return Markup(f'<script type="application/json" id="{DATA_ELEMENT_ID}">{data}</script>')
    data = script_safe_json(payload.model_dump_json())
    if not episodes:
        return Markup(f'<script type="application/json" id="{DATA_ELEMENT_ID}">{data}</script>')
    assert data.endswith("]}")  # episodes is the payload's last field
    parts = [f'<script type="application/json" id="{DATA_ELEMENT_ID}">', data[:-2]]
    parts += [",", ",".join(episodes)] if payload.episodes else [",".join(episodes)]
    return Markup("".join([*parts, "]}</script>"]))
