"""Our reimplementation of the CraigslistBargain rule-based act parser's documented rules.

The lineage (stanfordnlp/cocoa, ``craigslistbargain/model/parser.py`` ``classify_intent`` and
``cocoa/model/parser.py``) tags an utterance with a few surface features -- a question (ends
in ``?`` or opens with a question word), a greeting word, a negation, vague-price phrases
("come down", "lowest", "go lower", "too high"), fixed agreement phrases, the prices it names
-- and maps them to an act in a fixed order. We map the same features onto the 11 coarse acts
of the labelled file, in this order:

1. an agreement phrase, or naming the seller's last price -> ``agree``;
2. a price, with no price named earlier in the dialogue -> ``propose``; otherwise ``counter``;
3. a vague-price phrase -> ``counter-noprice``;
4. a greeting word in the buyer's first turn, or a greeting with nothing else -> ``greet``;
5. a question: opening with is/are/do/does/can/... and short -> ``confirm``; else ``inquire``;
6. a negation: right after a seller's price -> ``disagree``; else ``deny``;
7. opening with yes/yeah/sure/ok/great -> ``affirm``;
8. anything else -> ``inform``.

It reads only the public dialogue and the listing price. How far it reproduces the silver
labels shows how far those labels are a regex.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

GREETING = {"hi", "hello", "hey", "hiya", "howdy"}
QUESTION = {"what", "when", "where", "why", "which", "who", "whose", "how"}
YES_NO = {"do", "does", "are", "is", "would", "will", "can", "could", "did", "have", "has"}
NEGATIVE = {"no", "not", "n't", "nope", "cannot", "can't", "won't", "don't"}
AFFIRM = {"yes", "yeah", "yep", "sure", "ok", "okay", "great", "cool", "awesome", "perfect"}
VAGUE_PRICE = (
    r"come down",
    r"(highest|lowest)",
    r"go (lower|higher)",
    r"too (high|low)",
    r"better price",
    r"negotiable",
    r"flexible",
    r"discount",
    r"best (price|offer)",
    r"lower",
)
GREETING_PHRASES = (r"how are you", r"interested in")
AGREEMENT = (
    r"^that works[.!]*$",
    r"^great[.!]*$",
    r"^(ok|okay)[.!]*$",
    r"^great, thanks[.!]*$",
    r"^deal[.!]*$",
    r"^[\w ]*have a deal[\w ]*[.!]*$",
    r"^i can do that[.]*$",
    r"\b(it'?s a deal|you have a deal|sounds good|works for me|i'?ll take it|deal\b)",
)
_PRICE = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)\s?(k\b)?|\b(\d[\d,]*(?:\.\d+)?)\s?(k\b)?")
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?|n't|\?")


def prices(text: str, listing: float | None) -> list[float]:
    """The prices an utterance names: ``$N`` always; a bare number when it lies within a
    tenth and twice the listing price (so years, sizes and counts are mostly skipped)."""
    out = []
    for m in _PRICE.finditer(text.lower()):
        dollar = m.group(1) is not None
        digits = (m.group(1) or m.group(3) or "").replace(",", "")
        try:
            value = float(digits)
        except ValueError:
            continue
        if m.group(2) or m.group(4):
            value *= 1000
        if dollar or (listing and 0.1 * listing <= value <= 2 * listing):
            out.append(value)
    return out


def classify(
    history: Sequence[tuple[str, str]], text: str, listing: float | None, buyer: str = "Buyer"
) -> str:
    """The act of ``text`` (a buyer turn) after ``history`` ((speaker, text) pairs)."""
    lower = text.lower().strip()
    words = _WORD.findall(lower)
    named = prices(text, listing)
    earlier = [(s, prices(t, listing)) for s, t in history]
    seller_prices = [p for s, ps in earlier if s != buyer for p in ps]
    any_earlier = any(ps for _, ps in earlier)
    if any(re.search(p, lower) for p in AGREEMENT) and not (
        named and (not seller_prices or named[-1] != seller_prices[-1])
    ):
        return "agree"
    if named:
        if seller_prices and named[-1] == seller_prices[-1]:
            return "agree"
        return "counter" if any_earlier else "propose"
    if any(re.search(p, lower) for p in VAGUE_PRICE):
        return "counter-noprice"
    first_turn = not any(s == buyer for s, _ in history)
    greeting = bool(GREETING & set(words)) or any(re.search(p, lower) for p in GREETING_PHRASES)
    question = bool(words) and (words[-1] == "?" or words[0] in QUESTION or words[0] in YES_NO)
    if greeting and (first_turn or not question):
        return "greet"
    if question:
        return "confirm" if words[0] in YES_NO and len(words) <= 8 else "inquire"
    if NEGATIVE & set(words) or lower.startswith("no"):
        last_seller = next((ps for s, ps in reversed(earlier) if s != buyer), [])
        return "disagree" if last_seller else "deny"
    if words and words[0] in AFFIRM:
        return "affirm"
    return "inform"


__all__ = ["classify", "prices"]
