"""Reading a dialogue system's message, whatever system wrote it.

The agenda user needs a few coarse facts from free text: a booking reference, whether the system
reports a failure, which slots it asks about, whether it offers a venue or a booking, and values
that contradict the user's constraints. Everything here is keyword and pattern based on the
lower-cased text; nothing assumes a particular system's wording.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from todeval.benchmarks.booking.users.checking import contradictions, mentions_value, minutes

__all__ = [
    "SystemReading",
    "asked_slots",
    "contradictions",
    "failure_sentences",
    "find_reference",
    "is_failure",
    "mentions_value",
    "minutes",
    "read_message",
    "sentences",
]

# ---------------------------------------------------------------------------------------------
# Booking references

_REF_WORD = re.compile(
    r"\b(reference|ref|booking (number|code|id)|confirmation|reservation (number|code|id))\b",
    re.IGNORECASE,
)
_CODE = re.compile(r"(?<![A-Za-z0-9])([A-Za-z0-9]{6})(?![A-Za-z0-9])")
_TRAIN_ID = re.compile(r"^TR\d{4}$", re.IGNORECASE)
_REF_AFTER = 60  # characters after a reference word in which the code may appear
_REF_BEFORE = 30


def _looks_like_code(token: str) -> bool:
    if _TRAIN_ID.match(token):
        return False
    if re.fullmatch(r"[A-Z0-9]{6}", token):
        return True
    # a lower- or mixed-case code is accepted only with both letters and digits
    return bool(re.search(r"\d", token) and re.search(r"[A-Za-z]", token))


def find_reference(text: str) -> str | None:
    """A 6-character A-Z0-9 booking reference near a word like "reference" (upper-cased).

    Train ids (TR1234) are never references. When several codes qualify, the one closest after
    a reference word wins.
    """
    codes = [(m.start(), m.group(1)) for m in _CODE.finditer(text) if _looks_like_code(m.group(1))]
    if not codes:
        return None
    best: tuple[int, str] | None = None
    for word in _REF_WORD.finditer(text):
        for pos, code in codes:
            if word.end() <= pos <= word.end() + _REF_AFTER:
                distance = pos - word.end()
            elif word.start() - _REF_BEFORE <= pos < word.start():
                distance = _REF_AFTER + (word.start() - pos)  # prefer codes after the word
            else:
                continue
            if best is None or distance < best[0]:
                best = (distance, code)
    return best[1].upper() if best else None


# ---------------------------------------------------------------------------------------------
# Failures, offers, questions

_FAILURE = re.compile(
    r"\b(no match(es|ing)?|nothing (that )?(matches|found|available)|no results?"
    r"|(couldn't|could not|can't|cannot|can not|unable to|wasn't able to|was not able to"
    r"|not able to) (find|locate|book|make|reserve|complete|process|confirm)"
    r"|(could not|couldn't|cannot|can't|can not|was not|wasn't) be (completed|made|processed"
    r"|booked|reserved|confirmed|found)"
    r"|no such|there (is|are) no|there (isn't|aren't) any|(don't|do not) have any"
    r"|none (of|available|match)|unavailable|not available|isn't available|fully booked"
    r"|failed|unsuccessful|no availability|not possible|(doesn't|does not) exist)\b"
)
_REQUEST = re.compile(
    r"\b(please (provide|tell|let me know|specify|confirm|choose|select|give)|let me know"
    r"|(could|can|would) you (please )?(tell|provide|specify|confirm|give|let me know)"
    r"|what is your|what's your|may i (have|know|ask)|i (will )?need (to know )?(your|the))\b"
)
_BOOKED = re.compile(
    r"\b(booked|is confirmed|are confirmed|been confirmed|reserved|reservation is (made|complete)"
    r"|booking is (complete|done|made|confirmed)|all set)\b"
)
_BOOK_OFFER = re.compile(
    r"\b(would you like|shall i|should i|do you want|want me to|like me to|can i|may i"
    r"|ready to|go ahead)\b.{0,40}\b(book|reserv)"
)
_CONFIRM = re.compile(
    r"\b(confirm|is that (right|correct)|correct\?|right\?|is this (right|correct))"
)
_CLOSING = re.compile(
    r"\b(anything else|something else|(help|assist) you with|anything more|can i help)\b"
)
_CHOICE = re.compile(
    r"\b(which (one|of (these|them|those))|(choose|pick|prefer) (one|from|between)"
    r"|any (preference|of these))\b"
)
_OFFER = re.compile(
    r"\b(i('ve| have)? found|i('ve| have) got|(i|we)('d| would)? (recommend|suggest)"
    r"|how about|what about|there (is|are)|i have|options?|available|matches|called|named"
    r"|tr\d{4}|is a (great|good|nice|lovely|popular)|results?)\b"
)

_TRAIN_FROM = re.compile(
    r"(from where|where\b.{0,40}\bfrom\b|(departure|departing|origin|starting) (station|point|city"
    r"|location)|(leaving|departing|depart|travell?ing|coming|starting) from)"
)
_TRAIN_TO = re.compile(
    r"(destination|where to\b|to where|where\b.{0,30}\b(go|going|travel|travell?ing|headed|heading)"
    r"\b|going to|heading to|travell?ing to|arrival station)"
)
_SLOT_QUESTIONS: dict[str, dict[str, re.Pattern[str]]] = {
    "restaurant": {
        "area": re.compile(
            r"\b(area|part of (town|the city)|side of town|where in|location|neighbou?rhood"
            r"|north|south|east|west|centre|center)\b"
        ),
        "pricerange": re.compile(r"\b(price|prices|price range|budget|cheap|moderate|expensive)\b"),
        "food": re.compile(r"\b(food|cuisine|(kind|type) of (restaurant|place))\b"),
        "name": re.compile(r"\b(name|particular|specific|which restaurant)\b"),
        "people": re.compile(
            r"\b(how many|people|persons|guests|party|group|diners|for how many)\b"
        ),
        "day": re.compile(r"\b((what|which) day|day|date|when)\b"),
        "time": re.compile(r"\b(what time|time|when)\b"),
    },
    "hotel": {
        "area": re.compile(
            r"\b(area|part of (town|the city)|side of town|where in|location|neighbou?rhood"
            r"|north|south|east|west|centre|center)\b"
        ),
        "pricerange": re.compile(r"\b(price|prices|price range|budget|cheap|moderate|expensive)\b"),
        "type": re.compile(
            r"\b(guesthouse|guest house|(type|kind) of (hotel|accommodation|place|lodging)"
            r"|hotel or)\b"
        ),
        "stars": re.compile(r"\b(stars?|star rating|rating)\b"),
        "parking": re.compile(r"\bparking\b"),
        "internet": re.compile(r"\b(internet|wifi|wi-fi)\b"),
        "name": re.compile(r"\b(name|particular|specific|which (hotel|guesthouse|place))\b"),
        "people": re.compile(
            r"\b(how many (people|persons|guests|of you)|people|persons|guests"
            r"|party|group)\b"
        ),
        "stay": re.compile(r"\b(how many nights|how long|nights?|length of (your |the )?stay)\b"),
        "day": re.compile(r"\b((what|which) day|day|date|when|check.?in|arriv\w*)\b"),
    },
    "train": {
        "people": re.compile(
            r"\b(how many|people|persons|tickets?|passengers|seats|party|group)\b"
        ),
        "day": re.compile(r"\b((what|which) day|day|date)\b"),
        "leaveat": re.compile(r"\b(leave|leaving|depart|departing|departure)\b"),
        "arriveby": re.compile(r"\b(arrive|arriving|arrival|get there|be there|get in|reach)\b"),
    },
}
_WHEN = re.compile(r"\b(when|what time|which time|time)\b")
_SENTENCES = re.compile(r"[^.!?\n]+[.!?]*")


# A question that proposes something ("How about X, a cheap guesthouse in the east?") states
# the venue's properties; it does not ask the user about them.
_PROPOSAL = re.compile(
    r"^(?:(?:so|then|well|ok|okay|great|sure|alright)\b,?\s*)?(?:how about|what about"
    r"|i (?:would |'d |can |could )?(?:recommend|suggest)"
    r"|would you (?:like to )?(?:try|consider))\b"
)
# A train time that the system states ("leaving at 05:29") rather than asks about.
_STATED_TIME = re.compile(
    r"\b(?:leav\w*|depart\w*|arriv\w*|gets? in|reach\w*)\s+(?:at|by|after|before|around|from"
    r"|in [a-z ]{1,30}? at)?\s*\d{1,2}:\d{2}"
)


def _request_sentences(text: str) -> list[str]:
    """Sentences that ask the user something (questions and polite imperatives); proposals
    ("How about ...?") are offers, not questions."""
    out = []
    for match in _SENTENCES.finditer(text):
        sentence = match.group(0).strip()
        if _PROPOSAL.search(sentence):
            continue
        if sentence.endswith("?") or _REQUEST.search(sentence):
            out.append(_STATED_TIME.sub(" ", sentence))
    return out


def _train_slots(sentence: str) -> list[str]:
    slots: list[str] = []
    rest = sentence
    if _TRAIN_FROM.search(rest):
        slots.append("departure")
        rest = _TRAIN_FROM.sub(" ", rest)
    if _TRAIN_TO.search(rest):
        slots.append("destination")
        rest = _TRAIN_TO.sub(" ", rest)
    for slot, pattern in _SLOT_QUESTIONS["train"].items():
        if pattern.search(rest):
            slots.append(slot)
    if _WHEN.search(rest) and "leaveat" not in slots and "arriveby" not in slots:
        slots.append("time")  # a time without direction: the user answers its time bounds
    return slots


def sentences(text: str) -> list[str]:
    """The message split into sentences (at ``.``, ``!``, ``?`` and line breaks)."""
    return [m.group(0).strip() for m in _SENTENCES.finditer(text) if m.group(0).strip()]


def is_failure(sentence: str) -> bool:
    """Does the text report a failure ("no match", "couldn't find", "booking failed")?"""
    return _FAILURE.search(sentence.lower()) is not None


def failure_sentences(text: str) -> list[str]:
    """The sentences of a message that report a failure."""
    return [s for s in sentences(text) if is_failure(s)]


def asked_slots(text: str, domain: str) -> list[str]:
    """Slots of ``domain`` (and its booking slots) that the message asks the user about."""
    found: list[str] = []
    for sentence in _request_sentences(text.lower()):
        if domain == "train":
            slots = _train_slots(sentence)
        else:
            slots = [s for s, p in _SLOT_QUESTIONS[domain].items() if p.search(sentence)]
        for slot in slots:
            if slot not in found:
                found.append(slot)
    return found


# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SystemReading:
    """What the user understood from one system message."""

    reference: str | None = None
    failure: bool = False
    asked: list[str] = field(default_factory=list)
    offers_booking: bool = False
    offers_venue: bool = False
    asks_choice: bool = False
    asks_confirmation: bool = False
    closing: bool = False
    claims_booking: bool = False


def read_message(text: str, domain: str) -> SystemReading:
    """Read one system message in the context of the domain being discussed."""
    low = text.lower()
    return SystemReading(
        reference=find_reference(text),
        failure=_FAILURE.search(low) is not None,
        asked=asked_slots(text, domain),
        offers_booking=_BOOK_OFFER.search(low) is not None,
        offers_venue=_OFFER.search(low) is not None,
        asks_choice=_CHOICE.search(low) is not None,
        asks_confirmation=_CONFIRM.search(low) is not None,
        closing=_CLOSING.search(low) is not None,
        claims_booking=_BOOKED.search(low) is not None,
    )
