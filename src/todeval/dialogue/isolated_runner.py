"""The process an isolated player runs in (``todeval run ... --isolate``).

Started by :mod:`todeval.dialogue.isolation` inside an OS sandbox, it imports the player class
(``package.module:Class``) -- in here, never in the evaluator -- and plays it over its standard
input and output, one JSON object a line:

* the first line sets the player up: ``{"player": "REF[?key=value...]", "role": ...,
  "model": SPEC|null, "temperature": ..., "max_tokens": ..., "extra": {...},
  "prompts": {"defaults": {...}, "overrides": {...}}|null}``;
* then requests ``{"id": N, "instance": K, "method": "start"|"respond", "type": "module:Qual",
  "arg": JSON}``: ``start`` builds instance ``K`` (one a dialogue) and starts it with the view,
  ``respond`` hands it an observation; ``type`` names the argument's class, rebuilt here with
  pydantic;
* each answered ``{"id": N, "ok": true, "value": JSON, "grown": {field: [new items]}}`` (items
  the player appended to a list of its start view, e.g. the usage of its model calls) or
  ``{"id": N, "ok": false, "error": "one line", "infrastructure": bool}``.

What the player prints goes to standard error; the protocol keeps the original standard output
for itself. Benchmark-neutral: nothing here names a benchmark.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from typing import Any

from pydantic import TypeAdapter


def _type_of(name: str) -> Any:
    from todeval.core.imports import load_reference

    return load_reference(name, what="view type")


class _Instances:
    """The players of this process by instance id, with the start view each was handed (its
    lists are watched for what the player appends)."""

    def __init__(self, setup: dict[str, Any]) -> None:
        from todeval.dialogue.participants import PlayerOptions, Role
        from todeval.dialogue.prompts import PromptSet

        prompts = setup.get("prompts")
        model = None
        if setup.get("model"):
            from todeval.backends.pool import ModelPool

            self.pool: ModelPool | None = ModelPool(None, cache=False, seed=0)
            model = self.pool.maybe(str(setup["model"]))
        else:
            self.pool = None
        self.options = PlayerOptions(
            role=str(setup.get("role", "")),
            model=model,
            temperature=float(setup.get("temperature") or 0.0),
            max_tokens=setup.get("max_tokens"),
            prompts=PromptSet(prompts["defaults"], prompts["overrides"]) if prompts else None,
            extra=dict(setup.get("extra") or {}),
        )
        role: Role[Any] = Role(
            str(setup.get("role", "")), "player", object, {}, view=lambda context: context
        )
        self.factory = role.resolve(str(setup["player"]))  # with its ?key=value parameters
        self.players: dict[int, Any] = {}
        self.views: dict[int, Any] = {}
        self.sizes: dict[int, dict[str, int]] = {}

    async def call(self, request: dict[str, Any]) -> dict[str, Any]:
        instance = int(request["instance"])
        method = str(request["method"])
        arg_type = _type_of(str(request["type"]))
        arg = TypeAdapter(arg_type).validate_python(request["arg"])
        if method == "start":
            player = self.factory.build(self.options)
            self.players[instance] = player
            self.views[instance] = arg
            self.sizes[instance] = _list_sizes(arg)
            await player.start(arg)
            value: Any = None
        elif method == "respond":
            value = await self.players[instance].respond(arg)
        else:
            raise ValueError(f"unknown method {method!r}")
        return {
            "value": TypeAdapter(type(value)).dump_python(value, mode="json"),
            "grown": self._grown(instance),
        }

    def _grown(self, instance: int) -> dict[str, Any]:
        view = self.views.get(instance)
        before = self.sizes.get(instance, {})
        grown: dict[str, Any] = {}
        for name, size in before.items():
            items = getattr(view, name)
            if len(items) > size:
                new = items[size:]
                grown[name] = [TypeAdapter(type(i)).dump_python(i, mode="json") for i in new]
                before[name] = len(items)
        return grown


def _list_sizes(view: object) -> dict[str, int]:
    names = getattr(view, "__dataclass_fields__", None) or getattr(view, "model_fields", None)
    if not names:
        return {}
    return {n: len(getattr(view, n)) for n in names if isinstance(getattr(view, n, None), list)}


async def _serve(protocol_out: Any) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=64 * 1024 * 1024)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    lock = asyncio.Lock()

    async def send(body: dict[str, Any]) -> None:
        async with lock:
            protocol_out.write(json.dumps(body, ensure_ascii=False) + "\n")
            protocol_out.flush()

    first = await reader.readline()
    if not first:
        return
    try:
        instances = _Instances(json.loads(first))
    except Exception as exc:  # the setup failed: say why once, then stop
        await send({"id": 0, "ok": False, "error": _line(exc), "infrastructure": False})
        return
    await send({"id": 0, "ok": True, "value": None, "grown": {}})
    tasks: set[asyncio.Task[None]] = set()

    async def answer(request: dict[str, Any]) -> None:
        from todeval.errors import InfrastructureError

        try:
            body = await instances.call(request)
            await send({"id": request["id"], "ok": True, **body})
        except Exception as exc:
            infra = isinstance(exc, InfrastructureError)
            await send(
                {"id": request["id"], "ok": False, "error": _line(exc), "infrastructure": infra}
            )

    while True:
        line = await reader.readline()
        if not line:
            break
        task = asyncio.create_task(answer(json.loads(line)))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)
    if instances.pool is not None:
        await instances.pool.aclose()


def _line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:500]


def main() -> None:
    protocol_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # the player's prints go to standard error
    sys.stdout = sys.stderr
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(protocol_out))


if __name__ == "__main__":
    main()
