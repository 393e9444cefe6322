"""Text helpers for the rule system: normalisation, number words and clock times.

Everything here is pure and works on the *normalised* text produced by :func:`normalise_text`:
lower case, apostrophes removed (``don't`` -> ``dont``, ``king's`` -> ``kings``), ``&`` spelled
``and``, typographic quotes and dashes folded, whitespace collapsed.
"""

from __future__ import annotations

import re

NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "a single": 1, "single": 1, "a couple of": 2, "a couple": 2,
    "couple of": 2, "a pair of": 2, "a": 1, "an": 1,
}  # fmt: skip
# Number words as a regex alternation (longest first so "a couple of" wins over "a").
NUMBER_WORD_RE = "|".join(sorted((re.escape(w) for w in NUMBER_WORDS), key=len, reverse=True))
NUMBER_RE = rf"(?:\d+|{NUMBER_WORD_RE})"

_QUOTES = str.maketrans({"’": "'", "‘": "'", "`": "'", "´": "'", "“": '"', "”": '"', "–": "-",
                         "—": "-", "\u00a0": " "})  # fmt: skip


def normalise_text(text: str) -> str:
    """Lower-case, fold quotes/dashes, drop apostrophes, spell ``&`` as ``and``."""
    out = text.translate(_QUOTES).lower()
    out = out.replace("'", "")
    out = re.sub(r"\s*&\s*", " and ", out)
    out = re.sub(r"\bwi-?fi\b", "wifi", out)
    out = re.sub(r"\s+", " ", out)
    return out.strip()


def number_value(token: str) -> int | None:
    """``"3"`` -> 3, ``"three"`` -> 3, anything else -> None."""
    token = token.strip()
    if token.isdigit():
        return int(token)
    return NUMBER_WORDS.get(token)


# ---------------------------------------------------------------------------------------------
# Clock times

_HOUR_WORDS = {w: n for w, n in NUMBER_WORDS.items() if 1 <= n <= 12 and " " not in w}
_HOUR_WORDS.pop("a", None)
_HOUR_WORDS.pop("an", None)
_HOUR_WORDS.pop("single", None)
_HOUR_WORD_RE = "|".join(sorted(_HOUR_WORDS, key=len, reverse=True))
_MERIDIEM = r"(?:\s*(?P<mer>a\.?m\.?|p\.?m\.?)(?![a-z]))?"
_EVENING = r"(?:\s+(?P<part>in the (?:morning|afternoon|evening)|at night|tonight))?"

# The alternatives are tried in order; each yields named groups h, m and optionally mer/part.
TIME_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(
        rf"(?<![\d:.])(?P<h>[01]?\d|2[0-4])[:.](?P<m>[0-5]\d)(?![\d])(?:\s*hrs)?{_MERIDIEM}"
        rf"{_EVENING}"
    ),
    re.compile(r"(?<![\d:.£$])(?P<h>[01]\d|2[0-3])(?P<m>[0-5]\d)\s*(?:hrs|hours|h\b)"),
    re.compile(
        r"(?<![\d:.£$a-z])(?P<h>[01]\d|2[0-3])(?P<m>[0-5]\d)(?![\d.:])(?!\s*(?:pounds|gbp|"
        r"minutes|mins|people|nights))"
    ),
    re.compile(
        rf"(?<![\d:.])(?P<h>1[0-2]|0?[1-9])\s*(?P<mer>a\.?m\.?|p\.?m\.?)(?![a-z]){_EVENING}"
    ),
    re.compile(rf"(?<![\d:.])(?P<h>1[0-2]|[1-9])\s+oclock{_MERIDIEM}{_EVENING}"),
    re.compile(
        r"\b(?P<q>half|quarter) (?P<dir>past|to|after) (?P<h>\d{1,2}|"
        rf"{_HOUR_WORD_RE}){_MERIDIEM}{_EVENING}"
    ),
    re.compile(
        rf"\b(?P<h>{_HOUR_WORD_RE})(?:\s+(?P<mw>thirty|fifteen|forty[- ]five|"
        rf"oclock))?{_MERIDIEM}{_EVENING}(?=\W|$)"
    ),
    re.compile(r"\b(?P<word>noon|midday|lunchtime|midnight)\b"),
)


def _hour(token: str) -> int | None:
    if token.isdigit():
        return int(token)
    return _HOUR_WORDS.get(token)


def _apply_meridiem(hour: int, mer: str | None, part: str | None) -> int:
    pm = (mer is not None and mer.startswith("p")) or (
        part is not None and ("afternoon" in part or "evening" in part or "night" in part)
    )
    am = (mer is not None and mer.startswith("a")) or (part is not None and "morning" in part)
    if pm and hour < 12:
        return hour + 12
    if am and hour == 12:
        return 0
    return hour


def time_from_match(m: re.Match[str]) -> str | None:
    """The HH:MM value of a match of one of :data:`TIME_PATTERNS` (None if not a clock time)."""
    groups = m.groupdict()
    if groups.get("word"):
        return "00:00" if groups["word"] == "midnight" else "12:00"
    hour = _hour(groups["h"]) if groups.get("h") else None
    if hour is None:
        return None
    minute = 0
    if groups.get("m"):
        minute = int(groups["m"])
    elif groups.get("mw"):
        mw = groups["mw"]
        minute = {"thirty": 30, "fifteen": 15, "oclock": 0}.get(mw, 45)
    if groups.get("q"):
        delta = 30 if groups["q"] == "half" else 15
        if groups.get("dir") == "to":
            hour, minute = hour - 1, 60 - delta
        else:
            minute = delta
    word_hour = groups.get("h", "").isalpha()
    has_marker = bool(groups.get("mer") or groups.get("part"))
    if word_hour and not (has_marker or groups.get("mw") or groups.get("q")):
        return None  # a bare number word ("at seven") is too ambiguous on its own
    hour = _apply_meridiem(hour, groups.get("mer"), groups.get("part"))
    if hour == 24:
        hour = 0
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    return f"{hour:02d}:{minute:02d}"


def find_times(text: str) -> list[tuple[int, int, str]]:
    """All clock times in normalised text as (start, end, "HH:MM"), without overlaps."""
    found: list[tuple[int, int, str]] = []
    taken: list[tuple[int, int]] = []
    for pattern in TIME_PATTERNS:
        for m in pattern.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            value = time_from_match(m)
            if value is None:
                continue
            found.append((m.start(), m.end(), value))
            taken.append((m.start(), m.end()))
    return sorted(found)


def normalise_time(value: str) -> str | None:
    """Canonical HH:MM for a free-form time value (``"9:15"``, ``"1300hrs"``, ``"after 10"``)."""
    text = normalise_text(value)
    times = find_times(text)
    if times:
        return times[0][2]
    m = re.search(r"\b(\d{1,2})\b", text)
    if m and int(m.group(1)) <= 24:
        return f"{int(m.group(1)) % 24:02d}:00"
    return None


def shift_pm(value: str) -> str:
    """``"07:30"`` -> ``"19:30"`` (used for meal times given without am/pm)."""
    hour, minute = value.split(":")
    h = int(hour)
    if 1 <= h <= 9:
        h += 12
    return f"{h:02d}:{minute}"
