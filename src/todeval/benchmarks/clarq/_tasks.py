"""ClarQ-LLM tasks: typed models, the loader and the response tree.

A task file (``<k>._<Type>.json``) is a list of 20 entries; entries 0-9 are the tasks. Files
1-26 are the test split (260 tasks), 27-31 the dev split (50 tasks, no purpose texts). Each task
has a seeker background (``background_splitted``) and a provider response tree:
``all_response`` holds the n+1 responses, then their n+1 labels (``0``, ``1``, ``1.1``, ...);
``all_response_exaplain`` (sic) the n purposes of responses 1..n. Response 0 is the vague first
answer; the others are the required information, released one node at a time
(:class:`ResponseTree`).

Normalisation on load: a leading ``Jax:`` and surrounding whitespace are removed from every
response (the prefix is missing from 52 English and 428 Chinese test responses); emit provider
messages with :func:`todeval.benchmarks.clarq._text.provider_message`.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from todeval.benchmarks.clarq._text import (
    LANGUAGE_DIRS,
    Language,
    provider_message,
    strip_provider_prefix,
)
from todeval.errors import BadInputError

Split = Literal["test", "dev"]
SPLITS: tuple[Split, ...] = ("test", "dev")
TEST_TYPES = range(1, 27)
"""Task-type numbers of the test split (files 1-26); 27-31 are dev."""
N_TYPES = 31
TASKS_PER_TYPE = 10
DEPTH_GROUPS = ("1", "2", "3+")

_LABEL = re.compile(r"\d+(?:\.\d+)*")
_FILE = re.compile(r"(\d+)\._(.+)\.json(?:\.gz)?")


def split_of(type_number: int) -> Split:
    return "test" if type_number in TEST_TYPES else "dev"


def label_key(label: str) -> tuple[int, ...]:
    """Sort key of a tree label: ``1.2`` < ``1.10`` < ``2`` (numeric, parent before children)."""
    return tuple(int(part) for part in label.split("."))


def depth_group(depth: int | None) -> str:
    """``1``, ``2`` or ``3+`` (depths 3 and 4 are rare: 17 and 2 test tasks); ``unknown``."""
    if depth is None:
        return "unknown"
    return str(depth) if depth < 3 else "3+"


def task_id(lang: Language, split: Split, type_name: str, index: int) -> str:
    """``<lang>/<split>/<type>-<index>``, e.g. ``en/test/Gather_Resources-0``."""
    return f"{lang}/{split}/{type_name}-{index}"


class Background(BaseModel):
    """What the seeker is told: its role, the task, and what it has and where it may go."""

    model_config = ConfigDict(frozen=True)

    role: str
    task: str
    items: list[str] = Field(default_factory=list)
    skills: list[str] = Field(default_factory=list, description="skills or actions")
    scenes: list[str] = Field(
        default_factory=list, description="places; restrictions in parentheses"
    )

    @classmethod
    def from_splitted(cls, parts: Sequence[str]) -> Background:
        """From ``background_splitted``: [role, task, items, skills, scenes] (lists joined by
        newlines, possibly empty)."""

        def lines(text: str) -> list[str]:
            return [line for line in text.split("\n") if line.strip()]

        role, task, items, skills, scenes = parts
        return cls(
            role=role.strip(),
            task=task.strip(),
            items=lines(items),
            skills=lines(skills),
            scenes=lines(scenes),
        )


class ResponseNode(BaseModel):
    """One required response (a node of the tree)."""

    model_config = ConfigDict(frozen=True)

    label: str = Field(description="tree label: '1', '1.1', ... (a child follows its parent)")
    position: int = Field(description="1..n: order in the task file (and of the purposes)")
    text: str = Field(description="the response without the 'Jax: ' prefix")
    purpose: str | None = Field(None, description="which uncertainty it resolves; None on dev")

    @property
    def parent(self) -> str | None:
        head, dot, _ = self.label.rpartition(".")
        return head if dot else None

    @property
    def depth(self) -> int:
        return self.label.count(".") + 1


class ClarqTask(BaseModel):
    """One ClarQ-LLM task in one language."""

    model_config = ConfigDict(frozen=True)

    task_id: str = Field(description="<lang>/<split>/<type>-<index>")
    lang: Language
    split: Split
    type_number: int = Field(description="1..31, the task file's number")
    type_name: str = Field(description="e.g. Gather_Resources (the task file's name)")
    index: int = Field(description="0..9, the entry in the task file")
    background: Background
    background_text: str = Field("", description="the file's human-readable background")
    opening: str = Field(description="response 0: the deliberately vague first answer")
    nodes: list[ResponseNode] = Field(description="responses 1..n in file order")

    @property
    def responses(self) -> list[str]:
        """Responses 0..n in file order, without prefix (the scorer's gold lines)."""
        return [self.opening, *(node.text for node in self.nodes)]

    @property
    def purposes(self) -> list[str]:
        """Purposes of responses 1..n (empty on dev, which has none)."""
        return [node.purpose for node in self.nodes if node.purpose is not None]

    @property
    def has_purposes(self) -> bool:
        return all(node.purpose is not None for node in self.nodes)

    @property
    def depth(self) -> int:
        return max(node.depth for node in self.nodes)

    @property
    def depth_group(self) -> str:
        return depth_group(self.depth)

    def gold_messages(self) -> list[str]:
        """Responses 0..n as the provider emits them (``Jax: `` + text)."""
        return [provider_message(text) for text in self.responses]

    def node(self, label: str) -> ResponseNode:
        for node in self.nodes:
            if node.label == label:
                return node
        raise KeyError(label)

    def tree(self, released: Iterable[str] = ()) -> ResponseTree:
        """A fresh response tree (optionally with some labels already released, in order)."""
        return ResponseTree(self.nodes, released)


class ResponseTree:
    """Which required responses are available, with unlock-on-release semantics.

    Top-level nodes (``1``, ``2``, ...) are available from the start; releasing a node removes
    it and unlocks its children (``1`` unlocks ``1.1``, ``1.2``). Available nodes are listed in
    label order (numeric per level). The original sorted with a key that ties for labels that
    differ only below the second level (``1.1.1``/``1.1.2``), so its order there followed
    Python's hash seed (19 test tasks); label order makes it deterministic.
    """

    def __init__(self, nodes: Sequence[ResponseNode], released: Iterable[str] = ()) -> None:
        self._nodes = {node.label: node for node in nodes}
        self._released: list[str] = []
        for label in released:
            self.release(label)

    def __len__(self) -> int:
        return len(self._nodes)

    def _unlocked(self, node: ResponseNode) -> bool:
        parent = node.parent
        return parent is None or parent in self._released

    def available(self) -> list[ResponseNode]:
        """Nodes that may be released now, in label order."""
        ready = [
            node
            for label, node in self._nodes.items()
            if label not in self._released and self._unlocked(node)
        ]
        return sorted(ready, key=lambda node: label_key(node.label))

    def is_available(self, label: str) -> bool:
        node = self._nodes.get(label)
        return node is not None and label not in self._released and self._unlocked(node)

    def release(self, label: str) -> ResponseNode:
        """Release an available node (its children become available); ``ValueError`` if the
        node is unknown, already released or still locked."""
        if label not in self._nodes:
            raise ValueError(f"no node {label!r} in the tree")
        if label in self._released:
            raise ValueError(f"node {label!r} was already released")
        node = self._nodes[label]
        if not self._unlocked(node):
            raise ValueError(f"node {label!r} is locked until {node.parent!r} is released")
        self._released.append(label)
        return node

    @property
    def released(self) -> list[ResponseNode]:
        """Released nodes in release order."""
        return [self._nodes[label] for label in self._released]

    @property
    def exhausted(self) -> bool:
        """Nothing left to release (every reachable node was given)."""
        return not self.available()

    def copy(self) -> ResponseTree:
        return ResponseTree(list(self._nodes.values()), self._released)


class TaskFormatError(ValueError):
    """A task entry that does not follow the ClarQ-LLM task format."""


def _string_list(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TaskFormatError(f"{what} is not a list of strings")
    return value


def _check_labels(labels: Sequence[str]) -> None:
    for label in labels:
        if not _LABEL.fullmatch(label):
            raise TaskFormatError(f"bad tree label {label!r}")
    if labels[0] != "0":
        raise TaskFormatError(f"the first label is {labels[0]!r}, not '0'")
    rest = labels[1:]
    if len(set(rest)) != len(rest) or "0" in rest:
        raise TaskFormatError("duplicate tree labels")
    for label in rest:
        if label.startswith("0."):
            raise TaskFormatError(f"label {label!r} hangs below response 0")
        parent = label.rpartition(".")[0]
        if parent and parent not in rest:
            raise TaskFormatError(f"label {label!r} has no parent {parent!r}")


def parse_task(
    entry: Any, *, lang: Language, type_number: int, type_name: str, index: int
) -> ClarqTask:
    """One task-file entry -> :class:`ClarqTask`; :class:`TaskFormatError` if malformed."""
    if not isinstance(entry, dict):
        raise TaskFormatError("not a JSON object")
    split = split_of(type_number)
    raw = entry.get("all_response")
    if not isinstance(raw, str) or not raw.strip():
        raise TaskFormatError("all_response is missing or empty")
    lines = raw.split("\n")
    if len(lines) % 2 or len(lines) < 4:
        raise TaskFormatError(f"all_response has {len(lines)} lines, expected 2(n+1), n >= 1")
    half = len(lines) // 2
    texts = [strip_provider_prefix(line) for line in lines[:half]]
    labels = [line.strip() for line in lines[half:]]
    _check_labels(labels)
    if any(not text for text in texts):
        raise TaskFormatError("an empty response")
    purposes = _string_list(entry.get("all_response_exaplain", []), "all_response_exaplain")
    if split == "test" and len(purposes) != half - 1:
        raise TaskFormatError(f"{len(purposes)} purposes for {half - 1} required responses")
    if split == "dev" and purposes and len(purposes) != half - 1:
        raise TaskFormatError(f"{len(purposes)} purposes for {half - 1} required responses")
    parts = _string_list(entry.get("background_splitted"), "background_splitted")
    if len(parts) != 5:
        raise TaskFormatError(f"background_splitted has {len(parts)} parts, expected 5")
    if not parts[0].strip() or not parts[1].strip():
        raise TaskFormatError("background_splitted lacks the role or the task")
    text = entry.get("background", "")
    nodes = [
        ResponseNode(
            label=label,
            position=i,
            text=texts[i],
            purpose=purposes[i - 1] if purposes else None,
        )
        for i, label in enumerate(labels)
        if i > 0
    ]
    return ClarqTask(
        task_id=task_id(lang, split, type_name, index),
        lang=lang,
        split=split,
        type_number=type_number,
        type_name=type_name,
        index=index,
        background=Background.from_splitted(parts),
        background_text=text if isinstance(text, str) else "",
        opening=texts[0],
        nodes=nodes,
    )


@dataclass(frozen=True)
class TaskFile:
    """One task file: its number, type name and where it is."""

    number: int
    type_name: str
    source: Traversable

    @property
    def split(self) -> Split:
        return split_of(self.number)


def _data_root(data_dir: str | Path | None) -> Traversable:
    if data_dir is not None:
        return Path(data_dir)
    return resources.files("todeval") / "data" / "clarq"


def task_files(lang: Language, data_dir: str | Path | None = None) -> list[TaskFile]:
    """The task files of a language in number order (package data unless ``data_dir``, a
    directory with ``English/`` and ``Chinese/`` holding ``<k>._<Type>.json[.gz]``)."""
    folder = _data_root(data_dir) / LANGUAGE_DIRS[lang]
    if not folder.is_dir():
        raise BadInputError(f"{folder}: no ClarQ task folder")
    found = []
    for item in folder.iterdir():
        match = _FILE.fullmatch(item.name)
        if match:
            found.append(TaskFile(int(match.group(1)), match.group(2), item))
    return sorted(found, key=lambda f: f.number)


def _read_json(source: Traversable) -> Any:
    data = source.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data.decode("utf-8"))


@dataclass(frozen=True)
class LoadFailure:
    """A task (or a whole file) that could not be loaded."""

    where: str  # file name, and the entry when known
    error: str


@dataclass
class TaskLoad:
    """Every task that loaded, and every failure, of one language."""

    lang: Language
    tasks: list[ClarqTask] = field(default_factory=list)
    failures: list[LoadFailure] = field(default_factory=list)

    def split(self, split: Split) -> list[ClarqTask]:
        return [t for t in self.tasks if t.split == split]


def read_tasks(lang: Language, data_dir: str | Path | None = None) -> TaskLoad:
    """Load every task of a language, collecting failures instead of stopping at the first."""
    result = TaskLoad(lang)
    files = task_files(lang, data_dir)
    numbers = [f.number for f in files]
    for number in range(1, N_TYPES + 1):
        if number not in numbers:
            result.failures.append(LoadFailure(f"{LANGUAGE_DIRS[lang]}/{number}._*", "missing"))
    for task_file in files:
        name = f"{LANGUAGE_DIRS[lang]}/{task_file.source.name}"
        try:
            entries = _read_json(task_file.source)
        except (OSError, ValueError, EOFError) as exc:
            result.failures.append(LoadFailure(name, f"unreadable: {exc}"))
            continue
        if not isinstance(entries, list) or len(entries) < TASKS_PER_TYPE:
            result.failures.append(LoadFailure(name, "not a list of at least 10 entries"))
            continue
        for index, entry in enumerate(entries[:TASKS_PER_TYPE]):
            try:
                result.tasks.append(
                    parse_task(
                        entry,
                        lang=lang,
                        type_number=task_file.number,
                        type_name=task_file.type_name,
                        index=index,
                    )
                )
            except TaskFormatError as exc:
                result.failures.append(LoadFailure(f"{name} entry {index}", str(exc)))
    return result


def load_tasks(
    lang: Language, split: Split | None = "test", data_dir: str | Path | None = None
) -> list[ClarqTask]:
    """The tasks of one language and split (``None``: both) in type and index order.

    Raises :class:`BadInputError` naming the first task that failed to load.
    """
    loaded = read_tasks(lang, data_dir)
    if loaded.failures:
        first = loaded.failures[0]
        raise BadInputError(f"ClarQ tasks: {first.where}: {first.error}")
    return [t for t in loaded.tasks if split is None or t.split == split]


__all__ = [
    "DEPTH_GROUPS",
    "N_TYPES",
    "SPLITS",
    "TASKS_PER_TYPE",
    "TEST_TYPES",
    "Background",
    "ClarqTask",
    "LoadFailure",
    "ResponseNode",
    "ResponseTree",
    "Split",
    "TaskFile",
    "TaskFormatError",
    "TaskLoad",
    "depth_group",
    "label_key",
    "load_tasks",
    "parse_task",
    "read_tasks",
    "split_of",
    "task_files",
    "task_id",
]
