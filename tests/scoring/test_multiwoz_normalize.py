"""Response and state normalisation, fuzzy matching and active-domain estimation."""

from __future__ import annotations

import random

import pytest

from todeval.scoring.multiwoz._domains import active_domains, estimate_from_states
from todeval.scoring.multiwoz._fuzzy import fuzzy_candidates, partial_ratio
from todeval.scoring.multiwoz._normalize import (
    ResponseNormalizer,
    canonical_time,
    canonicalize_placeholders,
    normalize_state,
    time_to_minutes,
)


@pytest.fixture(scope="module")
def normalizer() -> ResponseNormalizer:
    return ResponseNormalizer()


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("[restaurant_name] is at [value_address] .", "NAME is at ADDRESS ."),
        ("There are [value_count] [value_type]s", "there are COUNT TYPE"),
        ("[value_choice]-es of [attraction_type]-s", "COUNT of TYPE"),
        ("[hotel_postcode], [taxi_phone] [value_reference]", "POST, PHONE REFERENCE"),
        ("[train_id] leaves at [value_leave] from [value_departure]", "TRAINID leaves at TIME "
         "from PLACE"),
        ("[leave at] or [arrive by]", "TIME or TIME"),
        ("[entrance fee] is [value_price]", "PRICE is PRICE"),
        ("[something_unknown] here", " here"),
        ("[not-a-slot] stays", "[not-alot] stays"),  # '-s' is deleted anywhere
        ("pleasant-ly ok", "pleasant ok"),
    ],
)  # fmt: skip
def test_placeholders_are_canonicalised(raw: str, canonical: str) -> None:
    assert canonicalize_placeholders(raw) == canonical


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("[restaurant_name] is at [value_address] .", "NAME is at ADDRESS."),
        ("what time would you like to leave ?", "what time would you like to leave?"),
        ("i 'm sorry , there is n't one", "i 'm sorry, there is n't one"),
        ("the price is 5.50 pounds .", "the price is 5.50 pounds."),
        ('it is " great " !', 'it is "great"!'),
        ("[value_count] trains , [value_price] each .", "COUNT trains, PRICE each."),
        ("  many   spaces  ", "many spaces"),
    ],
)
def test_responses_get_a_moses_round_trip(
    normalizer: ResponseNormalizer, raw: str, normalized: str
) -> None:
    assert normalizer(raw) == normalized


def test_normalizer_memoises(normalizer: ResponseNormalizer) -> None:
    text = "Is there anything else ?"
    assert normalizer(text) is normalizer(text)


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("17:15", "17:15"),
        ("17 : 15", "17:15"),
        ("5:30 pm", "17:30"),
        ("5 pm", "17:00"),
        ("after 4 p.m.", "16:00"),
        ("by 09:00", "09:00"),
        ("1145", "11:45"),
        ("9", "09:00"),
        ("9:15", "09:15"),
        ("10:30am", "10:30"),
        ("afternoon", "13:00"),
        ("lunch", "12:00"),
        ("one o'clock p.m. please", "13:00"),
        ("", "00:00"),
        ("whenever", "whenever"),
        ("x:30pm", "0x:30"),  # not a number: left to the later rules
    ],
)
def test_times(raw: str, canonical: str) -> None:
    assert canonical_time(raw) == canonical


def test_time_to_minutes() -> None:
    assert time_to_minutes("17:15") == 17 * 60 + 15
    assert time_to_minutes("7:15") == 0
    assert time_to_minutes("whenever") == 0


def test_state_normalisation() -> None:
    state = {
        "train": {"Arrive By": "5 pm", "leaveAt": "0930", "departure": "Nando's"},
        "hotel": {
            "type": "guest house",
            "parking": "free",
            "internet": "free",
            "name": "lime house",
        },
        "restaurant": {"food": "english", "name": "cafe uno", "price range": "cheap"},
        "attraction": {"type": "night club", "name": "the junction"},
    }
    assert normalize_state(state) == {
        "train": {"arrive": "17:00", "leave": "09:30", "departure": "nandos"},
        "hotel": {"type": "guesthouse", "parking": "yes", "internet": "yes", "name": "limehouse"},
        "restaurant": {"food": "british", "name": "caffe uno", "pricerange": "cheap"},
        "attraction": {"type": "nightclub", "name": "junction theatre"},
    }


# --- fuzzy matching -----------------------------------------------------------------------

# fuzzywuzzy (python-Levenshtein) partial_ratio values, as the standard evaluator computes them
KNOWN_RATIOS = [
    ("pipasha restaurant", "shiraz restaurant", 82),
    ("adc theatre", "mumford theatre", 86),
    ("yu garden", "curry garden", 89),
    ("spanish", "danish", 83),
    ("downing college", "kings college", 88),
    ("cambridge artworks", "cambridge artsr", 87),
    ("castle galleries", "kings hedges", 33),
    ("pizza hut fen ditton", "peking restaurant", 35),
    ("the slug and lettuce", "restaurant restaurant and coffee bar", 50),
    ("alpha-milton guest house", "alpha - milton guest house", 92),
    ("the varsity restaurant", "restaurant", 100),
    ("asian oriental", "asian", 100),
    ("sheep's green and lammas land park fen causeway",
     "sheeps green and lammas land park fen causeway", 98),
    ("aylesbray lodge guest house", "arbury lodge guest house", 88),
    ("same", "same", 100),
    ("", "anything", 0),
    ("", "", 100),
]  # fmt: skip


@pytest.mark.parametrize(("a", "b", "expected"), KNOWN_RATIOS)
def test_partial_ratio_is_the_standard_evaluators(a: str, b: str, expected: int) -> None:
    assert partial_ratio(a, b) == expected
    assert partial_ratio(b, a) == expected


def test_rapidfuzz_prefilter_never_drops_a_match() -> None:
    rng = random.Random(7)
    alphabet = "abcde '"
    for _ in range(3000):
        value = "".join(rng.choices(alphabet, k=rng.randint(1, 10)))
        choices = ["".join(rng.choices(alphabet, k=rng.randint(1, 14))) for _ in range(5)]
        for threshold in (60, 90):
            kept = set(fuzzy_candidates(value, choices, threshold))
            for choice in choices:
                if partial_ratio(choice, value) >= threshold:
                    assert choice in kept


# --- active domains -----------------------------------------------------------------------


def test_estimate_follows_changed_domains() -> None:
    states = [
        {},  # nothing yet
        {"restaurant": {"food": "thai"}},
        {"restaurant": {"food": "thai"}},  # unchanged: stays restaurant
        {"restaurant": {"food": "thai"}, "hotel": {"area": "north"}},
        {"restaurant": {"food": "thai", "area": "east"}, "hotel": {"area": "north", "stars": "4"}},
        {"restaurant": {"food": "thai", "area": "east"}, "hotel": {"area": "north", "stars": "4"}},
    ]  # fmt: skip
    assert estimate_from_states(states) == [
        [],
        ["restaurant"],
        ["restaurant"],
        ["hotel"],
        ["hotel"],  # both changed; the current one (hotel) changed, so it stays
        ["restaurant"],  # nothing changed after a two-domain turn: the other one takes over
    ]


def test_estimate_picks_domain_with_most_slots() -> None:
    states = [{"taxi": {"leave": "10:00"}, "train": {"day": "monday", "departure": "ely"}}]
    assert estimate_from_states(states) == [["train"]]


def test_estimate_ignores_slot_removal_before_first_change() -> None:
    assert estimate_from_states([{}, {}]) == [[], []]


def test_active_domain_modes() -> None:
    responses = ["[restaurant_name] and [hotel_phone]", "[value_name]"]
    states = [{"train": {"day": "monday"}}, {"train": {"day": "monday"}}]
    given: list[list[str] | None] = [["hotel"], None]
    assert active_domains("placeholders", responses, states, given) == (
        [["hotel", "restaurant"], []],
        0,
    )
    assert active_domains("state", responses, states, given) == ([["train"], ["train"]], 2)
    assert active_domains("given", responses, states, given) == ([["hotel"], ["train"]], 1)
    assert active_domains("given", responses, states, [["taxi"], []]) == ([["taxi"], []], 0)
