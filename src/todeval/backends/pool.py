"""The run's models: one backend per model spec, sharing one response cache and one pool of
per-endpoint connection limits, built lazily and closed once at the end of the run."""

from __future__ import annotations

from typing import Any

from todeval.backends.cache import ResponseCache, default_cache_path
from todeval.backends.factory import make_backend
from todeval.backends.retry import LimiterPool, RetryPolicy
from todeval.backends.scripted import ReplyFunction
from todeval.backends.types import Backend


class ModelPool:
    """Backends by spec for one run (every participant and episode shares them)."""

    def __init__(
        self,
        models_file: str | None,
        *,
        cache: bool = True,
        cache_path: str | None = None,
        retry: RetryPolicy | None = None,
        script: ReplyFunction | None = None,
        seed: int = 0,
        concurrency: int | None = None,
    ) -> None:
        self.models_file = models_file
        self.concurrency = concurrency  # the run's episodes in flight: the default call limit
        self._use_cache = cache
        self._cache_path = cache_path
        self._retry = retry
        self._script = script
        self._seed = seed
        self._limiters = LimiterPool()
        self._cache: ResponseCache | None = None
        self.built: dict[str, Backend] = {}

    def get(self, spec: str) -> Backend:
        """The backend of ``spec`` (built on first use; errors in the spec surface here)."""
        if spec not in self.built:
            if self._use_cache and self._cache is None and not spec.startswith("scripted:"):
                self._cache = ResponseCache(self._cache_path or default_cache_path())
            self.built[spec] = make_backend(
                spec,
                self.models_file,
                cache=self._cache,
                limiters=self._limiters,
                retry=self._retry,
                seed=self._seed,
                script=self._script,
                concurrency=self.concurrency,
            )
        return self.built[spec]

    def maybe(self, spec: str | None) -> Backend | None:
        return None if spec is None else self.get(spec)

    def infos(self) -> dict[str, Any]:
        """What each built model is (recorded in the manifest)."""
        return {spec: b.info.model_dump(mode="json") for spec, b in self.built.items()}

    async def aclose(self) -> None:
        for backend in self.built.values():
            await backend.aclose()
        self.built = {}
        if self._cache is not None:
            self._cache.close()
            self._cache = None
