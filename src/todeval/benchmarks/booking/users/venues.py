"""What the system has said about each venue, so an offer or a booking can be checked in full.

A booking confirmation often names only the venue ("I have booked a and b guest house"); its
price range or type were said when it was offered, turns earlier. The user keeps, per venue of
the domain being discussed (a known venue name, or a train id), the sentences that described
it. Sentences that report a failure are left out: they describe the system's search ("nothing
in the west without free parking"), not the venue.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from todeval.benchmarks.booking.users.reading import is_failure, sentences

_TRAIN_ID = re.compile(r"\btr\d{4}\b")


class VenueNotes:
    """Sentences the system said about each venue of one domain."""

    def __init__(self, names: Iterable[str]) -> None:
        self._names = sorted({n for n in names if n}, key=len, reverse=True)
        self._notes: dict[str, list[str]] = {}
        self.last: str | None = None
        """The venue the latest describing message was about (None when unclear)."""

    def venues(self, text: str) -> list[str]:
        """Venues the text names (known names and train ids), in order of first mention."""
        low = text.lower()
        found: list[tuple[int, str]] = []
        for name in self._names:
            if name not in low:
                continue
            match = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", low)
            if match:
                found.append((match.start(), name))
                # a shorter name inside this one is not a second venue
                low = low[: match.start()] + " " * len(name) + low[match.end() :]
        found += [(m.start(), m.group(0)) for m in _TRAIN_ID.finditer(low)]
        return [name for _, name in sorted(found)]

    def evidence(self, text: str) -> tuple[str, str]:
        """What to check an offer or booking in ``text`` against: the message's sentences that
        do not report a failure, and what was said earlier about the one venue it names (or,
        when it names none, about the venue discussed last)."""
        own = [s for s in sentences(text) if not is_failure(s)]
        named = set(self.venues(" ".join(own)))
        key = self.last if not named else next(iter(named)) if len(named) == 1 else None
        earlier = self._notes.get(key, []) if key is not None else []
        return " ".join(own), " ".join(earlier)

    def remember(self, text: str) -> None:
        """File the message's describing sentences under the venue they are about (a sentence
        without a name belongs to the venue named last in the same message)."""
        current: str | None = None
        described: set[str] = set()
        for sentence in sentences(text):
            named = set(self.venues(sentence))
            if len(named) > 1:
                current = None
                continue
            if named:
                current = next(iter(named))
            if current is None or is_failure(sentence):
                continue
            self._notes.setdefault(current, []).append(sentence)
            described.add(current)
        if described:
            self.last = next(iter(described)) if len(described) == 1 else None
