"""The rule system's wording: short templates, a few variants each (chosen with the episode RNG).

Every fact in a reply comes from a DB row or a booking result the system received; the templates
only supply the glue.
"""

from __future__ import annotations

import random

from todeval.benchmarks.booking.systems.patterns import HOTEL, RESTAURANT, TRAIN

SLOT_QUESTIONS = {
    (RESTAURANT, "food"): "what kind of food you would like",
    (RESTAURANT, "area"): "which part of town you prefer",
    (RESTAURANT, "pricerange"): "your price range",
    (HOTEL, "area"): "which part of town you want to stay in",
    (HOTEL, "pricerange"): "your price range",
    (HOTEL, "type"): "whether you prefer a hotel or a guesthouse",
    (HOTEL, "stars"): "how many stars it should have",
    (TRAIN, "departure"): "where you are leaving from",
    (TRAIN, "destination"): "where you are travelling to",
    (TRAIN, "day"): "which day you want to travel",
    (TRAIN, "leaveat"): "what time you want to leave (or arrive)",
    (RESTAURANT, "people"): "how many people the table is for",
    (RESTAURANT, "day"): "which day",
    (RESTAURANT, "time"): "what time",
    (HOTEL, "people"): "how many people will stay",
    (HOTEL, "day"): "which day you arrive",
    (HOTEL, "stay"): "how many nights",
    (TRAIN, "people"): "how many tickets you need",
}
ATTRIBUTE_NAMES = {
    "phone": "phone number",
    "address": "address",
    "postcode": "postcode",
    "price": "ticket price",
    "duration": "journey time",
    "trainid": "train ID",
    "arriveby": "arrival time",
    "leaveat": "departure time",
    "area": "area",
    "pricerange": "price range",
    "food": "food",
    "stars": "star rating",
    "type": "type",
    "internet": "internet",
    "parking": "parking",
    "name": "name",
}


def join_words(items: list[str]) -> str:
    """``["a", "b", "c"]`` -> ``"a, b and c"``."""
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]


def pick(rng: random.Random, options: list[str]) -> str:
    return options[rng.randrange(len(options))]


def ask(rng: random.Random, domain: str, slots: list[str]) -> str:
    """A question for the missing slots of one domain."""
    parts = [SLOT_QUESTIONS.get((domain, s), s) for s in slots]
    lead = pick(rng, ["Could you tell me", "Please let me know", "Can you tell me"])
    return f"{lead} {join_words(parts)}?"


def describe(domain: str, row: dict[str, str]) -> str:
    """A venue or train in one phrase, from its DB row."""
    if domain == TRAIN:
        tid = row.get("trainid", "a train")
        return (
            f"{tid} from {row.get('departure', '?')} to {row.get('destination', '?')} on "
            f"{row.get('day', '?')}, leaving at {row.get('leaveat', '?')} and arriving at "
            f"{row.get('arriveby', '?')}"
        )
    name = row.get("name", "a venue")
    bits: list[str] = []
    if row.get("pricerange"):
        bits.append(price_words(row["pricerange"]))
    if domain == RESTAURANT:
        if row.get("food"):
            bits.append(f"{row['food']} restaurant")
        else:
            bits.append("restaurant")
    else:
        if row.get("stars"):
            bits.append(f"{row['stars']}-star")
        bits.append(row.get("type") or "place to stay")
    text = f"{name}, a {' '.join(bits)}"
    if row.get("area"):
        text += f" in the {row['area']}"
    if domain == HOTEL:
        extras = []
        if row.get("internet") == "yes":
            extras.append("free wifi")
        if row.get("parking") == "yes":
            extras.append("free parking")
        if row.get("internet") not in (None, "yes", "no"):
            extras.append(f"{row['internet']} internet")
        if row.get("parking") not in (None, "yes", "no"):
            extras.append(f"parking {row['parking']}")
        if extras:
            text += " with " + join_words(extras)
    return text


def describe_sentence(domain: str, row: dict[str, str]) -> str:
    """ "X is a cheap italian restaurant in the centre." (a venue from its DB row)."""
    text = describe(domain, row)
    name = row.get("name")
    if name and text.startswith(f"{name}, "):
        text = f"{name} is {text[len(name) + 2 :]}"
    return text[0].upper() + text[1:] + "."


def price_words(value: str) -> str:
    """ "cheap", "moderately priced", "expensive"; other worlds' values as "<v>-priced"."""
    return {"cheap": "cheap", "moderate": "moderately priced", "expensive": "expensive"}.get(
        value, f"{value}-priced"
    )


def attribute_text(domain: str, row: dict[str, str], attrs: list[str]) -> str:
    """ "The phone number is ..., the postcode is ..." for the attributes the row has."""
    parts = []
    for a in attrs:
        value = row.get(a)
        if value:
            parts.append(f"the {ATTRIBUTE_NAMES.get(a, a)} is {value}")
    if not parts:
        return ""
    subject = row.get("trainid") if domain == TRAIN else row.get("name")
    text = join_words(parts)
    return f"For {subject}, {text}." if subject else text[0].upper() + text[1:] + "."


def constraint_text(domain: str, slots: dict[str, str]) -> str:
    """The user's constraints in words, for "there is no ..." messages."""
    bits: list[str] = []
    lead: list[str] = []
    for key in ("pricerange", "stars", "food", "type", "area", "departure", "destination", "day",
                "leaveat", "arriveby", "internet", "parking", "name"):  # fmt: skip
        v = slots.get(key)
        if not v or v == "dontcare":
            continue
        if key == "area":
            bits.append(f"in the {v}")
        elif key == "departure":
            bits.append(f"from {v}")
        elif key == "destination":
            bits.append(f"to {v}")
        elif key == "day":
            bits.append(f"on {v}")
        elif key == "leaveat":
            bits.append(f"leaving after {v}")
        elif key == "arriveby":
            bits.append(f"arriving by {v}")
        elif key in ("internet", "parking"):
            bits.append(f"{'with' if v == 'yes' else 'without'} free {key}" if v in ("yes", "no")
                        else f"with {v} {key}")  # fmt: skip
        elif key == "name":
            bits.append(f"called {v}")
        elif key == "pricerange":
            lead.append(price_words(v))
        elif key == "stars":
            lead.append(f"{v}-star")
        elif key == "food":
            lead.append(v)
        else:
            bits.append(v)
    noun = {RESTAURANT: "restaurant", HOTEL: "place to stay", TRAIN: "train"}[domain]
    if domain == HOTEL and slots.get("type") not in (None, "", "dontcare"):
        noun = str(slots["type"])
        bits = [b for b in bits if b != noun]
    return " ".join([*lead, noun, *bits]).strip()
