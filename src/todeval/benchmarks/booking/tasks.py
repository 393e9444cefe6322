"""Booking tasks: loading, normalisation and unique ids for the four task sets.

The raw task files mix key spellings (``leaveAt``/``leaveat``, ``trainID``) and value spellings
(``guest house``, ``free``); every key and value is lower-cased and normalised here so the rest
of the benchmark sees one vocabulary. ``book.invalid`` and ``book.pre_invalid`` are bookkeeping
flags of the original goal generator and are dropped.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, Field

from todeval.errors import BadInputError, UsageError, choice_error
from todeval.runner.selection import limit_ids

TASK_SETS: dict[str, str] = {
    "test": "test.json",
    "dev": "dev.json",
    "synthetic": "synthetic_test.json",
    "unrealistic": "unrealistic_test.json",
}
BOOKING_DOMAINS = ("restaurant", "hotel", "train")
PACK_PREFIX = "pack:"
"""A domain pack's tasks have the task set ``pack:<folder>`` (:mod:`.world.model`)."""
KEY_ALIASES = {"arrive": "arriveby", "leave": "leaveat"}
_IGNORED_BOOK_KEYS = {"invalid", "pre_invalid"}
TIME_KEYS = ("time", "leaveat", "arriveby")
_SHORT_TIME = re.compile(r"^\d:[0-5]\d$")


class DomainGoal(BaseModel):
    """The user's goal in one domain."""

    info: dict[str, str] = Field(default_factory=dict, description="constraints that finally hold")
    fail_info: dict[str, str] = Field(
        default_factory=dict, description="constraints the user tries first (they fail)"
    )
    book: dict[str, str] = Field(default_factory=dict, description="booking slots that succeed")
    fail_book: dict[str, str] = Field(default_factory=dict, description="booking slots tried first")
    reqt: dict[str, str | None] = Field(
        default_factory=dict,
        description="requested attributes (value known only in synthetic/unrealistic sets)",
    )


class CorpusTurn(BaseModel):
    speaker: Literal["user", "system"]
    text: str
    dialog_act: dict[str, list[list[str]]] = Field(default_factory=dict)


class BookingTask(BaseModel):
    task_id: str = Field(description="unique and stable: '<set>/<index>-<filename stem>'")
    task_set: str
    index: int
    filename: str
    message: str = Field(description="the goal in natural language, as given to an LLM user")
    domains: dict[str, DomainGoal]
    dialogue_type: str
    corpus_turns: list[CorpusTurn] = Field(
        default_factory=list, description="the original MultiWOZ dialogue (empty if none)"
    )

    @property
    def group(self) -> str:
        """The domain-combination group used for macro averages, e.g. ``hotel+train``."""
        return "+".join(sorted(self.domains))

    @property
    def booking_domains(self) -> list[str]:
        if self.task_set.startswith(PACK_PREFIX):
            return list(self.domains)  # a pack's goals name only its own entities
        return [d for d in self.domains if d in BOOKING_DOMAINS]


def normalise_key(key: str) -> str:
    key = key.strip().lower().replace(" ", "")
    return KEY_ALIASES.get(key, key)


def normalise_value(key: str, value: Any) -> str:
    """Lower-case and canonicalise one slot value (train ids stay upper-case)."""
    text = str(value).strip()
    if key == "trainid":
        return text.upper()
    text = text.lower()
    if key in TIME_KEYS and _SHORT_TIME.match(text):
        return "0" + text  # "9:00" -> "09:00"
    if key == "type" and text in ("guest house", "guest houses", "guesthouses"):
        return "guesthouse"
    if key in ("parking", "internet") and text in ("free", "free parking", "free wifi"):
        return "yes"
    return text


def value_as_given(key: str, value: Any) -> str:
    """A value as clem:todd's released code reads it: lower-cased (train ids upper-cased),
    nothing mapped (``guest house``, ``free`` and ``8:00`` stay)."""
    text = str(value).strip()
    return text.upper() if key == "trainid" else text.lower()


def normalise_slots(
    slots: dict[str, Any], value: Callable[[str, Any], str] = normalise_value
) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, raw in slots.items():
        k = normalise_key(key)
        if k in _IGNORED_BOOK_KEYS or raw is None or isinstance(raw, (dict, list)):
            continue
        out[k] = value(k, raw)
    return out


def _domain_goal(
    raw: dict[str, Any], value: Callable[[str, Any], str] = normalise_value
) -> DomainGoal:
    reqt: dict[str, str | None] = {}
    raw_req = raw.get("reqt", raw.get("req"))
    if isinstance(raw_req, dict):
        reqt = {normalise_key(k): (None if v is None else str(v)) for k, v in raw_req.items()}
    elif isinstance(raw_req, list):
        reqt = {normalise_key(k): None for k in raw_req}
    return DomainGoal(
        info=normalise_slots(raw.get("info") or {}, value),
        fail_info=normalise_slots(raw.get("fail_info") or {}, value),
        book=normalise_slots(raw.get("book") or {}, value),
        fail_book=normalise_slots(raw.get("fail_book") or {}, value),
        reqt=reqt,
    )


def _corpus_turns(raw: Any) -> list[CorpusTurn]:
    if not isinstance(raw, list) or not raw:
        return []
    if len(raw) == 1 and not raw[0].get("dialog_act"):
        return []  # synthetic/unrealistic sets hold a single placeholder turn
    turns = []
    for i, t in enumerate(raw):
        speaker: Literal["user", "system"] = "user" if i % 2 == 0 else "system"
        turns.append(
            CorpusTurn(speaker=speaker, text=t["utterance"], dialog_act=t.get("dialog_act") or {})
        )
    return turns


def parse_tasks(
    task_set: str,
    records: list[dict[str, Any]],
    source: str,
    *,
    id_prefix: str | None = None,
    as_given: bool = False,
) -> list[BookingTask]:
    """Build tasks from raw records; ``source`` names the file in error messages; ids start
    with ``id_prefix`` (default: the task set's name); ``as_given``: values as the original
    reads them (:func:`value_as_given`), not normalised."""
    value = value_as_given if as_given else normalise_value
    prefix = task_set if id_prefix is None else id_prefix
    tasks = []
    for i, rec in enumerate(records):
        try:
            filename = str(rec["filename"])
            stem = filename.rsplit(".", 1)[0].lower()
            tasks.append(
                BookingTask(
                    task_id=f"{prefix}/{i:03d}-{stem}",
                    task_set=task_set,
                    index=i,
                    filename=filename,
                    message=str(rec["message"]),
                    domains={
                        normalise_key(d): _domain_goal(g, value) for d, g in rec["domains"].items()
                    },
                    dialogue_type=str(rec.get("dialogue_type", "")),
                    corpus_turns=_corpus_turns(rec.get("corpususer")),
                )
            )
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise BadInputError(f"{source}: record {i}: malformed task ({exc!r})") from None
    ids = [t.task_id for t in tasks]
    if len(set(ids)) != len(ids):
        raise BadInputError(f"{source}: task ids are not unique")
    return tasks


def data_path(*parts: str) -> Any:
    """A traversable inside the package's data directory."""
    node = resources.files("todeval") / "data"
    for p in parts:
        node = node / p
    return node


def read_json(*parts: str) -> Any:
    return json.loads(data_path(*parts).read_text(encoding="utf-8"))


@cache
def _load_cached(task_set: str, as_given: bool = False) -> tuple[BookingTask, ...]:
    filename = TASK_SETS[task_set]
    raw = read_json("multiwoz", "booking_tasks", filename)
    return tuple(parse_tasks(task_set, raw, f"booking_tasks/{filename}", as_given=as_given))


def load_tasks(task_set: str, *, as_given: bool = False) -> list[BookingTask]:
    """The tasks of one shipped task set (a copy: callers may not mutate the cache);
    ``as_given``: the goals' values as clem:todd's code reads them (``--protocol clemtodd``;
    only the synthetic set and one dev time differ)."""
    if task_set not in TASK_SETS:
        raise choice_error("task set", task_set, list(TASK_SETS))
    return [t.model_copy(deep=True) for t in _load_cached(task_set, as_given)]


def select_tasks(
    tasks: list[BookingTask],
    task_ids: list[str] | None = None,
    limit: int | None = None,
    *,
    mode: str = "stratified",
    seed: int = 0,
) -> list[BookingTask]:
    """Filter by ids (full id, or the part after the set name, or the filename stem), then take
    ``limit`` tasks: stratified over the domain groups with the draw seed ``seed``, or the first
    (``mode``; see :func:`todeval.runner.selection.limit_ids`)."""
    if task_ids:
        wanted = {t.lower() for t in task_ids}
        chosen = [
            t
            for t in tasks
            if t.task_id.lower() in wanted
            or t.task_id.split("/", 1)[1].lower() in wanted
            or t.filename.rsplit(".", 1)[0].lower() in wanted
        ]
        found = (
            {t.task_id.lower() for t in chosen}
            | {t.filename.rsplit(".", 1)[0].lower() for t in chosen}
            | {t.task_id.split("/", 1)[1].lower() for t in chosen}
        )
        missing = sorted(wanted - found)
        if missing:
            raise UsageError(f"unknown task id(s): {', '.join(missing)}")
        tasks = chosen
    by_id = {t.task_id: t for t in tasks}
    groups = {t.task_id: t.group for t in tasks}
    ids = limit_ids(list(by_id), limit, mode=mode, groups=groups, seed=seed)
    return [by_id[i] for i in ids]


def task_set_hash(tasks: list[BookingTask]) -> str:
    """A hash of the selected tasks' content, so a resume can detect a changed task set."""
    h = hashlib.sha256()
    for t in tasks:
        h.update(t.model_dump_json().encode())
        h.update(b"\n")
    return h.hexdigest()[:16]
