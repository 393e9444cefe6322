"""Reading Sequicity's KVRET result files (``todeval score incar --from sequicity FILE``).

Sequicity (WING-NUS/sequicity) writes its test output (``results/kvret.csv``,
``results/kvret-rl.csv``) as ``key : value`` configuration lines, a line
``START_CSV_SECTION``, then a CSV with the columns :data:`COLUMNS`, one row per system turn.
This module maps such a file onto the In-Car prediction format:

* turns are ordered by ``(dial_id, turn_num)``; ``dial_id`` is the test dialogue index (our
  dialogue id) and every dialogue present must have exactly the gold's number of turns,
  numbered ``0`` … ``n-1``;
* ``generated_response`` becomes the response, each ``<slot>_SLOT`` token written
  ``[value_<slot>]`` and ``EOS_M`` tokens removed;
* ``generated_bspan`` becomes the state: its informable part (before ``EOS_Z1``) holds values
  separated by `` ; ``, without slot names; each value is given the slot the entity lexicon
  assigns it when exactly one informable slot fits (:func:`assign_slots`), otherwise it is
  counted as unassignable and left out of the state. The requested slot names after
  ``EOS_Z1``, the gold columns ``bspan`` / ``response``, ``user``, ``u_len``, ``m_len`` and
  ``supervised`` are read but not scored (our own gold is the reference).

A file not in this format raises :class:`~todeval.errors.BadInputError` with one line.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from todeval.core.userfiles import read_user_text
from todeval.errors import BadInputError
from todeval.scoring.incar._gold import GoldSplit
from todeval.scoring.incar._metrics import FILLER_WORDS
from todeval.scoring.incar._ontology import ALL_INFORMABLE
from todeval.scoring.incar._predictions import IncarPredictions, parse_predictions
from todeval.scoring.incar._text import normalize

MARKER = "START_CSV_SECTION"
COLUMNS: tuple[str, ...] = (
    "dial_id",
    "turn_num",
    "user",
    "generated_bspan",
    "bspan",
    "generated_response",
    "response",
    "u_len",
    "m_len",
    "supervised",
)
END_INFORMABLE = "EOS_Z1"
_SLOT_TOKEN = re.compile(r"(?<!\S)([a-z][a-z0-9_]*?)_SLOT(?!\S)")
_DROPPED_TOKENS = frozenset({"EOS_M"})


def sequicity_response(text: str) -> str:
    """A Sequicity response in our placeholder form (``time_SLOT`` → ``[value_time]``)."""
    text = _SLOT_TOKEN.sub(r"[value_\1]", text)
    return " ".join(t for t in text.split() if t not in _DROPPED_TOKENS)


def span_values(bspan: str) -> list[str]:
    """The informable values of a belief span (the part before ``EOS_Z1``, split on ``;``)."""
    informable = bspan.split(END_INFORMABLE, 1)[0]
    return [v for v in (" ".join(part.split()) for part in informable.split(";")) if v]


def _entity_slots() -> dict[str, frozenset[str]]:
    """Every normalized entity of ``kvret_entities.json`` → all slots it is listed under.

    Built like :func:`todeval.scoring.incar._ontology.build_lexicon` but keeping every slot
    (the lexicon keeps the last one), so that ambiguous values can be recognized.
    """
    node = resources.files("todeval") / "data" / "incar" / "kvret_entities.json"
    raw: Any = json.loads(node.read_text(encoding="utf-8"))
    slots: dict[str, set[str]] = {}

    def add(value: str, slot: str) -> None:
        text = normalize(value, am_pm=False)
        if not text:
            return
        slots.setdefault(text, set()).add(slot)
        if slot in ("event", "poi_type"):
            slots.setdefault(text.split()[0], set()).add(slot)

    for slot, values in raw.items():
        if not isinstance(values, list):
            continue
        for value in values:
            if isinstance(value, str):
                add(value, slot)
            elif isinstance(value, dict):
                for key, text in value.items():
                    if isinstance(text, str):
                        add(text, "poi_type" if key == "type" else str(key))
    return {value: frozenset(s) for value, s in slots.items()}


def _without_fillers(value: str) -> str:
    for filler in FILLER_WORDS:
        value = " ".join(value.replace(filler, "").split())
    return value


@dataclass
class Assignment:
    """Slot assignment of the values of one or more belief spans."""

    assigned: int = 0
    unknown: Counter[str] = field(default_factory=Counter)
    """values that are no lexicon entity of an informable slot (Match would drop them too)"""
    ambiguous: Counter[str] = field(default_factory=Counter)
    """values listed under two or more informable slots"""
    collisions: Counter[str] = field(default_factory=Counter)
    """values whose slot already holds an earlier value of the same span"""
    repeated: int = 0
    """values equal to an earlier value of the same span (not counted as unassignable)"""

    @property
    def unassignable(self) -> int:
        return (
            sum(self.unknown.values())
            + sum(self.ambiguous.values())
            + sum(self.collisions.values())
        )


def assign_slots(
    values: Iterable[str], entity_slots: dict[str, frozenset[str]], report: Assignment
) -> dict[str, str]:
    """Slot → value for the values whose informable slot is unique; the rest go to ``report``.

    A value is looked up normalized and, failing that, without Match's filler words; the
    value stored is the one given (Match strips fillers itself).
    """
    state: dict[str, str] = {}
    for value in values:
        key = normalize(value, am_pm=False)
        slots = entity_slots.get(key) or entity_slots.get(_without_fillers(key)) or frozenset()
        fitting = sorted(slots & ALL_INFORMABLE)
        if not fitting:
            report.unknown[value] += 1
        elif len(fitting) > 1:
            report.ambiguous[value] += 1
        elif state.get(fitting[0]) == value:
            report.repeated += 1  # a degenerate span repeating a value: the state is a set
        elif fitting[0] in state:
            report.collisions[value] += 1
        else:
            state[fitting[0]] = value
            report.assigned += 1
    return state


@dataclass
class SequicityFile:
    """A Sequicity result file mapped to predictions, with what the mapping could not keep."""

    predictions: IncarPredictions
    config: dict[str, str]
    rows: int
    assignment: Assignment

    def summary_line(self) -> str:
        a = self.assignment
        return (
            f"sequicity: {self.rows} turns of {len(self.predictions.dialogues)} dialogues; "
            f"belief values: {a.assigned} assigned to a slot, {a.unassignable} unassignable "
            f"({sum(a.unknown.values())} not an informable entity, "
            f"{sum(a.ambiguous.values())} ambiguous, {sum(a.collisions.values())} slot taken)"
        )


def _int(source: str, line: int, column: str, text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise BadInputError(
            f"{source}: line {line}: {column} must be an integer, got {text[:40]!r}"
        ) from None


def parse_sequicity(text: str, gold: GoldSplit, source: str = "sequicity") -> SequicityFile:
    """Map the text of a Sequicity result file; raise BadInputError on the first problem."""
    lines = text.splitlines(keepends=True)
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == MARKER)
    except StopIteration:
        raise BadInputError(
            f"{source}: not a Sequicity result file: no {MARKER} line "
            "(expected 'key : value' lines, START_CSV_SECTION, then the CSV)"
        ) from None
    config: dict[str, str] = {}
    for line in lines[:start]:
        key, sep, value = line.partition(":")
        if sep and key.strip():
            config[key.strip()] = value.strip()
    dataset = config.get("dataset")
    if dataset is not None and dataset != "kvret":
        raise BadInputError(f"{source}: dataset is {dataset!r}, not 'kvret'")
    reader = csv.reader(io.StringIO("".join(lines[start + 1 :])))
    try:
        header = next(reader, None)
        if header is None:
            raise BadInputError(f"{source}: no CSV header after {MARKER}")
        header = [h.strip() for h in header]
        missing = [c for c in COLUMNS if c not in header]
        if missing:
            raise BadInputError(
                f"{source}: CSV header lacks column {missing[0]!r} (expected {','.join(COLUMNS)})"
            )
        index = {c: header.index(c) for c in COLUMNS}
        by_id = gold.by_id()
        last = len(gold.dialogues) - 1
        turns: dict[str, dict[int, tuple[str, list[str]]]] = {}
        n_rows = 0
        for row in reader:
            line_no = start + 1 + reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                raise BadInputError(
                    f"{source}: line {line_no}: {len(row)} fields, the header has {len(header)}"
                )
            dial_id = _int(source, line_no, "dial_id", row[index["dial_id"]])
            turn_num = _int(source, line_no, "turn_num", row[index["turn_num"]])
            if not 0 <= dial_id <= last:
                raise BadInputError(
                    f"{source}: line {line_no}: dial_id {dial_id} out of range "
                    f"(the {gold.split} split has dialogues 0 to {last})"
                )
            dialogue = turns.setdefault(str(dial_id), {})
            if turn_num in dialogue:
                raise BadInputError(
                    f"{source}: line {line_no}: dial_id {dial_id} turn_num {turn_num} repeated"
                )
            dialogue[turn_num] = (
                sequicity_response(row[index["generated_response"]]),
                span_values(row[index["generated_bspan"]]),
            )
            n_rows += 1
    except csv.Error as exc:
        raise BadInputError(f"{source}: line {start + 1 + reader.line_num}: {exc}") from None
    if not turns:
        raise BadInputError(f"{source}: no rows after the CSV header")
    entity_slots = _entity_slots()
    report = Assignment()
    raw: dict[str, list[dict[str, Any]]] = {}
    for dialogue_id in sorted(turns, key=int):
        given = turns[dialogue_id]
        n_gold = len(by_id[dialogue_id].turns)
        if sorted(given) != list(range(n_gold)):
            numbers = sorted(given)
            raise BadInputError(
                f"{source}: dial_id {dialogue_id}: {len(given)} turns numbered "
                f"{numbers[0]}..{numbers[-1]}, the gold has {n_gold} (0..{n_gold - 1})"
            )
        raw[dialogue_id] = [
            {"response": response, "state": assign_slots(values, entity_slots, report)}
            for response, values in (given[i] for i in range(n_gold))
        ]
    predictions = parse_predictions(raw, gold, source=source)
    return SequicityFile(predictions=predictions, config=config, rows=n_rows, assignment=report)


def read_sequicity(path: Path, gold: GoldSplit) -> SequicityFile:
    """Read and map a Sequicity result file."""
    try:
        text = read_user_text(path, what="Sequicity result file")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{path}: cannot read: {exc}") from None
    if not text.strip():
        raise BadInputError(f"{path}: empty file")
    return parse_sequicity(text, gold, source=str(path))
