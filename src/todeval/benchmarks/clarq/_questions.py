"""How a seeker turn reads as questions: its sentences, which are questions, which are vague
catch-alls, and how many questions it asks.

The ``rule`` provider reads a turn with these (:mod:`.providers.rule`), and the economy of a
dialogue (:func:`questions_asked`, :func:`economy`: the headline ``clarq.success_economy``,
SPQ) counts with them: a turn costs the questions it asks, so a one-turn shotgun of a hundred
questions pays for a hundred.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from todeval.benchmarks.clarq._text import Language, strip_provider_prefix

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？?!])|\n+")
_LIST_MARK = re.compile(r"^\s*(?:[-*•]+|\d+[.)、]|[(（]\d+[)）])?\s*[*_\"'“]*")

_QUESTION_START_EN = re.compile(
    r"^(?:how|where|which|what|who|whom|whose|when|why|could|can|would|should|do|does|did|"
    r"is|are|was|were|will|may|shall|please|tell me|any idea)\b",
    re.IGNORECASE,
)
_QUESTION_INSIDE_EN = re.compile(
    r"\b(?:tell me|let me know|i (?:still |also |just )?(?:need|want|would like|'d like) to "
    r"(?:know|find out|understand)|i wonder|i(?:'m| am) (?:not sure|unsure)|clarify|explain)\b",
    re.IGNORECASE,
)
_VAGUE_EN = re.compile(
    r"\b(?:anything else|any (?:additional|other|further|more) "
    r"(?:precautions?|strategies|strategy|dangers?|obstacles?|risks?|preparations?|tips?|"
    r"signs?|indicators?|challenges?|considerations?)|"
    r"any other (?:details?|information|tips?|steps?|advice|things?|"
    r"questions?|concerns?|preparations?|considerations?|requirements?|points?)|"
    r"anything (?:more|additional|further|i should|i need)|"
    r"is there anything|additional (?:steps?|tips?|details?|information)|what else|"
    r"next steps?|other details?|what now)\b",
    re.IGNORECASE,
)
_QUESTION_ZH = re.compile(
    "吗|呢|哪|什么|怎么|怎样|如何|是否|能否|可否|多少|谁|为什么|请问|告诉我|想知道|请说明"
)
_VAGUE_ZH = re.compile(
    "还有什么|还有其他|还有别的|其他(?:的)?(?:细节|信息|问题|事情|需要)|别的(?:细节|信息|问题)|"
    "需要注意|下一步|接下来(?:怎么|做什么|该)|还需要(?:做|准备|知道)什么"
)


def sentences(text: str) -> list[str]:
    """The sentences of an utterance (split at sentence marks followed by space, CJK sentence
    marks and line breaks), without list markers."""
    out = []
    for part in _SENTENCE_SPLIT.split(text):
        cleaned = _LIST_MARK.sub("", part).strip()
        if cleaned:
            out.append(cleaned)
    return out


def is_question(sentence: str, lang: Language) -> bool:
    if sentence.endswith(("?", "？")):
        return True
    if lang == "en":
        return bool(_QUESTION_START_EN.match(sentence) or _QUESTION_INSIDE_EN.search(sentence))
    return bool(_QUESTION_ZH.search(sentence))


def is_vague(sentence: str, lang: Language) -> bool:
    return bool((_VAGUE_EN if lang == "en" else _VAGUE_ZH).search(sentence))


_WH_EN = r"(?:which|where|how|what|when|who|whom|whose|why)"
_AUX_EN = r"(?:should|shall|can|could|do|does|did|is|are|was|were|will|would|must|may|might)"
_SUBJECT_EN = r"(?:i|we|you|it|they|there|he|she|this|that)"
_CLAUSES = {
    # a further question joined to a sentence: "and how do I ...", "; where is ...", "or should
    # I ...", ", where should I ..." -- not a relative clause (", which is ...") nor a verb
    # joined to a statement ("... is hard and would last")
    "en": re.compile(
        rf"(?:\band|\bor|\balso|\bthen|[;:])\s+(?:(?:and|or|also|then)\s+)?"
        rf"(?:{_WH_EN}\s+(?:\w+\s+)?{_AUX_EN}|{_AUX_EN}\s+{_SUBJECT_EN})\b|"
        rf",\s+(?:(?:and|or|also|then)\s+)?(?:{_WH_EN}\s+(?:\w+\s+)?)?{_AUX_EN}\s+{_SUBJECT_EN}\b",
        re.IGNORECASE,
    ),
    "zh": re.compile("为什么|什么时候|什么|哪里|哪儿|哪|怎么|怎样|如何|谁|吗|是否|多少|几"),
}


def questions_in(text: str, lang: Language) -> int:
    """How many questions a seeker turn asks: each question sentence counts one, and one more
    for every question joined to it (English: ", and how ...", "or should I ..."; Chinese:
    every question word or particle past the first); a turn asking none costs one (it is a
    turn all the same)."""
    count = 0
    for sentence in sentences(text):
        if not is_question(sentence, lang):
            continue
        if lang == "en":
            joined = len(_CLAUSES["en"].findall(sentence))
            count += max(1, joined + bool(_QUESTION_START_EN.match(sentence)))
        else:
            count += max(1, len(_CLAUSES["zh"].findall(sentence)))
    return max(1, count)


def questions_asked(messages: Sequence[str], lang: Language, opening: str | None = None) -> int:
    """The clarifying questions of a dialogue (the greeting, then seeker and provider
    alternating): every seeker turn the provider answered after the one it answered with the
    opening response (``opening``, response 0: the gate; ``None`` or never given: every
    answered turn counts), counted by :func:`questions_in`. The turns up to the gate ask for
    the task, which every seeker must; a final goodbye, or a turn past the message cap, is
    never answered and costs nothing."""
    start = 1
    if opening is not None:
        gate = _normalized(opening)
        for i in range(2, len(messages), 2):
            if _normalized(messages[i]) == gate:
                start = i + 1
                break
    turns = [messages[i] for i in range(start, len(messages) - 1, 2)]
    return sum(questions_in(turn, lang) for turn in turns)


def _normalized(text: str) -> str:
    return " ".join(strip_provider_prefix(text).split()).casefold()


ECONOMY_POWER = 2
"""The power of the economy factor in SPQ (see :func:`economy`)."""


def economy(success: bool, asked: int, needed: int, power: float = ECONOMY_POWER) -> float:
    """Success weighted by question economy (SPQ, after SPL in navigation): ``(needed /
    max(asked, needed)) ** power`` for a success, 0 for a failure; ``needed`` is the oracle's
    number of clarifying questions (one per required response). Squared (``power`` 2): a
    seeker asking twice the questions a task needs keeps a quarter of its success. Linear
    (SPL's own form) left seekers that ask about every background entry in turn at 0.14
    (English) and 0.20 (Chinese), above the floor (docs/clarq.md, "The headline")."""
    if not success or needed <= 0:
        return 0.0
    return float((needed / max(asked, needed)) ** power)


__all__ = [
    "ECONOMY_POWER",
    "economy",
    "is_question",
    "is_vague",
    "questions_asked",
    "questions_in",
    "sentences",
]
