"""The annotation file formats: items (what the annotator sees), keys (the gold) and answers.

* items ``FILE.jsonl`` -- one :class:`Item` a line; or ``FILE.csv`` (one row an item, for a
  spreadsheet) -- never the gold;
* key ``FILE.key.jsonl`` -- one :class:`Key` a line, written next to the items;
* answers ``FILE.answers.NAME.jsonl`` -- one :class:`Answer` a line, appended and flushed per
  answer; the last answer to an item wins, so a crashed or reloaded session resumes.

Two kinds: ``multi-choice`` (a context and a candidate list; choose one, or several when
``multiple``) and ``pairwise`` (a context and two candidates ``a`` and ``b``; choose one, or
``cant-tell`` when allowed).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import random
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from todeval.core import safejson
from todeval.core.appendlog import repair_tail
from todeval.core.files import write_output
from todeval.core.lock import hold, lock_path_for
from todeval.core.userfiles import decode_utf8, read_user_bytes, read_user_text
from todeval.errors import BadInputError, UsageError

Kind = Literal["multi-choice", "pairwise"]
KINDS: tuple[Kind, ...] = ("multi-choice", "pairwise")
CANT_TELL = "cant-tell"
ITEMS_SCHEMA = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ContextField(_Strict):
    name: str
    value: str


class ContextTurn(_Strict):
    speaker: str
    text: str
    focus: bool = False  # the turn the question is about


class Candidate(_Strict):
    id: str = Field(min_length=1)
    text: str


class Item(_Strict):
    """One thing to annotate. ``strata`` are the keys ``export --stratify`` can use."""

    schema_version: int = ITEMS_SCHEMA
    id: str = Field(min_length=1)
    kind: Kind
    source: str
    question: str
    fields: list[ContextField] = Field(default_factory=list)
    turns: list[ContextTurn] = Field(default_factory=list)
    candidates: list[Candidate]
    multiple: bool = False
    cant_tell: bool = False
    strata: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check(self) -> Item:
        ids = [c.id for c in self.candidates]
        if len(set(ids)) != len(ids):
            raise ValueError("candidate ids repeat")
        if self.kind == "pairwise" and ids != ["a", "b"]:
            raise ValueError("a pairwise item has exactly the candidates 'a' and 'b'")
        if not ids:
            raise ValueError("no candidates")
        return self

    def choices(self) -> list[str]:
        ids = [c.id for c in self.candidates]
        return [*ids, CANT_TELL] if self.cant_tell else ids

    def check_answer(self, choice: Sequence[str]) -> str | None:
        """Why ``choice`` is not a valid answer to this item, or None."""
        allowed = set(self.choices())
        if not choice:
            return "no choice"
        if any(c not in allowed for c in choice):
            return "a choice that is not a candidate"
        if len(set(choice)) != len(choice):
            return "a repeated choice"
        if len(choice) > 1 and (not self.multiple or CANT_TELL in choice):
            return "several choices where one is allowed"
        return None


class GoldItem(BaseModel):
    """An item with its gold answer, as a benchmark supplies it."""

    item: Item
    gold: list[str]


class Key(_Strict):
    id: str
    gold: list[str]


class Answer(_Strict):
    item: str
    annotator: str = Field(min_length=1)
    choice: list[str]
    at: str = ""
    export: str = ""  # the items file's stem (finds the key next to the answers)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


# -- sampling --------------------------------------------------------------------------------


def stratified_sample(
    items: Sequence[GoldItem], n: int, stratify: str | None, seed: int
) -> list[GoldItem]:
    """``n`` items (all when fewer), allocated to the values of the stratum ``stratify``
    in proportion to their sizes (largest remainder), drawn from ``seed``; shuffled."""
    rng = random.Random(f"todeval-annotate|{seed}|{stratify}")
    for g in items if stratify else ():
        if stratify not in g.item.strata:
            raise UsageError(
                f"--stratify {stratify}: item {g.item.id} has no such key "
                f"(it has: {', '.join(sorted(g.item.strata)) or 'none'})"
            )
    if n >= len(items):
        chosen = list(items)
    elif not stratify:
        chosen = rng.sample(list(items), n)
    else:
        groups: dict[str, list[GoldItem]] = defaultdict(list)
        for g in items:
            groups[g.item.strata[stratify]].append(g)
        keys = sorted(groups)
        exact = {k: n * len(groups[k]) / len(items) for k in keys}
        take = {k: int(exact[k]) for k in keys}
        rest = n - sum(take.values())
        for k in sorted(keys, key=lambda k: (-(exact[k] - take[k]), k))[:rest]:
            take[k] += 1
        chosen = []
        for k in keys:
            chosen += rng.sample(groups[k], take[k])
    rng.shuffle(chosen)
    return chosen


# -- files -----------------------------------------------------------------------------------


def key_path(items_path: Path) -> Path:
    return items_path.with_name(f"{items_path.stem}.key.jsonl")


def answers_path(items_path: Path, annotator: str) -> Path:
    return items_path.with_name(f"{items_path.stem}.answers.{annotator}.jsonl")


def _jsonl(path: Path, rows: Iterable[BaseModel]) -> None:
    write_output(path, "".join(row.model_dump_json() + "\n" for row in rows))


CSV_COLUMNS = ("id", "kind", "source", "question", "context", "candidates", "multiple", "choice")


def _context_text(item: Item) -> str:
    lines = [f"{f.name}: {f.value}" for f in item.fields]
    lines += [f"{'>> ' if t.focus else ''}{t.speaker}: {t.text}" for t in item.turns]
    return "\n".join(lines)


def write_export(path: Path, sample: Sequence[GoldItem]) -> Path:
    """Write the items (JSONL or CSV by suffix) and the key next to them; the key's path.

    Each file is written whole or not at all (a failure: one line, exit 3, any previous file
    unchanged)."""
    if path.suffix == ".csv":
        buffer = io.StringIO(newline="")
        writer = csv.writer(buffer)
        writer.writerow(CSV_COLUMNS)
        for g in sample:
            it = g.item
            writer.writerow(
                [
                    it.id,
                    it.kind,
                    it.source,
                    it.question,
                    _context_text(it),
                    "\n".join(f"{c.id}: {c.text}" for c in it.candidates),
                    "yes" if it.multiple else "no",
                    "",
                ]
            )
        write_output(path, buffer.getvalue())
    else:
        _jsonl(path, (g.item for g in sample))
    key = key_path(path)
    _jsonl(key, (Key(id=g.item.id, gold=g.gold) for g in sample))
    return key


def _records(path: Path) -> Iterator[tuple[int, dict[str, object]]]:
    """The JSON objects of a JSONL file, with their line numbers; a torn last line (a crash
    mid-write) is ignored. The file is read through :mod:`todeval.core.userfiles` (a regular
    file, bounded); a line that is not UTF-8, not JSON, nested too deeply or not an object is
    a one-line error naming the file and line."""
    data = read_user_bytes(path, what="JSONL file")
    lines = data.split(b"\n")
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        torn = n == len(lines)  # no newline after it
        try:
            row = safejson.loads(decode_utf8(raw, f"{path}:{n}", what="line"))
        except BadInputError:
            if torn:
                return
            raise
        except json.JSONDecodeError as exc:
            if torn:
                return  # a torn last line (a crash mid-write): ignored
            raise BadInputError(f"{path}:{n}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise BadInputError(f"{path}:{n}: not a JSON object")
        yield n, row


def _invalid(path: Path, n: int, exc: ValidationError) -> BadInputError:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "record"
    return BadInputError(f"{path}:{n}: {where}: {err['msg']}")


def read_items(path: Path) -> list[Item]:
    items = []
    for n, row in _records(path):
        try:
            items.append(Item.model_validate(row))
        except ValidationError as exc:
            raise _invalid(path, n, exc) from None
    ids = [i.id for i in items]
    if len(set(ids)) != len(ids):
        raise BadInputError(f"{path}: item ids repeat")
    if not items:
        raise BadInputError(f"{path}: no items")
    return items


def read_key(path: Path) -> dict[str, frozenset[str]]:
    out = {}
    for n, row in _records(path):
        try:
            key = Key.model_validate(row)
        except ValidationError as exc:
            raise _invalid(path, n, exc) from None
        out[key.id] = frozenset(key.gold)
    return out


def read_answers(path: Path) -> list[Answer]:
    """Answers from a JSONL answer file or a filled-in CSV export (columns ``id`` and
    ``choice``, choices separated by ``;``, the annotator named by ``annotator`` or the file)."""
    if path.suffix == ".csv":
        return _csv_answers(path)
    out = []
    for n, row in _records(path):
        try:
            out.append(Answer.model_validate(row))
        except ValidationError as exc:
            raise _invalid(path, n, exc) from None
    return out


def _csv_answers(path: Path) -> list[Answer]:
    text = read_user_text(path, what="CSV answer file")
    try:
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise BadInputError(f"{path}: not CSV ({exc})") from None
    out = []
    for n, row in enumerate(rows, 2):
        if "id" not in row or "choice" not in row:
            raise BadInputError(f"{path}:{n}: needs the columns id and choice")
        choice = [c.strip() for c in (row["choice"] or "").split(";") if c.strip()]
        if choice:
            name = row.get("annotator") or path.stem
            out.append(Answer(item=row["id"], annotator=name, choice=choice, export=path.stem))
    return out


def latest(answers: Iterable[Answer]) -> dict[tuple[str, str], Answer]:
    """(item, annotator) -> the last answer given."""
    out: dict[tuple[str, str], Answer] = {}
    for a in answers:
        out[(a.item, a.annotator)] = a
    return out


def merge_answers(paths: Sequence[Path]) -> dict[str, dict[str, frozenset[str]]]:
    """Item -> annotator -> label set, from every answer file (the last answer wins)."""
    answers: list[Answer] = []
    for path in paths:
        answers += read_answers(path)
    out: dict[str, dict[str, frozenset[str]]] = defaultdict(dict)
    for (item, annotator), a in latest(answers).items():
        out[item][annotator] = frozenset(a.choice)
    return dict(out)


class AnswerLog:
    """An annotator's answer file: every answer appended and flushed (and fsynced) at once.

    One writer at a time: the file's lock (``.<name>.lock``, :mod:`todeval.core.lock`) is held
    until :meth:`close`, so a second server on the same file is refused (exit 4). A torn last
    line (a kill mid-write) is moved to ``<name>.torn`` before the first append
    (:func:`todeval.core.appendlog.repair_tail`; ``set_aside`` names it)."""

    def __init__(self, path: Path, annotator: str, export: str) -> None:
        self.path = path
        self.annotator = annotator
        self.export = export
        self.answers: dict[str, Answer] = {}
        self._lock = contextlib.ExitStack()
        self._lock.enter_context(hold(lock_path_for(path), f"answer file {path}"))
        try:
            self.set_aside = repair_tail(path)
            if path.exists():
                for (item, who), a in latest(read_answers(path)).items():
                    if who == annotator:
                        self.answers[item] = a
            self._fh: IO[str] = path.open("a", encoding="utf-8")
        except OSError as exc:
            self._lock.close()
            raise BadInputError(f"{path}: cannot append ({exc.strerror or exc})") from None
        except BaseException:
            self._lock.close()
            raise

    def record(self, item: str, choice: Sequence[str]) -> Answer:
        import os

        answer = Answer(
            item=item, annotator=self.annotator, choice=list(choice), at=now(), export=self.export
        )
        self._fh.write(answer.model_dump_json() + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self.answers[item] = answer
        return answer

    def close(self) -> None:
        try:
            self._fh.close()
        finally:
            self._lock.close()


def gold_for(paths: Sequence[Path]) -> Path | None:
    """The key next to the first answer file that names its export."""
    for path in paths:
        for a in read_answers(path):
            if a.export:
                candidate = path.with_name(f"{a.export}.key.jsonl")
                if candidate.exists():
                    return candidate
                break
    return None


def as_label_sets(answers: Mapping[str, Sequence[str]]) -> dict[str, frozenset[str]]:
    return {k: frozenset(v) for k, v in answers.items()}


__all__ = [
    "CANT_TELL",
    "KINDS",
    "Answer",
    "AnswerLog",
    "Candidate",
    "ContextField",
    "ContextTurn",
    "GoldItem",
    "Item",
    "Key",
    "Kind",
    "answers_path",
    "gold_for",
    "key_path",
    "latest",
    "merge_answers",
    "read_answers",
    "read_items",
    "read_key",
    "stratified_sample",
    "write_export",
]
