"""The process an isolated player runs in (``todeval run ... --isolate``).

Started by :mod:`todeval.dialogue.isolation` inside an OS sandbox, it imports the player class
(``package.module:Class``) -- in here, never in the evaluator -- and plays it over its standard
input and output, one JSON object a line:

* the first line sets the player up: ``{"player": "REF[?key=value...]", "role": ...,
  "model": SPEC|null, "temperature": ..., "max_tokens": ..., "extra": {...},
  "prompts": {"defaults": {...}, "overrides": {...}}|null}``;
* then requests ``{"id": N, "instance": K, "method": "start"|"respond"|OTHER, "arg": JSON,
  "before": [[METHOD, JSON], ...]}``: ``start`` builds instance ``K`` (one a dialogue) and
  starts it with the view, ``respond`` hands it an observation, another async method of the
  class is called with its argument; ``before`` replays the synchronous calls the evaluator
  made since the last request (their results are not sent back); arguments are
  :func:`todeval.dialogue.wire.encode`'s tagged JSON, rebuilt here as the same objects;
* each answered ``{"id": N, "ok": true, "value": JSON, "grown": {field: [new items]}}`` (items
  the player appended to a list of its start view, e.g. the usage of its model calls) or
  ``{"id": N, "ok": false, "error": "one line", "infrastructure": bool}``.

What the player prints goes to standard error; the protocol keeps the original standard output
for itself. ``--describe REF`` prints whether the class loads and its extra methods, then exits.
Benchmark-neutral: nothing here names a benchmark.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import sys
from typing import Any

from pydantic import BaseModel, TypeAdapter

from todeval.dialogue.wire import decode


def extra_methods(cls: type) -> dict[str, bool]:
    """The class's public methods besides ``start`` and ``respond``: name -> whether async
    (the evaluator's stand-in gets the same, so optional protocols still match)."""
    found: dict[str, bool] = {}
    for name in dir(cls):
        if name.startswith("_") or name in ("start", "respond"):
            continue
        attr = inspect.getattr_static(cls, name)
        if isinstance(attr, classmethod | staticmethod) or not inspect.isfunction(attr):
            continue
        found[name] = inspect.iscoroutinefunction(attr)
    return found


def describe(reference: str) -> dict[str, Any]:
    """``--describe REF``: whether the class loads here, and its extra methods."""
    from todeval.dialogue.participants import Role

    role: Role[Any] = Role("player", "player", object, {}, view=lambda context: context)
    try:
        factory = role.resolve(reference)
    except Exception as exc:
        return {"ok": False, "error": _line(exc)}
    return {"ok": True, "methods": extra_methods(factory.cls)}


def _model_name(value: Any) -> str | None:
    """``module:Qualname`` of a pydantic reply (the evaluator rebuilds it only when the class
    is todeval's own and the role declares no reply type), else None."""
    kind = type(value)
    return f"{kind.__module__}:{kind.__qualname__}" if isinstance(value, BaseModel) else None


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
        for name, buffered in request.get("before", []):  # sync calls made since the last
            getattr(self.players[instance], str(name))(decode(buffered))
        method = str(request["method"])
        arg = decode(request["arg"])
        if method == "start":
            player = self.factory.build(self.options)
            self.players[instance] = player
            self.views[instance] = arg
            self.sizes[instance] = _list_sizes(arg)
            await player.start(arg)
            value: Any = None
        elif method == "respond":
            value = await self.players[instance].respond(arg)
        elif method in extra_methods(type(self.players[instance])):
            value = await getattr(self.players[instance], method)(arg)
        else:
            raise ValueError(f"unknown method {method!r}")
        return {
            "value": TypeAdapter(type(value)).dump_python(value, mode="json"),
            "model": _model_name(value),
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
    if len(sys.argv) == 3 and sys.argv[1] == "--describe":
        print(json.dumps(describe(sys.argv[2])))
        return
    protocol_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # the player's prints go to standard error
    sys.stdout = sys.stderr
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(protocol_out))


if __name__ == "__main__":
    main()
