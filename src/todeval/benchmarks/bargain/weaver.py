"""Problem Weaver: scripted bargaining tasks from the CoCoA listings and the intent hierarchy.

A task is a product (one of the 10,591 Craigslist listings), an ordered sequence of buyer
turns -- each carrying a **set** of 1 to 3 hierarchy intents, its gold -- one buyer utterance
per turn, and a templated seller reply between buyer turns (a labeller sees both sides).

``template`` mode (:func:`weave_templates`) is deterministic and offline: the intents and the
wording come from the templates file (``data/bargain/intents/weaver-templates-v1.json``),
filled with slots drawn from the listing, all from one seed. ``llm`` mode
(:mod:`.tools.weaver_llm`) samples the intents the same way and has a generator model write the
utterance, then a blind verifier label it.

A set file is gzip-compressed JSONL: a header line (:class:`SetHeader`: mode, seed, the
hierarchy and templates digests, the content hash) then one :class:`ScriptedTask` a line. The
content hash is the SHA-256 of the task lines, so a set regenerates byte for byte from its
header (:func:`regenerate`).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import re
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from todeval.benchmarks.bargain.hierarchy import Hierarchy, default_hierarchy, package_text
from todeval.core.userfiles import read_user_bytes
from todeval.errors import BadInputError, first_problem

DEFAULT_TEMPLATES = "weaver-templates-v1.json"
DEFAULT_SET = "scripted-v1.jsonl.gz"
DEFAULT_SEED = 0
DEFAULT_TASKS = 1000
SET_KIND = "todeval-bargain-scripted-set"
CATEGORIES = ("bike", "car", "electronics", "furniture", "housing", "phone")
TURNS_PER_TASK = ((2, 2), (3, 3), (4, 3), (5, 2))  # (buyer turns, weight)
INTENTS_PER_TURN = ((1, 6), (2, 3), (3, 1))  # (intents in a turn, weight)
CLOSING_AT_END = 0.7  # chance that the last buyer turn carries a closing-stage intent
DESCRIPTION_CHARS = 400  # how much of a listing's description a labeller is shown

Mode = Literal["template", "llm"]


# -- the listings ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Listing:
    """One CoCoA Craigslist listing, as a task's product."""

    post_id: str
    category: str
    title: str
    price: int
    description: str
    attrs: tuple[tuple[str, str], ...]

    @property
    def item(self) -> str:
        """A short item name from the title (prefixes like ``For Sale:`` and prices cut)."""
        title = re.sub(r"(?i)^\s*(for sale|fs|wts|selling)\s*[:\-]\s*", "", self.title)
        title = re.sub(r"\s*[-–|(]?\s*\$\s?[\d,.]+.*$", "", title)
        title = re.sub(r"[!*~]+", "", title)
        words = title.split()[:6] or [self.category]
        short = " ".join(words).strip(" -,:;.")
        return short.lower() if short.isupper() else short


@cache
def listings() -> tuple[Listing, ...]:
    """All 10,591 listings, category by category in file order."""
    out = []
    root = resources.files("todeval") / "data" / "bargain" / "listings"
    for category in CATEGORIES:
        node = root / f"craigslist_{category}.json.gz"
        try:
            rows = json.loads(gzip.decompress(node.read_bytes()))
        except FileNotFoundError:  # pragma: no cover - a broken install
            raise BadInputError(f"bargain package data missing: listings/{node.name}") from None
        for row in rows:
            text = " ".join(str(line).strip() for line in row.get("description") or [])
            out.append(
                Listing(
                    post_id=str(row["post_id"]),
                    category=str(row["category"]),
                    title=" ".join(str(row["title"]).split()),
                    price=int(row["price"]),
                    description=" ".join(text.split()),
                    attrs=tuple(
                        sorted((str(k), str(v)) for k, v in (row.get("attrs") or {}).items())
                    ),
                )
            )
    return tuple(out)


# -- the templates ---------------------------------------------------------------------------


class Variant(BaseModel):
    """A template that fits some product categories only."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    categories: tuple[str, ...] = Field(min_length=1)


class IntentTemplates(BaseModel):
    """An intent's templates. ``categories`` (empty: all) limits where the intent is sampled;
    a template given as ``{"text", "categories"}`` is used for those categories only."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stage: Literal["opening", "middle", "closing"]
    categories: tuple[str, ...] = ()
    buyer: tuple[str | Variant, ...] = Field(min_length=1)
    seller: tuple[str | Variant, ...] = Field(min_length=1)

    def fits(self, category: str) -> bool:
        return not self.categories or category in self.categories

    def texts(self, side: Literal["buyer", "seller"], category: str) -> list[str]:
        """The templates usable for ``category`` (those restricted to it, and the general)."""
        pool = self.buyer if side == "buyer" else self.seller
        return [
            v if isinstance(v, str) else v.text
            for v in pool
            if isinstance(v, str) or category in v.categories
        ]


class Templates(BaseModel):
    """The paraphrase templates of ``template`` mode, one entry per hierarchy intent."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str
    slots: dict[str, str]
    intents: dict[str, IntentTemplates]

    def digest(self) -> str:
        text = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def check(self, hierarchy: Hierarchy) -> list[str]:
        """Problems against ``hierarchy``: intents without templates, unknown intents or slots."""
        out = []
        ids = set(hierarchy.intent_ids)
        out += [
            f"intent {i!r} has no templates" for i in hierarchy.intent_ids if i not in self.intents
        ]
        out += [f"templates for unknown intent {i!r}" for i in sorted(set(self.intents) - ids)]
        for intent_id, entry in self.intents.items():
            named = set(entry.categories)
            for v in (*entry.buyer, *entry.seller):
                if not isinstance(v, str):
                    named |= set(v.categories)
            out += [f"{intent_id}: unknown category {c!r}" for c in sorted(named - set(CATEGORIES))]
            for category in CATEGORIES:
                if entry.fits(category) and not (
                    entry.texts("buyer", category) and entry.texts("seller", category)
                ):
                    out.append(f"{intent_id}: no buyer or seller template for {category}")
            for v in (*entry.buyer, *entry.seller):
                text = v if isinstance(v, str) else v.text
                try:
                    names = {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}
                except ValueError as exc:
                    out.append(f"{intent_id}: bad template {text!r} ({exc})")
                    continue
                unknown = names - set(self.slots)
                if unknown:
                    out.append(f"{intent_id}: unknown slot {sorted(unknown)[0]!r} in {text!r}")
        return out


def parse_templates(text: str, where: str, hierarchy: Hierarchy) -> Templates:
    try:
        t = Templates.model_validate(json.loads(text))
    except json.JSONDecodeError as exc:
        raise BadInputError(f"{where}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except ValidationError as exc:
        raise BadInputError(f"{where}: invalid templates at {first_problem(exc)}") from None
    found = t.check(hierarchy)
    if found:
        raise BadInputError(f"{where}: {found[0]}")
    return t


@cache
def default_templates() -> Templates:
    return parse_templates(
        package_text(DEFAULT_TEMPLATES), f"intents/{DEFAULT_TEMPLATES}", default_hierarchy()
    )


# -- tasks and set files ---------------------------------------------------------------------


class ScriptedTurn(BaseModel):
    """One buyer turn: the utterance, its gold intent set (in sampled order), the seller's
    templated reply (none after the last turn) and, in ``llm`` mode, the verifier's labels."""

    model_config = ConfigDict(extra="forbid")

    buyer: str
    intents: list[str] = Field(min_length=1)
    seller: str | None = None
    verifier: list[str] | None = Field(None, description="llm mode: the blind verifier's ids")
    agreed: bool | None = Field(None, description="llm mode: verifier set == gold set")


class ScriptedTask(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str
    post_id: str
    category: str
    title: str
    price: int
    description: str
    turns: list[ScriptedTurn] = Field(min_length=1)


class SetHeader(BaseModel):
    """The first line of a set file: how to regenerate it and what it must hash to."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["todeval-bargain-scripted-set"] = "todeval-bargain-scripted-set"
    name: str
    mode: Mode
    seed: int
    n_tasks: int
    hierarchy: str = Field(description="name@version#digest of the hierarchy used")
    templates: str | None = Field(
        None, description="version#digest of the templates (template mode)"
    )
    generator: str | None = None
    verifier: str | None = None
    distractors: str | None = None
    k: int | None = None
    disagreement_rate: float | None = None
    content_sha256: str


def hierarchy_tag(h: Hierarchy) -> str:
    return f"{h.name}@{h.version}#{h.digest()}"


def task_lines(tasks: Iterable[ScriptedTask]) -> bytes:
    """The canonical JSONL of the tasks (what the content hash covers)."""
    return b"".join(
        json.dumps(t.model_dump(mode="json"), sort_keys=True, ensure_ascii=False).encode() + b"\n"
        for t in tasks
    )


def content_hash(tasks: Sequence[ScriptedTask]) -> str:
    return hashlib.sha256(task_lines(tasks)).hexdigest()


def set_bytes(header: SetHeader, tasks: Sequence[ScriptedTask]) -> bytes:
    """The uncompressed set file."""
    head = json.dumps(header.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return head.encode() + b"\n" + task_lines(tasks)


def write_set(path: Path, header: SetHeader, tasks: Sequence[ScriptedTask]) -> None:
    """Write a set (gzip without a timestamp, so equal content gives equal bytes), atomically."""
    data = gzip.compress(set_bytes(header, tasks), compresslevel=9, mtime=0)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_bytes(data)
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise BadInputError(f"cannot write {path}: {exc.strerror or exc}") from None


def parse_set(data: bytes, where: str) -> tuple[SetHeader, list[ScriptedTask]]:
    """Header and tasks of a set file's bytes (gzip or plain); the content hash is checked."""
    try:
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        lines = data.decode("utf-8").splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{where}: not a gzip/UTF-8 set file ({exc})") from None
    if not lines:
        raise BadInputError(f"{where}: empty set file")
    try:
        header = SetHeader.model_validate_json(lines[0])
    except ValidationError as exc:
        raise BadInputError(
            f"{where}: line 1 is not a scripted-set header ({first_problem(exc)})"
        ) from None
    tasks = []
    for no, line in enumerate(lines[1:], start=2):
        try:
            tasks.append(ScriptedTask.model_validate_json(line))
        except ValidationError as exc:
            raise BadInputError(
                f"{where}: line {no}: invalid task ({first_problem(exc)})"
            ) from None
    if len(tasks) != header.n_tasks:
        raise BadInputError(
            f"{where}: header says {header.n_tasks} tasks, the file holds {len(tasks)}"
        )
    if content_hash(tasks) != header.content_sha256:
        raise BadInputError(f"{where}: content hash differs from its header (the file was changed)")
    ids = [t.task_id for t in tasks]
    if len(set(ids)) != len(ids):
        raise BadInputError(f"{where}: duplicate task ids")
    return header, tasks


def read_set(path: str | Path) -> tuple[SetHeader, list[ScriptedTask]]:
    path = Path(path)
    try:
        data = read_user_bytes(path, what="scripted set")
    except OSError as exc:
        raise BadInputError(f"cannot read scripted set {path}: {exc.strerror or exc}") from None
    return parse_set(data, str(path))


@cache
def default_set() -> tuple[SetHeader, tuple[ScriptedTask, ...]]:
    """The shipped template-mode set."""
    node = resources.files("todeval") / "data" / "bargain" / DEFAULT_SET
    try:
        data = node.read_bytes()
    except FileNotFoundError:  # pragma: no cover - a broken install
        raise BadInputError(f"bargain package data missing: {DEFAULT_SET}") from None
    header, tasks = parse_set(data, DEFAULT_SET)
    return header, tuple(tasks)


# -- sampling --------------------------------------------------------------------------------


def rng_of(*parts: object) -> random.Random:
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _weighted(rng: random.Random, table: Sequence[tuple[int, int]]) -> int:
    return rng.choices([v for v, _ in table], weights=[w for _, w in table])[0]


def sample_intents(
    rng: random.Random, hierarchy: Hierarchy, templates: Templates, category: str
) -> list[list[str]]:
    """An ordered intent sequence: per buyer turn a set of 1-3 distinct intents (no intent
    twice in a task, only intents that fit the product's category); the first turn leads with
    an opening-stage intent, the last closes with probability :data:`CLOSING_AT_END`, middle
    turns draw from the middle stage."""
    by_stage: dict[str, list[str]] = {"opening": [], "middle": [], "closing": []}
    for intent_id in hierarchy.intent_ids:
        entry = templates.intents[intent_id]
        if entry.fits(category):
            by_stage[entry.stage].append(intent_id)
    n_turns = _weighted(rng, TURNS_PER_TASK)
    used: set[str] = set()
    plan: list[list[str]] = []
    for turn in range(n_turns):
        size = _weighted(rng, INTENTS_PER_TURN)
        first_pool = by_stage["middle"]
        if turn == 0:
            first_pool = by_stage["opening"]
        elif turn == n_turns - 1 and rng.random() < CLOSING_AT_END:
            first_pool = by_stage["closing"]
        chosen: list[str] = []
        for slot in range(size):
            pool = first_pool if slot == 0 else by_stage["middle"]
            free = [i for i in pool if i not in used] or [
                i for i in by_stage["middle"] if i not in used
            ]
            if not free:
                break
            pick = rng.choice(free)
            chosen.append(pick)
            used.add(pick)
        plan.append(chosen)
    return plan


DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
TIMES = ("9am", "10am", "noon", "2pm", "4pm", "5:30pm", "6pm", "7pm")
PLACES = (
    "the library parking lot",
    "the train station",
    "the coffee shop on Main Street",
    "the mall entrance",
    "your place",
    "the gas station near the highway",
)
PAYMENTS = ("cash", "Venmo", "PayPal", "Zelle", "a cashier's check")
ATTRIBUTES = {
    "bike": ("frame size", "wheel size", "weight"),
    "car": ("mileage", "service history", "title status"),
    "electronics": ("model number", "battery life", "warranty"),
    "furniture": ("dimensions", "material", "weight"),
    "housing": ("square footage", "lease length", "parking"),
    "phone": ("storage size", "carrier lock", "battery health"),
}


def _round_price(value: float, listing_price: int) -> int:
    step = (
        1
        if listing_price < 50
        else 5
        if listing_price < 500
        else 50
        if listing_price < 5000
        else 100
    )
    return max(step, round(value / step) * step)


def slot_values(listing: Listing, rng: random.Random) -> dict[str, str]:
    """The slots of one task, drawn once so every turn of the task agrees."""
    price = max(listing.price, 1)
    offer = _round_price(price * rng.uniform(0.6, 0.88), price)
    counter = _round_price((offer + price) / 2, price)
    if counter <= offer:
        counter = offer + max(1, price // 20)
    return {
        "item": listing.item,
        "title": listing.title,
        "category": listing.category,
        "price": f"${price:,}",
        "offer": f"${offer:,}",
        "counter": f"${counter:,}",
        "day": rng.choice(DAYS),
        "time": rng.choice(TIMES),
        "place": rng.choice(PLACES),
        "payment": rng.choice(PAYMENTS),
        "attribute": rng.choice(ATTRIBUTES.get(listing.category, ("condition",))),
    }


def choose_listings(n: int, seed: int) -> list[Listing]:
    """``n`` distinct listings, stratified over the six categories in proportion (seeded)."""
    pool = list(listings())
    if n > len(pool):
        raise BadInputError(f"asked for {n} tasks; there are {len(pool)} listings")
    rng = rng_of("weaver-listings", seed)
    rng.shuffle(pool)
    return pool[:n]


def seller_reply(
    rng: random.Random, templates: Templates, intent: str, category: str, slots: dict[str, str]
) -> str:
    """The seller's templated answer to a buyer turn (to its first intent)."""
    return rng.choice(templates.intents[intent].texts("seller", category)).format(**slots)


def task_id(i: int) -> str:
    return f"sc-{i:05d}"


def weave_templates(
    n: int = DEFAULT_TASKS,
    seed: int = DEFAULT_SEED,
    hierarchy: Hierarchy | None = None,
    templates: Templates | None = None,
) -> list[ScriptedTask]:
    """``n`` template-mode tasks from ``seed``: the same arguments give the same tasks."""
    hierarchy = hierarchy or default_hierarchy()
    templates = templates or default_templates()
    out = []
    for i, listing in enumerate(choose_listings(n, seed)):
        rng = rng_of("weaver-task", seed, i, listing.post_id)
        slots = slot_values(listing, rng)
        plan = sample_intents(rng, hierarchy, templates, listing.category)
        turns = []
        for t, intents in enumerate(plan):
            parts = [
                rng.choice(templates.intents[x].texts("buyer", listing.category)).format(**slots)
                for x in intents
            ]
            seller = None
            if t < len(plan) - 1:
                seller = seller_reply(rng, templates, intents[0], listing.category, slots)
            turns.append(ScriptedTurn(buyer=" ".join(parts), intents=intents, seller=seller))
        out.append(task_of(i, listing, turns))
    return out


def task_of(i: int, listing: Listing, turns: list[ScriptedTurn]) -> ScriptedTask:
    """Task ``i`` on ``listing`` (the description cut to what a labeller is shown)."""
    return ScriptedTask(
        task_id=task_id(i),
        post_id=listing.post_id,
        category=listing.category,
        title=listing.title,
        price=listing.price,
        description=listing.description[:DESCRIPTION_CHARS],
        turns=turns,
    )


def template_header(
    tasks: Sequence[ScriptedTask], seed: int, hierarchy: Hierarchy, templates: Templates, name: str
) -> SetHeader:
    return SetHeader(
        name=name,
        mode="template",
        seed=seed,
        n_tasks=len(tasks),
        hierarchy=hierarchy_tag(hierarchy),
        templates=f"{templates.version}#{templates.digest()}",
        content_sha256=content_hash(tasks),
    )


def regenerate(header: SetHeader) -> tuple[SetHeader, list[ScriptedTask]]:
    """A template-mode set rebuilt from its header (with the shipped hierarchy and templates);
    :class:`BadInputError` when the header names other ones."""
    if header.mode != "template":
        raise BadInputError(
            "only template-mode sets regenerate offline (llm mode needs its models)"
        )
    h, t = default_hierarchy(), default_templates()
    if header.hierarchy != hierarchy_tag(h) or header.templates != f"{t.version}#{t.digest()}":
        raise BadInputError(
            f"the set was made with hierarchy {header.hierarchy} and templates {header.templates}; "
            f"this package ships {hierarchy_tag(h)} and {t.version}#{t.digest()}"
        )
    tasks = weave_templates(header.n_tasks, header.seed, h, t)
    return template_header(tasks, header.seed, h, t, header.name), tasks


__all__ = [
    "DEFAULT_SEED",
    "DEFAULT_SET",
    "DEFAULT_TASKS",
    "Listing",
    "ScriptedTask",
    "ScriptedTurn",
    "SetHeader",
    "Templates",
    "content_hash",
    "default_set",
    "default_templates",
    "hierarchy_tag",
    "listings",
    "parse_set",
    "read_set",
    "regenerate",
    "rng_of",
    "sample_intents",
    "seller_reply",
    "set_bytes",
    "slot_values",
    "task_of",
    "template_header",
    "weave_templates",
    "write_set",
]
