"""In-Car scoring rules on hand-made cases: Match, SuccF1, delexicalization, BLEU."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sacrebleu

from todeval.scoring.incar import load_lexicon
from todeval.scoring.incar._delex import (
    clean_constraints,
    delexicalize_response,
    redelexicalize,
    replace_words,
)
from todeval.scoring.incar._metrics import (
    SacreBleuStats,
    lineage_bleu,
    lineage_bleu_stats,
    match_dialogue,
    normalize_state,
    prf,
    same_constraints,
    similar,
    slot_types,
    succ_counts,
)
from todeval.scoring.incar._ontology import Lexicon

LEX = load_lexicon()


# --- Match: similarity of constraint values -------------------------------------------------


def test_similar_equal_substring_first_and_last_word() -> None:
    assert similar("dinner", "dinner")
    assert similar("tennis", "tennis activity")  # substring
    assert similar("conference room 100", "conference room 102")  # shared first word
    assert similar("sale team", "executive team")  # shared last word
    assert not similar("dinner", "meeting")
    assert not similar("san jose", "new york")


def test_same_constraints_is_a_loose_set_equality() -> None:
    assert same_constraints(["monday", "rain"], ["rain", "monday"])
    assert same_constraints(["tennis activity"], ["tennis"])
    assert not same_constraints(["monday", "rain"], ["monday"])
    assert not same_constraints(["monday"], ["monday", "boston"])
    assert same_constraints([], [])
    assert not same_constraints([], ["monday"])
    assert not same_constraints(["monday"], [])


def test_unmatched_values_with_ignorable_parts_do_not_break_a_match() -> None:
    # "lowest temperature" contains "temperature": an extra such value is tolerated.
    assert same_constraints(["monday", "lowest temperature"], ["monday"])
    assert same_constraints(["monday"], ["monday", "next week"])


def test_filler_words_are_dropped_and_only_entities_kept() -> None:
    state = {
        "poi_type": "nearest gas station",
        "event": "tennis activity",
        "location": "atlantis",  # not an entity: dropped
        "poi": "chef chu 's",  # not an informable slot: dropped
        "date": "",
    }
    assert sorted(normalize_state(state, LEX)) == ["gas station", "tennis"]


def test_match_uses_last_value_turns_and_falls_back_to_last_turn() -> None:
    gold_resp = ["what time ?", "it is at [value_time] .", "bye ."]
    gold_states = [{"event": "dinner"}, {"event": "dinner", "time": "7pm"}, {}]
    # generated: last [value turn is turn 1, whose state matches loosely
    assert match_dialogue(
        ["ok", "[value_time] it is", "bye"],
        [{}, {"event": "dinner", "time": "7pm"}, {}],
        gold_resp,
        gold_states,
        LEX,
    )
    # no [value in the generated responses: the last given turn's state counts
    assert not match_dialogue(["ok", "sure", "bye"], [{}, {}, {}], gold_resp, gold_states, LEX)
    assert match_dialogue(
        ["ok", "sure"], [{}, {"time": "7pm", "event": "dinner"}], gold_resp, gold_states, LEX
    )


def test_dialogue_without_gold_value_turn_is_skipped() -> None:
    gold_resp = ["okay , reminder set .", "you 're welcome ."]
    gold_states = [{"event": "dinner"}, {"event": "dinner"}]
    assert match_dialogue(["[value_time]", "x"], [{}, {}], gold_resp, gold_states, LEX) is None


def test_dialogue_with_empty_gold_constraints_is_skipped() -> None:
    assert (
        match_dialogue(["x"], [{}], ["[value_poi] is near ."], [{"distance": "5 mile"}], LEX)
        is None
    )


# --- SuccF1 ------------------------------------------------------------------------------------


def test_slot_type_is_first_word_after_value() -> None:
    responses = [
        "[value_poi] is a [value_poi_type] at [value_address] .",
        "expect [value_weather_attribute] , [value_traffic_info] and [value_name] .",
    ]
    assert slot_types(responses) == {"poi", "address", "weather", "traffic"}


def test_placeholder_glued_to_punctuation_does_not_count() -> None:
    assert slot_types(["at [value_time]."]) == set()


def test_succ_counts_and_micro_f1() -> None:
    tp, fp, fn = succ_counts({"poi", "distance", "weather"}, {"poi", "address"})
    assert (tp, fp, fn) == (1, 2, 1)
    p, r, f = prf(np.array([3.0]), np.array([1.0]), np.array([3.0]))
    assert p[0] == pytest.approx(75.0)
    assert r[0] == pytest.approx(50.0)
    assert f[0] == pytest.approx(60.0)


# --- delexicalization -----------------------------------------------------------------------


def test_regex_delexicalization_of_temperature_distance_address() -> None:
    text = delexicalize_response(
        "It will be 70-80F. Coupa is 4 miles away at 593 Arrowhead Way.", "", "navigate", LEX
    )
    assert text == (
        "it will be [value_temperature] . [value_poi] is [value_distance] away at [value_address]"
    )
    # the address pattern is a number and two words (the lineage's rule), so a longer street
    # name leaves its last word
    assert delexicalize_response("At 394 Van Ness Ave.", "", "navigate", LEX) == (
        "at [value_address] ave ."
    )


def test_only_requestable_slots_of_the_intent_are_delexicalized() -> None:
    # date is requestable for schedule but not for weather
    assert (
        delexicalize_response("It is on Monday.", "", "schedule", LEX) == "it is on [value_date] ."
    )
    assert delexicalize_response("It is cold on Monday.", "", "weather", LEX) == (
        "it is [value_weather_attribute] on monday ."
    )


def test_entities_the_user_said_are_kept() -> None:
    assert delexicalize_response("Dinner with Tom.", "remind me of dinner", "schedule", LEX) == (
        "dinner with [value_party] ."
    )


def test_longest_entity_wins() -> None:
    text = delexicalize_response("Your meeting is in conference room 50 then.", "", "schedule", LEX)
    assert text == "your [value_event] is in [value_room] then ."


def test_replace_words_respects_word_starts_and_extends_to_word_end() -> None:
    assert replace_words("rain and rainy", "rain", "[w]") == "[w] and [w]"
    assert replace_words("train and rain", "rain", "[w]") == "train and rain"


def test_redelexicalize_replaces_any_slot() -> None:
    assert redelexicalize("in cleveland today", LEX) == "in [value_location] [value_weekly_time]"


def test_redelexicalize_keeps_the_lineage_quirk_of_boss_lemmatized_to_bos() -> None:
    # WordNet lemmatizes the party "boss" to "bos" (the lineage's entity list has it too), and
    # the lineage's left-to-right rule then turns "boston" into a party placeholder.
    assert redelexicalize("in boston today", LEX) == "in [value_party] [value_weekly_time]"


def test_clean_constraints_keeps_informable_entities_and_short_forms() -> None:
    cleaned = clean_constraints(
        {"event": "Doctor's appointment ", "time": "7 pm", "poi": "Coupa", "party": "nobody"},
        "schedule",
        LEX,
    )
    assert cleaned == {"event": "doctor", "time": "7pm"}


def test_lexicon_has_short_forms_for_event_and_poi_type() -> None:
    assert LEX.entities["dentist"] == "event"
    assert LEX.entities["chinese"] == "poi_type"
    assert LEX.entities["coupa"] == "poi"
    assert isinstance(LEX, Lexicon)


# --- BLEU -------------------------------------------------------------------------------------


def test_lineage_bleu_formula_on_a_small_corpus() -> None:
    hyp, ref = "<go_r> a b c d <eos_r>", "<go_r> a b c e <eos_r>"
    stats = np.array(lineage_bleu_stats(hyp, ref))
    assert stats.tolist() == [5, 3, 2, 1, 6, 5, 4, 3, 6, 6]
    precisions = [c / (t + 1e-7) + 1e-7 for c, t in zip([5, 3, 2, 1], [6, 5, 4, 3], strict=True)]
    expected = 100 * math.exp(sum(0.25 * math.log(p) for p in precisions))
    assert lineage_bleu(stats)[0] == pytest.approx(expected, rel=1e-6)
    # shorter hypothesis: brevity penalty exp(1 - r / c)
    short = np.array(lineage_bleu_stats("<go_r> a b <eos_r>", "<go_r> a b c d <eos_r>"))
    unigram_to_4gram = [
        c / (t + 1e-7) + 1e-7 for c, t in zip([4, 2, 1, 0], [4, 3, 2, 1], strict=True)
    ]
    expected_short = (
        100 * math.exp(1 - 6 / 4) * math.exp(sum(0.25 * math.log(p) for p in unigram_to_4gram))
    )
    assert lineage_bleu(short)[0] == pytest.approx(expected_short, rel=1e-6)


def test_sacrebleu_from_summed_turn_statistics_equals_corpus_bleu() -> None:
    hyps = ["[value_poi] is [value_distance] away .", "ok , bye", "it will rain on monday ."]
    refs = ["[value_poi] is [value_distance] away .", "you are welcome .", "it will snow ."]
    sacre = SacreBleuStats()
    sums = np.sum([sacre.turn(h, r) for h, r in zip(hyps, refs, strict=True)], axis=0)
    expected = sacrebleu.corpus_bleu(hyps, [refs]).score
    assert SacreBleuStats.corpus(sums)[0] == pytest.approx(expected)
