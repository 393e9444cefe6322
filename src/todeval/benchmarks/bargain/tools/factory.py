"""Intent Factory: an intent hierarchy distilled from bargaining dialogues by models, and its
coverage of held-out labelled intents.

The pipeline (``docs/bargain-factory.md``):

1. **Split.** The source's dialogues (CraigslistBargain's 181, or CaSiNo's 396 annotated ones)
   fall into 5 folds by a hash of their id (:func:`~.baselines.fold_of`); one fold is
   **held out** (``heldout_fold``), the others are the extraction dialogues. The two never
   overlap. Both lists are put in a seeded order (a hash of seed and id); ``limit`` takes the
   first N of that order.
2. **Extract.** One extractor call per extraction dialogue (``prompts/factory-extract.txt``)
   lists the intents the labelled speaker(s) express: ``{"intents": [{"name", "description",
   "example"}]}``. An unreadable reply counts as an extraction failure; an entry without a
   usable name is dropped and counted.
3. **Verify.** One verifier call per candidate (``factory-verify.txt``): is it a genuine,
   specific bargaining intent that its example utterance supports? ``{"verdict": "yes"|"no"}``;
   ``no`` and unreadable replies are rejected (counted apart).
4. **Merge.** Verified candidates are merged one at a time, in order: a candidate whose name
   slug equals an existing intent's slug merges into it without a call; otherwise a maintainer
   call (``factory-merge.txt``) sees the intents so far and answers ``{"same_as": id|"new",
   "parent": ...}``. A new intent gets the parent the model named (one of :data:`PARENTS`) or,
   when it named none of them, the parent of the keyword rule :func:`keyword_parent`.
5. **Write.** Intents and parents form a hierarchy of the same format as ``hierarchy-v1.json``
   (validated). Actions and tools are **placeholders**: one action ``act.handle_<id>`` per
   intent and one tool ``API_<Parent>Placeholder`` per parent, for a person to refine.
6. **Coverage.** Every held-out labelled turn's source labels map, through the mapping file
   (``source-mapping-v1.json``), to reference-hierarchy intents: a label's list holds the
   *alternatives* it stands for (``inquire`` is one of many question intents). Turns whose
   labels map to nothing are excluded and counted. A matcher call (``factory-match.txt``) per
   reference intent that occurs names the extracted intent with the same meaning, or none. A
   label is covered when at least one of its alternatives has a match; a turn, when each of
   its mapped labels is: **turn coverage** = covered / mapped turns (lenient). A resolver call
   (``factory-resolve.txt``) per turn with several alternatives picks the ones the message
   expresses; **resolved turn coverage** asks every picked alternative to have a match (a
   label the resolver picked nothing for falls back to the lenient rule, counted). **Intent
   coverage** = matched / distinct reference intents occurring.
7. **Duplicates.** The same matcher prompt, the other way round: each extracted intent is
   assigned the reference intent with its meaning, or none. Reference intent r assigned to
   n_r > 1 extracted intents has n_r - 1 redundant ones; duplicate ratio = sum of the redundant
   / extracted intents. Every coverage and the duplicate ratio come with Wilson 95 % intervals.

Every call goes through the backends (cached as usual), with one seed, bounded concurrency and
results gathered in input order, so a rerun is identical; merging is sequential by design.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import sys
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO, TypeVar

from pydantic import BaseModel, Field

from todeval.backends import ChatMessage
from todeval.backends.sampling import Sampling
from todeval.backends.types import Backend
from todeval.benchmarks.bargain.baselines import FOLDS, fold_of
from todeval.benchmarks.bargain.data import (
    CASINO_LABELS,
    CRAIGSLIST_LABELS,
    Dialogue,
    LabelledTurn,
    casino_dialogues,
    craigslist_dialogues,
)
from todeval.benchmarks.bargain.hierarchy import (
    Action,
    Hierarchy,
    Intent,
    Parent,
    Tool,
    package_text,
    validate,
)
from todeval.core.records import CallUsage
from todeval.dialogue import PromptSet, ReplyChecker, json_reply
from todeval.errors import BadInputError, UsageError
from todeval.stats.proportions import wilson_interval

Source = Literal["craigslist", "casino"]
SOURCES: tuple[Source, ...] = ("craigslist", "casino")
FACTORY_VERSION = "1"
DEFAULT_MAPPING = "source-mapping-v1.json"
PROMPTS_PACKAGE = "todeval.benchmarks.bargain"
TEMPLATES = (
    "factory-extract",
    "factory-verify",
    "factory-merge",
    "factory-match",
    "factory-resolve",
)
MAX_EXAMPLES = 3
MAX_SLUG = 48
MAX_FAILURE_EXAMPLES = 3  # unreadable replies kept per call kind in the report

PARENTS: dict[str, tuple[str, str]] = {
    "price": ("Price", "the price, offers, counter-offers and discounts"),
    "product": ("Product facts", "what the item is: features, size, model, what is included"),
    "condition": ("Condition", "the item's state: wear, damage, age, whether it works"),
    "logistics": ("Logistics", "pick-up, delivery, shipping, meeting place and time"),
    "payment": ("Payment", "how and when the buyer pays"),
    "relationship": (
        "Relationship",
        "greetings, small talk, needs, fairness and rapport between the two sides",
    ),
    "closing": ("Closing", "accepting, rejecting, confirming or walking away from a deal"),
}
"""The seven parents an extracted intent is filed under (id -> name, description)."""

PARENT_KEYWORDS: dict[str, tuple[str, ...]] = {
    "price": ("price", "offer", "discount", "cheap", "lower", "cost", "budget", "dollar", "$"),
    "product": ("feature", "size", "model", "brand", "spec", "include", "detail", "product"),
    "condition": ("condition", "damage", "scratch", "wear", "broken", "work", "age", "repair"),
    "logistics": ("pick", "deliver", "ship", "location", "meet", "time", "transport", "drop"),
    "payment": ("pay", "cash", "card", "paypal", "venmo", "deposit", "check"),
    "relationship": ("greet", "hello", "thank", "chat", "talk", "need", "fair", "empath", "trust"),
    "closing": ("deal", "accept", "agree", "reject", "walk", "confirm", "final", "decline"),
}
"""The fallback parent rule: the parent whose keywords occur most often in the candidate's
name and description (ties: the order above); no keyword at all: ``relationship``."""
FALLBACK_PARENT = "relationship"

SPEAKERS: dict[Source, str] = {"craigslist": "the Buyer", "casino": "Camper 1 and Camper 2"}

EXTRACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "intents": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "description": {"type": "string"},
                    "example": {"type": "string"},
                },
            },
        }
    },
    "required": ["intents"],
}
VERIFY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}},
    "required": ["verdict"],
}
MERGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"same_as": {"type": "string"}, "parent": {"type": "string"}},
    "required": ["same_as"],
}
RESOLVE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"intents": {"type": "array", "items": {"type": "string"}}},
    "required": ["intents"],
}
MATCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"match": {"type": "string"}},
    "required": ["match"],
}

T = TypeVar("T")


# -- inputs ------------------------------------------------------------------------------------


def source_labels(source: Source) -> dict[str, str]:
    return CRAIGSLIST_LABELS if source == "craigslist" else CASINO_LABELS


def source_dialogues(source: Source) -> tuple[Dialogue, ...]:
    """CraigslistBargain's 181 act-labelled dialogues, or CaSiNo's 396 annotated ones."""
    if source == "craigslist":
        return craigslist_dialogues()
    return casino_dialogues("train") + casino_dialogues("valid") + casino_dialogues("test")


def seeded_order(dialogues: Sequence[Dialogue], seed: int) -> list[Dialogue]:
    """The dialogues sorted by a hash of the seed and their id."""

    def key(d: Dialogue) -> str:
        return hashlib.sha256(f"factory|{seed}|{d.dialogue_id}".encode()).hexdigest()

    return sorted(dialogues, key=key)


def split_dialogues(
    dialogues: Sequence[Dialogue], heldout_fold: int
) -> tuple[list[Dialogue], list[Dialogue]]:
    """(extraction, held-out): held-out is the fold ``heldout_fold`` of :func:`fold_of`."""
    if not 0 <= heldout_fold < FOLDS:
        raise UsageError(f"--heldout-fold must be between 0 and {FOLDS - 1}")
    extraction = [d for d in dialogues if fold_of(d.dialogue_id) != heldout_fold]
    heldout = [d for d in dialogues if fold_of(d.dialogue_id) == heldout_fold]
    return extraction, heldout


class SourceMapping(BaseModel):
    """The mapping file: source label -> reference-hierarchy intent ids (maybe none)."""

    version: str
    craigslist: dict[str, tuple[str, ...]]
    casino: dict[str, tuple[str, ...]]
    notes: dict[str, str] = Field(default_factory=dict)

    def of(self, source: Source) -> dict[str, tuple[str, ...]]:
        return self.craigslist if source == "craigslist" else self.casino


def parse_mapping(text: str, where: str, reference: Hierarchy) -> SourceMapping:
    """A mapping file checked against the reference hierarchy and both label sets."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInputError(f"{where}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get("version"), str):
        raise BadInputError(f"{where}: expected an object with a string 'version'")
    known = set(reference.intent_ids)
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    notes: dict[str, str] = {}
    for source in SOURCES:
        section = data.get(source)
        if not isinstance(section, dict):
            raise BadInputError(f"{where}: missing the {source!r} section")
        labels = source_labels(source)
        unknown = sorted(set(section) - set(labels))
        if unknown:
            raise BadInputError(f"{where}: {source}: unknown label {unknown[0]!r}")
        missing = [label for label in labels if label not in section]
        if missing:
            raise BadInputError(f"{where}: {source}: label {missing[0]!r} is not mapped")
        mapped: dict[str, tuple[str, ...]] = {}
        for label in labels:
            entry = section[label]
            ids = entry.get("intents") if isinstance(entry, dict) else None
            if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                raise BadInputError(f"{where}: {source}.{label}: 'intents' must list intent ids")
            bad = [i for i in ids if i not in known]
            if bad:
                raise BadInputError(
                    f"{where}: {source}.{label}: {bad[0]!r} is no intent of the reference "
                    f"hierarchy {reference.name} {reference.version}"
                )
            mapped[label] = tuple(dict.fromkeys(ids))
            if isinstance(entry.get("note"), str):
                notes[f"{source}.{label}"] = entry["note"]
        out[source] = mapped
    return SourceMapping(
        version=data["version"], craigslist=out["craigslist"], casino=out["casino"], notes=notes
    )


def default_mapping(reference: Hierarchy) -> SourceMapping:
    """The shipped ``source-mapping-v1.json``, checked against ``reference``."""
    return parse_mapping(package_text(DEFAULT_MAPPING), f"intents/{DEFAULT_MAPPING}", reference)


def load_prompts(overrides: dict[str, str] | None = None) -> PromptSet:
    """The bargain templates (the factory reads :data:`TEMPLATES`) with overrides applied."""
    return PromptSet.load(PROMPTS_PACKAGE, overrides)


# -- records -----------------------------------------------------------------------------------


class Candidate(BaseModel):
    """One intent an extractor named in one dialogue."""

    name: str
    description: str
    example: str
    dialogue_id: str
    slug: str


class FactoryIntent(BaseModel):
    """An intent of the output with where it came from (the report's view)."""

    id: str
    name: str
    description: str
    parent: str
    parent_by: Literal["model", "keyword"]
    examples: list[str] = Field(default_factory=list)
    support: int = 1  # candidates merged into it, itself included
    dialogues: list[str] = Field(default_factory=list)
    slugs: list[str] = Field(default_factory=list)


@dataclass
class FactoryModels:
    """The backends of the four roles (one model may play several)."""

    extractor: Backend
    verifier: Backend
    maintainer: Backend
    matcher: Backend
    specs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FactoryConfig:
    source: Source
    seed: int = 0
    limit: int | None = None
    heldout_limit: int | None = None
    heldout_fold: int = 0
    max_concurrency: int = 4
    sampling: Sampling = field(default_factory=Sampling)
    quiet: bool = False


@dataclass
class FactoryResult:
    hierarchy: Hierarchy
    report: dict[str, Any]


# -- helpers -----------------------------------------------------------------------------------


def slug_of(name: str) -> str:
    """Lower-case words joined by ``_`` (at most 48 characters); ``""`` when none."""
    words = re.findall(r"[a-z0-9]+", name.lower())
    return "_".join(words)[:MAX_SLUG].strip("_")


def keyword_parent(text: str) -> str:
    """The fallback parent of an intent from its name and description (see
    :data:`PARENT_KEYWORDS`)."""
    low = text.lower()
    scores = {p: sum(low.count(k) for k in words) for p, words in PARENT_KEYWORDS.items()}
    best = max(scores.values())
    if best == 0:
        return FALLBACK_PARENT
    return next(p for p in PARENT_KEYWORDS if scores[p] == best)


def ratio(successes: int, n: int) -> dict[str, Any]:
    """A proportion with its Wilson 95 % interval (``None`` values when ``n`` is 0)."""
    if n == 0:
        return {"value": None, "ci95": None, "successes": 0, "n": 0}
    low, high = wilson_interval(successes, n)
    return {"value": successes / n, "ci95": [low, high], "successes": successes, "n": n}


def render_dialogue(dialogue: Dialogue) -> str:
    return "\n".join(f"{u.speaker}: {u.text}" for u in dialogue.utterances)


def render_context(dialogue: Dialogue) -> str:
    return "\n".join(f"{k}: {v}" for k, v in dialogue.context)


class Progress:
    """``factory: <stage> i/n`` lines on stderr, about ten per stage."""

    def __init__(self, stage: str, total: int, *, quiet: bool, stream: TextIO | None = None):
        self.stage = stage
        self.total = total
        self.done = 0
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.step = max(1, total // 10)

    def tick(self) -> None:
        self.done += 1
        if not self.quiet and (self.done % self.step == 0 or self.done == self.total):
            print(f"factory: {self.stage} {self.done}/{self.total}", file=self.stream, flush=True)


# -- the pipeline ------------------------------------------------------------------------------


class IntentFactory:
    """One factory run: the models, the prompts, the reference and its mapping."""

    def __init__(
        self,
        config: FactoryConfig,
        models: FactoryModels,
        prompts: PromptSet,
        reference: Hierarchy,
        mapping: SourceMapping,
    ) -> None:
        self.config = config
        self.models = models
        self.prompts = prompts
        self.reference = reference
        self.mapping = mapping
        self.usage: list[CallUsage] = []
        self.format_failures: Counter[str] = Counter()
        self.failure_examples: dict[str, list[dict[str, str]]] = {}
        self._semaphore = asyncio.Semaphore(max(1, config.max_concurrency))
        self._checkers = {
            "extract": ReplyChecker(EXTRACT_SCHEMA),
            "verify": ReplyChecker(VERIFY_SCHEMA),
            "merge": ReplyChecker(MERGE_SCHEMA),
            "match": ReplyChecker(MATCH_SCHEMA),
            "resolve": ReplyChecker(RESOLVE_SCHEMA),
        }

    async def _ask(self, backend: Backend, kind: str, text: str) -> dict[str, Any] | None:
        async with self._semaphore:
            reply = await json_reply(
                backend,
                self.config.sampling,
                [ChatMessage(role="user", content=text)],
                self._checkers[kind],
                role=f"factory.{kind}",
                seed=self.config.seed,
                usage=self.usage,
            )
        if reply.value is None:
            self.format_failures[kind] += 1
            examples = self.failure_examples.setdefault(kind, [])
            if len(examples) < MAX_FAILURE_EXAMPLES:
                examples.append({"error": reply.format_error or "", "raw": reply.raw[:400]})
        return reply.value

    async def _each(
        self, stage: str, items: Sequence[T], work: Callable[[T], Awaitable[Any]]
    ) -> list[Any]:
        progress = Progress(stage, len(items), quiet=self.config.quiet)

        async def one(item: T) -> Any:
            result = await work(item)
            progress.tick()
            return result

        return list(await asyncio.gather(*(one(item) for item in items)))

    # 1. extract -------------------------------------------------------------------------------

    async def extract(self, dialogue: Dialogue) -> tuple[list[Candidate], int, bool]:
        """(candidates, malformed entries dropped, reply unreadable)."""
        text = self.prompts.render(
            "factory-extract",
            context=render_context(dialogue),
            dialogue=render_dialogue(dialogue),
            speakers=SPEAKERS[self.config.source],
        )
        value = await self._ask(self.models.extractor, "extract", text)
        if value is None:
            return [], 0, True
        out: list[Candidate] = []
        dropped = 0
        for entry in value["intents"]:
            if not isinstance(entry, dict):
                dropped += 1
                continue
            name = " ".join(str(entry.get("name") or "").split())
            slug = slug_of(name)
            if not slug:
                dropped += 1
                continue
            description = " ".join(str(entry.get("description") or "").split()) or name
            example = " ".join(str(entry.get("example") or "").split())
            out.append(
                Candidate(
                    name=name,
                    description=description,
                    example=example,
                    dialogue_id=dialogue.dialogue_id,
                    slug=slug,
                )
            )
        return out, dropped, False

    # 2. verify --------------------------------------------------------------------------------

    async def verify(self, pair: tuple[Candidate, Dialogue]) -> Literal["yes", "no", "failed"]:
        candidate, dialogue = pair
        text = self.prompts.render(
            "factory-verify",
            context=render_context(dialogue),
            dialogue=render_dialogue(dialogue),
            speakers=SPEAKERS[self.config.source],
            intent_name=candidate.name,
            description=candidate.description,
            example=candidate.example or "(none given)",
        )
        value = await self._ask(self.models.verifier, "verify", text)
        if value is None:
            return "failed"
        return "yes" if value["verdict"] == "yes" else "no"

    # 3. merge ---------------------------------------------------------------------------------

    async def merge(
        self, candidates: Sequence[Candidate]
    ) -> tuple[list[FactoryIntent], Counter[str]]:
        """The final intents and the merge counts (``by_slug``, ``by_model``, ``new``,
        ``invalid_answer``: an id that names no intent, taken as new)."""
        intents: list[FactoryIntent] = []
        by_slug: dict[str, FactoryIntent] = {}
        counts: Counter[str] = Counter()
        progress = Progress("merge", len(candidates), quiet=self.config.quiet)
        parents = "\n".join(f"- {p}: {name}: {desc}" for p, (name, desc) in PARENTS.items())
        for c in candidates:
            target = by_slug.get(c.slug)
            if target is not None:
                counts["by_slug"] += 1
                self._absorb(target, c)
                progress.tick()
                continue
            listing = "\n".join(f"- {i.id}: {i.name}: {i.description}" for i in intents)
            text = self.prompts.render(
                "factory-merge",
                intents=listing or "(none yet)",
                parents=parents,
                intent_name=c.name,
                description=c.description,
                example=c.example or "(none given)",
            )
            value = await self._ask(self.models.maintainer, "merge", text)
            same = str(value["same_as"]).strip() if value else "new"
            found = next((i for i in intents if i.id == same), None)
            if found is not None:
                counts["by_model"] += 1
                self._absorb(found, c)
                by_slug[c.slug] = found
                progress.tick()
                continue
            if same != "new":
                counts["invalid_answer"] += 1
            parent = str(value.get("parent", "")).strip() if value else ""
            parent_by: Literal["model", "keyword"] = "model"
            if parent not in PARENTS:
                parent = keyword_parent(f"{c.name} {c.description}")
                parent_by = "keyword"
            intent = FactoryIntent(
                id=self._new_id(c.slug, {i.id for i in intents}),
                name=c.name,
                description=c.description,
                parent=parent,
                parent_by=parent_by,
                examples=[c.example] if c.example else [],
                dialogues=[c.dialogue_id],
                slugs=[c.slug],
            )
            counts["new"] += 1
            intents.append(intent)
            by_slug[c.slug] = intent
            progress.tick()
        return intents, counts

    @staticmethod
    def _absorb(target: FactoryIntent, c: Candidate) -> None:
        target.support += 1
        if c.example and c.example not in target.examples and len(target.examples) < MAX_EXAMPLES:
            target.examples.append(c.example)
        if c.dialogue_id not in target.dialogues:
            target.dialogues.append(c.dialogue_id)
        if c.slug not in target.slugs:
            target.slugs.append(c.slug)

    @staticmethod
    def _new_id(slug: str, taken: set[str]) -> str:
        base = slug if slug[0].isalpha() else f"intent_{slug}"
        if base in PARENTS:
            base = f"{base}_intent"
        out, n = base, 2
        while out in taken:
            out, n = f"{base}_{n}", n + 1
        return out

    # 4. match ---------------------------------------------------------------------------------

    async def match(self, intent: str, options: dict[str, str]) -> str | None:
        """The id among ``options`` (id -> text) the matcher gives ``intent``, or ``None``."""
        if not options:
            return None
        text = self.prompts.render(
            "factory-match",
            intent=intent,
            candidates="\n".join(f"- {i}: {t}" for i, t in options.items()),
        )
        value = await self._ask(self.models.matcher, "match", text)
        answer = str(value["match"]).strip() if value else "none"
        if answer in options:
            return answer
        if answer != "none":
            self.format_failures["match_unknown_id"] += 1
        return None

    # the whole run ----------------------------------------------------------------------------

    async def run(self, dialogues: Sequence[Dialogue] | None = None) -> FactoryResult:
        """The whole pipeline over ``dialogues`` (default: the source's, see
        :func:`source_dialogues`)."""
        cfg = self.config
        pool = source_dialogues(cfg.source) if dialogues is None else dialogues
        extraction, heldout = split_dialogues(pool, cfg.heldout_fold)
        extraction = seeded_order(extraction, cfg.seed)[: cfg.limit]
        heldout = seeded_order(heldout, cfg.seed)[: cfg.heldout_limit]
        if not extraction:
            raise UsageError("no extraction dialogues selected (check --limit)")

        extracted = await self._each("extract", extraction, self.extract)
        candidates = [c for cs, _, _ in extracted for c in cs]
        by_id = {d.dialogue_id: d for d in extraction}
        verdicts = await self._each(
            "verify", [(c, by_id[c.dialogue_id]) for c in candidates], self.verify
        )
        verified = [c for c, v in zip(candidates, verdicts, strict=True) if v == "yes"]
        intents, merges = await self.merge(verified)
        hierarchy = build_hierarchy(intents, cfg.source, len(extraction), cfg.heldout_fold)

        coverage = await self.coverage(intents, heldout)
        duplicates = await self.duplicates(intents)
        counts = {
            "dialogues_extraction": len(extraction),
            "dialogues_heldout": len(heldout),
            "extract_failures": sum(1 for _, _, failed in extracted if failed),
            "candidates_dropped": sum(dropped for _, dropped, _ in extracted),
            "candidates": len(candidates),
            "verified": len(verified),
            "rejected": sum(1 for v in verdicts if v == "no"),
            "verify_failures": sum(1 for v in verdicts if v == "failed"),
            "merged": merges["by_slug"] + merges["by_model"],
            "merged_by_slug": merges["by_slug"],
            "merged_by_model": merges["by_model"],
            "merge_invalid_answers": merges["invalid_answer"],
            "final_intents": len(intents),
        }
        report: dict[str, Any] = {
            "factory_version": FACTORY_VERSION,
            "source": cfg.source,
            "seed": cfg.seed,
            "heldout_fold": cfg.heldout_fold,
            "limit": cfg.limit,
            "heldout_limit": cfg.heldout_limit,
            "models": dict(self.models.specs),
            "prompts_sha256": self.prompts.digest_of(TEMPLATES),
            "reference": {
                "name": self.reference.name,
                "version": self.reference.version,
                "digest": self.reference.digest(),
                "intents": len(self.reference.intents),
            },
            "mapping_version": self.mapping.version,
            "hierarchy_digest": hierarchy.digest(),
            "counts": counts,
            "format_failures": dict(sorted(self.format_failures.items())),
            "format_failure_examples": dict(sorted(self.failure_examples.items())),
            "coverage": coverage,
            "duplicates": duplicates,
            "intents": [i.model_dump(mode="json") for i in intents],
            "extraction_dialogues": [d.dialogue_id for d in extraction],
            "heldout_dialogues": [d.dialogue_id for d in heldout],
            "usage": {
                "calls": len(self.usage),
                "cached_calls": sum(1 for u in self.usage if u.cached),
                "prompt_tokens": sum(u.prompt_tokens for u in self.usage),
                "completion_tokens": sum(u.completion_tokens for u in self.usage),
                "by_role": dict(sorted(Counter(u.role for u in self.usage).items())),
            },
        }
        return FactoryResult(hierarchy, report)

    async def resolve(self, item: tuple[Dialogue, LabelledTurn, tuple[str, ...]]) -> set[str]:
        """The alternatives a held-out turn expresses, by the resolver (``factory-resolve.txt``);
        a single alternative needs no call; an unreadable reply gives the empty set."""
        dialogue, turn, alternatives = item
        if len(alternatives) == 1:
            return set(alternatives)
        text = self.prompts.render(
            "factory-resolve",
            context=render_context(dialogue),
            dialogue="\n".join(
                f"{u.speaker}: {u.text}" for u in dialogue.utterances[: turn.index + 1]
            ),
            speaker=turn.speaker,
            candidates="\n".join(
                f"- {r}: {self._describe_reference(r, examples=False)}" for r in alternatives
            ),
        )
        value = await self._ask(self.models.matcher, "resolve", text)
        return {str(x) for x in value["intents"]} & set(alternatives) if value else set()

    async def coverage(
        self, intents: Sequence[FactoryIntent], heldout: Sequence[Dialogue]
    ) -> dict[str, Any]:
        """Turn and intent coverage of the held-out labelled turns (module docstring, 6)."""
        mapping = self.mapping.of(self.config.source)
        # per turn: the turn, its labels that map to something, with their alternatives
        turns: list[tuple[Dialogue, LabelledTurn, list[tuple[str, tuple[str, ...]]]]] = []
        excluded = 0
        for d in heldout:
            for t in d.turns:
                groups = [(label, mapping[label]) for label in t.gold if mapping[label]]
                if groups:
                    turns.append((d, t, groups))
                else:
                    excluded += 1
        needed = sorted({r for _, _, groups in turns for _, refs in groups for r in refs})
        options = {i.id: f"{i.name}: {i.description}" for i in intents}
        matched = await self._each(
            "match", needed, lambda r: self.match(self._describe_reference(r), options)
        )
        matches = dict(zip(needed, matched, strict=True))
        alternatives = [
            tuple(dict.fromkeys(r for _, refs in groups for r in refs)) for _, _, groups in turns
        ]
        resolved = await self._each(
            "resolve",
            [(d, t, alts) for (d, t, _), alts in zip(turns, alternatives, strict=True)],
            self.resolve,
        )
        resolve_calls = sum(1 for alts in alternatives if len(alts) > 1)

        def any_matched(refs: Sequence[str]) -> bool:
            return any(matches[r] is not None for r in refs)

        covered = covered_resolved = fallbacks = 0
        by_label: dict[str, dict[str, int]] = {}
        for (_, _, groups), picks in zip(turns, resolved, strict=True):
            lenient = strict = True
            for label, refs in groups:
                ok = any_matched(refs)
                mine = [r for r in refs if r in picks]
                if not mine:
                    fallbacks += 1
                    ok_strict = ok
                else:
                    ok_strict = all(matches[r] is not None for r in mine)
                lenient &= ok
                strict &= ok_strict
                row = by_label.setdefault(label, {"turns": 0, "covered": 0, "covered_resolved": 0})
                row["turns"] += 1
                row["covered"] += int(ok)
                row["covered_resolved"] += int(ok_strict)
            covered += int(lenient)
            covered_resolved += int(strict)
        return {
            "turns_resolved": ratio(covered_resolved, len(turns)),
            "turns": ratio(covered, len(turns)),
            "intents": ratio(sum(1 for m in matched if m is not None), len(needed)),
            "mapped_turns": len(turns),
            "excluded_turns": excluded,
            "resolve_calls": resolve_calls,
            "resolve_fallbacks": fallbacks,
            "by_label": dict(sorted(by_label.items())),
            "matches": matches,
            "resolved": [
                {
                    "dialogue": d.dialogue_id,
                    "turn": t.index,
                    "labels": list(t.gold),
                    "intents": sorted(p),
                }
                for (d, t, _), p in zip(turns, resolved, strict=True)
            ],
        }

    async def duplicates(self, intents: Sequence[FactoryIntent]) -> dict[str, Any]:
        """The duplicate ratio (module docstring, 7)."""
        options = {
            r: self._describe_reference(r, examples=False) for r in self.reference.intent_ids
        }
        assigned = await self._each(
            "assign",
            list(intents),
            lambda i: self.match(f"{i.name}: {i.description}", options),
        )
        per_ref = Counter(a for a in assigned if a is not None)
        redundant = sum(n - 1 for n in per_ref.values())
        return {
            "ratio": ratio(redundant, len(intents)),
            "redundant": redundant,
            "in_shared_groups": sum(n for n in per_ref.values() if n > 1),
            "unassigned": sum(1 for a in assigned if a is None),
            "shared": {
                r: [i.id for i, a in zip(intents, assigned, strict=True) if a == r]
                for r, n in sorted(per_ref.items())
                if n > 1
            },
            "assignments": {i.id: a for i, a in zip(intents, assigned, strict=True)},
        }

    def _describe_reference(self, intent_id: str, *, examples: bool = True) -> str:
        i = self.reference.intent(intent_id)
        text = f"{i.name}: {i.description}"
        if examples and i.examples:
            text += " (e.g. " + " / ".join(f'"{e}"' for e in i.examples[:2]) + ")"
        return text


def build_hierarchy(
    intents: Sequence[FactoryIntent], source: Source, n_dialogues: int, heldout_fold: int
) -> Hierarchy:
    """The output hierarchy: the intents under the parents used, with placeholder actions
    (one per intent) and tools (one per parent)."""
    used = [p for p in PARENTS if any(i.parent == p for i in intents)]
    tool_of = {p: f"API_{p.capitalize()}Placeholder" for p in used}
    h = Hierarchy(
        name=f"factory-{source}",
        version=f"factory-{FACTORY_VERSION}",
        description=(
            f"Intents extracted by the Intent Factory from {n_dialogues} {source} dialogues "
            f"(held-out fold {heldout_fold} excluded). Intents and parents are generated; "
            "actions and tools are placeholders for a person to refine."
        ),
        sources=(f"{source}: {n_dialogues} extraction dialogues",),
        parents=tuple(Parent(id=p, name=PARENTS[p][0], description=PARENTS[p][1]) for p in used),
        intents=tuple(
            Intent(
                id=i.id,
                name=i.name,
                description=i.description,
                parent=i.parent,
                actions=(f"act.handle_{i.id}",),
                examples=tuple(i.examples),
            )
            for i in intents
        ),
        actions=tuple(
            Action(
                id=f"act.handle_{i.id}",
                name=f"handle {i.name}",
                description=f"placeholder: respond to the buyer's '{i.name}'",
                tools=(tool_of[i.parent],),
            )
            for i in intents
        ),
        tools=tuple(
            Tool(
                id=tool_of[p],
                name=f"{PARENTS[p][0]} placeholder",
                description=f"placeholder tool for the {PARENTS[p][0].lower()} intents",
            )
            for p in used
        ),
    )
    return validate(h, "factory output")


__all__ = [
    "DEFAULT_MAPPING",
    "PARENTS",
    "SOURCES",
    "TEMPLATES",
    "Candidate",
    "FactoryConfig",
    "FactoryIntent",
    "FactoryModels",
    "FactoryResult",
    "IntentFactory",
    "Source",
    "SourceMapping",
    "build_hierarchy",
    "default_mapping",
    "keyword_parent",
    "load_prompts",
    "parse_mapping",
    "ratio",
    "seeded_order",
    "slug_of",
    "source_dialogues",
    "split_dialogues",
]
