"""Hostile files for every path the command line takes, found from the parser itself.

:func:`path_arguments` walks ``todeval``'s full argument parser (every command of every
installed plug-in) and yields each argument that names a file or a directory to *read*: its
metavar is one of :data:`PATH_METAVARS`, or its ``type`` is :class:`pathlib.Path`. Outputs
(``-o``/``--output``, ``--out``, ``--write-prompts``) are left out: they are written, and
``--out`` of a run is read on resume, which the run-directory cases cover through the commands
that read runs. A command added later is fuzzed without anyone listing it.

:func:`hostile` makes one hostile input of a named kind (a directory where a file is expected,
a dangling link, a link to ``/dev/zero``, bytes that are not UTF-8, JSON nested 100,000 deep,
a run directory whose manifest is any of those, ...); :func:`mutated` makes a seeded byte-level
mutation of a small valid-looking document. :func:`argv_for` builds the command line that hands
the hostile path to one argument, filling the command's other required arguments.

Used by ``tests/integrity/test_cli_readers_fuzz.py`` (a seeded subset) and
``bench/bench_cli_readers_fuzz.py`` (over 2,000 cases).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

PATH_METAVARS = frozenset(
    {"FILE", "FILES", "DIR", "PATH", "RUN", "RUN_DIR", "RUNS_DIR", "PACK", "PRED.json",
     "TRANSCRIPTS", "ITEMS", "ANSWERS", "KEY", "RUNS_OR_TASKS"}
)  # fmt: skip
"""Metavars that mean "a path": a new path argument uses one of them (a test checks that
arguments typed ``Path`` do)."""

WRITTEN = frozenset({"output", "out", "write_prompts", "csv", "report"})
"""Destinations that are written, not read."""

MODEL_DEST = re.compile(r"model|url|models_file")
"""Destinations that name a model, a models file or an endpoint: where a credential may come
in (a URL's query or userinfo, a key variable a models file names)."""

MODEL_METAVARS = frozenset({"SPEC"})
"""Metavars that name a model whatever the destination (``data bargain --generator SPEC``)."""

SERVING = (("view",), ("annotate", "serve"), ("serve", "tools"))
"""Commands that serve until stopped once their input reads: a case there may run forever by
design, so they are fuzzed with a port no one can bind (``--port 99999`` where they take one)
or left to their own tests."""


@dataclass(frozen=True)
class PathArgument:
    """One argument of one command that reads a path."""

    command: tuple[str, ...]
    option: str | None  # None: positional
    dest: str
    metavar: str
    parser: argparse.ArgumentParser

    @property
    def name(self) -> str:
        return " ".join([*self.command, self.option or self.metavar])


def _walk(
    parser: argparse.ArgumentParser, words: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield words, parser
    for action in subs:
        for name, sub in action.choices.items():
            yield from _walk(sub, (*words, name))


def writing_commands(
    *, taking_model: bool = False
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command that writes (one of its destinations is in :data:`WRITTEN`), as its words
    and its parser; with ``taking_model``, only those that also take a model, a models file or
    an endpoint URL (:func:`takes_model`). Serving commands included."""
    from todeval.cli import build_parser

    found: list[tuple[tuple[str, ...], argparse.ArgumentParser]] = []
    for words, parser in _walk(build_parser(), ()):
        dests = [action.dest for action in parser._actions]
        if not any(dest in WRITTEN for dest in dests):
            continue
        if taking_model and not takes_model(parser):
            continue
        found.append((words, parser))
    return found


def takes_model(parser: argparse.ArgumentParser) -> bool:
    """Whether a command takes a model, a models file or an endpoint URL: a destination
    matching :data:`MODEL_DEST` or a metavar in :data:`MODEL_METAVARS`."""
    return any(
        MODEL_DEST.search(action.dest) or action.metavar in MODEL_METAVARS
        for action in parser._actions
    )


def is_path(action: argparse.Action) -> bool:
    metavar = action.metavar if isinstance(action.metavar, str) else None
    return metavar in PATH_METAVARS or action.type is Path


def path_arguments() -> list[PathArgument]:
    """Every argument of every command that reads a path (see the module)."""
    from todeval.cli import build_parser

    found: list[PathArgument] = []
    for words, parser in _walk(build_parser(), ()):
        if words in SERVING:
            continue
        for action in parser._actions:
            if not is_path(action) or action.dest in WRITTEN:
                continue
            metavar = action.metavar if isinstance(action.metavar, str) else action.dest
            option = action.option_strings[-1] if action.option_strings else None
            found.append(PathArgument(words, option, action.dest, metavar, parser))
    return found


def argv_for(argument: PathArgument, value: Path, scratch: Path) -> list[str]:
    """The command line that hands ``value`` to ``argument``; the command's other required
    arguments filled (paths and outputs under ``scratch``, choices with their first)."""
    argv = list(argument.command)
    positionals: list[str] = []
    for action in argument.parser._actions:
        if isinstance(action, argparse._HelpAction) or action.dest == "help":
            continue
        mine = action.dest == argument.dest
        required = mine or action.required or (not action.option_strings and action.nargs != "?"
                                                 and action.nargs != "*")  # fmt: skip
        if not required:
            continue
        if mine:
            text = str(value)
        elif action.dest in WRITTEN:
            text = str(scratch / f"out-{action.dest}")
        elif is_path(action):
            text = str(scratch / f"missing-{action.dest}")
        elif action.choices:
            text = str(next(iter(action.choices)))
        else:
            text = "x"
        if action.option_strings:
            argv += [action.option_strings[-1], text]
        else:
            positionals.append(text)
    if "--quiet" in argument.parser._option_string_actions:
        argv.append("--quiet")
    if argument.command[:1] == ("run",) and "--limit" in argument.parser._option_string_actions:
        argv += ["--limit", "1"]
    return argv + positionals


_DEEP_JSON = b"[" * 100_000 + b"]" * 100_000
_DEEP_YAML = b"a:\n" + b"".join(b"  " * i + b"- \n" for i in range(1, 3000))
_DEEP_TOML = b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n"


def _file(data: bytes) -> Callable[[Path], Path]:
    def make(where: Path) -> Path:
        where.write_bytes(data)
        return where

    return make


def _directory(where: Path) -> Path:
    where.mkdir()
    (where / "inner.json").write_text("{}")
    return where


def _dangling(where: Path) -> Path:
    where.symlink_to(where.with_name(where.name + "-nowhere"))
    return where


def _dev_zero(where: Path) -> Path:
    where.symlink_to("/dev/zero")
    return where


def _run_dir(manifest: bytes, episodes: bytes | None = None) -> Callable[[Path], Path]:
    def make(where: Path) -> Path:
        where.mkdir()
        (where / "manifest.json").write_bytes(manifest)
        if episodes is not None:
            (where / "episodes.jsonl").write_bytes(episodes)
        return where

    return make


def _run_dir_linked(where: Path) -> Path:
    where.mkdir()
    (where / "manifest.json").symlink_to("/dev/zero")
    (where / "episodes.jsonl").symlink_to("/proc/self/environ")
    return where


def _pack(schema: bytes, data: bytes | None = None) -> Callable[[Path], Path]:
    def make(where: Path) -> Path:
        where.mkdir()
        (where / "domain.yaml").write_bytes(schema)
        if data is not None:
            (where / "rows.json").write_bytes(data)
        return where

    return make


HOSTILE: dict[str, Callable[[Path], Path]] = {
    "directory": _directory,
    "dangling-link": _dangling,
    "dev-zero": _dev_zero,
    "empty": _file(b""),
    "not-utf8": _file(b'{"a": "caf\xe9"}\n'),
    "nul-bytes": _file(b"\x00" * 64),
    "deep-json": _file(_DEEP_JSON),
    "deep-jsonl": _file(b'{"a": 1}\n' + _DEEP_JSON + b"\n"),
    "deep-yaml": _file(_DEEP_YAML),
    "deep-toml": _file(_DEEP_TOML),
    "binary": _file(bytes(range(256)) * 8),
    "run-deep-manifest": _run_dir(_DEEP_JSON),
    "run-not-utf8": _run_dir(b'{"benchmark": "caf\xe9"}'),
    "run-deep-episode": _run_dir(b"{}", b'{"a": 1}\n' + _DEEP_JSON + b"\n"),
    "run-linked": _run_dir_linked,
    "pack-deep-yaml": _pack(_DEEP_YAML),
    "pack-not-utf8": _pack(b"\xff\xfe name: x\n"),
    "pack-deep-data": _pack(
        b"name: x\nentities:\n  car:\n    data: rows.json\n    slots: {}\n", _DEEP_JSON
    ),
}
"""Each kind of hostile input, made at a given path."""

_BASE = json.dumps(
    {"schema_version": 2, "benchmark": "booking", "items": [{"id": "a", "choice": ["x"]}],
     "models": {"m": {"spec": "scripted:x"}}, "turns": [[{"text": "hi", "speaker": "user"}]]}
).encode()  # fmt: skip


def hostile(kind: str, where: Path) -> Path:
    """A hostile input of ``kind`` (a key of :data:`HOSTILE`) made at ``where``."""
    return HOSTILE[kind](where)


def mutated(rng: random.Random, where: Path) -> Path:
    """A seeded byte-level mutation of a small JSON document, or of it as JSONL or TOML."""
    data = bytearray(rng.choice([_BASE, _BASE + b"\n" + _BASE + b"\n", b'[m]\nspec = "x"\n']))
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        at = rng.randrange(len(data) + 1)
        if op == 0 and data:
            del data[at : at + rng.randint(1, 16)]
        elif op == 1:
            data[at:at] = bytes([rng.randrange(256)])
        elif op == 2:
            data[at:at] = rng.choice([b"[" * 3000, b"{" * 3000, b"\xff\xfe", b"\x00", b"NaN",
                                      b"1e999", b'"\\ud800"', b"\n"])  # fmt: skip
        elif op == 3:
            data = data[:at]
        elif op == 4 and data:
            chunk = data[at : at + 32]
            data[at:at] = chunk * rng.randint(2, 50)
        else:
            data[at:at] = os.urandom(0) or bytes(rng.randrange(256) for _ in range(8))
    where.write_bytes(bytes(data))
    return where


__all__ = [
    "HOSTILE",
    "MODEL_DEST",
    "MODEL_METAVARS",
    "PATH_METAVARS",
    "WRITTEN",
    "PathArgument",
    "argv_for",
    "hostile",
    "is_path",
    "mutated",
    "path_arguments",
    "takes_model",
    "writing_commands",
]
