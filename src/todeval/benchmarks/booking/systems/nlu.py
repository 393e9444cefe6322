"""Turn-level language understanding: free user text -> slot mentions, requests and acts.

:func:`parse_turn` reads one user turn in the light of a :class:`ParseContext` (the active
domain, what the system just asked, the values already known per domain) and returns a
:class:`TurnParse`. It never changes state; :class:`~.tracker.SlotTracker` applies the result.

How a turn is read:

1. Vocabulary phrases (venue names, foods, stations, areas, price words, days, ...) are found
   longest first; names that are ordinary words count only with a cue ("called X", "at X",
   capitalised in the raw text).
2. Clock times, nights, stars and party sizes are found with patterns over the rest of the text.
3. Every mention without a domain of its own (area, price, day, people) takes the domain of the
   nearest domain cue in its sentence ("restaurant", "hotel", "train", a food, a venue name),
   else of the previous sentence, else what the system asked about, else the active domain.
4. Values right after "not", "instead of", "rather than" are dropped (corrections); "any area",
   "the price doesn't matter" and a bare "doesn't matter" answering a question give
   ``dontcare``; "the same day/group/area" copy the value of another domain.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pydantic import BaseModel, Field
from rapidfuzz import fuzz, process

import todeval.benchmarks.booking.systems.patterns as P
from todeval.benchmarks.booking.systems.text import (
    NUMBER_RE,
    find_times,
    normalise_text,
    number_value,
    shift_pm,
)
from todeval.benchmarks.booking.systems.vocab import Vocabulary

_FILL = "\u00a7"  # masks consumed text so later patterns do not read it twice


class SlotValue(BaseModel):
    """One slot value the user gave for one domain."""

    domain: str
    slot: str
    value: str
    weak: bool = Field(False, description="inferred from a loose cue (e.g. 'hotel' as type)")


class TurnParse(BaseModel):
    """What one user turn says."""

    text: str
    domains: list[str] = Field(default_factory=list, description="domains named, in order")
    slots: list[SlotValue] = Field(default_factory=list)
    fallbacks: list[SlotValue] = Field(
        default_factory=list, description="values to try if the ones in `slots` fail"
    )
    requests: dict[str, list[str]] = Field(default_factory=dict, description="domain -> attrs")
    links: list[tuple[str, str, str | None]] = Field(
        default_factory=list,
        description="(domain, slot, other domain or None): 'the same X as' with X not known yet",
    )
    acts: list[str] = Field(default_factory=list)

    def triples(self) -> set[tuple[str, str, str]]:
        return {(s.domain, s.slot, s.value) for s in self.slots}


@dataclass
class ParseContext:
    """What the tracker knows before the turn."""

    active_domain: str | None = None
    expected: list[tuple[str, str]] = field(default_factory=list)
    known: dict[str, dict[str, str]] = field(default_factory=dict)
    closed: set[str] = field(default_factory=set)  # domains already booked


@dataclass
class _Mention:
    slot: str
    value: str
    start: int
    end: int
    domain: str | None = None
    weak: bool = False
    candidates: tuple[str, ...] = ()


@dataclass
class _Turn:
    raw: str
    text: str
    cased: str
    masked: str
    sentences: list[tuple[int, int]]
    cues: list[tuple[int, str]] = field(default_factory=list)
    mentions: list[_Mention] = field(default_factory=list)
    fallbacks: list[_Mention] = field(default_factory=list)
    weak_cues: set[int] = field(default_factory=set)  # "travelling": no train cue for a party
    links: list[tuple[str, str, str | None]] = field(default_factory=list)

    def mask(self, start: int, end: int) -> None:
        self.masked = self.masked[:start] + _FILL * (end - start) + self.masked[end:]

    def sentence_of(self, pos: int) -> int:
        for i, (s, e) in enumerate(self.sentences):
            if s <= pos < e:
                return i
        return len(self.sentences) - 1

    def free(self, start: int, end: int) -> bool:
        return _FILL not in self.masked[start:end]


def _sentences(text: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    start = 0
    for m in P.SENTENCE_BREAK.finditer(text):
        out.append((start, m.end()))
        start = m.end()
    out.append((start, len(text) + 1))
    return out


_APOSTROPHES: dict[str, str | int | None] = {"\u2019": "'", "\u2018": "'", "`": "'"}


def _cased(raw: str, text: str) -> str:
    """The normalised text with its original letter case (when lengths line up)."""
    lowered = raw.translate(str.maketrans(_APOSTROPHES))
    folded = normalise_text(lowered)
    # Rebuild with case: normalise without lower-casing.
    out = lowered.replace("'", "")
    out = re.sub(r"\s*&\s*", " and ", out)
    out = re.sub(r"\b[Ww][Ii]-?[Ff][Ii]\b", "wifi", out)
    out = re.sub(r"\s+", " ", out).strip()
    return out if len(out) == len(text) and out.lower() == folded else text


# ---------------------------------------------------------------------------------------------
# 1. vocabulary phrases

_STRONG_NAME_CUE = re.compile(r"(?:\bcalled|\bnamed|\bname is|\bname of|\bthe name|\bnamed as)\s*$")
_NAME_CUE_BEFORE = re.compile(
    r"(?:\bcalled|\bnamed|\bname is|\bname of|\bthe name|\bat|\btry|\bbook|\breserve|\babout|"
    r"\bchoose|\bpick|\btake|\bprefer|\bis|\bwith|\bfor|\bto)\s+(?:the\s+)?[\"]?\s*$"
    r"|\b(?:restaurant|hotel|guest ?house|place to (?:stay|eat|dine)),\s+(?:the\s+)?$"
)
_NAME_CUE_AFTER = re.compile(
    r"^\s*[\"]?\s*(?:restaurant|hotel|guest ?house|sounds|looks|is (?:fine|good|great|perfect)|"
    r"will do|works|please)\b"
)


def _name_ok(turn: _Turn, start: int, end: int, phrase_text: str, unrealistic: bool) -> bool:
    before = turn.text[max(0, start - 30) : start]
    if _STRONG_NAME_CUE.search(before):
        return True
    if turn.text[max(0, start - 1) : start] == '"' or turn.raw.find(f"'{phrase_text}'") >= 0:
        return True
    if unrealistic:
        return bool(_NAME_CUE_AFTER.match(turn.text[end:]))
    if _NAME_CUE_BEFORE.search(before) or _NAME_CUE_AFTER.match(turn.text[end:]):
        return True
    segment = turn.cased[start:end]
    sentence_start = turn.sentences[turn.sentence_of(start)][0]
    at_start = not turn.text[sentence_start:start].strip()
    return (segment[:1].isupper() and not at_start and segment != segment.upper()) or (
        len(segment) <= 4 and segment.isupper() and segment.isalpha()
    )


_STATION_CUE = re.compile(
    r"\b(?:from|to|leaving|leave|departing|depart|towards|into|reach|arriving at|arrive at)"
    r"\s+(?:the\s+)?$"
)
_FOOD_CUE_AFTER = re.compile(r"^\s*(?:food|cuisine|restaurants?|places?|dishes|fare|meals?)\b")
_FOOD_CUE_BEFORE = re.compile(r"(?:serves?|serving|some|eat|for)\s+$")


def _fuzzy_names(turn: _Turn, vocab: Vocabulary) -> None:
    """Misspelt venue names and stations ("shanghi family restaurant", "liverpoool street")."""
    if vocab.unrealistic:
        return
    words = [(m.start(), m.end()) for m in re.finditer(r"[a-z0-9-]+", turn.masked)]
    for size in (4, 3, 2, 1):
        choices = vocab.fuzzy_names if size > 1 else vocab.fuzzy_words
        if not choices:
            continue
        for i in range(len(words) - size + 1):
            start, end = words[i][0], words[i + size - 1][1]
            if not turn.free(start, end):
                continue
            window = turn.masked[start:end]
            if window.startswith(("the ", "a ", "an ", "i ", "to ", "for ", "in ")):
                continue
            if size == 1 and len(window) < 6:
                continue
            best = process.extractOne(window, choices, scorer=fuzz.ratio, score_cutoff=88)
            if best is None:
                continue
            for ph in vocab.by_text[best[0]]:
                if ph.needs_cue:
                    continue
                if ph.kind.startswith("name:"):
                    domain = ph.kind.split(":", 1)[1]
                    turn.mentions.append(_Mention("name", ph.value, start, end, domain))
                    turn.cues.append((start, domain))
                elif ph.kind == "station":
                    turn.mentions.append(_Mention("station", ph.value, start, end))
                    turn.cues.append((start, P.TRAIN))
                else:
                    continue
                turn.mask(start, end)
                break


def _vocab_mentions(turn: _Turn, vocab: Vocabulary) -> None:
    for m in vocab.pattern.finditer(turn.text):
        candidates = vocab.by_text[m.group(0)]
        kinds = {ph.kind for ph in candidates}
        if "station" in kinds and len(kinds) > 1:
            # "from volcano" is a station, "in the volcano" an area (unrealistic set)
            before = turn.text[max(0, m.start() - 25) : m.start()]
            station_first = bool(_STATION_CUE.search(before))
            candidates = tuple(
                sorted(candidates, key=lambda ph: (ph.kind == "station") != station_first)
            )
        chosen = None
        for ph in candidates:
            if (
                ph.kind.startswith("name:")
                and ph.needs_cue
                and not _name_ok(turn, m.start(), m.end(), ph.text, vocab.unrealistic)
            ):
                continue
            if (
                ph.kind == "food"
                and ph.needs_cue
                and not (
                    _FOOD_CUE_AFTER.match(turn.text[m.end() :])
                    or _FOOD_CUE_BEFORE.search(turn.text[: m.start()])
                )
            ):
                continue
            chosen = ph
            break
        if chosen is None:
            continue
        kind = chosen.kind
        domain: str | None = None
        slot = kind
        if kind.startswith("name:"):
            slot, domain = "name", kind.split(":", 1)[1]
        elif kind == "food":
            domain = P.RESTAURANT
        elif kind in ("type", "internet", "parking"):
            domain = P.HOTEL
        turn.mentions.append(_Mention(slot, chosen.value, m.start(), m.end(), domain))
        turn.mask(m.start(), m.end())
        if kind.startswith("name:") or kind == "food" or kind == "type":
            turn.cues.append((m.start(), domain or P.HOTEL))
        if kind == "station" and chosen.value != "cambridge":
            turn.cues.append((m.start(), P.TRAIN))


# ---------------------------------------------------------------------------------------------
# 2. patterns: times, nights, stars, people


def _alternation(values: tuple[str, ...]) -> str:
    return "|".join(re.escape(v) for v in sorted(values, key=len, reverse=True))


def _free_form_times(turn: _Turn, vocab: Vocabulary) -> None:
    """A world without a clock (unrealistic set): the times its timetable uses ("1e4:30",
    "00:??", "2 8:7 6"), else a token with a colon after "at/after/by/before/for"."""
    if vocab.time_tokens:
        alternation = "|".join(re.escape(t) for t in vocab.time_tokens)
        for m in re.finditer(rf"(?<![\w:?.^/-])(?:{alternation})(?![\w:^/-]|\.\w)", turn.masked):
            turn.mentions.append(_Mention("time", m.group(0), m.start(), m.end()))
            turn.mask(m.start(), m.end())
    for m in re.finditer(
        r"\b(?:at|after|by|before|for|until|around)\s+(?P<t>[^\s,;!]*:[^\s,;!]*)", turn.masked
    ):
        value = m.group("t")
        if _FILL in value or not re.search(r"[\d?][^:]*:|:[^:]*[\d?]", value):
            continue  # "for me: ..." is no time
        if value.endswith("?") and re.search(r"[0-9a-z]\?$", value):
            value = value[:-1]  # "after 07:30?": the question mark ends the sentence
        value = value.rstrip(".")
        turn.mentions.append(_Mention("time", value, m.start("t"), m.start("t") + len(value)))
        turn.mask(m.start("t"), m.start("t") + len(value))


def _time_mentions(turn: _Turn, vocab: Vocabulary) -> None:
    if vocab.times_free_form:
        _free_form_times(turn, vocab)
    spans = find_times(turn.masked)
    for start, end, value in spans:
        turn.mentions.append(_Mention("time", value, start, end))
        turn.mask(start, end)
    # a bare hour after a cue: "leave after 10", "by 3", "a table at 7"
    for m in re.finditer(
        r"\b(?P<cue>after|by|before|around|about|at|until)\s+(?P<h>\d{1,2})(?![\d:%-]|\.\d)"
        r"(?!\s*(?:people|persons|person|guests|nights?|days?|stars?|adults|of us|tickets|"
        r"pounds|minutes|mins|\w+ people))",
        turn.masked,
    ):
        hour = int(m.group("h"))
        if not 1 <= hour <= 24:
            continue
        value = f"{hour % 24:02d}:00"
        if m.group("cue") == "at" and hour <= 9:
            value = shift_pm(value)
        turn.mentions.append(_Mention("time", value, m.start("h"), m.end("h"), weak=True))
        turn.mask(m.start("h"), m.end("h"))


def _token_alt(values: tuple[str, ...], unrealistic: bool) -> str:
    if unrealistic:
        return rf"(?:{_alternation(values)})"
    return NUMBER_RE


def _value_ok(value: str, allowed: tuple[str, ...], unrealistic: bool) -> str | None:
    if unrealistic:
        return value if value in allowed else None
    n = number_value(value)
    return None if n is None else str(n)


def _stay_mentions(turn: _Turn, vocab: Vocabulary) -> None:
    tok = _token_alt(vocab.stay, vocab.unrealistic)
    pat = re.compile(
        rf"(?<![\w.-])(?P<n>{tok})\s*-?\s*(?:nights?|days?|evenings?)(?:\s+stay)?\b"
        rf"|\bstay(?:ing)?\s+(?:for\s+)?(?P<n2>{tok})(?=\s*(?:[.,;!?]|$|and|with|from|"
        rf"starting|beginning|on|please))"
    )
    for m in pat.finditer(turn.masked):
        raw = m.group("n") or m.group("n2")
        value = _value_ok(raw, vocab.stay, vocab.unrealistic)
        if value is None or (not vocab.unrealistic and value == "0"):
            continue
        turn.mentions.append(_Mention("stay", value, m.start(), m.end(), P.HOTEL))
        turn.mask(m.start(), m.end())
    for m in re.finditer(r"\b(?:a|one|for a|for one) week\b", turn.masked):
        turn.mentions.append(_Mention("stay", "7", m.start(), m.end(), P.HOTEL))
        turn.mask(m.start(), m.end())
    if vocab.unrealistic:
        lettered = tuple(v for v in vocab.stay if re.search(r"[a-z]", v))
        if lettered:
            for m in re.finditer(
                rf"(?<![\w.-])({_alternation(lettered)})(?![\w-]|\.\d)", turn.masked
            ):
                turn.mentions.append(_Mention("stay", m.group(1), m.start(), m.end(), P.HOTEL))
                turn.mask(m.start(), m.end())


def _stars_mentions(turn: _Turn, vocab: Vocabulary) -> None:
    tok = _token_alt(vocab.stars, vocab.unrealistic)
    if not vocab.unrealistic:
        tok = r"(?:[0-5]|zero|one|two|three|four|five)"
    pat = re.compile(
        rf"(?<![\w.^/-])(?P<n>{tok})\s*-?\s*(?:stars?|start rating)\b"
        r"(?!\s*(?:ratings?\s+)?(?:doesnt|dont|is not|isnt))"
        r"|\b(?:star ratings?|start ratings?|ratings?|rated|ranking|stars?)\s+"
        r"(?:of\s+|is\s+|at least\s+|should be\s+|must be\s+|needs to be\s+|of at least\s+|"
        rf":\s*)*(?P<n2>{tok})"
        r"(?![\w^/-]|\.\d)"
    )
    for m in pat.finditer(turn.masked):
        raw = m.group("n") or m.group("n2")
        value = _value_ok(raw, vocab.stars, vocab.unrealistic)
        if value is None or (not vocab.unrealistic and not 0 <= int(value) <= 5):
            continue
        if raw in ("a", "an"):
            continue
        turn.mentions.append(_Mention("stars", value, m.start(), m.end(), P.HOTEL))
        turn.mask(m.start(), m.end())


_PEOPLE_UNITS = (
    r"people|persons?|guests?|adults?|of us|pax|diners|individuals|travell?ers|passengers|"
    r"seats|tickets?|ppl|peopl|peoples|members|folks|party members|attendees"
)
_COMPANIONS = (
    r"wife|husband|partner|friend|son|daughter|girlfriend|boyfriend|colleague|mother|"
    r"father|mom|mum|dad|brother|sister|boss|fiance|fiancee|spouse|coworker|kid|child"
)


# "one" as a pronoun ("ask for one", "look for one"), not a party size.
_PRONOUN_ONE = re.compile(
    r"\b(?:ask|asked|asking|look|looking|looked|search|searching|hope|hoping|wait|waiting|go|"
    r"going|settle|opt|find|found|try|trying|check|checking|vote|hunt|hunting|instead)\s+for\s+$"
)


def _people_mentions(turn: _Turn, vocab: Vocabulary) -> None:
    tok = _token_alt(vocab.people, vocab.unrealistic)
    patterns = [
        rf"(?<![\w.-])(?P<n>{tok})\s+(?:total\s+|more\s+|other\s+)?(?:{_PEOPLE_UNITS})\b",
        rf"\b(?:party|group|table|reservation|booking|family|team)\s+(?:of|for)\s+(?P<n>{tok})"
        rf"(?![\w-]|\.\d)",
        rf"\b(?:for|be)\s+(?P<n>{tok})(?![\w:-]|\.\d)(?!\s*(?:nights?|days?|stars?|pm|am|oclock|"
        rf"{_FILL}|minutes|hours|pounds|-|weeks?|\.\d))",
        rf"\b(?:there (?:are|will be|would be))\s+(?P<n>{tok})(?![\w:-]|\.\d)",
        rf"\b(?:party size|number of people|people|guests)\s*(?:is|will be|:|would be)?\s+"
        rf"(?P<n>{tok})(?![\w:-]|\.\d)",
        rf"\b(?:number of (?:people|guests|persons|tickets|travell?ers)|party size|group size|"
        rf"(?:my|our|the) (?:party|group|booking|reservation))(?:\s+(?:in|of|for|on) (?:my|our|"
        rf"the) (?:party|group|booking|reservation|table))?\s+(?:to|is now|will now be|should be)"
        rf"\s+(?P<n>{tok})(?![\w:-]|\.\d)",
    ]
    for pat in patterns:
        for m in re.finditer(pat, turn.masked):
            raw = m.group("n")
            if raw == "one" and (
                _PRONOUN_ONE.search(turn.text[: m.start("n")]) or m.group(0).startswith("be")
            ):
                continue  # "I didn't ask for one", "it should be one without parking"
            if raw in ("a", "an") and not re.search(
                r"\b(?:person|adult|guest|individual|"
                r"traveller|traveler|passenger|ticket|seat)\b",
                m.group(0),
            ):
                continue
            value = _value_ok(raw, vocab.people, vocab.unrealistic)
            if value is None or (not vocab.unrealistic and not 1 <= int(value) <= 20):
                continue
            turn.mentions.append(_Mention("people", value, m.start("n"), m.end()))
            turn.mask(m.start(), m.end())
    solo = re.compile(
        r"\b(?:just (?:me|myself|one|1)|only (?:me|myself)|for myself|by myself|for me alone|"
        r"(?:a )?table for one|myself only|single traveller|one person|just for me|"
        r"(?:travell?ing|dining|eating|staying|going|coming|be|im|i am) (?:all )?(?:alone|solo)|"
        r"on my own|"
        r"party of one|solo)\b"
    )
    for m in solo.finditer(turn.masked):
        turn.mentions.append(_Mention("people", "1", m.start(), m.end()))
        turn.mask(m.start(), m.end())
    if not vocab.unrealistic and not any(x.slot == "people" for x in turn.mentions):
        _party_list(turn)
    pair = re.compile(
        rf"\b(?:me and (?:my|me|our) (?:{_COMPANIONS})|my (?:{_COMPANIONS}) and (?:i|me)|the two "
        rf"of us|both of us|(?:with|and) my (?:{_COMPANIONS})(?! and)|a couple)\b"
    )
    if not vocab.unrealistic:
        for m in pair.finditer(turn.masked):
            if any(x.slot == "people" for x in turn.mentions):
                break
            turn.mentions.append(_Mention("people", "2", m.start(), m.end(), weak=True))
            turn.mask(m.start(), m.end())


_MEMBER = re.compile(
    rf"(?:(?:my|our|the)\s+)?(?:(?P<n>{NUMBER_RE})\s+(?:of\s+(?:my|our)\s+)?)?"
    rf"(?:{_COMPANIONS})(?:s|ren|es)?\b"
)
_JOIN = r"(?:\s*,\s*and\s+|\s*,\s*|\s+and\s+|\s+plus\s+)"
_MEMBERS = rf"(?:{_MEMBER.pattern})(?:{_JOIN}(?:{_MEMBER.pattern})){{0,3}}".replace("?P<n>", "")
_PARTY = re.compile(
    rf"\b(?:(?:me|myself|i){_JOIN}{_MEMBERS}|{_MEMBERS}{_JOIN}(?:me|myself|i)\b|(?:with|bringing)"
    rf"\s+{_MEMBERS})(?!\s+and)"
)


def _party_list(turn: _Turn) -> None:
    """ "me and my two colleagues" (3), "me, my husband and our 3 children" (5)."""
    for m in _PARTY.finditer(turn.masked):
        numbers = [x.group("n") for x in _MEMBER.finditer(m.group(0))]
        if not any(numbers):
            continue  # "me and my wife": the loose pair reading below
        total = 1 + sum((number_value(n) or 1) if n else 1 for n in numbers)
        turn.mentions.append(_Mention("people", str(total), m.start(), m.end()))
        turn.mask(m.start(), m.end())
        return


_NEED_ONE = re.compile(r"\b(?:need|want|book|get|reserve|buy|like)\s+(?:just\s+|only\s+)?$")


def _bare_number(turn: _Turn, vocab: Vocabulary, ctx: ParseContext) -> None:
    """A lone number answering "how many people/nights?"."""
    given = {m.slot for m in turn.mentions}
    wanted = [s for _, s in ctx.expected if s in ("people", "stay", "stars") and s not in given]
    if not wanted:
        return
    tok = _token_alt(vocab.people + vocab.stay, vocab.unrealistic)
    for m in re.finditer(rf"(?<![\w.:£$-])(?P<n>{tok})(?![\w:%-]|\.\d)", turn.masked):
        raw = m.group("n")
        needed_one = raw == "one" and _NEED_ONE.search(turn.masked[: m.start()])
        if raw in ("a", "an", "one") and len(turn.text.split()) > 3 and not needed_one:
            continue
        value = _value_ok(raw, vocab.people + vocab.stay, vocab.unrealistic)
        if value is None:
            continue
        slot = wanted[0]
        domain = next((d for d, s in ctx.expected if s == slot), None)
        turn.mentions.append(_Mention(slot, value, m.start(), m.end(), domain))
        turn.mask(m.start(), m.end())
        return


# ---------------------------------------------------------------------------------------------
# 3. hotel features (multiwoz wording), type "hotel"

_FEATURE_NEG_BEFORE = re.compile(
    r"(?:\bno|\bwithout|\b(?:does|do|did) not (?:offer|have|provide|include|come with)|"
    r"\b(?:doesnt|dont|didnt) (?:offer|have|provide|include|come with)|\bnot (?:offering|"
    r"having|providing|including|with)|\blacks?|\blacking|\bdont need|\bdo not need|"
    r"\bdoesnt need|\bdoes not need|\bdont require|"
    r"\bnot need|\bdont have to have|\bdoesnt have to have|\bdoesnt need to have|\bdont need to "
    r"have|\bdont want|\bnot necessary|\bshouldnt need|\bwont need|\bwill not need|\bneednt|"
    r"\bno need for|\bdont really need|\bnot)\s+(?:any\s+|free\s+|a\s+|to have\s+|have\s+|"
    r"really\s+)*$"
)
_FEATURE_DONTCARE_AFTER = re.compile(
    r"^\s*(?:(?:is not|isnt|isn t|are not|arent)\s+(?:really\s+|strictly\s+)?(?:necessary|needed|"
    r"required|important|a must|essential|a priority|a requirement)|(?:is|are|would be)?\s*"
    r"(?:optional|not necessary|not needed|not required|not important|unimportant|"
    r"not essential|nice to have|doesnt matter|does not matter|either way|or not|flexible))\b"
)


_FEATURE_DONTCARE_BEFORE = re.compile(
    r"\b(?:dont|do not) mind (?:if (?:there is|it has|they have) )?(?:no )?$|\b(?:doesnt|does not|"
    r"dont|do not) (?:really )?need to (?:include|offer|provide|come with)\s+(?:free\s+|any\s+)?$"
)


def _feature_mentions(turn: _Turn, vocab: Vocabulary) -> None:
    if vocab.unrealistic:
        return
    feats = {
        "internet": r"\b(?:free\s+)?(?:wifi|internet|wireless|wifi access|internet access|web)\b",
        "parking": r"\b(?:free\s+)?(?:parking|car park|place to park|park(?:ing)? (?:space|spot)s?"
        r"|park)\b",
    }
    for slot, pat in feats.items():
        for m in re.finditer(pat, turn.masked):
            before = turn.text[max(0, m.start() - 40) : m.start()]
            after = turn.text[m.end() : m.end() + 40]
            if (
                slot == "parking"
                and m.group(0) == "park"
                and not re.search(r"\b(?:to|can|place|where)\s*$", before)
            ):
                continue
            if _FEATURE_DONTCARE_AFTER.match(after) or _FEATURE_DONTCARE_BEFORE.search(before):
                value = "dontcare"
            elif _FEATURE_NEG_BEFORE.search(before) or re.match(
                r"^\s*(?:is not|isnt)\s+"
                r"(?:needed|necessary)",
                after,
            ):
                value = "no"
            else:
                value = "yes"
            turn.mentions.append(_Mention(slot, value, m.start(), m.end(), P.HOTEL))
            turn.cues.append((m.start(), P.HOTEL))
            turn.mask(m.start(), m.end())


_HOTEL_TYPE = re.compile(r"\bhotels?\b")


_HOTEL_EXPLICIT = re.compile(
    r"\b(?:(?:of |in )?(?:the |a )?hotel (?:type|category)\b|type(?: of accommodation| of place)?"
    r"(?: is| should be| must be|:)? (?:a )?hotel\b(?! or)|hotels?(?=\s*,?\s*(?:rather than|"
    r"instead of|not|and not|but not|over|as opposed to|more than)\s+(?:a |an |the |any )?"
    r"(?:guest ?houses?|b and bs?|bed and breakfasts?))|(?:proper|real|actual|regular|"
    r"normal|traditional|full|genuine) hotels?)"
)


_TYPE_WORD = r"(?:a |an )?(?:hotels?|guest ?houses?|b and bs?|bed and breakfasts?)"
_TYPE_EITHER = re.compile(
    rf"\b(?:(?:either|fine with|ok with|okay with|happy with|dont mind|do not mind|whether (?:its|"
    rf"it is)|no preference between)\s+{_TYPE_WORD}\s+(?:or|and)\s+{_TYPE_WORD}|{_TYPE_WORD}\s+or"
    rf"\s+{_TYPE_WORD}\s*,?\s*(?:is|are|would be|will be|both|either one|either way|whichever|"
    rf"(?:it )?doesnt matter|i dont mind)\b(?:\s+(?:fine|ok|okay|good|great|work|works))?)"
)
_TYPE_OR = re.compile(rf"\b{_TYPE_WORD}\s+or\s+{_TYPE_WORD}\b")


def _negated(turn: _Turn, start: int) -> bool:
    """A value right after "not", "instead of", "rather than", "rather X than"..."""
    s_start = turn.sentences[turn.sentence_of(start)][0]
    if P.NEGATED_BEFORE.search(turn.text[max(s_start, start - 30) : start]):
        return True
    return bool(_RATHER_THAN.search(turn.text[max(s_start, start - 60) : start]))


_RATHER_THAN = re.compile(r"\brather\b[^.;!?]*\bthan\s+(?:a |an |the |in |in the |at |at the )?$")


def _hotel_type(turn: _Turn, vocab: Vocabulary) -> None:
    """Type ``hotel``: explicit ("of the hotel type", "a hotel rather than a guesthouse", "not a
    guesthouse"), else weakly from the bare word "hotel" (see :data:`_HOTEL_TYPE`)."""
    if vocab.unrealistic:
        return
    either = _TYPE_EITHER.search(turn.text)
    if either is not None:  # "either a hotel or a guesthouse is fine"
        turn.mentions = [
            m for m in turn.mentions
            if not (m.slot == "type" and either.start() <= m.start < either.end())
        ]  # fmt: skip
        turn.mentions.append(_Mention("type", "dontcare", either.start(), either.end(), P.HOTEL))
        turn.mask(either.start(), either.end())
        return
    for both in _TYPE_OR.finditer(turn.text):  # "a hotel or guesthouse": no type asked for
        turn.mentions = [
            m for m in turn.mentions
            if not (m.slot == "type" and both.start() <= m.start < both.end())
        ]  # fmt: skip
        turn.mask(both.start(), both.end())
    types = [m for m in turn.mentions if m.slot == "type" and m.domain == P.HOTEL]
    live = [m for m in types if not _negated(turn, m.start)]
    if live or any(m.slot == "name" and m.domain == P.HOTEL for m in turn.mentions):
        return
    for explicit in _HOTEL_EXPLICIT.finditer(turn.text):
        if turn.free(explicit.start(), explicit.end()) and not _negated(turn, explicit.start()):
            turn.mentions.append(
                _Mention("type", "hotel", explicit.start(), explicit.end(), P.HOTEL)
            )
            return
    if types:
        # "not a guesthouse": the other type (MultiWOZ has only the two)
        m0 = types[0]
        turn.mentions.append(_Mention("type", "hotel", m0.end, m0.end, P.HOTEL))
        return
    for m in _HOTEL_TYPE.finditer(turn.masked):
        before = turn.text[max(0, m.start() - 25) : m.start()]
        after = turn.text[m.end() : m.end() + 25]
        if re.search(
            r"\b(?:the|that|this|my|your|same|its|which|booking|book|reserve|such|no)\s+"
            r"(?:\w+\s+)?$",
            before,
        ):
            continue
        if re.match(r"^\s*(?:or|and)\s+(?:a\s+)?guest", after) or re.search(
            r"guest ?houses?\s+"
            r"(?:or|and)\s+$",
            before,
        ):
            continue
        if re.match(
            r"^\s*(?:called|named|by the name|reservation|booking|room|stay|for "
            r"(?:the|my))\b",
            after,
        ):
            continue
        turn.mentions.append(_Mention("type", "hotel", m.start(), m.end(), P.HOTEL, weak=True))
        return


# ---------------------------------------------------------------------------------------------
# 4. domains


def _domain_cues(turn: _Turn) -> None:
    for domain, pat in P.DOMAIN_CUES.items():
        for m in pat.finditer(turn.masked):
            turn.cues.append((m.start(), domain))
            if P.TRAVEL_WORD.fullmatch(m.group(0)):
                turn.weak_cues.add(m.start())
    turn.cues.sort()


def _assign_domain(turn: _Turn, m: _Mention, ctx: ParseContext) -> str | None:
    domain = _cue_domain(turn, m, ctx)
    if domain in ctx.closed and m.slot in ("people", "day", "stay", "time") and m.domain is None:
        # the answer to the question just asked about an open domain, not a change to a
        # booked one ("the same two I'm taking to the restaurant, so three of us")
        asked = [d for d, s in ctx.expected if s == m.slot and d not in ctx.closed]
        if asked:
            return asked[0]
    return domain


def _cue_domain(turn: _Turn, m: _Mention, ctx: ParseContext) -> str | None:
    candidates = m.candidates or P.SLOT_DOMAINS.get(m.slot, P.DOMAINS)
    if m.domain is not None:
        return m.domain
    sent = turn.sentence_of(m.start)
    s_start, s_end = turn.sentences[sent]
    cues = turn.cues
    if m.slot == "people":  # "I'm travelling alone", "we travel as a family of 4"
        cues = [(pos, d) for pos, d in cues if pos not in turn.weak_cues]
    before = [d for pos, d in cues if s_start <= pos < m.start and d in candidates]
    if before:
        return before[-1]
    after = [(pos, d) for pos, d in cues if m.end <= pos < s_end and d in candidates]
    if after and (ctx.active_domain not in candidates or after[0][0] - m.end < 40):
        return after[0][1]
    earlier = [d for pos, d in cues if pos < s_start and d in candidates]
    if earlier:
        return earlier[-1]
    expected = [d for d, s in ctx.expected if s == m.slot and d in candidates]
    if expected:
        return expected[0]
    if ctx.active_domain in candidates:
        return ctx.active_domain
    if after:
        return after[0][1]
    if len(candidates) == 1:
        return candidates[0]
    return None


def _train_context(turn: _Turn, ctx: ParseContext) -> bool:
    return (
        any(d == P.TRAIN for _, d in turn.cues)
        or ctx.active_domain == P.TRAIN
        or any(m.slot == "station" and m.value != "cambridge" for m in turn.mentions)
    )


def _time_cues(before: str) -> tuple[list[int], list[int]]:
    """End positions of the leave cues and of the arrive cues in ``before``.

    A cue lying inside a longer cue of the other kind does not count: "no earlier than" is a
    leave cue even though it holds the arrive cue "earlier than"; "no later than" is an arrive
    cue holding the leave cue "later than"; "not before" leaves, "not after" arrives.
    """
    spans = [(x.start(), x.end(), "leave") for x in P.LEAVE_CUE.finditer(before)]
    spans += [(x.start(), x.end(), "arrive") for x in P.ARRIVE_CUE.finditer(before)]

    def inside(a: tuple[int, int, str]) -> bool:
        return any(
            b[2] != a[2] and b[0] <= a[0] and a[1] <= b[1] and b[1] - b[0] > a[1] - a[0]
            for b in spans
        )

    kept = [x for x in spans if not inside(x)]
    return ([e for _, e, k in kept if k == "leave"], [e for _, e, k in kept if k == "arrive"])


def _classify_times(turn: _Turn, ctx: ParseContext) -> None:
    for m in turn.mentions:
        if m.slot != "time":
            continue
        s_start = turn.sentences[turn.sentence_of(m.start)][0]
        before = turn.text[max(s_start, m.start - 45) : m.start]
        after = turn.text[m.end : m.end + 25]
        leave, arrive = _time_cues(before)
        slot = None
        if P.LEAVE_SUFFIX.match(after):
            slot = "leaveat"
        elif P.ARRIVE_SUFFIX.match(after):
            slot = "arriveby"
        elif leave or arrive:
            slot = "leaveat" if (max(leave, default=-1) > max(arrive, default=-1)) else "arriveby"
        m.candidates = (P.RESTAURANT, P.TRAIN)
        if slot is None and (P.RESTAURANT, "time") in ctx.expected:
            m.domain = P.RESTAURANT  # no leave/arrive cue, and the system asked for a table time
            continue
        domain = _assign_domain(turn, m, ctx)
        close_cue = max([*leave, *arrive], default=-100) >= len(before) - 12
        restaurant_here = domain == P.RESTAURANT and not (
            slot
            and _train_context(turn, ctx)
            and (
                close_cue
                or not re.search(
                    r"\b(?:table|book|reserv|dine|"
                    r"dinner|lunch|eat)",
                    before,
                )
            )
        )
        if restaurant_here:
            m.domain = P.RESTAURANT
            continue
        if slot is None:
            if domain != P.TRAIN and not _train_context(turn, ctx):
                m.domain = domain
                continue
            exp = [s for d, s in ctx.expected if d == P.TRAIN and s in ("leaveat", "arriveby")]
            slot = exp[0] if exp else "leaveat"
        if domain == P.HOTEL:
            continue
        m.slot, m.domain = slot, P.TRAIN


def _classify_stations(turn: _Turn, ctx: ParseContext) -> None:
    stations = [m for m in turn.mentions if m.slot == "station"]
    train_here = _train_context(turn, ctx) or any(s.value != "cambridge" for s in stations)
    assigned: list[_Mention] = []
    for i, m in enumerate(stations):
        if not train_here:
            m.slot = "drop"
            continue
        before = turn.text[max(0, m.start - 40) : m.start]
        after = turn.text[m.end : m.end + 30]
        nxt = stations[i + 1] if i + 1 < len(stations) else None
        if P.DEPARTURE_BEFORE.search(before):
            m.slot = "departure"
        elif P.DESTINATION_BEFORE.search(before):
            m.slot = "destination"
        elif nxt is not None and re.match(
            r"^\s*(?:to|into|-|and arriv\w* (?:in|at))\s*$", turn.text[m.end : nxt.start]
        ):
            m.slot = "departure"
        elif re.match(r"^\s*(?:bound|as (?:my|the) destination)", after):
            m.slot = "destination"
        else:
            exp = [s for d, s in ctx.expected if s in ("departure", "destination")]
            if exp:
                m.slot = exp[0]
            elif any(a.slot == "departure" for a in assigned):
                m.slot = "destination"
            elif any(a.slot == "destination" for a in assigned):
                m.slot = "departure"
            else:
                known = ctx.known.get(P.TRAIN, {})
                if "departure" in known and "destination" not in known:
                    m.slot = "destination"
                elif "destination" in known and "departure" not in known:
                    m.slot = "departure"
                else:
                    m.slot = "destination" if m.value == "cambridge" else "departure"
        m.domain = P.TRAIN
        assigned.append(m)
    # "from A to B" where both were read as the same slot
    deps = [m for m in assigned if m.slot == "departure"]
    dests = [m for m in assigned if m.slot == "destination"]
    if len(deps) == 2 and not dests:
        deps[1].slot = "destination"
    elif len(dests) == 2 and not deps:
        dests[0].slot = "departure"


# ---------------------------------------------------------------------------------------------
# 5. negation, dontcare, relative references, requests, acts


_FALLBACK = re.compile(
    r"\b(?:if (?:(?:that|this|it|those|these|there|the \w+|they|\w+ (?:nights?|days?|people))\s+)?"
    r"(?:\w+\s+){0,3}?(?:is not|isnt|are not|arent|isnt|not available|unavailable|fails?|"
    r"doesnt work|does not work|cant|cannot|can not|is booked|is full|no availability|is taken|"
    r"booked up|fully booked|not possible|impossible|is no|are no|no (?:room|space|tables?|"
    r"seats?))|if not|otherwise|failing that|if that fails|or else)\b[^.?!;]*"
)


def _drop_fallbacks(turn: _Turn) -> None:
    """ "Moderate please; if that isn't available, expensive": the first value is the request, the
    one in the fallback clause is kept aside (``TurnParse.fallbacks``) for when it fails."""
    for clause in _FALLBACK.finditer(turn.text):
        before = {m.slot for m in turn.mentions if m.start < clause.start()}
        inside = [
            m for m in turn.mentions
            if clause.start() <= m.start < clause.end() and m.slot in before
        ]  # fmt: skip
        turn.fallbacks += inside
        turn.mentions = [m for m in turn.mentions if not any(m is x for x in inside)]


def _drop_negated(turn: _Turn) -> None:
    keep = []
    for m in turn.mentions:
        if m.slot in ("internet", "parking") or m.value == "dontcare":
            keep.append(m)
            continue
        if _negated(turn, m.start):
            continue
        keep.append(m)
    turn.mentions = keep


def _dontcare(turn: _Turn, ctx: ParseContext) -> None:
    covered: set[str] = set()
    for slot, words in P.SLOT_WORDS.items():
        for template in P.DONTCARE_SLOT_PATTERNS:
            pat = template.replace("{w}", f"(?:{words})")
            for m in re.finditer(pat, turn.text):
                if slot == "day":
                    continue
                if slot in ("internet", "parking"):
                    turn.mentions = [
                        x
                        for x in turn.mentions
                        if not (x.slot == slot and m.start() <= x.start < m.end())
                    ]
                turn.mentions.append(_Mention(slot, "dontcare", m.start(), m.end()))
                covered.add(slot)
    if ANY_WHERE.search(turn.text) and "area" not in covered:
        m0 = ANY_WHERE.search(turn.text)
        assert m0 is not None
        turn.mentions.append(_Mention("area", "dontcare", m0.start(), m0.end()))
        covered.add("area")
    generic = P.GENERIC_DONTCARE.search(turn.text)
    if generic:
        given = {m.slot for m in turn.mentions}
        for domain, slot in ctx.expected:
            if slot in P.INFORMABLE_FOR_DONTCARE and slot not in given and slot not in covered:
                turn.mentions.append(
                    _Mention(slot, "dontcare", generic.start(), generic.end(), domain)
                )


ANY_WHERE = P.ANYWHERE

_SAME = {
    "day": re.compile(
        r"\b(?:same (?:day|date|night)|that (?:same )?day|the day of (?:my|the) "
        r"(?:arrival|check ?in|stay|reservation|booking))\b"
    ),
    "people": re.compile(
        r"\b(?:same (?:number of (?:people|persons|guests|tickets)|amount of (?:people|guests)|"
        r"group(?: of people)?|party(?: size)?|people|number|amount|size|(?:\w+ )?group|"
        r"(?:\w+ )?people)|all of us|everyone|everybody|the whole (?:group|party)|all "
        r"(?:\w+ )?of them|same \w+ people|same \w+ guests)\b"
    ),
    "area": re.compile(
        r"\b(?:same (?:area|part of town|location|side of town|neighbou?rhood|region)|"
        r"(?:near|close to|nearby|next to|around|by) (?:the|my|our) (?:restaurant|hotel|"
        r"guest ?house)|in the same area)\b"
    ),
    "pricerange": re.compile(r"\bsame (?:price ?range|price|pricerange|price point)\b"),
}
_SOURCE = re.compile(
    r"\b(?:as|with|at|for|of) (?:the|my|our) (restaurant|hotel|guest ?house|"
    r"train|dinner|stay|table|room)"
)


def _with_turn_values(turn: _Turn, ctx: ParseContext) -> ParseContext:
    """The context plus the values this turn already gave (for "the same day" later on)."""
    known = {d: dict(v) for d, v in ctx.known.items()}
    for m in sorted(turn.mentions, key=lambda x: x.start):
        if m.value in ("", "dontcare") or m.slot not in P.SLOT_DOMAINS:
            continue
        domain = m.domain or _assign_domain(turn, m, ctx)
        if domain is not None:
            known.setdefault(domain, {})[m.slot] = m.value
    return ParseContext(active_domain=ctx.active_domain, expected=ctx.expected, known=known,
                        closed=ctx.closed)  # fmt: skip


# "anything cheaper?", "too expensive": another venue, one price range down (or up). "Which one
# is cheaper?" compares the options on offer and is not read.
_ANOTHER = r"\b(?:anything|something|somewhere|anywhere|any|some|a|an|one|options?|ones?)\s+"
_CHEAPER = re.compile(
    rf"{_ANOTHER}(?:a bit |a little |slightly |much )?(?:cheaper|less expensive|more affordable|"
    r"lower[- ]priced|less pricey|less costly|more reasonably priced|more budget[- ]friendly)\b|"
    r"\btoo (?:expensive|pricey|pricy|costly|posh|upscale|fancy)\b|\bout of (?:my|our) (?:budget|"
    r"price range)\b"
)
_DEARER = re.compile(
    rf"{_ANOTHER}(?:a bit |a little |slightly |much )?(?:more expensive|pricier|more upscale|more "
    r"upmarket|higher[- ]end|more luxurious|posher|fancier|higher[- ]priced|nicer)\b|"
    r"\btoo (?:cheap|basic)\b"
)
_PRICE_STEPS = ("cheap", "moderate", "expensive")


def _relative_price(turn: _Turn, ctx: ParseContext, vocab: Vocabulary) -> None:
    """ "Anything cheaper?": one price range below the venue on offer (or above, "pricier")."""
    if vocab.unrealistic:
        return
    for pat, step in ((_CHEAPER, -1), (_DEARER, 1)):
        for m in pat.finditer(turn.text):
            turn.mentions = [
                x for x in turn.mentions
                if not (x.slot == "pricerange" and m.start() <= x.start < m.end())
            ]  # fmt: skip
            mention = _Mention("pricerange", "", m.start(), m.end())
            domain = _assign_domain(turn, mention, ctx)
            current = ctx.known.get(domain or "", {}).get("pricerange")
            if domain is None or current not in _PRICE_STEPS:
                continue
            index = min(max(_PRICE_STEPS.index(current) + step, 0), len(_PRICE_STEPS) - 1)
            mention.value, mention.domain = _PRICE_STEPS[index], domain
            turn.mentions.append(mention)


def _relative(turn: _Turn, ctx: ParseContext) -> None:
    for slot, pat in _SAME.items():
        for m in pat.finditer(turn.text):
            src_match = _SOURCE.search(turn.text[m.end() : m.end() + 30])
            source = None
            if src_match:
                word = src_match.group(1)
                source = {"guesthouse": P.HOTEL, "guest house": P.HOTEL, "stay": P.HOTEL,
                          "room": P.HOTEL, "dinner": P.RESTAURANT, "table": P.RESTAURANT}.get(
                    word, word)  # fmt: skip
            mention = _Mention(slot, "", m.start(), m.end())
            mention.candidates = tuple(d for d in P.SLOT_DOMAINS[slot] if d != source)
            target = _assign_domain(turn, mention, ctx)
            order = [source] if source else []
            order += [d for d in P.DOMAINS if d not in order]
            value = next(
                (
                    ctx.known.get(d, {}).get(slot)
                    for d in order
                    if d and d != target and ctx.known.get(d, {}).get(slot)
                ),
                None,
            )
            if target is not None and value is None:
                # "the same group" before any group size is known: remember the link
                turn.links.append((target, slot, source))
            if value is None or target is None:
                continue
            mention.value, mention.domain = value, target
            turn.mentions.append(mention)


def _requests(turn: _Turn, ctx: ParseContext) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    indifferent = [(x.start, x.end) for x in turn.mentions if x.value == "dontcare"]
    for attr, pat in P.REQUESTS.items():
        for m in pat.finditer(turn.text):
            if any(s <= m.start() < e for s, e in indifferent):
                continue  # "the departure time doesn't matter" asks for nothing
            if attr == "price" and P.PRICE_NOT_REQUEST.search(
                turn.text[max(0, m.start() - 15) : m.start()]
            ):
                continue
            mention = _Mention(attr, "?", m.start(), m.end())
            mention.candidates = P.REQUEST_DOMAINS[attr]
            domain = _assign_domain(turn, mention, ctx)
            if domain is None:
                continue
            if attr == "price" and domain != P.TRAIN:
                continue
            lst = out.setdefault(domain, [])
            if attr not in lst:
                lst.append(attr)
    return out


def _acts(turn: _Turn, requests: dict[str, list[str]]) -> list[str]:
    acts = [name for name, pat in P.ACTS.items() if pat.search(turn.text)]
    if "book" in acts and P.NOT_BOOK.search(turn.text):
        acts.remove("book")
    if any("reference" in v for v in requests.values()) and "book" not in acts:
        acts.append("book")
    return acts


# ---------------------------------------------------------------------------------------------


def parse_turn(raw: str, vocab: Vocabulary, ctx: ParseContext | None = None) -> TurnParse:
    """Read one user turn (see the module docstring)."""
    ctx = ctx or ParseContext()
    text = normalise_text(raw)
    turn = _Turn(raw=raw, text=text, cased=_cased(raw, text), masked=text,
                 sentences=_sentences(text))  # fmt: skip
    _vocab_mentions(turn, vocab)
    _fuzzy_names(turn, vocab)
    _time_mentions(turn, vocab)
    _stay_mentions(turn, vocab)
    _stars_mentions(turn, vocab)
    _people_mentions(turn, vocab)
    _bare_number(turn, vocab, ctx)
    _feature_mentions(turn, vocab)
    _hotel_type(turn, vocab)
    _domain_cues(turn)
    _classify_stations(turn, ctx)
    _classify_times(turn, ctx)
    _drop_fallbacks(turn)
    _drop_negated(turn)
    _dontcare(turn, ctx)
    _relative(turn, _with_turn_values(turn, ctx))
    _relative_price(turn, ctx, vocab)
    requests = _requests(turn, ctx)
    slots: dict[tuple[str, str], SlotValue] = {}
    assigned = {m.domain for m in turn.mentions if m.domain in P.DOMAINS}
    for m in sorted(turn.mentions, key=lambda x: x.start):
        if m.slot in ("drop", "station"):
            continue
        domain = _assign_domain(turn, m, ctx) if m.domain is None else m.domain
        if domain is None and len(assigned) == 1:
            domain = next(iter(assigned))  # "sunday after 14:00": the day of that train
        if domain is None or m.slot not in P.SLOT_DOMAINS or domain not in P.SLOT_DOMAINS[m.slot]:
            continue
        key = (domain, m.slot)
        if key in slots and (m.value == "dontcare") != (slots[key].value == "dontcare"):
            # a concrete value beats a vague "any", unless it was read from a loose cue
            if m.value == "dontcare" and not slots[key].weak:
                continue
            if m.value != "dontcare" and m.weak:
                continue
        slots[key] = SlotValue(domain=domain, slot=m.slot, value=m.value, weak=m.weak)
    fallbacks = []
    for m in turn.fallbacks:
        primary = next((v for (_, slot), v in slots.items() if slot == m.slot), None)
        if primary is not None and primary.value not in (m.value, "dontcare"):
            fallbacks.append(SlotValue(domain=primary.domain, slot=m.slot, value=m.value))
    domains: list[str] = []
    for _, d in turn.cues:
        if d not in domains:
            domains.append(d)
    for s in slots.values():
        if s.domain not in domains:
            domains.append(s.domain)
    return TurnParse(
        text=raw,
        domains=domains,
        slots=list(slots.values()),
        fallbacks=fallbacks,
        links=turn.links,
        requests=requests,
        acts=_acts(turn, requests),
    )


def system_asks(text: str, active_domain: str | None) -> list[tuple[str, str]]:
    """What a system utterance asks the user for, as (domain, slot) pairs.

    Only its questions count (sentences with a question mark or opening with a question word).
    Used to read corpus system turns; the rule system knows what it asked.
    """
    norm = normalise_text(text)
    cues = [(m.start(), d) for d, pat in P.DOMAIN_CUES.items() for m in pat.finditer(norm)]
    cue_domains = [d for _, d in sorted(cues)]
    domain = active_domain if active_domain in cue_domains or not cue_domains else cue_domains[0]
    out: list[tuple[str, str]] = []
    for start, end in _sentences(norm):
        sentence = norm[start:end]
        if "?" not in sentence and not (
            _QUESTION_START.match(sentence) or _REQUEST_PHRASE.search(sentence)
        ):
            continue
        for slot, pat in P.SYSTEM_ASKS.items():
            if not pat.search(sentence):
                continue
            dom = domain
            if slot in ("departure", "destination", "leaveat", "arriveby"):
                dom = P.TRAIN
            elif slot in ("stay", "stars", "type", "internet", "parking"):
                dom = P.HOTEL
            elif slot == "food":
                dom = P.RESTAURANT
            if slot == "time" and dom == P.TRAIN:
                continue
            if dom is None or dom not in P.SLOT_DOMAINS[slot] or (dom, slot) in out:
                continue
            out.append((dom, slot))
    return out


_REQUEST_PHRASE = re.compile(
    r"\b(?:need to know|let me know|tell me|please provide|i will need|i would need|i need "
    r"(?:the|your|a|to)|please specify|please confirm)\b"
)
_QUESTION_START = re.compile(
    r"^\W*(?:would|do|could|can|what|which|how|when|where|is|are|did|will|shall|may)\b"
)
