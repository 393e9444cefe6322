"""Does a question target a node? The ``rule`` provider's guard against asking without clarifying.

A node of a ClarQ tree resolves one uncertainty, and its purpose says which: "which mine to go
to", "how to enter the mine", "where to collect the fog". A seeker who noticed it asks *that*:
"Which mine should I go to?". A seeker who did not notice anything can still name every word it
was told ("Tell me about the West Mine, the North Mine, the excavator, ...?") and, under a
provider that scores word overlap, be handed the answers. So a question targets a node only

* by **intent**: it asks the kind of question the node answers (which/where/how/when/who/why,
  also "A or B?", "what should I use", "what do I do"; Chinese 哪/哪里/怎么/如何/什么时候/谁/
  为什么/还是) about something the node speaks of -- a word of the node's text or of its
  purpose, background words included; or
* by **new words**: it shares at least :data:`NEW_WORDS` words with the node that the seeker was
  never told (not in its background, not in response 0, not in a released response).

A question that names :data:`LIST_ENTRIES` or more background entries at once is a list, not a
question: it targets nothing. The provider also refuses a question that repeats an earlier one
(:func:`similar`), so asking the same thing again releases nothing new.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import cache

from todeval.benchmarks.clarq._tasks import Background, ResponseNode
from todeval.benchmarks.clarq._text import Language
from todeval.benchmarks.clarq.providers._lexical import tokenize

NEW_WORDS = 2
"""Words a question must share with a node, none of them told to the seeker, to target it
without an intent (a seeker that guessed the answer's own words)."""
LIST_ENTRIES = 4
LIST_SHARE = 0.6
"""A question naming at least :data:`LIST_ENTRIES` background entries, and at least this share
of all of them, is a list of what the seeker was told, not a question (a choice question names
its few alternatives: "which lab: Henry Lab, Future Lab or Star Lab?")."""
REPEAT_OVERLAP = 0.8
"""Jaccard overlap of two questions' words from which the later repeats the earlier."""

# intents: CHOICE (which, A or B), PLACE (where), METHOD (how), TIME, PERSON, REASON
_INTENTS_EN: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("choice", re.compile(
        r"\b(?:which|whichever)\b|\bwhat (?:kind|type|sort)s? of\b|"
        r"\bwhat (?:\w+ )?(?:should|shall|must|do|can) (?:i|we) (?:use|choose|pick|take|bring|"
        r"buy|select|wear|get|order|prepare|look for|go with)\b|"
        r"\b(?:should|shall|do|can|must|would) (?:i|we) .{2,60}\bor\b|\bor (?:the )?other\b|"
        r"\bright one\b|\bcorrect one\b", re.IGNORECASE)),
    ("place", re.compile(r"\bwhere\b|\bwhat (?:place|location|area)\b|\bwhich way\b",
                         re.IGNORECASE)),
    ("method", re.compile(
        r"\bhow\b|\bwhat (?:\w+ )?(?:should|shall|must|do|can) (?:i|we) do\b|"
        r"\bwhat(?:'s| is) the (?:way|method|trick|procedure)\b|\bin what way\b|"
        r"\bwhat do i need to do\b", re.IGNORECASE)),
    ("time", re.compile(r"\bwhen\b|\bwhat time\b|\bhow long\b|\bwhich day\b", re.IGNORECASE)),
    ("person", re.compile(r"\bwho\b|\bwhom\b|\bwhose\b|\bwhich (?:person|one of them)\b",
                          re.IGNORECASE)),
    ("reason", re.compile(r"\bwhy\b|\bwhat for\b|\bfor what reason\b", re.IGNORECASE)),
)  # fmt: skip
_INTENTS_ZH: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "choice",
        re.compile(
            "哪(?:个|一|种|款|些|位|家|条|把|件|张|本|只|辆)|还是|选(?:什么|哪)|用什么|带什么|买什么|"
            "穿什么|准备什么|拿什么"
        ),
    ),
    ("place", re.compile("哪里|哪儿|什么地方|在哪|去哪|何处|哪个地方")),
    ("method", re.compile("怎么|怎样|如何|什么办法|什么方法|该做什么|要做什么|应该做什么")),
    ("time", re.compile("什么时候|几点|何时|多久|哪天|哪一天")),
    ("person", re.compile("谁|哪位|哪个人")),
    ("reason", re.compile("为什么|为何|为啥")),
)
_COMPATIBLE: dict[str, frozenset[str]] = {
    "choice": frozenset(("choice", "place", "person", "time", "method")),
    "place": frozenset(("place", "choice")),
    "method": frozenset(("method", "choice")),
    "time": frozenset(("time", "choice")),
    "person": frozenset(("person", "choice")),
    "reason": frozenset(("reason", "method")),
    # a yes/no question proposing an answer ("Should I go to the North Mine?"): any node, but
    # it must meet the node on more words (CONFIRM_WORDS)
    "confirm": frozenset(("choice", "place", "method", "time", "person", "reason")),
}
ANY = frozenset(_COMPATIBLE) - {"confirm"}
CONFIRM_WORDS = 2
"""Words a yes/no question must share with a node (one suffices if the seeker was never told
it)."""
_YES_NO = {
    "en": re.compile(
        r"(?:\?\s*$|^(?:is|are|am|was|were|do|does|did|should|shall|can|could|will|would|must|"
        r"may|have|has)\b)",
        re.IGNORECASE,
    ),
    "zh": re.compile("吗|是否|是不是|对不对|对吧|可不可以|能不能|要不要|[？?]\\s*$"),
}

_GENERIC_EN = re.compile(
    r"^\s*(?:and |so |but )?(?:what about|how about|tell me about|what of|anything about|"
    r"what is|what's|what are)\b",
    re.IGNORECASE,
)
_GENERIC_ZH = re.compile(
    "^(?:那|那么)?[^，。？?]{0,30}呢[？?]?$|^(?:请)?告诉我关于|^(?:关于).{0,30}的(?:一切|情况)"
)

_PURPOSE_QUESTION_EN = re.compile(
    r"\b(?:address(?:es)?|answers?|resolves?|clarif(?:y|ies)|explains?|specif(?:y|ies)|"
    r"solves?)\b(.*)",
    re.IGNORECASE,
)
_PURPOSE_NOTE = {"en": re.compile(r"\bnote\s*:", re.IGNORECASE), "zh": re.compile("注[:：]")}
_PURPOSE_QUESTION_ZH = re.compile("(?:用于|用来|回答|解答|解决|说明|消除)(.*)")
_PARENTHESES = re.compile(r"[(（][^)）]*[)）]")

_BOILERPLATE_EN = frozenset(
    tokenize(
        "previous response responses jax explain explained address addresses question questions "
        "concern concerns issue issues answer answers specify specifying other party notice "
        "noticed unsure use used using alleviate alleviates lack information mention mentioned "
        "clarify clarified resolve uncertainty whether regarding about instead rather than "
        "only this that",
        "en",
    )
)
_BOILERPLATE_ZH = frozenset(
    tokenize(
        "前面的回复没有介绍说明这个回复用于回答解答的疑问或者解除担忧注只有在对方注意到了才使用"
        "需要消除不确定性提问关于问题而不是应该",
        "zh",
    )
)


_WH = {
    "en": re.compile(r"\b(?:which|where|how|when|who|whom|whose|why)\b", re.IGNORECASE),
    "zh": re.compile("哪|怎么|怎样|如何|什么时候|何时|谁|为什么|为何"),
}


def intents(sentence: str, lang: Language) -> frozenset[str]:
    """The kinds of question ``sentence`` asks; empty for a generic one ("What about X?",
    "Tell me about X", "X呢？") unless it also holds a wh-word of its own."""
    table = _INTENTS_EN if lang == "en" else _INTENTS_ZH
    found = frozenset(name for name, pattern in table if pattern.search(sentence))
    generic = _GENERIC_EN if lang == "en" else _GENERIC_ZH
    if generic.search(sentence.strip()) and not _WH[lang].search(sentence):
        return frozenset()
    if not found and not _WH[lang].search(sentence) and _YES_NO[lang].search(sentence.strip()):
        return frozenset(("confirm",))
    return found


@cache
def _node_intents(purpose: str, lang: Language) -> frozenset[str]:
    """The intents of the purpose's question clause, else of the purpose before its note (the
    uncertainty is often named before the verb: "did not say which mine ..."), else any."""
    note = _PURPOSE_NOTE[lang].search(purpose)
    body = purpose[: note.start()] if note else purpose
    for text in (purpose_question(purpose, lang), body):
        found = intents(text, lang)
        if found:
            return found
    return ANY


def node_intents(node: ResponseNode, lang: Language) -> frozenset[str]:
    """The kinds of question a node answers, read from its purpose (every kind without one)."""
    return _node_intents(node.purpose, lang) if node.purpose else ANY


def purpose_question(purpose: str, lang: Language) -> str:
    """The part of a purpose that says what the node answers (before its usage note)."""
    note = _PURPOSE_NOTE[lang].search(purpose)
    body = purpose[: note.start()] if note else purpose
    found = (_PURPOSE_QUESTION_EN if lang == "en" else _PURPOSE_QUESTION_ZH).search(body)
    return found.group(1) if found else body


def compatible(asked: Iterable[str], answered: frozenset[str]) -> bool:
    return any(answered & _COMPATIBLE[a] for a in asked)


def topic_terms(node: ResponseNode, lang: Language) -> frozenset[str]:
    """What a node speaks of: the words of its text and of its purpose's question, without the
    purposes' stock phrases."""
    words = set(tokenize(node.text, lang))
    if node.purpose:
        words.update(tokenize(purpose_question(node.purpose, lang), lang))
    return frozenset(words - (_BOILERPLATE_EN if lang == "en" else _BOILERPLATE_ZH))


def entry_names(background: Background) -> list[str]:
    """The background's items, skills and scenes by name (a scene's note in parentheses
    dropped), with the role and the task."""
    entries = (background.role, background.task, *background.items, *background.skills,
               *background.scenes)  # fmt: skip
    return [name for e in entries if (name := _PARENTHESES.sub("", e).strip())]


def entries_named(
    words: set[str], background: Background, lang: Language, beyond: set[str] | None = None
) -> int:
    """How many background entries a question names (all of an entry's words, or at least two
    of them, occur in it); with ``beyond`` (a node's words), only entries the node does not
    name itself."""
    count = 0
    for name in entry_names(background):
        tokens = set(tokenize(name, lang))
        named = bool(tokens) and (tokens <= words or len(tokens & words) >= 2)
        own = beyond is not None and (tokens <= beyond or len(tokens & beyond) >= 2)
        if named and not own:
            count += 1
    return count


def fully_named(words: set[str], background: Background, lang: Language) -> tuple[int, set[str]]:
    """How many background entries (items, skills, scenes) a question names in full (every
    word, or in Chinese every character pair, of the entry occurs in it), and their words."""
    entries = (*background.items, *background.skills, *background.scenes)
    count = 0
    named: set[str] = set()
    for entry in entries:
        tokens = set(tokenize(_PARENTHESES.sub("", entry).strip(), lang))
        if tokens and tokens <= words:
            count += 1
            named |= tokens
    return count, named


def is_list(
    words: set[str], background: Background, lang: Language, beyond: set[str] | None = None
) -> bool:
    """Whether a question names so many of the background's entries (beyond the node's own)
    that it is a list of what the seeker was told (:data:`LIST_ENTRIES`, :data:`LIST_SHARE`)."""
    named = entries_named(words, background, lang, beyond)
    return named >= max(LIST_ENTRIES, LIST_SHARE * len(entry_names(background)))


def similar(a: Sequence[str], b: Sequence[str]) -> bool:
    """Whether two questions' words overlap by :data:`REPEAT_OVERLAP` or more (Jaccard)."""
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return False
    return len(sa & sb) / len(sa | sb) >= REPEAT_OVERLAP


__all__ = [
    "ANY",
    "CONFIRM_WORDS",
    "LIST_ENTRIES",
    "LIST_SHARE",
    "NEW_WORDS",
    "REPEAT_OVERLAP",
    "compatible",
    "entries_named",
    "entry_names",
    "fully_named",
    "intents",
    "is_list",
    "node_intents",
    "purpose_question",
    "similar",
    "topic_terms",
]
