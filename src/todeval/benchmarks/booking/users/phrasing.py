"""Wording for the agenda user: several paraphrases per slot and per dialogue act.

Every choice is drawn from the caller's ``random.Random`` so one seed gives one wording. Slot
values are said verbatim (the unrealistic set's "7B people" or "3^8 stars" are not corrected);
a few well-known MultiWOZ values get more natural phrasings ("free parking", "moderately
priced", "in the city centre").

A *fragment* is a phrase that can follow a noun: "in the north", "with free parking", "leaving
after 10:15", "for 2 people". Sentence templates glue fragments together.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from todeval.benchmarks.booking.domains.language import NUMBER_WORDS

# ---------------------------------------------------------------------------------------------
# Fragments per slot: general templates, and special ones for particular values.

_GENERAL: dict[str, tuple[str, ...]] = {
    "area": ("in the {v}", "located in the {v}"),
    "pricerange": ("in the {v} price range", "with a {v} price range"),
    "food": ("serving {v} food", "that serves {v} food", "with {v} food"),
    "name": ("called {v}", "named {v}", "by the name of {v}"),
    "type": ("that is a {v}", "of the {v} type"),
    "stars": ("with {v} stars", "rated {v} stars", "with a star rating of {v}"),
    "parking": ("with {v} parking", "where the parking is {v}"),
    "internet": ("with {v} internet", "where the internet is {v}"),
    "departure": ("from {v}", "leaving from {v}", "departing from {v}"),
    "destination": ("to {v}", "going to {v}", "heading to {v}"),
    "leaveat": (
        "leaving after {v}",
        "that leaves after {v}",
        "departing after {v}",
        "leaving no earlier than {v}",
    ),
    "arriveby": (
        "arriving by {v}",
        "that arrives by {v}",
        "getting there by {v}",
        "arriving no later than {v}",
    ),
    "trainid": ("with train id {v}",),
    # booking slots
    "people": ("for {v} people", "for a party of {v}", "for a group of {v}"),
    "time": ("at {v}", "for {v}"),
    "stay": ("for {v} nights", "for a stay of {v} nights"),
}
# Day: informable for trains, a booking slot elsewhere.
_DAY = {
    "train": ("on {v}", "for {v}", "travelling on {v}"),
    "hotel": ("on {v}", "starting on {v}", "from {v}"),
    "restaurant": ("on {v}", "for {v}"),
}
_SPECIAL: dict[tuple[str, str], tuple[str, ...]] = {
    ("area", "centre"): ("in the centre", "in the city centre", "in the centre of town"),
    ("pricerange", "cheap"): ("that is cheap", "in the cheap price range", "on the cheap side"),
    ("pricerange", "moderate"): (
        "that is moderately priced",
        "in the moderate price range",
        "with moderate prices",
    ),
    ("pricerange", "expensive"): (
        "that is expensive",
        "in the expensive price range",
        "on the expensive side",
    ),
    ("type", "guesthouse"): ("that is a guesthouse", "of the guesthouse type"),
    ("type", "hotel"): (
        "that is a hotel rather than a guesthouse",
        "of the hotel type",
        "that is a proper hotel, not a guesthouse",
    ),
    ("parking", "yes"): ("with free parking", "that has free parking", "with parking included"),
    ("parking", "no"): ("without free parking", "that does not offer free parking"),
    ("internet", "yes"): ("with free wifi", "with free internet", "that has internet access"),
    ("internet", "no"): ("without internet", "with no internet access"),
    ("people", "1"): ("for 1 person", "for just 1 person"),
    ("stay", "1"): ("for 1 night", "for a stay of 1 night"),
    ("stars", "1"): ("with 1 star", "rated 1 star", "with a star rating of 1"),
}
_COMPASS = ("north", "south", "east", "west")
_ARTICLE = re.compile(r"\b([Aa]) (?=[aeiouAEIOU])")
_DIGITS = "0123456789"


def fragment(
    domain: str, slot: str, value: str, rng: random.Random, surface: str | None = None
) -> str:
    """One phrase stating ``slot = value`` for ``domain``.

    ``value`` is the normalised value (it selects special phrasings); ``surface`` is how it is
    said (verbatim, e.g. with the goal message's capitals), by default ``value`` itself.
    """
    options: Sequence[str]
    if (slot, value) in _SPECIAL:
        options = _SPECIAL[(slot, value)]
    elif slot == "area" and value in _COMPASS:
        options = ("in the {v}", "in the {v} of town", "on the {v} side of town")
    elif slot == "stars" and value and all(c in _DIGITS for c in value):
        options = (*_GENERAL["stars"], "with a {v}-star rating")
    elif slot == "food" and value.endswith("food"):
        options = ("serving {v}", "that serves {v}")
    elif slot == "day":
        options = _DAY.get(domain, _DAY["restaurant"])
    else:
        options = _GENERAL.get(slot, ("with {s} {v}",))
    template = rng.choice(list(options))
    text = template.format(v=value if surface is None else surface, s=slot)
    return _ARTICLE.sub(r"\1n ", text)


def people_fragment(value: str, same_group: bool, rng: random.Random) -> str:
    """``for N people``; ``same_group`` adds "the same group of" (train after another booking)."""
    if same_group:
        noun = "person" if value == "1" else "people"
        return rng.choice([f"for the same group of {value} {noun}", f"for the same {value} {noun}"])
    return fragment("train", "people", value, rng)


def join(parts: Sequence[str], conjunction: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    items = [p for p in parts if p]
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} {conjunction} {items[-1]}"


def capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


# ---------------------------------------------------------------------------------------------
# Labels (for "I don't mind about the ...", "What is its ...?")

_LABELS: dict[str, tuple[str, ...]] = {
    "area": ("area", "part of town"),
    "pricerange": ("price range", "price"),
    "food": ("type of food", "cuisine"),
    "type": ("type of place", "kind of accommodation"),
    "stars": ("star rating", "number of stars"),
    "parking": ("parking",),
    "internet": ("internet", "wifi"),
    "day": ("day",),
    "time": ("time",),
    "people": ("number of people",),
    "stay": ("length of stay",),
    "leaveat": ("departure time", "time it leaves"),
    "arriveby": ("arrival time", "time it arrives"),
    "departure": ("departure station",),
    "destination": ("destination",),
    # requested attributes
    "phone": ("phone number", "telephone number"),
    "postcode": ("postcode", "post code"),
    "address": ("address",),
    "price": ("price", "ticket price"),
    "duration": ("travel time", "journey duration"),
    "trainid": ("train id", "train number"),
    "reference": ("reference number",),
}


def label(slot: str, rng: random.Random) -> str:
    return rng.choice(list(_LABELS.get(slot, (slot,))))


# ---------------------------------------------------------------------------------------------
# Dialogue acts

NOUNS: dict[str, tuple[str, ...]] = {
    "restaurant": ("a restaurant", "a place to eat", "somewhere to eat", "a place to dine"),
    "hotel": ("a place to stay", "a hotel", "somewhere to stay", "accommodation"),
    "train": ("a train", "a train ticket", "train tickets"),
}

ACTS: dict[str, tuple[str, ...]] = {
    "open": (
        "Hi, I'm looking for {what}.",
        "Hello! I need {what}.",
        "Hi there. Can you help me find {what}?",
        "I'd like to find {what}, please.",
        "Good day. I am looking for {what}.",
    ),
    "next_domain": (
        "Thank you! I also need {what}.",
        "Great, thanks. Now I'm looking for {what}.",
        "Perfect. Next, I need {what}.",
        "Thanks a lot. Can you also help me find {what}?",
    ),
    "inform": (
        "I need one {frags}.",
        "Also, I'd like one {frags}.",
        "Ideally something {frags}.",
        "Oh, and it should be one {frags}.",
        "I'm after one {frags}, please.",
    ),
    "answer": ("{Frags}, please.", "{Frags}.", "Oh, {frags}.", "Sure: {frags}."),
    "dontcare": (
        "I don't mind about the {label}.",
        "Any {label} is fine.",
        "I have no preference for the {label}.",
        "The {label} doesn't matter to me.",
    ),
    "dontcare_name": (
        "I don't have a particular one in mind, you can choose.",
        "Any of them is fine, please pick one for me.",
        "I don't mind which one.",
    ),
    "confirm": (
        "That sounds good.",
        "Perfect, that works for me.",
        "Great, that one is fine.",
        "Yes, that suits me.",
        "Sounds great.",
    ),
    "yes": ("Yes, that's right.", "Yes, correct.", "That's correct."),
    "reject": (
        "Hmm, that's not what I need, {need}. Do you have another?",
        "That doesn't quite fit. {Need}. Is there anything else?",
        "Sorry, that won't work for me. {Need}. Could you find another?",
    ),
    "need_venue": ("I need one {frags}", "I want one {frags}", "it should be one {frags}"),
    "need_booking": ("the booking should be {frags}", "I need the booking {frags}"),
    "rebook": (
        "Hmm, that's not what I asked for. {Need}. Could you change the booking?",
        "Sorry, that booking doesn't fit, {need}. Can you book another instead?",
        "Wait, that's wrong for me. {Need}. Please change the booking.",
    ),
    "rebook_details": (
        "Hmm, that's not quite right. {Need}. Could you change the booking?",
        "Sorry, the booking isn't right, {need}. Can you correct it, please?",
        "Wait, {need}. Please change the booking.",
    ),
    "keep": (
        "Alright, I'll keep the booking you made then.",
        "Okay, never mind, I'll keep that booking.",
        "Fine, let's keep that booking.",
    ),
    "misunderstanding": (
        "I think there's a misunderstanding.",
        "Sorry, something got mixed up there.",
        "Hmm, that's not quite what I asked for.",
    ),
    "no_constraint": (
        "I never asked for a particular {label}, any {label} is fine.",
        "I have no requirement on the {label} at all.",
        "The {label} doesn't matter to me, I didn't ask for any.",
    ),
    "clarify": (
        "To be clear, I'm looking for {what}.",
        "All I need is {what}.",
        "What I want is {what}.",
    ),
    "book": (
        "Please book it {frags}.",
        "Could you book it {frags}?",
        "I'd like to make a booking {frags}.",
        "Can you reserve it {frags}, please?",
    ),
    "book_train": (
        "Please book tickets {frags}.",
        "Could you book seats {frags}?",
        "I'd like tickets {frags}, please.",
        "Can you book it {frags}?",
    ),
    "book_again": (
        "Could you please go ahead and book it {frags}?",
        "I'd still like to book it {frags}, please.",
        "Can you make the booking {frags}?",
    ),
    "go_ahead": (
        "Please go ahead and book it.",
        "Yes, please make the booking.",
        "That's all correct, please book it.",
    ),
    "request": (
        "Could you also tell me the {attrs}?",
        "What is the {attrs}, please?",
        "Can I have the {attrs} as well?",
        "I'd also like to know the {attrs}.",
    ),
    "switch_info": (
        "Oh, that's a shame. How about one {frags} instead?",
        "In that case, how about one {frags} instead?",
        "Okay, then could you try one {frags} instead?",
        "No problem. What about one {frags} instead?",
    ),
    "switch_book": (
        "That's a pity. How about {frags} instead?",
        "Then could you try {frags} instead?",
        "In that case, can you book it {frags} instead?",
    ),
    "restate": (
        "Sorry, could you check again? I'm looking for {what}.",
        "I still need {what}. Can you find one?",
        "Let me repeat: I want {what}.",
    ),
    "ask_reference": (
        "Great. What is the reference number?",
        "Thanks! Could you give me the booking reference, please?",
        "Could I have the reference number for that booking?",
    ),
    "thanks": ("Thank you!", "Great, thanks.", "Wonderful, thank you."),
    "give_up": (
        "I'm sorry, this doesn't seem to be working. I'll try elsewhere, thank you anyway.",
        "Never mind, I'll sort it out another way. Thanks for your time.",
        "Let's leave it there, I'll book it myself later. Thank you.",
    ),
}


def say(act: str, rng: random.Random, **slots: str) -> str:
    """One sentence for ``act``; ``{Frags}`` is ``frags`` capitalised."""
    template = rng.choice(list(ACTS[act]))
    if "frags" in slots:
        slots["Frags"] = capitalise(slots["frags"])
    if "need" in slots:
        slots["Need"] = capitalise(slots["need"])
    return template.format(**slots)


def noun(domain: str, rng: random.Random, hotel_type: str | None = None) -> str:
    """A way to name what the user wants; "a hotel" only when the user wants that type (a
    system may read it as a constraint, so a user with no type in mind avoids it)."""
    options = list(NOUNS[domain])
    if domain == "hotel" and hotel_type != "hotel":
        options.remove("a hotel")
    return rng.choice(options)


# ---------------------------------------------------------------------------------------------
# Natural wording (issue 41): values said the way people say them, so that the schema's string
# usually does not appear and a system that copies schema values out of the user's words
# (a parrot) cannot book. The rule system's vocabulary (systems/vocab.py) and patterns
# (systems/nlu.py, systems/text.py) read every phrasing below. Values this table does not know
# (the synthetic and unrealistic sets' own values, names, days, most foods) are said as
# :func:`fragment` says them.

_NATURAL: dict[tuple[str, str], tuple[str, ...]] = {
    ("area", "centre"): (
        "somewhere central",
        "in the middle of town",
        "in the heart of town",
        "that is centrally located",
        "near the town center",
    ),
    ("pricerange", "cheap"): (
        "that is inexpensive",
        "that is affordable",
        "at a budget price",
        "at a low price",
        "that is not too expensive",
    ),
    ("pricerange", "moderate"): (
        "that is reasonably priced",
        "that is mid-range",
        "that is mid-priced",
    ),
    ("pricerange", "expensive"): (
        "that is pricey",
        "that is upmarket",
        "that is high-end",
        "on the upscale side",
        "that is posh",
    ),
    ("type", "guesthouse"): (
        "that is a guest house",
        "that is a bed and breakfast",
        "that is a b and b",
    ),
    ("type", "hotel"): (
        "that is a proper hotel rather than a guest house",
        "that is not a guest house but a proper hotel",
        "that is a real hotel, not a b and b",
    ),
    ("parking", "yes"): (
        "somewhere I can park",
        "with a place to park",
        "with free parking",
        "with parking included",
    ),
    ("parking", "no"): ("without free parking", "that does not offer free parking"),
    ("internet", "yes"): ("with wifi", "with free wifi", "with wireless internet"),
    ("internet", "no"): ("without internet", "with no wifi"),
}
_COMPASS_NATURAL = (
    "in the {d}ern part of town",
    "on the {d}side of town",
    "somewhere in the {d}ern part of the city",
    "in the {d}ern area",
)
_FOOD_NATURAL: dict[str, tuple[str, ...]] = {
    "seafood": ("sea food", "fish"),
    "gastropub": ("gastro pub", "pub food"),
    "asian oriental": ("oriental", "asian"),
    "panasian": ("pan asian",),
    "vegetarian": ("veggie",),
    "barbeque": ("barbecue", "bbq"),
}
_NUMBER_WORDS = NUMBER_WORDS  # the pack user's number words (domains/language.py)
_CLOCK = re.compile(r"([01]\d|2[0-3]):([0-5]\d)")


def number_word(value: str) -> str | None:
    """A whole number 1-20 in words ("8" -> "eight"); None for anything else ("7b", "21", and
    "0": nobody books for "a party of zero", the unrealistic set's value is said as it is)."""
    if not (value.isdigit() and 0 < int(value) < len(_NUMBER_WORDS) and value[0] != "0"):
        return None
    return _NUMBER_WORDS[int(value)]


def spoken_time(value: str, rng: random.Random) -> str | None:
    """``HH:MM`` as a person says it, never as ``HH:MM`` on a 24-hour clock: "half past three
    in the afternoon", "quarter to eight in the evening", "3:30 pm", "9.05 in the morning";
    None for anything that is not such a time (the unrealistic set's clocks)."""
    m = _CLOCK.fullmatch(value.strip())
    if m is None:
        return None
    hour, minute = int(m.group(1)), int(m.group(2))
    if hour == 0:
        return f"{hour:02d}.{minute:02d}"  # "12 at night" reads as noon: say the dotted clock
    part = "in the morning" if hour < 12 else "in the afternoon" if hour < 18 else "in the evening"
    twelve = hour % 12 or 12
    word = _NUMBER_WORDS[twelve]
    options = [f"{twelve}.{minute:02d} {part}"]
    if hour > 12:
        options.append(f"{twelve}:{minute:02d} pm")  # a 24-hour reader takes it for the morning
    if minute == 0:
        options += [f"{word} o'clock {part}", f"{word} {part}"]
    elif minute in (15, 30):
        options += [f"{'quarter' if minute == 15 else 'half'} past {word} {part}"] * 2
    elif minute == 45 and hour not in (11, 23):
        nxt = _NUMBER_WORDS[(hour + 1) % 12 or 12]
        options += [f"quarter to {nxt} {part}"] * 2
    return rng.choice(options)


def natural_fragment(domain: str, slot: str, value: str, rng: random.Random) -> str | None:
    """One phrase stating ``slot = value`` the way people say it, or None when there is no
    natural wording for the value (the caller then says it as :func:`fragment` does)."""
    options: Sequence[str] | None = _NATURAL.get((slot, value))
    if options is None and slot == "area" and value in _COMPASS:
        options = [t.format(d=value) for t in _COMPASS_NATURAL]
    elif options is None and slot == "food" and value in _FOOD_NATURAL:
        said = rng.choice(list(_FOOD_NATURAL[value]))
        options = (f"serving {said}", f"that serves {said}", f"with {said} food")
        if said in ("sea food", "pub food"):
            options = (f"serving {said}", f"that serves {said}")
    elif options is None and (slot, value) == ("stars", "0"):
        options = ("with zero stars", "rated zero stars")
    elif options is None and slot in ("stars", "people", "stay"):
        n = number_word(value)
        if n is None:
            return None
        if slot == "stars":
            options = (f"with {n} stars", f"rated {n} stars", f"that is {n}-star",
                       f"with a {n}-star rating")  # fmt: skip
        elif slot == "people" and value == "1":
            options = ("just for me", "for one person", "for just one person")
        elif slot == "people":
            options = (f"for {n} people", f"for a party of {n}", f"for {n} of us",
                       f"for a group of {n}")  # fmt: skip
        elif value == "1":
            options = ("for one night", "for just one night")
        else:
            options = (f"for {n} nights", f"for a {n}-night stay", f"for {n} nights in a row")
    elif options is None and slot in ("time", "leaveat", "arriveby"):
        spoken = spoken_time(value, rng)
        if spoken is None:
            return None
        if slot == "time":
            options = (f"at {spoken}",)
        elif slot == "leaveat":
            options = (f"leaving after {spoken}", f"that leaves after {spoken}",
                       f"departing after {spoken}")  # fmt: skip
        else:
            options = (f"arriving by {spoken}", f"that arrives by {spoken}",
                       f"getting there by {spoken}")  # fmt: skip
    if options is None:
        return None
    return _ARTICLE.sub(r"\1n ", rng.choice(list(options)))


def natural_people(value: str, same_group: bool, rng: random.Random) -> str | None:
    """``people`` said naturally ("for a party of eight"); None when ``value`` is no number."""
    n = number_word(value)
    if n is None:
        return None
    if same_group:
        noun = "person" if value == "1" else "people"
        return rng.choice([f"for the same group of {n} {noun}", f"for the same {n} {noun}"])
    return natural_fragment("train", "people", value, rng)
