"""ClarQ's adversary families: seekers that ask a lot without reasoning about what is missing.

A :class:`SweepSeeker` reads only its :class:`~todeval.benchmarks.clarq.protocol.SeekerView`
(the background, the greeting, its seed) and the provider's messages, and asks questions built
from templates over a source of words, never from a thought about what is missing:

* ``template`` -- ``which`` ("Which X should I use?"), ``where`` ("Where is the X?"), ``how``
  ("How do I use the X?"), ``wh-rot`` (the k-th X with the k-th of those three, in turn),
  ``wh3`` (all three about each X), ``yesno`` ("Should I use the
  X?"), ``what-is`` ("What is the X?"), ``yesno-a-b`` ("Should I use the A with the B?", every
  pair) and ``how-a-b`` ("How do the A and the B matter for my task?", every pair);
* ``source`` -- ``background`` (its items, skills and scenes), ``provider`` (the content words
  of what the provider said, its fixed replies left out), ``task`` (the content words of its
  role and task) or ``all`` of them;
* ``per_turn`` -- questions in one turn (99: every question it has, every turn);
* ``order`` -- ``given``, ``reversed`` or ``shuffled`` (its own seed);
* ``turns`` -- turns before its goodbye (the message cap stops it after 11 anyway).

A family (:data:`FAMILIES`) is the space of those parameters in one language; ``todeval
validate clarq`` searches it for the agent scoring the headline highest (:func:`play`). The
params reach the seeker through the run config's ``seeker_params`` (hashed only when set).
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Mapping
from typing import Any, Self

from todeval.benchmarks.clarq._text import Language, strip_provider_prefix
from todeval.benchmarks.clarq.protocol import GOODBYES, GREETINGS, NEUTRAL_REPLIES, SeekerView
from todeval.benchmarks.clarq.providers import canned, entry_names, tokenize
from todeval.core.records import Summary
from todeval.dialogue.participants import PlayerOptions
from todeval.validation import AdversaryFamily, AdversaryJob

TEMPLATES = ("which", "where", "how", "wh-rot", "wh3", "yesno", "what-is", "yesno-a-b", "how-a-b")
SOURCES = ("background", "provider", "task", "all")
PER_TURN = (1, 2, 3, 6, 99)
ORDERS = ("given", "reversed", "shuffled")
TURNS = (3, 6, 10)

DEFAULTS: dict[str, Any] = {
    "template": "wh3",
    "source": "all",
    "per_turn": 99,
    "order": "given",
    "turns": 10,
}
"""The issue-41 shotgun: all three wh-questions about every entry and word, in one turn."""

MAX_QUESTIONS = 400
"""A turn never holds more questions than this (a shotgun over every pair stays a message)."""

_ONE: dict[Language, dict[str, tuple[str, ...]]] = {
    "en": {
        "which": ("Which {} should I use?",),
        "where": ("Where is the {}?",),
        "how": ("How do I use the {}?",),
        "wh3": ("Which {} should I use?", "Where is the {}?", "How do I use the {}?"),
        "yesno": ("Should I use the {}?",),
        "what-is": ("What is the {}?",),
    },
    "zh": {
        "which": ("我应该用哪个{}？",),
        "where": ("{}在哪里？",),
        "how": ("{}怎么用？",),
        "wh3": ("我应该用哪个{}？", "{}在哪里？", "{}怎么用？"),
        "yesno": ("我应该用{}吗？",),
        "what-is": ("{}是什么？",),
    },
}
_PAIR: dict[Language, dict[str, str]] = {
    "en": {
        "yesno-a-b": "Should I use the {} with the {}?",
        "how-a-b": "How do the {} and the {} matter for my task?",
    },
    "zh": {
        "yesno-a-b": "我应该把{}和{}一起用吗？",
        "how-a-b": "{}和{}在我的任务里要怎么用？",
    },
}
_STOP_WORDS_EN = (
    "a an the and or but if then so to of in on at by for with from into onto about as is are "
    "was were be been being am do does did have has had i you he she it we they me him her us "
    "them my your his its our their this that these those there here what which who whom whose "
    "where when why how can could should would will shall may might must not no yes only also "
    "just very too than more most some any all each every other such own same one two jax "
    "need needs use using used get go make sure first then once after before up down out"
)
_STOP_EN = frozenset(_STOP_WORDS_EN.split())
_WORD_EN = re.compile(r"[A-Za-z][A-Za-z'-]+")
_CJK = re.compile("[\u4e00-\u9fff]+")
_PARENS = re.compile(r"[(（][^)）]*[)）]")
_STOP_ZH = frozenset(
    ("什么", "怎么", "我们", "你们", "一个", "可以", "需要", "应该", "这个", "那个")
)


def content_words(text: str, lang: Language) -> list[str]:
    """The words a sweep asks about in ``text``: English words outside a stop list, Chinese
    character pairs of every ideograph run (first occurrence order)."""
    if lang == "en":
        words = [w.lower() for w in _WORD_EN.findall(text)]
        found = [w for w in words if w not in _STOP_EN]
    else:
        found = [run[i : i + 2] for run in _CJK.findall(text) for i in range(max(1, len(run) - 1))]
        found = [p for p in found if p not in _STOP_ZH]
    return list(dict.fromkeys(found))


def entries(view: SeekerView) -> list[str]:
    """The background's items, skills and scenes by name (a note in parentheses dropped)."""
    b = view.background
    names = (_PARENS.sub("", e).strip() for e in (*b.items, *b.skills, *b.scenes))
    return list(dict.fromkeys(n for n in names if n))


def _fixed_texts(lang: Language) -> set[str]:
    replies = canned(lang)
    texts = {getattr(replies, name) for name in type(replies).model_fields}
    texts |= {strip_provider_prefix(GREETINGS[lang]), strip_provider_prefix(NEUTRAL_REPLIES[lang])}
    return texts


class _FamilySeeker:
    """What the families' seekers share: their params from the run's options, and the state
    every episode opens with."""

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        raise NotImplementedError

    @classmethod
    def from_options(cls, options: PlayerOptions) -> Self:
        params = options.extra.get("params")
        return cls(params if isinstance(params, Mapping) else None)

    def _open(self, context: SeekerView) -> None:
        self.view = context
        self.lang: Language = context.lang
        self.rng = random.Random(context.seed)
        self.heard: list[str] = []
        self.turn = 0


class SweepSeeker(_FamilySeeker):
    """A seeker of the sweep family (see the module); its params are ``options.extra['params']``
    (:data:`DEFAULTS` for what is not given)."""

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        merged = {**DEFAULTS, **dict(params or {})}
        unknown = sorted(set(merged) - set(DEFAULTS))
        if unknown:
            raise ValueError(f"sweep seeker: unknown parameter {unknown[0]!r}")
        for name, choices in (
            ("template", TEMPLATES),
            ("source", SOURCES),
            ("order", ORDERS),
        ):
            if merged[name] not in choices:
                raise ValueError(f"sweep seeker: {name} {merged[name]!r} (one of {choices})")
        if not isinstance(merged["per_turn"], int) or merged["per_turn"] < 1:
            raise ValueError("sweep seeker: per_turn must be a positive integer")
        if not isinstance(merged["turns"], int) or merged["turns"] < 1:
            raise ValueError("sweep seeker: turns must be a positive integer")
        self.params = merged

    async def start(self, context: SeekerView) -> None:
        self._open(context)
        self.asked: set[str] = set()
        self.fixed = _fixed_texts(context.lang)
        self.ranks: dict[str, float] = {}

    def words(self) -> list[str]:
        """The words (or entries) the questions are about, in the order asked."""
        source = self.params["source"]
        lang = self.lang
        b = self.view.background
        found: list[str] = []
        if source in ("background", "all"):
            found += entries(self.view)
        if source in ("task", "all"):
            found += content_words(f"{b.role}\n{b.task}", lang)
        if source in ("provider", "all"):
            for message in self.heard:
                found += content_words(message, lang)
        found = list(dict.fromkeys(found))
        order = self.params["order"]
        if order == "reversed":
            found.reverse()
        elif order == "shuffled":
            for word in found:  # a word keeps its random rank once it has one
                self.ranks.setdefault(word, self.rng.random())
            found.sort(key=lambda w: self.ranks[w])
        return found

    def questions(self) -> list[str]:
        """Every question the seeker has now, in the order it asks them."""
        template = self.params["template"]
        words = self.words()
        if template in _PAIR[self.lang]:
            pattern = _PAIR[self.lang][template]
            pairs = itertools.islice(itertools.combinations(words, 2), MAX_QUESTIONS)
            return [pattern.format(a, b) for a, b in pairs]
        if template == "wh-rot":
            three = _ONE[self.lang]["wh3"]
            out = [three[i % 3].format(w) for i, w in enumerate(words)]
            out += [three[(i + 1) % 3].format(w) for i, w in enumerate(words)]
            out += [three[(i + 2) % 3].format(w) for i, w in enumerate(words)]
            return out[:MAX_QUESTIONS]
        out = [t.format(w) for w in words for t in _ONE[self.lang][template]]
        return out[:MAX_QUESTIONS]

    def next_turn(self) -> list[str]:
        have = self.questions()
        per_turn = self.params["per_turn"]
        if per_turn >= len(have):
            chosen = have
        else:
            fresh = [q for q in have if q not in self.asked]
            chosen = fresh[:per_turn]
            if len(chosen) < per_turn:  # everything asked: start over
                chosen += [q for q in have if q not in chosen][: per_turn - len(chosen)]
        self.asked.update(chosen)
        return chosen

    async def respond(self, provider_message: str) -> str:
        text = strip_provider_prefix(provider_message)
        if text not in self.fixed:
            self.heard.append(text)
        self.turn += 1
        if self.turn > self.params["turns"]:
            return GOODBYES[self.lang]
        asked = self.next_turn()
        if not asked:  # nothing to ask about (no words yet): a plain question about the task
            return {"en": "How do I do my task?", "zh": "我该怎么完成任务？"}[self.lang]
        return (" " if self.lang == "en" else "").join(asked)


SWEEP_SEEKER = f"{__name__}:SweepSeeker"

BAG_TEMPLATES = ("full", "which", "bare")
BAG_SOURCES = ("provider", "background", "all")
BAG_DEFAULTS: dict[str, Any] = {"keep": 0.7, "source": "all", "template": "full", "misses": 1}
"""The red team's attack A1 (issue 41, round 2): 70% of every word heard and told, packed
behind every wh-word, goodbye at the first fixed reply."""
BAG_SAID = 0.7
"""A bag keeps under this share of the provider's own words (the red team's guard-dodge)."""
_BAG: dict[Language, dict[str, str]] = {
    "en": {
        "full": "Which {} should I use, where, when, who, why and how?",
        "which": "Which {} should I use?",
        "bare": "Which {}?",
    },
    "zh": {"full": "我应该用哪个：{}？", "which": "哪个{}？", "bare": "{}？"},
}


def _surface(text: str, lang: Language) -> list[tuple[str, frozenset[str]]]:
    """Units of ``text`` the provider reads, with their tokens: English words, Chinese
    character pairs."""
    if lang == "en":
        units = _WORD_EN.findall(text)
    else:
        units = [run[i : i + 2] for run in _CJK.findall(text) for i in range(len(run) - 1)]
    out = []
    for unit in units:
        tokens = frozenset(tokenize(unit, lang))
        if tokens:
            out.append((unit, tokens))
    return out


class BagSeeker(_FamilySeeker):
    """The bag family (issue 41, round 2): after the gate, every turn one question packing a
    random bag of words -- ``keep`` of the words from ``source`` (what the provider said:
    response 0 and releases; the background's entries and task; or both), trimmed to stay under
    the list guard and :data:`BAG_SAID` of the provider's words -- in a ``template`` (``full``:
    "Which <bag> should I use, where, when, who, why and how?"; ``which``; ``bare``: "Which
    <bag>?", Chinese ``w1、w2、…？``); goodbye after ``misses`` fixed replies in a row."""

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        merged = {**BAG_DEFAULTS, **dict(params or {})}
        unknown = sorted(set(merged) - set(BAG_DEFAULTS))
        if unknown:
            raise ValueError(f"bag seeker: unknown parameter {unknown[0]!r}")
        if merged["template"] not in BAG_TEMPLATES or merged["source"] not in BAG_SOURCES:
            raise ValueError(
                f"bag seeker: template/source {merged['template']!r}/{merged['source']!r}"
            )
        if not 0 < float(merged["keep"]) <= 1 or int(merged["misses"]) < 1:
            raise ValueError("bag seeker: keep in (0, 1], misses >= 1")
        self.params = merged

    async def start(self, context: SeekerView) -> None:
        self._open(context)
        self.fixed = {t.strip() for t in _fixed_texts(context.lang)}
        self.misses = 0

    def bag(self) -> list[str]:
        lang = self.lang
        b = self.view.background
        source = self.params["source"]
        provider = (
            [u for t in self.heard for u in _surface(t, lang)] if source != "background" else []
        )
        told = [b.task, *b.items, *b.skills, *b.scenes]
        background = (
            [u for t in told for u in _surface(_PARENS.sub("", t), lang)]
            if source != "provider"
            else []
        )
        said = frozenset().union(*(t for _, t in provider)) - frozenset().union(
            *(t for _, t in background)
        )
        limit = max(4.0, 0.6 * len(entry_names(b)))
        names = [frozenset(tokenize(n, lang)) for n in entry_names(b)]
        chosen: list[str] = []
        seen: set[str] = set()
        words: set[str] = set()
        covered: set[str] = set()
        for unit, tokens in [*provider, *background]:
            if unit.lower() in seen or self.rng.random() > float(self.params["keep"]):
                continue
            grown = words | tokens
            named = sum(1 for n in names if n and (n <= grown or len(n & grown) >= 2))
            if named >= limit:
                continue
            more = covered | (tokens & said)
            if len(more) > len(covered) and len(more) >= 8 and len(more) >= BAG_SAID * len(said):
                continue
            seen.add(unit.lower())
            chosen.append(unit)
            words, covered = grown, more
        return chosen

    async def respond(self, provider_message: str) -> str:
        self.turn += 1
        body = strip_provider_prefix(provider_message).strip()
        if self.turn == 1:
            return {"en": "I need help with my task.", "zh": "我需要你帮我完成任务。"}[self.lang]
        if body in self.fixed:
            self.misses += 1
        else:
            self.misses = 0
            self.heard.insert(0, body)
        if self.misses >= int(self.params["misses"]):
            return GOODBYES[self.lang]
        joiner = " " if self.lang == "en" else "、"
        return _BAG[self.lang][self.params["template"]].format(joiner.join(self.bag()))


BAG_SEEKER = f"{__name__}:BagSeeker"
BAG_SPACE: dict[str, tuple[Any, ...]] = {
    "keep": (0.1, 0.2, 0.35, 0.7),
    "source": BAG_SOURCES,
    "template": BAG_TEMPLATES,
    "misses": (1, 2, 3),
}
BAG_CI_TASKS = 52
BAG_CI_POINTS = 4


def play(job: AdversaryJob) -> Summary:
    """One point of a sweep (or bag) family: its seeker with ``job.params`` against the
    ``rule`` provider under the ``strict`` protocol, on the family's language."""
    from todeval.validation.play import play_run

    lang = job.family.group or "en"
    config = {
        "lang": lang,
        "seeker": BAG_SEEKER if job.family.name.startswith("bag/") else SWEEP_SEEKER,
        "seeker_params": dict(job.params),
        "provider": "rule",
        "protocol": "strict",
    }
    return play_run(job, config)


CI_TASKS: int | None = None
CI_POINTS = 6
TASKS_PER_LANGUAGE = 260
"""``todeval validate clarq`` plays each point on every test task of the language (the floors
are set for all 260; on a sample of 52 or 104 tasks a lucky point's noise alone crossed the
band) and searches 6 points a family; ``bench/bench_clarq_adversaries.py --search`` spends a
larger budget."""

SPACE: dict[str, tuple[Any, ...]] = {
    "template": TEMPLATES,
    "source": SOURCES,
    "per_turn": PER_TURN,
    "order": ORDERS,
    "turns": TURNS,
}


def families(metric: str, high: float) -> tuple[AdversaryFamily, ...]:
    """The sweep and bag families in each language, held to ``metric`` <= ``high``."""
    return tuple(
        AdversaryFamily(
            name=f"sweep/{lang}",
            description="questions from templates (wh, yes/no, 'what is', pairs) over the "
            "background, the provider's words or the task's, k a turn, in an order, for n turns",
            metric=metric,
            low=0.0,
            high=high,
            space=SPACE,
            play=f"{__name__}:play",
            group=lang,
            tasks=CI_TASKS,
            budget=(CI_TASKS or TASKS_PER_LANGUAGE) * CI_POINTS,
        )
        for lang in ("en", "zh")
    ) + tuple(
        AdversaryFamily(
            name=f"bag/{lang}",
            description="one question a turn packing a random bag of the words heard and told "
            "(share kept, sources, template incl. the zh '、…？' form, misses before goodbye)",
            metric=metric,
            low=0.0,
            high=high,
            space=BAG_SPACE,
            play=f"{__name__}:play",
            group=lang,
            tasks=BAG_CI_TASKS,
            budget=BAG_CI_TASKS * BAG_CI_POINTS,
        )
        for lang in ("en", "zh")
    )


__all__ = [
    "BAG_SEEKER",
    "BAG_SPACE",
    "DEFAULTS",
    "SPACE",
    "SWEEP_SEEKER",
    "BagSeeker",
    "SweepSeeker",
    "content_words",
    "entries",
    "families",
    "play",
]
