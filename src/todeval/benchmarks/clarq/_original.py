"""Reader of the released result format (``results/l2l_*.json``) into transcript records.

The file is a list over the 31 task types (file order 1..31), each a list of the type's ten
tasks; a task object holds ``all_response`` (gold responses 0..n, one a line),
``all_response_exaplain`` (purposes of 1..n) and ``l2l``, a list of dialogues (message lists;
empty ones are skipped). As in the original evaluator only types 1-26 (the test split) are
scored and every one of their 260 tasks counts: a task without a dialogue, or missing from the
file, scores 0.

Each entry is matched by position with the shipped task (task id, type, tree depth). If an
entry's gold differs from the shipped task, the scores still come from the file's own gold;
the depth is then taken from the entry's ``gold_structure`` when it has one, and a warning
says how many entries differ.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from todeval.benchmarks.clarq._tasks import (
    TASKS_PER_TYPE,
    TEST_TYPES,
    ClarqTask,
    load_tasks,
)
from todeval.benchmarks.clarq._text import Language, detect_language, strip_provider_prefix
from todeval.benchmarks.clarq._transcripts import ClarqTranscript
from todeval.core import safejson
from todeval.core.userfiles import read_user_bytes
from todeval.errors import BadInputError

_LABEL = re.compile(r"\d+(?:\.\d+)*")


class TranscriptFile(BaseModel):
    """The records read from one file, and what the reader noticed."""

    source: str
    format: str = "clarq-original"
    language: Language
    records: list[ClarqTranscript]
    warnings: list[str] = Field(default_factory=list)


def _read_document(path: Path) -> Any:
    if path.is_dir():
        raise BadInputError(
            f"{path}: is a directory but not a clarq run directory (no manifest.json)"
        )
    data = read_user_bytes(path, what="transcript file")
    try:
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        text = data.decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{path}: not a UTF-8 (or gzip) JSON file ({exc})") from None
    try:
        return safejson.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInputError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None


def gold_lines(all_response: str) -> list[str]:
    """Gold responses 0..n: ``all_response`` stripped and split by lines, as the original
    does; a trailing block of tree labels (the task-file form) is dropped."""
    lines = all_response.strip().split("\n")
    half = len(lines) // 2
    if len(lines) % 2 == 0 and half >= 2:
        labels = [line.strip() for line in lines[half:]]
        if labels[0] == "0" and all(_LABEL.fullmatch(label) for label in labels):
            return lines[:half]
    return lines


def _depth_from_structure(value: Any) -> int | None:
    if not isinstance(value, list) or not value:
        return None
    labels = [v for v in value if isinstance(v, str) and _LABEL.fullmatch(v.strip())]
    if len(labels) != len(value):
        return None
    depths = [label.strip().count(".") + 1 for label in labels if label.strip() != "0"]
    return max(depths) if depths else None


class _Entry(BaseModel):
    type_number: int
    index: int
    gold: list[str]
    purposes: list[str]
    dialogues: list[list[str]]
    depth_hint: int | None


def _entry(path: Path, raw: Any, type_number: int, index: int) -> _Entry:
    where = f"{path}: type {type_number} task {index}"
    if not isinstance(raw, dict):
        raise BadInputError(f"{where}: expected a task object, got {type(raw).__name__}")
    response = raw.get("all_response")
    if not isinstance(response, str):
        raise BadInputError(f"{where}: 'all_response' is missing or not a string")
    if not response.strip():
        raise BadInputError(f"{where}: 'all_response' is empty")
    purposes = raw.get("all_response_exaplain")
    if not isinstance(purposes, list) or not all(isinstance(p, str) for p in purposes):
        raise BadInputError(
            f"{where}: 'all_response_exaplain' (the purposes) is missing or not a list of strings"
        )
    dialogues = raw.get("l2l")
    if not isinstance(dialogues, list):
        raise BadInputError(f"{where}: 'l2l' (the dialogues) is missing or not a list")
    for k, dialogue in enumerate(dialogues):
        if not isinstance(dialogue, list) or not all(isinstance(m, str) for m in dialogue):
            raise BadInputError(
                f"{where}: l2l[{k}] is not a list of messages (strings); expected "
                "'l2l': [[greeting, seeker, provider, ...], ...]"
            )
    return _Entry(
        type_number=type_number,
        index=index,
        gold=gold_lines(response),
        purposes=purposes,
        dialogues=[d for d in dialogues if d],
        depth_hint=_depth_from_structure(raw.get("gold_structure")),
    )


def _entries(path: Path, document: Any) -> tuple[list[_Entry], list[str]]:
    if not isinstance(document, list):
        raise BadInputError(
            f"{path}: expected a list of task types (each a list of tasks), got "
            f"{type(document).__name__}"
        )
    entries: list[_Entry] = []
    notes: list[str] = []
    for t, tasks in enumerate(document):
        number = t + 1
        if not isinstance(tasks, list):
            raise BadInputError(
                f"{path}: item {t} is a {type(tasks).__name__}, not a list of tasks; expected "
                "a list of task types, each a list of task objects"
            )
        if number not in TEST_TYPES:
            if any(isinstance(x, dict) and any(x.get("l2l") or []) for x in tasks):
                notes.append(f"type {number} is dev: not scored (the original scores types 1-26)")
            continue
        for index, raw in enumerate(tasks):
            if index >= TASKS_PER_TYPE:
                if isinstance(raw, dict) and any(raw.get("l2l") or []):
                    raise BadInputError(
                        f"{path}: type {number} has more than {TASKS_PER_TYPE} tasks with "
                        "dialogues; expected the result format (10 tasks per type)"
                    )
                continue
            entries.append(_entry(path, raw, number, index))
    return entries, notes


def _language(entries: list[_Entry]) -> Language:
    votes = Counter(
        detect_language(strip_provider_prefix(e.gold[1] if len(e.gold) > 1 else e.gold[0]))
        for e in entries
    )
    return "en" if votes["en"] > votes["zh"] else "zh"


def read_original(path: str | Path, *, language: Language | None = None) -> TranscriptFile:
    """Read a released result file (``.json`` or ``.json.gz``) into transcript records.

    ``language`` picks the shipped tasks the entries are matched with (default: detected from
    the gold). Raises :class:`BadInputError` (one line, naming the entry) if malformed.
    """
    path = Path(path)
    entries, notes = _entries(path, _read_document(path))
    if not entries:
        raise BadInputError(f"{path}: no test tasks (types 1-26) in the file")
    lang = language or _language(entries)
    tasks = {(t.type_number, t.index): t for t in load_tasks(lang, "test")}
    found = {(e.type_number, e.index): e for e in entries}
    records: list[ClarqTranscript] = []
    differ = 0
    for key, task in sorted(tasks.items()):
        entry = found.get(key)
        if entry is None:
            records.append(_missing(task))
            continue
        same = [strip_provider_prefix(g) for g in entry.gold] == task.responses
        differ += not same
        depth = task.depth if same else entry.depth_hint
        common = {
            "task_id": task.task_id,
            "task_type": task.type_name,
            "depth": depth,
            "gold": entry.gold,
            "purposes": entry.purposes,
        }
        if not entry.dialogues:
            records.append(ClarqTranscript(messages=None, **common))
        for trial, dialogue in enumerate(entry.dialogues):
            records.append(ClarqTranscript(trial=trial, messages=dialogue, **common))
    absent = len(tasks) - len(found)
    if absent:
        notes.append(f"{absent} of {len(tasks)} test tasks are not in the file: scored 0")
    if differ:
        notes.append(
            f"{differ} entries differ from the shipped {lang} task at their position: scored "
            "on the file's gold, depth from its gold_structure"
        )
    no_dialogue = sum(1 for e in entries if not e.dialogues)
    if no_dialogue:
        notes.append(f"{no_dialogue} test tasks have no dialogue: scored 0")
    several = sum(1 for e in entries if len(e.dialogues) > 1)
    if several:
        notes.append(
            f"{several} tasks have several dialogues: each is an episode and S is their mean "
            "(the original divides their sum by 260)"
        )
    return TranscriptFile(source=str(path), language=lang, records=records, warnings=notes)


def _missing(task: ClarqTask) -> ClarqTranscript:
    return ClarqTranscript(
        task_id=task.task_id,
        task_type=task.type_name,
        depth=task.depth,
        gold=task.gold_messages(),
        purposes=task.purposes,
        messages=None,
    )


__all__ = ["TranscriptFile", "gold_lines", "read_original"]
