"""Response cache: content-addressed model replies in a local SQLite file.

The key is the SHA-256 of the canonical JSON of everything that determines a reply: the model
(spec, name sent to the server, tool and schema modes, default generation args) and the request
(messages, tools, tool choice, response schema, constrained flag, temperature, max tokens, seed,
extra args). By default only deterministic calls (temperature 0) are cached, so repeating a run
costs nothing; a hit keeps the original token counts, is marked ``cached`` and has zero latency
cost and FLOPs. Bypass the cache by not wrapping the backend (``make_backend(cache=None)``).

One :class:`ResponseCache` per process is the single writer of its file; SQLite calls are short
and made on the event loop thread, so they never interleave. Identical calls in flight at the
same time are coalesced: the first one calls the model, the others wait for its reply.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from todeval.backends.accounting import cached_usage
from todeval.backends.types import (
    Backend,
    GenerationRequest,
    GenerationResult,
    ModelInfo,
    ToolCallOut,
)
from todeval.core.records import CallUsage
from todeval.core.redact import redact
from todeval.errors import BadInputError

CACHE_FORMAT = 1


def default_cache_path() -> Path:
    """``$TODEVAL_CACHE_DIR`` or ``$XDG_CACHE_HOME/todeval`` (``~/.cache/todeval``) + file."""
    root = os.environ.get("TODEVAL_CACHE_DIR")
    if root:
        return Path(root) / "responses.sqlite"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "todeval" / "responses.sqlite"


def cache_key(info: ModelInfo, request: GenerationRequest) -> str:
    """Content address of a call: SHA-256 over the model identity and the request."""
    payload: dict[str, Any] = {
        "format": CACHE_FORMAT,
        "model": {
            "spec": info.spec,
            "model": info.model,
            "tool_mode": info.tool_mode,
            "schema_mode": info.schema_mode,
            "generation": info.generation,
        },
        "request": request.model_dump(mode="json"),
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class CachedReply(BaseModel):
    text: str
    tool_calls: list[ToolCallOut]
    finish_reason: str
    usage: CallUsage


class ResponseCache:
    """Key -> reply store in one SQLite file (created on first use)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(replies)")}
        except (OSError, sqlite3.Error) as exc:
            raise BadInputError(f"cannot open response cache {self.path}: {exc}") from None
        if not {"key", "value"} <= columns:
            self._db.close()
            raise BadInputError(
                f"{self.path}: not a todeval response cache (its table 'replies' has columns "
                f"{', '.join(sorted(columns))}); pass --cache-path FILE or --no-cache"
            )
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> CachedReply | None:
        row = self._db.execute("SELECT value FROM replies WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        try:
            reply = CachedReply.model_validate_json(row[0])
        except ValidationError:
            self.misses += 1
            return None  # written by an incompatible version: call again and overwrite
        self.hits += 1
        return reply

    def put(self, key: str, reply: CachedReply) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO replies (key, value) VALUES (?, ?)",
            (key, redact(reply.model_dump_json())),  # no key a reply or a spec carried
        )

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    def close(self) -> None:
        self._db.close()


def _from_cache(reply: CachedReply, role: str) -> GenerationResult:
    return GenerationResult(
        text=reply.text,
        tool_calls=reply.tool_calls,
        finish_reason=reply.finish_reason,
        usage=cached_usage(reply.usage, role=role),
    )


class CachingBackend:
    """Serves repeated deterministic calls from a :class:`ResponseCache`."""

    def __init__(self, inner: Backend, cache: ResponseCache, *, all_temperatures: bool = False):
        self.inner = inner
        self.cache = cache
        self.all_temperatures = all_temperatures
        self._pending: dict[str, asyncio.Future[None]] = {}

    @property
    def info(self) -> ModelInfo:
        return self.inner.info

    def __repr__(self) -> str:
        return f"CachingBackend({self.inner!r}, {str(self.cache.path)!r})"

    def cacheable(self, request: GenerationRequest) -> bool:
        return self.all_temperatures or request.temperature == 0.0

    async def generate(self, request: GenerationRequest, *, role: str) -> GenerationResult:
        if not self.cacheable(request):
            return await self.inner.generate(request, role=role)
        key = cache_key(self.inner.info, request)
        while True:
            hit = self.cache.get(key)
            if hit is not None:
                return _from_cache(hit, role)
            leader = self._pending.get(key)
            if leader is None:
                break
            await asyncio.wait([leader])  # same call in flight: wait, then look again
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending[key] = done
        try:
            result = await self.inner.generate(request, role=role)
            self.cache.put(
                key,
                CachedReply(
                    text=result.text,
                    tool_calls=result.tool_calls,
                    finish_reason=result.finish_reason,
                    usage=result.usage,
                ),
            )
            return result
        finally:
            del self._pending[key]
            done.set_result(None)

    async def aclose(self) -> None:
        await self.inner.aclose()
