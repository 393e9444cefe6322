"""``make_backend``: a spec string or a models-file name -> a ready backend stack.

The stack is ``CachingBackend(RetryingBackend(raw))``: the cache (when given, and not for the
scripted backend) answers repeated deterministic calls without touching the endpoint; the retry
wrapper applies the timeout, retries and the endpoint's connection limit; the raw backend talks
to the model and fills the call's accounting.
"""

from __future__ import annotations

import os
import random
from collections.abc import Mapping
from pathlib import Path

from todeval.backends.cache import CachingBackend, ResponseCache
from todeval.backends.llamacpp_backend import (
    SMOLLM2_CONTEXT,
    SMOLLM2_PARAMETERS,
    LlamaCppBackend,
    find_smollm2,
)
from todeval.backends.retry import Clock, LimiterPool, RetryingBackend, RetryPolicy
from todeval.backends.scripted import ReplyFunction, Script, ScriptedBackend, load_script
from todeval.backends.spec import (
    DEFAULT_OPENAI_KEY_ENV,
    DEFAULT_OPENAI_URL,
    ModelEntry,
    load_models_file,
    parse_model_spec,
)
from todeval.backends.types import (
    MAX_CONNECTION_LIMIT,
    Backend,
    BackendKind,
    ModelInfo,
    SchemaMode,
    ToolMode,
)
from todeval.core.redact import add_secret
from todeval.errors import UsageError, choice_error

DEFAULT_CONNECTION_LIMIT = {"openai": 8, "llamacpp": 1, "scripted": 64}
"""Calls in flight per endpoint when neither the models file nor the run says (a backend built
outside a run). A run passes its ``--max-concurrency`` instead (:func:`connection_limit`)."""
ONE_CALL_AT_A_TIME = frozenset({"llamacpp"})
"""Backends that run one call at a time whatever the run's concurrency (in-process models)."""
NO_KEY = "EMPTY"  # what local OpenAI-compatible servers are sent when no key variable is named


def resolve_entry(
    spec_or_name: str, models: Mapping[str, ModelEntry] | None
) -> tuple[str, ModelEntry]:
    """The (name, entry) for a models-file name, or a bare entry for a spec string."""
    if models is not None and spec_or_name in models:
        return spec_or_name, models[spec_or_name]
    if ":" in spec_or_name:
        parse_model_spec(spec_or_name)  # raises a usage error for a bad spec
        return spec_or_name, ModelEntry(spec=spec_or_name)
    if models is not None:
        raise choice_error("model", spec_or_name, list(models))
    raise UsageError(
        f"unknown model {spec_or_name!r}: did you mean openai:{spec_or_name}@<url> (the model "
        "on an OpenAI-compatible endpoint, e.g. https://api.openai.com/v1)? A model is a spec "
        "such as openai:<model>@<url> or a name defined in a models file (--models-file)"
    )


def connection_limit(backend: BackendKind, entry: ModelEntry, concurrency: int | None) -> int:
    """Calls in flight allowed to the endpoint: the models file's ``connection_limit``; else
    the run's concurrency (``concurrency``, its ``--max-concurrency``), so that every episode
    in flight can have its call in flight; else the backend's default. Backends in
    :data:`ONE_CALL_AT_A_TIME` keep their 1 unless the models file says otherwise."""
    if entry.connection_limit is not None:
        return entry.connection_limit
    if concurrency is None or backend in ONE_CALL_AT_A_TIME:
        return DEFAULT_CONNECTION_LIMIT[backend]
    return max(1, min(concurrency, MAX_CONNECTION_LIMIT))


def model_info(
    name: str,
    entry: ModelEntry,
    *,
    tool_mode: ToolMode | None = None,
    schema_mode: SchemaMode | None = None,
    api_key_env: str | None = None,
    concurrency: int | None = None,
) -> ModelInfo:
    """The :class:`ModelInfo` of a models-file entry (explicit arguments win); ``concurrency``
    is the run's episodes in flight (see :func:`connection_limit`)."""
    parsed = parse_model_spec(entry.spec)
    backend = parsed.backend
    model = parsed.target
    parameters = entry.parameters
    context = entry.context_size
    default_tools: ToolMode = "native" if backend == "openai" else "text"
    key_env = api_key_env or entry.api_key_env
    if backend == "openai" and key_env is None and parsed.base_url == DEFAULT_OPENAI_URL:
        key_env = DEFAULT_OPENAI_KEY_ENV
    elif parsed.url_from_env and key_env is None and os.environ.get(DEFAULT_OPENAI_KEY_ENV):
        key_env = DEFAULT_OPENAI_KEY_ENV  # OPENAI_BASE_URL with OPENAI_API_KEY: the SDK's pair
    if backend == "llamacpp" and model == "smollm2":
        model = "SmolLM2-135M-Instruct"
        parameters = parameters or SMOLLM2_PARAMETERS
        context = context or SMOLLM2_CONTEXT
    optional: dict[str, float] = {}
    if entry.timeout_s is not None:
        optional["timeout_s"] = entry.timeout_s
    if entry.max_retry_wait_s is not None:
        optional["max_retry_wait_s"] = entry.max_retry_wait_s
    return ModelInfo(
        name=name,
        spec=entry.spec,
        backend=backend,
        model=model,
        base_url=parsed.base_url,
        parameters=parameters,
        context_size=context,
        price_in_per_1m=entry.price_in_per_1m,
        price_out_per_1m=entry.price_out_per_1m,
        connection_limit=connection_limit(backend, entry, concurrency),
        api_key_env=key_env if backend == "openai" else None,
        generation=entry.generation,
        tool_mode=tool_mode or entry.tool_mode or default_tools,
        schema_mode=schema_mode or entry.schema_mode or "json_schema",
        **optional,
    )


def _api_key(info: ModelInfo, environ: Mapping[str, str]) -> str:
    if info.api_key_env is None:
        return NO_KEY
    key = environ.get(info.api_key_env, "")
    if not key:
        raise UsageError(f"model {info.name!r}: the API key variable {info.api_key_env} is not set")
    add_secret(key)  # never written anywhere, even when a server echoes it
    return key


def raw_backend(
    info: ModelInfo,
    *,
    environ: Mapping[str, str] | None = None,
    script: Script | ReplyFunction | None = None,
) -> Backend:
    """The backend that talks to the model, without retries or cache."""
    if info.backend == "openai":
        from todeval.backends.openai_backend import OpenAIBackend  # the SDK: only when used

        return OpenAIBackend(
            info, api_key=_api_key(info, os.environ if environ is None else environ)
        )
    if info.backend == "llamacpp":
        path = find_smollm2() if info.spec.endswith(":smollm2") else Path(info.model)
        return LlamaCppBackend(info, model_path=path.expanduser())
    source = script if script is not None else load_script(parse_model_spec(info.spec).target)
    return ScriptedBackend(info, source)


def make_backend(
    spec_or_name: str,
    models_file: str | Path | Mapping[str, ModelEntry] | None = None,
    *,
    cache: ResponseCache | None = None,
    retry: RetryPolicy | None = None,
    limiters: LimiterPool | None = None,
    clock: Clock | None = None,
    seed: int = 0,
    tool_mode: ToolMode | None = None,
    schema_mode: SchemaMode | None = None,
    api_key_env: str | None = None,
    environ: Mapping[str, str] | None = None,
    script: Script | ReplyFunction | None = None,
    concurrency: int | None = None,
) -> Backend:
    """Build ``CachingBackend(RetryingBackend(raw))`` for a spec string or a models-file name.

    ``cache=None`` bypasses the cache (``--no-cache``). Pass one ``limiters`` pool to every
    call so backends on the same endpoint share its connection limit; ``concurrency`` (a run's
    ``--max-concurrency``) is that limit when the models file sets none. ``script`` replaces the
    file of a ``scripted:`` spec (e.g. ``scripted:inline`` with a callable). ``seed`` seeds the
    backoff jitter. ``environ`` (default ``os.environ``) is where API keys are read.
    """
    if models_file is None or isinstance(models_file, Mapping):
        models = models_file
    else:
        models = load_models_file(models_file)
    name, entry = resolve_entry(spec_or_name, models)
    info = model_info(
        name,
        entry,
        tool_mode=tool_mode,
        schema_mode=schema_mode,
        api_key_env=api_key_env,
        concurrency=concurrency,
    )
    raw = raw_backend(info, environ=environ, script=script)
    limiter = limiters.get(info) if limiters is not None else None
    backend: Backend = RetryingBackend(
        raw, policy=retry, limiter=limiter, clock=clock, rng=random.Random(seed)
    )
    if cache is not None and info.backend != "scripted":
        backend = CachingBackend(backend, cache)
    return backend
