"""What a provider says when it releases nothing, and how released responses are worded.

Every provider (``rule``, ``llm``, ``llm-multi``) answers from the same canned texts, one set
per language, worded for todeval (the original's facts carry over, not its sentences):

* ``apology`` -- the first seeker turn is not about the task: the gate stays closed;
* ``whole_task`` (type 1) -- a positive reply to a plan or a question about the whole task,
  that never says the seeker has everything;
* ``unanswerable`` (type 3, and a type 2 whose passes all failed) -- a reassuring reply that
  reveals nothing;
* ``repeat`` (type 4) -- the question was already answered;
* ``unrelated`` (type 5) -- a redirect that says how to end the dialogue ("Goodbye"/"再见");
* ``vague`` (type 6) -- "don't overthink it";
* ``enough`` -- nothing is left to release (types 2 and 3); it tells the seeker it is done
  (under the ``strict`` protocol the game master passes on
  :data:`~todeval.benchmarks.clarq.protocol.NEUTRAL_REPLIES` instead).

A release is ``"Jax: " + node text`` verbatim (:func:`release_message`); several released in one
turn (``llm-multi``) are joined by :func:`join_released`.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from todeval.benchmarks.clarq._text import Language, provider_message
from todeval.benchmarks.clarq.protocol import SeekerKind


class CannedReplies(BaseModel):
    """The fixed provider texts of one language (without the ``Jax: `` prefix)."""

    model_config = ConfigDict(frozen=True)

    apology: str
    whole_task: str
    unanswerable: str
    repeat: str
    unrelated: str
    vague: str
    enough: str

    def for_kind(self, kind: SeekerKind) -> str:
        """The no-release reply for a classified utterance (a type 2 that released nothing is
        answered as type 3)."""
        return {
            SeekerKind.WHOLE_TASK: self.whole_task,
            SeekerKind.ANSWERABLE: self.unanswerable,
            SeekerKind.UNANSWERABLE: self.unanswerable,
            SeekerKind.REPEAT: self.repeat,
            SeekerKind.UNRELATED: self.unrelated,
            SeekerKind.VAGUE: self.vague,
        }[kind]


CANNED: dict[Language, CannedReplies] = {
    "en": CannedReplies(
        apology="Sorry, I did not quite follow that. I can only help with questions about "
        "your task.",
        whole_task="That sounds like a sensible way to go about it. Is there a particular "
        "point you would like me to clarify?",
        unanswerable="Don't worry about that part; it won't stand in your way. Just carry on "
        "with what you already know.",
        repeat="I believe I have already answered that earlier in our conversation.",
        unrelated="Sorry, I can only help with your task, not with other matters. If you "
        "want to end our conversation, just say Goodbye.",
        vague="You're overthinking this; the task is simpler than it looks. Ask me about a "
        "specific point if something is unclear.",
        enough="You already have all the information you need to complete the task.",
    ),
    "zh": CannedReplies(
        apology="抱歉，我没太明白你的意思。我只能回答和你的任务有关的问题。",
        whole_task="听起来这个思路是可行的。你还有哪一点需要我具体说明吗？",
        unanswerable="这一点不用担心，它不会妨碍你完成任务。按你已经知道的去做就好。",
        repeat="这个问题我在前面的对话里应该已经回答过了。",
        unrelated="抱歉，我只能帮你处理任务相关的事情，其他的事我不清楚。如果你想结束对话，"
        "跟我说再见就可以。",
        vague="你想得太多了，这个任务没有看起来那么复杂。如果有哪一点不清楚，可以具体问我。",
        enough="你已经掌握了完成任务所需要的全部信息。",
    ),
}


def canned(lang: Language) -> CannedReplies:
    return CANNED[lang]


def release_message(text: str) -> str:
    """A released response as the provider says it: ``Jax: `` + the text, verbatim."""
    return provider_message(text)


_CONNECTIVES: dict[Language, tuple[str, ...]] = {
    "en": ("Also, ", "In addition, ", "Moreover, "),
    "zh": ("另外，", "此外，", "而且，"),
}
_LAST: dict[Language, str] = {"en": "Finally, ", "zh": "最后，"}
MAX_JOINED = 4
"""Up to this many sentences are joined with connectives; more go on separate lines."""

_LOWER_STARTS = frozenset(
    (
        "The", "A", "An", "You", "Your", "It", "Its", "There", "This", "That", "These", "Those",
        "They", "To", "If", "In", "On", "At", "For", "Only", "Each", "Every", "Some", "All",
        "After", "Before", "When", "Once"
    )
)  # fmt: skip


def _lower_first(sentence: str) -> str:
    head, _, rest = sentence.partition(" ")
    if head in _LOWER_STARTS:
        return head.lower() + (" " + rest if rest else "")
    return sentence


def join_released(texts: Sequence[str], lang: Language) -> str:
    """Several released responses as one message body (deterministic; each text kept whole).

    Two to four texts are joined with connectives ("Also, ...", "Finally, ..." / "另外，",
    "最后，"); five or more are put on separate lines. In English a following sentence that
    starts with a common function word ("The", "You", ...) has it lower-cased after the
    connective; the scorer compares English without case, so the text still matches.
    """
    if not texts:
        raise ValueError("nothing to join")
    if len(texts) == 1:
        return texts[0]
    if len(texts) > MAX_JOINED:
        return "\n".join(texts)
    parts = [texts[0]]
    middle = _CONNECTIVES[lang]
    for i, text in enumerate(texts[1:], start=1):
        connective = _LAST[lang] if i == len(texts) - 1 and i >= 2 else middle[i - 1]
        body = _lower_first(text) if lang == "en" else text
        parts.append(connective + body)
    return (" " if lang == "en" else "").join(parts)


def released_message(texts: Sequence[str], lang: Language) -> str:
    """The ``Jax: `` message releasing ``texts`` (one text verbatim, several joined)."""
    return release_message(join_released(texts, lang))


__all__ = [
    "CANNED",
    "MAX_JOINED",
    "CannedReplies",
    "canned",
    "join_released",
    "release_message",
    "released_message",
]
