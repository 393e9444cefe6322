"""Tasks from a domain pack: goals sampled from its data in MultiWOZ's goal shapes.

:func:`generate_tasks` draws ``n`` goals with one seeded stream. Each goal names one entity or
two (about 40% of the goals when the pack has two or more), and per entity:

* ``info``: searchable slots of a row drawn from the data (that row's values, so a match
  exists), as many as MultiWOZ's test goals constrain a booked entity by (:data:`INFO_COUNTS`):
  the row's key alone ("find me X") in 24 of 174 entity goals when the key is searchable,
  otherwise two slots in 23, three in 51 and four in 76 of the remaining 150 (capped by the
  searchable slots the entity has). A goal constrained by one slot is met by chance by many
  rows, which would hand a system that books blindly an Inform it cannot get on MultiWOZ.
  Then, as MultiWOZ's goals single out a venue among a few (test goals: a median of 2 hotels
  and 3 restaurants), further slots of the row are added at random while more than
  :data:`MAX_MATCHES` rows match, and a row that its every slot still shares with more is
  drawn again: a blind booking of any one row meets few goals (issue 41);
* ``fail_info`` (about 30%): the same constraints with one categorical value changed so that no
  row matches -- the user asks for that first and then changes its mind, as in MultiWOZ;
* ``reqt`` (about half): one or two of the entity's attributes to ask for (price, phone, ...);
* ``book``: a value for every booking slot (categorical: one of its values; time: a quarter
  hour between 08:00 and 20:00). Every goal books, as every goal of the MultiWOZ sets does: the
  scores read what was booked (an entity without booking slots gets information-only goals,
  which the audit accepts when a row matches, but which no score can check yet).

A goal is kept only when the booking feasibility audit (:mod:`..audit`, ``todeval data check``)
finds it bookable by a perfect system; draws continue until ``n`` goals are kept. The file
written is an object: the pack's name and content digest, the seed, and the tasks in the raw
MultiWOZ task format, which :func:`load_pack_tasks` reads back (refusing a file made for another
pack). The run's task-set hash is computed from the tasks' content as for the built-in sets.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path
from typing import Any

from todeval.benchmarks.booking.domains.pack import SCHEMA_FILES, DomainPack, Entity, cached_pack
from todeval.benchmarks.booking.tasks import BookingTask, parse_tasks
from todeval.errors import BadInputError

TASKS_FILE = "tasks.json"
"""The tasks a pack folder ships (used when a run names no task file)."""
_TIMES = [f"{h:02d}:{m:02d}" for h in range(8, 20) for m in (0, 15, 30, 45)]
KEY_ONLY = 24 / 174
"""The share of MultiWOZ's 174 test entity goals constrained by the entity's name alone."""
INFO_COUNTS = {2: 23, 3: 51, 4: 76}
"""How many of MultiWOZ's other test entity goals carry 2, 3 and 4 informable constraints."""
MAX_MATCHES = 3
"""The most rows a drawn goal's constraints may leave (MultiWOZ's test goals: a median of 2
hotels of 33 and 3 restaurants of 110)."""
_ROW_DRAWS = 100
"""Rows tried for a goal that singles out at most :data:`MAX_MATCHES` before one is kept as it
is (an entity whose rows share every searchable value)."""


def pack_digest(pack: DomainPack) -> str:
    """SHA-256 over the pack's schema file, those of the packs it extends and its data files
    (what its tasks were drawn from)."""
    h = hashlib.sha256()
    for name in SCHEMA_FILES:
        if (pack.folder / name).is_file():
            h.update((pack.folder / name).read_bytes())
            break
    for base in pack.bases:
        h.update(b"\0")
        h.update(base.read_bytes())
    for entity in pack.entities.values():
        h.update(b"\0")
        h.update((pack.folder / entity.data.partition("#")[0]).read_bytes())
    return h.hexdigest()


def _phrase(entity: Entity, slot: str, value: str) -> str:
    found = entity.slots.get(slot) or entity.booking.get(slot)
    words = re.sub(r"\s*\(.*?\)", "", found.description) if found else slot
    return f"{words} {value}"


def _message(name: str, e: Entity, goal: dict[str, Any], first: bool) -> str:
    opener = "You are looking for" if first else "You also need"
    parts = [f"{opener} {e.description}."]
    tried = goal.get("fail_info")
    final = goal["info"]
    if tried:
        said = ", ".join(_phrase(e, s, v) for s, v in tried.items())
        parts.append(f"It should have {said}.")
        changed = [s for s in final if tried.get(s) != final[s]]
        instead = ", ".join(_phrase(e, s, final[s]) for s in changed)
        parts.append(f"If there is no such {name}, how about one with {instead}.")
    else:
        said = ", ".join(_phrase(e, s, v) for s, v in final.items())
        parts.append(f"It should have {said}.")
    if goal.get("reqt"):
        parts.append(f"Ask for its {' and '.join(goal['reqt'])}.")
    if goal.get("book"):
        said = ", ".join(_phrase(e, s, v) for s, v in goal["book"].items())
        parts.append(
            f"Once you find it, book it for {said}. Make sure you get the reference number."
        )
    return " ".join(parts)


def _no_match(pack: DomainPack, name: str, constraints: dict[str, str]) -> bool:
    return not any(all(r.get(k) == v for k, v in constraints.items()) for r in pack.rows[name])


def _matches(pack: DomainPack, name: str, constraints: dict[str, str]) -> int:
    """How many rows meet ``constraints`` as the scores read them (a slot's ``compare``)."""
    from todeval.benchmarks.booking.scoring import slot_matches

    slots = pack.entities[name].slots
    return sum(
        all(slot_matches(k, r.get(k), v, operator=slots[k].compare) for k, v in constraints.items())
        for r in pack.rows[name]
    )


def _info(pack: DomainPack, name: str, rng: random.Random) -> dict[str, str]:
    """A row's constraints: MultiWOZ's counts, narrowed to at most :data:`MAX_MATCHES` rows."""
    e = pack.entities[name]
    info: dict[str, str] = {}
    for _ in range(_ROW_DRAWS):
        row = rng.choice(pack.rows[name])
        if e.slots[e.key].search and rng.random() < KEY_ONLY:
            return {e.key: row[e.key]}
        searchable = [s for s, slot in e.slots.items() if slot.search and s != e.key and row.get(s)]
        (count,) = rng.choices(list(INFO_COUNTS), weights=list(INFO_COUNTS.values()))
        chosen = rng.sample(searchable, k=min(len(searchable), count))
        rest = [s for s in searchable if s not in chosen]
        rng.shuffle(rest)
        info = {s: row[s] for s in searchable if s in chosen}
        while _matches(pack, name, info) > MAX_MATCHES and rest:
            added = rest.pop()
            info = {s: row[s] for s in searchable if s in info or s == added}
        if _matches(pack, name, info) <= MAX_MATCHES or not searchable:
            return info
    return info  # no row of this entity is singled out by its slots: the last draw as it is


def _domain_goal(pack: DomainPack, name: str, rng: random.Random) -> dict[str, Any]:
    e = pack.entities[name]
    goal: dict[str, Any] = {"info": _info(pack, name, rng)}
    categorical = [
        s for s in goal["info"] if e.slots[s].type == "categorical" and e.slots[s].values
    ]
    if categorical and rng.random() < 0.3:
        slot = rng.choice(categorical)
        others = [v for v in e.slots[slot].values or [] if v != goal["info"][slot]]
        rng.shuffle(others)
        for value in others:
            tried = {**goal["info"], slot: value}
            if _no_match(pack, name, tried):
                goal["fail_info"] = tried
                break
    if e.attributes and rng.random() < 0.5:
        goal["reqt"] = rng.sample(e.attributes, k=min(len(e.attributes), rng.randint(1, 2)))
    if e.booking:
        book = {}
        for slot_name, slot in e.booking.items():
            if slot.type == "time":
                book[slot_name] = rng.choice(_TIMES)
            elif slot.values:
                book[slot_name] = rng.choice(slot.values)
            else:
                book[slot_name] = str(rng.randint(1, 4))
        goal["book"] = book
    return goal


def _record(pack: DomainPack, index: int, rng: random.Random) -> dict[str, Any]:
    names = list(pack.entities)
    count = 2 if len(names) > 1 and rng.random() < 0.4 else 1
    chosen = rng.sample(names, k=count)
    domains = {name: _domain_goal(pack, name, rng) for name in chosen}
    message = " ".join(
        _message(name, pack.entities[name], goal, i == 0)
        for i, (name, goal) in enumerate(domains.items())
    )
    return {
        "filename": f"goal{index:04d}.json",
        "message": message,
        "domains": domains,
        "dialogue_type": "single" if count == 1 else "multi",
    }


def generate_tasks(folder: str | Path, n: int, seed: int) -> dict[str, Any]:
    """``n`` feasible goals drawn from the pack in ``folder`` (the task file's content)."""
    from todeval.benchmarks.booking.audit import audit_task
    from todeval.benchmarks.booking.world.model import pack_task_set

    if n < 1:
        raise BadInputError("--generate-tasks needs a positive number of tasks")
    pack = cached_pack(str(Path(folder).resolve()))
    task_set = pack_task_set(folder)
    rng = random.Random(f"todeval-domain-tasks|{pack.name}|{seed}")
    kept: list[dict[str, Any]] = []
    draws = 0
    while len(kept) < n:
        draws += 1
        if draws > 50 * n:
            raise BadInputError(
                f"{pack.folder}: only {len(kept)} of {draws} drawn goals were bookable; "
                "check the pack's booking rules (todeval data domain PACK --check)"
            )
        record = _record(pack, len(kept), rng)
        (task,) = parse_tasks(task_set, [record], "generated goal", id_prefix=pack.name)
        if audit_task(task).feasible:
            kept.append(record)
    return {
        "pack": pack.name,
        "pack_sha256": pack_digest(pack),
        "seed": seed,
        "draws": draws,
        "tasks": kept,
    }


def load_pack_tasks(folder: str | Path, tasks_file: str | Path | None = None) -> list[BookingTask]:
    """The tasks of a pack: ``tasks_file``, or the ``tasks.json`` the pack folder ships."""
    from todeval.benchmarks.booking.world.model import pack_task_set

    pack = cached_pack(str(Path(folder).resolve()))
    path = Path(tasks_file) if tasks_file is not None else pack.folder / TASKS_FILE
    if not path.is_file():
        hint = "" if tasks_file else " (write one: todeval data domain PACK --generate-tasks N)"
        raise BadInputError(f"{path}: no task file{hint}")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadInputError(f"{path}: not a task file ({str(exc).splitlines()[0]})") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("tasks"), list):
        raise BadInputError(f"{path}: not a domain-pack task file (no 'tasks' list)")
    if raw.get("pack") != pack.name:
        raise BadInputError(f"{path}: tasks of pack {raw.get('pack')!r}, not {pack.name!r}")
    tasks = parse_tasks(pack_task_set(folder), raw["tasks"], str(path), id_prefix=pack.name)
    for task in tasks:
        unknown = sorted(set(task.domains) - set(pack.entities))
        if unknown:
            raise BadInputError(f"{path}: {task.task_id} names {', '.join(unknown)}, not entities")
    return tasks


__all__ = [
    "INFO_COUNTS",
    "KEY_ONLY",
    "MAX_MATCHES",
    "TASKS_FILE",
    "generate_tasks",
    "load_pack_tasks",
    "pack_digest",
]
