"""Every matching step, and the AQD/AQL edge cases, on hand-made transcripts."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from tests.clarq.helpers import GREETING, FakeJudge, dialogue, record
from todeval.benchmarks.clarq import (
    ClarqTranscript,
    EpisodeScore,
    MatchResult,
    detect_language,
    match_dialogue,
    prematch,
    provider_answers,
    score_transcripts,
    seeker_utterances,
    strip_provider_prefix,
)
from todeval.benchmarks.clarq._scoring import dialogue_aql

GOLD = ["Jax: Go to the mine.", "Jax: Take the north road.", "Jax: Use the excavator."]


def _match(
    gold: list[str], predictions: list[str], answers: Sequence[bool | str | None] = ()
) -> tuple[MatchResult, FakeJudge]:
    judge = FakeJudge(answers)
    purposes = [f"why {i}" for i in range(1, len(gold))]
    result = asyncio.run(match_dialogue(gold, purposes, predictions, judge))
    return result, judge


# --- step 1: prefix stripping and order-sensitive equality ---------------------------------


def test_prefix_is_case_insensitive_and_whitespace_is_stripped() -> None:
    assert strip_provider_prefix("JAX:  Take it. ") == "Take it."
    assert strip_provider_prefix("jax:x") == "x"
    assert strip_provider_prefix("Jax：full-width colon") == "Jax：full-width colon"
    assert strip_provider_prefix(" Jax: leading space") == "Jax: leading space"  # as the original
    result, _ = _match(GOLD, ["jax: Take the north road. ", "Use the excavator."])
    assert (result.route, result.success) == ("exact", True)


def test_equality_is_order_sensitive_membership_is_not() -> None:
    result, _ = _match(GOLD, ["Jax: Use the excavator.", "Jax: Take the north road."])
    assert (result.route, result.success) == ("member", True)


# --- step 2: the language rule, then membership ------------------------------------------


def test_language_rule_counts_ascii_letters_against_cjk_and_a_tie_is_chinese() -> None:
    assert detect_language("ab你好") == "zh"  # 2 vs 2: a tie
    assert detect_language("abc你好") == "en"
    assert detect_language("1234 !?") == "zh"  # 0 vs 0
    assert detect_language("Jax: 你好") == "en"  # the prefix's letters count (3 vs 2)


def test_english_gold_is_lower_cased_before_membership() -> None:
    result, _ = _match(GOLD, ["JAX: take THE north road.", "filler", "use the EXCAVATOR."])
    assert (result.route, result.success) == ("member", True)


def test_a_tie_keeps_case_so_membership_fails() -> None:
    gold = ["Jax: 开始", "ab北门", "XY南门"]  # gold 1 "ab北门": 2 letters, 2 CJK -> Chinese
    result, judge = _match(gold, ["AB北门", "xy南门"], [False])
    assert result.route == "judge" and judge.questions  # no lower-casing: not equal, not member
    english = ["Jax: start", "abc北门", "XY南门"]  # 3 letters vs 2 CJK -> English
    result, _ = _match(english, ["ABC北门", "xy南门"])
    assert (result.route, result.success) == ("member", True)


def test_membership_needs_whole_elements() -> None:
    result, _ = _match(GOLD, ["Take the north road. Use the excavator."])
    assert (result.route, result.success) == ("substring", True)


# --- step 3: sentence marks stripped, substring removal ----------------------------------


def test_substring_after_stripping_trailing_marks() -> None:
    result, _ = _match(
        GOLD, ["Sure! Take the north road!!", "and then: use the excavator?", "Goodbye"]
    )
    assert (result.route, result.success) == ("substring", True)


def test_covered_gold_and_covering_predictions_are_removed_before_the_judge() -> None:
    pre = prematch(
        [*GOLD, "Jax: Bring a lamp."],
        ["p1", "p2", "p3"],
        ["First, take the north road.", "A lamp helps.", "take the north road"],
    )
    assert pre.route == "judge" and pre.leftovers is not None
    assert pre.leftovers.gold == ["use the excavator", "bring a lamp"]
    assert pre.leftovers.purposes == ["p2", "p3"]
    # the covering prediction and the one equal to the covered gold sentence are both gone
    assert pre.leftovers.predictions == ["a lamp helps"]


def test_no_prediction_left_is_a_failure_without_the_judge() -> None:
    result, judge = _match(GOLD, ["Take the north road, friend."])
    assert (result.route, result.success) == ("no_prediction", False)
    assert judge.questions == []
    result, judge = _match(GOLD, [])
    assert (result.route, result.success) == ("no_prediction", False)


# --- step 4: the judge ------------------------------------------------------------------


LONG = ["Jax: Start.", "Jax: One.", "Jax: Two.", "Jax: Three."]


def test_judge_stops_at_the_first_no() -> None:
    result, judge = _match(LONG, ["something else"], [True, False, True])
    assert (result.route, result.success) == ("judge", False)
    assert [q.gold for q in judge.questions] == ["one", "two"]
    assert judge.questions[0].predictions == ["something else"]
    assert judge.questions[0].purpose == "why 1"


def test_judge_success_needs_every_leftover_sentence() -> None:
    result, judge = _match(LONG, ["something else"], [True, True, True])
    assert (result.route, result.success, len(judge.questions)) == ("judge", True, 3)


def test_a_missing_match_key_does_not_stop_but_fails_when_last() -> None:
    result, judge = _match(LONG, ["x"], [None, True, True])
    assert (result.success, len(judge.questions)) == (True, 3)  # as the original: no break
    result, judge = _match(LONG, ["x"], [True, True, None])
    assert (result.success, len(judge.questions)) == (False, 3)


def test_an_unavailable_verdict_leaves_the_dialogue_unjudged() -> None:
    result, _ = _match(LONG, ["x"], [True, "unjudged"])
    assert (result.route, result.success, result.unjudged) == ("judge", None, True)
    result, judge = _match(LONG, ["x"], [False, "unjudged"])
    assert (result.success, len(judge.questions)) == (False, 1)  # decided before the gap


def test_leftover_gold_without_a_purpose_fails_by_string_matching_only() -> None:
    judge = FakeJudge([True])
    result = asyncio.run(match_dialogue(LONG, [], ["x"], judge))
    assert (result.route, result.success, judge.questions) == ("no_purpose", False, [])


# --- predictions, AQD and AQL -----------------------------------------------------------


def test_predictions_leave_out_the_greeting_and_the_first_answer() -> None:
    messages = dialogue("Jax: first", ["Jax: a", "Jax: b"])
    assert provider_answers(messages) == ["Jax: a", "Jax: b"]
    assert seeker_utterances(messages) == ["question 0 ok", "question 1 ok", "question 2 ok",
                                           "question 3 ok"]  # fmt: skip


def _scores(*records: ClarqTranscript) -> list[EpisodeScore]:
    return score_transcripts(list(records), resamples=10).episodes


def test_aqd_is_answers_after_the_first_plus_one_minus_gold_lines() -> None:
    (long_dialogue, short, silent) = _scores(
        record(GOLD, ["a", "b", "c", "d"]), record(GOLD, ["a"]), record(GOLD, [])
    )
    assert long_dialogue.aqd == 4 + 1 - 3
    assert short.aqd == 1 + 1 - 3
    assert silent.aqd == -2


def test_missing_transcript_scores_zero_everywhere() -> None:
    (missing,) = _scores(record(GOLD, None))
    assert (missing.route, missing.success, missing.aqd, missing.aql) == ("missing", False, 0, 0)


def test_greeting_only_dialogue() -> None:
    only = ClarqTranscript(
        task_id="en/test/T-0", task_type="T", gold=GOLD, purposes=["a", "b"], messages=[GREETING]
    )
    (episode,) = _scores(only)
    assert episode.route == "no_prediction" and episode.aqd == -2.0 and episode.aql == 0.0


def test_aql_counts_spaces_in_english() -> None:
    rec = record(GOLD, ["x"], seeker=["one two three", "  a b  ", "Goodbye"])
    assert dialogue_aql(rec) == pytest.approx((2 + 1 + 0) / 3)


def test_aql_counts_characters_in_chinese_with_the_first_utterance_deciding() -> None:
    rec = record(GOLD, ["x"], seeker=["你好，请问怎么走？", "ok then go", "再见"])
    # the first utterance is Chinese: every utterance is counted in characters
    assert dialogue_aql(rec) == pytest.approx((9 + 10 + 2) / 3)
    rec = record(GOLD, ["x"], seeker=["hello there Jax", "你好 吗", "bye"])
    assert dialogue_aql(rec) == pytest.approx((2 + 1 + 0) / 3)


def test_summary_means_are_over_all_records_with_missing_ones_as_zero() -> None:
    score = score_transcripts(
        [
            record(GOLD, ["Take the north road.", "Use the excavator."], task_id="en/test/A-0",
                   task_type="A"),
            record(GOLD, None, task_id="en/test/A-1", task_type="A"),
            record(GOLD, ["Use the excavator.", "Take the north road.", "more"],
                   task_id="en/test/B-0", task_type="B"),
            record(GOLD, [], task_id="en/test/B-1", task_type="B"),
        ],
        resamples=50,
    )  # fmt: skip
    summary = score.summary
    assert summary.metrics["clarq.success"].micro.value == pytest.approx(2 / 4)
    assert summary.metrics["clarq.aqd"].micro.value == pytest.approx((0 + 0 + 1 - 2) / 4)
    assert summary.routes.exact == 1 and summary.routes.member == 1
    assert summary.routes.missing == 1 and summary.routes.no_prediction == 1
    assert set(summary.metrics["clarq.success"].by_group) == {"A", "B"}
    assert summary.outcomes == {"success": 2, "failure": 2, "unjudged": 0}
