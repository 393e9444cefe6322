"""ClarQ floor controls: seekers that ask without clarifying, and the suite ``todeval validate
clarq`` plays.

Each reads only its :class:`~todeval.benchmarks.clarq.protocol.SeekerView` (the background), as
an agent under test does; none reasons about what is missing. A provider that releases a node
to them is rewarding something other than clarification, so each must score S <= 0.10:

* ``dump`` -- the same message every turn: "Tell me about <role, task, every item, skill and
  scene>?" (ten times, then goodbye);
* ``echo-dump`` -- the provider's last line said back, then that dump;
* ``cycle`` -- "What about <item / skill / scene k>?", one background entry a turn in turn;
* ``repeat-purpose`` -- one generic question about choosing and doing, asked every turn;
* ``generic`` -- the stock questions a seeker asks when it has nothing to ask ("What else do I
  need to know?"), one a turn.

With ``quitter`` and ``wrong`` (:mod:`.seekers`) they are the floors; the privileged ``oracle``
is the ceiling.
"""

from __future__ import annotations

from todeval.benchmarks.clarq._text import Language, strip_provider_prefix
from todeval.benchmarks.clarq.adversaries import families
from todeval.benchmarks.clarq.protocol import GOODBYES, SeekerView
from todeval.validation import Control, ControlSuite

TURNS = 10
"""Questions a control asks before its goodbye (the original's message cap allows 11)."""

_DUMP: dict[Language, str] = {"en": "Tell me about {}?", "zh": "请告诉我关于{}的一切？"}
_JOIN: dict[Language, str] = {"en": ", ", "zh": "、"}
_WHAT_ABOUT: dict[Language, str] = {"en": "What about {}?", "zh": "{}呢？"}
_PURPOSE: dict[Language, str] = {
    "en": "Which one should I choose, and how should I do it?",
    "zh": "我应该选哪一个，又该怎么做呢？",
}
_GENERIC: dict[Language, tuple[str, ...]] = {
    "en": (
        "What else do I need to know?",
        "Is there anything I am missing?",
        "What should I do next?",
        "Can you give me more details?",
        "Is there anything else I should be careful about?",
        "What would you recommend?",
    ),
    "zh": (
        "我还需要知道什么？",
        "我是不是漏掉了什么？",
        "接下来我该做什么？",
        "能再详细说说吗？",
        "还有什么需要注意的吗？",
        "你有什么建议？",
    ),
}


def background_entries(view: SeekerView) -> list[str]:
    """Everything the seeker was told, one entry each: role, task, items, skills, scenes."""
    b = view.background
    return [e for e in (b.role, b.task, *b.items, *b.skills, *b.scenes) if e.strip()]


class _Scripted:
    """Asks ``question(turn, provider message)`` for :data:`TURNS` turns, then says goodbye."""

    async def start(self, context: SeekerView) -> None:
        self.view = context
        self.lang: Language = context.lang
        self.turn = 0

    def question(self, turn: int, provider_message: str) -> str:
        raise NotImplementedError

    async def respond(self, provider_message: str) -> str:
        self.turn += 1
        if self.turn > TURNS:
            return GOODBYES[self.lang]
        return self.question(self.turn, provider_message)


class DumpSeeker(_Scripted):
    """Every word it was given, as one question, every turn."""

    def question(self, turn: int, provider_message: str) -> str:
        entries = _JOIN[self.lang].join(background_entries(self.view))
        return _DUMP[self.lang].format(entries)


class EchoDumpSeeker(DumpSeeker):
    """The provider's last line said back, then the dump."""

    def question(self, turn: int, provider_message: str) -> str:
        echo = strip_provider_prefix(provider_message)
        return f"{echo} {super().question(turn, provider_message)}"


class CycleSeeker(_Scripted):
    """One background entry a turn: "What about <entry>?"."""

    def question(self, turn: int, provider_message: str) -> str:
        entries = background_entries(self.view)
        return _WHAT_ABOUT[self.lang].format(entries[(turn - 1) % len(entries)])


class RepeatPurposeSeeker(_Scripted):
    """One generic question about choosing and doing, every turn."""

    def question(self, turn: int, provider_message: str) -> str:
        return _PURPOSE[self.lang]


class GenericSeeker(_Scripted):
    """The stock questions of a seeker with nothing to ask, one a turn."""

    def question(self, turn: int, provider_message: str) -> str:
        stock = _GENERIC[self.lang]
        return stock[(turn - 1) % len(stock)]


_WH_TEMPLATES: dict[Language, tuple[str, ...]] = {
    "en": ("Where is {}?", "Which {} should I use?", "How do I use {}?"),
    "zh": ("{}在哪里？", "我应该用哪个{}？", "{}怎么用？"),
}
_SHOULD: dict[Language, str] = {"en": "Should I use {}?", "zh": "我应该用{}吗？"}
_WH_DUMP: dict[Language, str] = {
    "en": "Which of these should I use and how: {}?",
    "zh": "这些中我应该用哪个、怎么用：{}？",
}
_MISSING: dict[Language, str] = {
    "en": "Which detail am I missing, and how do I handle it?",
    "zh": "我漏掉了哪个细节，又该怎么处理？",
}


class WhCycleSeeker(_Scripted):
    """Harder adversary: "Where is X?", then "Which X should I use?", then "How do I use X?",
    X cycling over the background entries."""

    def question(self, turn: int, provider_message: str) -> str:
        entries = background_entries(self.view)
        i = turn - 1
        return _WH_TEMPLATES[self.lang][(i // len(entries)) % 3].format(entries[i % len(entries)])


class ShouldCycleSeeker(_Scripted):
    """Harder adversary: "Should I use X?", X cycling over the background entries."""

    def question(self, turn: int, provider_message: str) -> str:
        entries = background_entries(self.view)
        return _SHOULD[self.lang].format(entries[(turn - 1) % len(entries)])


class WhDumpSeeker(_Scripted):
    """Harder adversary: one wh-question listing every background entry, every turn."""

    def question(self, turn: int, provider_message: str) -> str:
        return _WH_DUMP[self.lang].format(_JOIN[self.lang].join(background_entries(self.view)))


class MissingSeeker(_Scripted):
    """Harder adversary: "Which detail am I missing, and how do I handle it?" every turn."""

    def question(self, turn: int, provider_message: str) -> str:
        return _MISSING[self.lang]


ADVERSARY_SEEKERS: dict[str, str] = {
    "wh-cycle": f"{__name__}:WhCycleSeeker",
    "should-cycle": f"{__name__}:ShouldCycleSeeker",
    "wh-dump": f"{__name__}:WhDumpSeeker",
    "missing": f"{__name__}:MissingSeeker",
}
"""Measured, not declared (docs/validation.md, "Harder adversaries"): they ask specific
questions without reasoning about what is missing, so some of their questions do target nodes
and no band is set; ``bench/bench_clarq_adversaries.py`` plays them."""

CONTROL_SEEKERS: dict[str, str] = {
    "dump": f"{__name__}:DumpSeeker",
    "echo-dump": f"{__name__}:EchoDumpSeeker",
    "cycle": f"{__name__}:CycleSeeker",
    "repeat-purpose": f"{__name__}:RepeatPurposeSeeker",
    "generic": f"{__name__}:GenericSeeker",
}

_FLOORS = {
    "dump": "the same question naming every background entry, every turn",
    "echo-dump": "the provider's last line said back, then that dump",
    "cycle": "'What about <entry>?', one background entry a turn",
    "repeat-purpose": "one generic 'which one, and how?' question, every turn",
    "generic": "stock questions ('What else do I need to know?')",
    "wrong": "fluent questions about nothing in its background",
    "quitter": "says goodbye at once",
}
FLOOR_HIGH = 0.10
CEILING_LOW = 0.95
HEADLINE = "clarq.success_economy"
"""The headline (SPQ, success weighted by question economy): the adversary families and the
oracle's ceiling are judged by it; the floor controls by S, which bounds it from above."""


def _control(seeker: str, lang: Language, kind: str, low: float, high: float, what: str) -> Control:
    return Control(
        name=f"{seeker}/{lang}",
        kind=kind,
        description=what,
        metric=HEADLINE if kind == "ceiling" else "clarq.success",
        low=low,
        high=high,
        run={"seeker": seeker, "lang": lang},
        group=lang,
    )


SUITE = ControlSuite(
    name="clarq",
    controls=tuple(
        control
        for lang in ("en", "zh")
        for control in (
            *(_control(s, lang, "floor", 0.0, FLOOR_HIGH, w) for s, w in _FLOORS.items()),
            _control("oracle", lang, "ceiling", CEILING_LOW, 1.0, "privileged: asks from the tree"),
        )
    ),
    adversaries=families(HEADLINE, FLOOR_HIGH),
    notes=(
        "All 260 test tasks of a language against the offline rule provider, no judge: floor "
        "controls by S (S <= 0.10 holds SPQ <= 0.10 too), the oracle by the headline SPQ; the "
        "sweep families (strict protocol) by SPQ.",
    ),
)
