"""Seeded mutations of input files, and the check every mutated case must pass.

A mutation is byte-level (truncation, a flipped byte, invalid UTF-8, a NUL, a repeated chunk,
an empty file, a BOM, binary noise) or structural (parse the JSON, replace one node by a
hostile value: null, a huge string, NaN, Infinity, 5,000-deep nesting, a lone surrogate, a
wrong type; delete or rename a key; wrap a node in a list) or, for TOML files, textual (a value
replaced by ``inf``/``nan``/a huge number/a deep array, a line deleted or doubled, a table
header repeated). The same seed gives the same cases.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import re
import signal
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from todeval.cli import main

CASE_TIMEOUT_S = 60


HOSTILE: tuple[Callable[[random.Random], Any], ...] = (
    lambda r: None,
    lambda r: True,
    lambda r: -1,
    lambda r: 0,
    lambda r: 10**400,
    lambda r: float("nan"),
    lambda r: float("inf"),
    lambda r: -float("inf"),
    lambda r: "",
    lambda r: "x" * r.choice([70_000, 1_200_000]),
    lambda r: "\ud800 lone surrogate",
    lambda r: "[value_name] " * 500,
    lambda r: [],
    lambda r: {},
    lambda r: {"k": [1, 2]},
    lambda r: f"__DEEP_{r.choice([80, 1200])}__",  # spliced in as text after dumping
    lambda r: "{" * 3000,
)


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _nodes(child, (*path, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _nodes(child, (*path, i))


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = new
    return value


def _structural(data: Any, rng: random.Random) -> bytes:
    nodes = list(_nodes(data))
    path = rng.choice(nodes)
    kind = rng.randrange(4)
    if kind == 0 or not path:
        data = _set(data, path, rng.choice(HOSTILE)(rng))
    elif kind == 1:  # delete the node from its parent
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        del parent[path[-1]]
    elif kind == 2:  # rename a key, or turn an index into a dict
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict):
            parent[f"{path[-1]}_x"] = parent.pop(path[-1])
        else:
            data = _set(data, path[:-1], {"0": parent})
    else:  # wrap the node in a list
        node = data
        for key in path:
            node = node[key]
        data = _set(data, path, [node])
    text = json.dumps(data, ensure_ascii=rng.random() < 0.5, allow_nan=True)
    text = re.sub(r'"__DEEP_(\d+)__"', lambda m: "[" * int(m[1]) + "]" * int(m[1]), text)
    return text.encode("utf-8", "surrogatepass")


def _bytewise(raw: bytes, rng: random.Random) -> bytes:
    kind = rng.randrange(8)
    n = max(len(raw), 1)
    at = rng.randrange(n)
    if kind == 0:
        return raw[:at]
    if kind == 1:
        return raw[:at] + bytes([rng.randrange(256)]) + raw[at + 1 :]
    if kind == 2:
        return raw[:at] + b"\xff\xfe\xc3(" + raw[at:]
    if kind == 3:
        return raw[:at] + b"\x00" + raw[at:]
    if kind == 4:
        chunk = raw[at : at + rng.randrange(1, 200)]
        return raw[:at] + chunk * rng.randrange(2, 50) + raw[at:]
    if kind == 5:
        return b""
    if kind == 6:
        return b"\xef\xbb\xbf" + raw
    return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4000)))


TOML_VALUES = (
    "inf", "-inf", "nan", "1e308", "-1", "0", "99999999999999999999", '""', '"' + "x" * 5000 + '"',
    "[" * 400 + "]" * 400, "{ a = " * 300 + "1" + " }" * 300, "true", '"os:system"',
    '"scripted:/nonexistent/file"', "[1, 2]", '"\\ud800"',
)  # fmt: skip


def _toml(raw: bytes, rng: random.Random) -> bytes:
    lines = raw.decode("utf-8").splitlines()
    kind = rng.randrange(5)
    i = rng.randrange(len(lines))
    if kind == 0:
        assignments = [j for j, line in enumerate(lines) if "=" in line]
        j = rng.choice(assignments)
        key = lines[j].split("=", 1)[0]
        lines[j] = f"{key}= {rng.choice(TOML_VALUES)}"
    elif kind == 1:
        del lines[i]
    elif kind == 2:
        lines.insert(i, lines[i])
    elif kind == 3:
        headers = [line for line in lines if line.startswith("[")]
        lines.insert(i, rng.choice(headers) if headers else "[x]")
    else:
        lines[i] = re.sub(
            r'"[^"]*"', lambda _m: '"' + rng.choice(["", "é" * 3, "a b/c"]) + '"', lines[i]
        )
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")


def mutate(raw: bytes, rng: random.Random, *, toml: bool = False) -> bytes:
    """One mutation of ``raw`` (JSON or TOML), drawn from ``rng``."""
    if rng.random() < 0.3:
        return _bytewise(raw, rng)
    if toml:
        return _toml(raw, rng)
    return _structural(json.loads(raw), rng)


@dataclass(frozen=True)
class Outcome:
    code: int | None  # None: timed out
    err: str


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _Timeout


def run_main(argv: Sequence[str], timeout_s: int = CASE_TIMEOUT_S) -> Outcome:
    """``main(argv)`` in process with a wall-clock limit (SIGALRM), stdout/stderr captured."""
    err = io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout_s)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main(list(argv))
    except _Timeout:
        return Outcome(None, err.getvalue())
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return Outcome(code, err.getvalue())


def problem(outcome: Outcome, allowed: frozenset[int] = frozenset({0, 3})) -> str | None:
    """What is wrong with a case's outcome (None: it passed): a hang, a traceback, exit 1 or
    another code not allowed, a rejection that is not one ``todeval: error:`` line."""
    if outcome.code is None:
        return "hang"
    if "Traceback" in outcome.err:
        return "traceback"
    if outcome.code not in allowed:
        return f"exit {outcome.code}"
    if outcome.code != 0:
        errors = [line for line in outcome.err.splitlines() if line.startswith("todeval: error:")]
        others = [
            line
            for line in outcome.err.splitlines()
            if line.strip() and not line.startswith(("todeval: error:", "todeval: warning:"))
        ]
        if len(errors) != 1 or others:
            return "not one error line"
    return None


def write_case(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


__all__ = ["CASE_TIMEOUT_S", "Outcome", "mutate", "problem", "run_main", "write_case"]
