"""Objects as JSON and back, for the isolated player's pipe (:mod:`.isolation`).

A view or an observation is any mix of dataclasses, pydantic models, ``random.Random`` streams,
lists, tuples, dicts and JSON scalars. :func:`encode` writes each with a tag naming its class
(``{"__dataclass__": "module:Qual", ...}``, ``{"__model__": ..., "data": ...}``,
``{"__random__": state}``); :func:`decode` rebuilds them, importing the named classes. Only the
evaluator's side encodes such objects: what comes back from the sandbox is checked against the
role's output type instead, never decoded by name (for a role that declares none, a pydantic
reply is rebuilt only as a class of todeval's own: :mod:`.isolation`).

Benchmark-neutral: nothing here names a benchmark.
"""

from __future__ import annotations

import dataclasses
import enum
import random
from typing import Any

from pydantic import BaseModel

from todeval.core.imports import load_reference


def _name(kind: type) -> str:
    return f"{kind.__module__}:{kind.__qualname__}"


def encode(obj: Any) -> Any:
    """``obj`` as tagged JSON (see the module)."""
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    if isinstance(obj, enum.Enum):
        return {"__enum__": _name(type(obj)), "value": encode(obj.value)}
    if isinstance(obj, random.Random):
        version, state, gauss = obj.getstate()
        return {"__random__": [version, list(state), gauss]}
    if isinstance(obj, BaseModel):
        return {"__model__": _name(type(obj)), "data": obj.model_dump(mode="json")}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        fields = {f.name: encode(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
        return {"__dataclass__": _name(type(obj)), "fields": fields}
    if isinstance(obj, list | tuple | set | frozenset):
        items = [encode(i) for i in obj]
        return items if isinstance(obj, list) else {"__tuple__": items}
    if isinstance(obj, dict):
        return {"__dict__": [[encode(k), encode(v)] for k, v in obj.items()]}
    raise TypeError(f"cannot send a {type(obj).__name__} to an isolated player")


def decode(data: Any) -> Any:
    """The object :func:`encode` wrote."""
    if isinstance(data, list):
        return [decode(i) for i in data]
    if not isinstance(data, dict):
        return data
    if "__random__" in data:
        version, state, gauss = data["__random__"]
        stream = random.Random()
        stream.setstate((version, tuple(state), gauss))
        return stream
    if "__model__" in data:
        kind = load_reference(str(data["__model__"]), what="model class")
        assert isinstance(kind, type) and issubclass(kind, BaseModel)
        return kind.model_validate(data["data"])
    if "__dataclass__" in data:
        kind = load_reference(str(data["__dataclass__"]), what="dataclass")
        assert isinstance(kind, type)
        fields = {k: decode(v) for k, v in dict(data["fields"]).items()}
        init = {f.name for f in dataclasses.fields(kind) if f.init}
        obj = kind(**{k: v for k, v in fields.items() if k in init})
        for k, v in fields.items():
            if k not in init:
                object.__setattr__(obj, k, v)
        return obj
    if "__enum__" in data:
        kind = load_reference(str(data["__enum__"]), what="enum")
        assert isinstance(kind, type)
        return kind(decode(data["value"]))
    if "__tuple__" in data:
        return tuple(decode(i) for i in data["__tuple__"])
    if "__dict__" in data:
        return {decode(k): decode(v) for k, v in data["__dict__"]}
    return {k: decode(v) for k, v in data.items()}


__all__ = ["decode", "encode"]
