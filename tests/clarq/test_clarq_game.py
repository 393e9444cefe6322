"""The game master's turn rules: goodbye matching per protocol, the message cap, the strict
protocol's neutral "enough", provider decisions checked against the tree, crashes, and the
record every episode leaves (scored by the exact scorer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clarq.selfplay import HERE, episodes, messages, run_clarq
from todeval.benchmarks.clarq import ClarqTranscript, load_tasks, score_transcripts
from todeval.benchmarks.clarq.game import check_turn, says_goodbye
from todeval.benchmarks.clarq.protocol import MAX_MESSAGES, NEUTRAL_REPLIES, Decision, ProviderTurn

TASK = "en/test/Gather_Resources-0"  # depth 3, five required responses


@pytest.mark.parametrize(
    ("text", "clarq", "strict"),
    [
        ("Goodbye", True, True),
        ("Thanks, Goodbye!", True, True),
        ("Goodbye Jax, thank you.", True, True),
        ("I know it now.\nGoodbye", True, True),
        ("goodbye", False, True),  # the original matched case-sensitively
        ("Thanks, goodbye!", False, True),
        ("GOODBYE.", False, True),
        ("Goodbyes are sad", False, False),  # no pattern: a word that merely starts so
        ("Goodbye?", False, False),  # '?' after it is not one of the original's patterns
        ("How do I get there?", False, False),
    ],
)
def test_goodbye_patterns_per_protocol(text: str, clarq: bool, strict: bool) -> None:
    assert says_goodbye(text, "en", "clarq") is clarq
    assert says_goodbye(text, "en", "strict") is strict


def test_chinese_goodbye_patterns() -> None:
    assert says_goodbye("再见", "zh")
    assert says_goodbye("谢谢你，再见！", "zh")
    assert says_goodbye("再见Jax", "zh")
    assert not says_goodbye("再见面的时候", "zh")  # no mark around it


def test_check_turn_follows_the_gate_and_the_tree() -> None:
    (task,) = [t for t in load_tasks("en") if t.task_id == TASK]
    tree = task.tree()

    def turn(decision: Decision, *labels: str) -> ProviderTurn:
        return ProviderTurn(decision=decision, message="Jax: x", released=list(labels))

    assert check_turn(turn(Decision.GATE_PASS), tree, gate_open=False) is None
    assert "before the gate" in str(check_turn(turn(Decision.RELEASE, "1"), tree, False))
    assert "after the gate" in str(check_turn(turn(Decision.APOLOGY), tree, True))
    assert check_turn(turn(Decision.RELEASE, "1", "1.1"), tree, True) is None  # 1 unlocks 1.1
    assert "'1.1', which is not available" in str(
        check_turn(turn(Decision.RELEASE, "1.1"), tree, True)
    )
    assert "released ['2']" in str(check_turn(turn(Decision.NO_RELEASE, "2"), tree, True))
    assert "not a ProviderTurn" in str(check_turn("Jax: hi", tree, True))
    assert [n.label for n in tree.available()] == ["1", "2", "3"]  # checking released nothing


def test_oracle_episode_record(tmp_path: Path) -> None:
    run = run_clarq(tmp_path / "run", "--task-ids", "Gather_Resources-0")
    (record,) = episodes(run)
    assert record["task_id"] == TASK and record["group"] == "Gather_Resources"
    assert record["outcome"] == "success" and record["termination"] == "done"
    assert record["labels"] == {"clarq.end": "goodbye", "clarq.route": "exact"}
    said = messages(record)
    assert said[0] == "Jax: what can help you?" and said[-1] == "Goodbye"
    assert len(said) == 2 + 2 * 6  # greeting, task question, five nodes, goodbye
    assert record["details"]["released"] == ["1", "1.1", "1.1.1", "2", "3"]
    decisions = [e["data"] for e in record["events"] if e["kind"] == "provider_decision"]
    assert [d["decision"] for d in decisions] == ["gate_pass", *["release"] * 5]
    assert decisions[1]["released"] == ["1"] and "open now: 1.1, 2, 3" in decisions[1]["summary"]
    assert record["metrics"] == {
        "clarq.success": 1.0,
        "clarq.success_economy": 1.0,  # six questions, the oracle's own number (issue 41)
        "clarq.success.depth3+": 1.0,
        "clarq.aqd": 0.0,
        "clarq.aql": pytest.approx(record["metrics"]["clarq.aql"]),
        "clarq.released": 1.0,
    }


def test_message_cap(tmp_path: Path) -> None:
    run = run_clarq(
        tmp_path / "run", "--task-ids", "Gather_Resources-0",
        "--seeker", f"{HERE}:ThankingSeeker", "--provider", f"{HERE}:GenerousProvider",
    )  # fmt: skip
    (record,) = episodes(run)
    assert len(messages(record)) == MAX_MESSAGES + 2  # 12 provider (greeting too), 12 seeker
    assert record["termination"] == "turn_cap" and record["labels"]["clarq.end"] == "message_cap"
    assert record["outcome"] == "success"  # everything was released before the cap
    assert record["metrics"]["clarq.aqd"] == 10 + 1 - 6  # 10 answers after the first


def test_strict_protocol_hides_enough_and_ends_on_lowercase_goodbye(tmp_path: Path) -> None:
    common = ["--task-ids", "Gather_Resources-0", "--provider", f"{HERE}:GenerousProvider"]
    told = run_clarq(tmp_path / "clarq", *common, "--seeker", f"{HERE}:UntilEnoughSeeker")
    hidden = run_clarq(
        tmp_path / "strict", *common, "--seeker", f"{HERE}:UntilEnoughSeeker",
        "--protocol", "strict",
    )  # fmt: skip
    (a,), (b,) = episodes(told), episodes(hidden)
    assert a["labels"]["clarq.end"] == "enough" and len(messages(a)) == 16
    assert "Jax: You have enough." in messages(a)
    assert b["labels"]["clarq.end"] == "message_cap"  # never told it was done
    assert NEUTRAL_REPLIES["en"] in messages(b) and "Jax: You have enough." not in messages(b)
    hidden_turns = [e["data"] for e in b["events"] if e["kind"] == "provider_decision"]
    assert any(d["decision"] == "enough" and d["hidden"] for d in hidden_turns)

    seeker = ["--seeker", f"{HERE}:LowercaseGoodbyeSeeker"]
    lax = run_clarq(tmp_path / "lax", *common, *seeker)
    strict = run_clarq(tmp_path / "strict-bye", *common, *seeker, "--protocol", "strict")
    assert episodes(lax)[0]["labels"]["clarq.end"] == "message_cap"
    assert episodes(strict)[0]["labels"]["clarq.end"] == "goodbye"
    assert len(messages(episodes(strict)[0])) == 4
    assert strict.name != lax.name


def test_provider_and_seeker_failures_leave_no_scored_dialogue(tmp_path: Path) -> None:
    ids = ["--task-ids", "Gather_Resources-0"]
    cheat = run_clarq(tmp_path / "cheat", *ids, "--provider", f"{HERE}:CheatingProvider")
    crash = run_clarq(tmp_path / "crash", *ids, "--provider", f"{HERE}:CrashingProvider")
    seeker = run_clarq(tmp_path / "seeker", *ids, "--seeker", f"{HERE}:CrashingSeeker")
    (a,), (b,), (c,) = episodes(cheat), episodes(crash), episodes(seeker)
    assert a["outcome"] == "user_simulator_error" and "'9.9', which is not available" in a["reason"]
    assert [e["kind"] for e in a["events"]].count("violation") == 1
    assert b["outcome"] == "user_simulator_error" and "fell over" in b["reason"]
    assert c["outcome"] == "system_error" and c["labels"]["clarq.end"] == "seeker_error"
    for record in (a, b, c):  # the scorer's missing-transcript rule: 0 on every metric
        assert record["labels"]["clarq.route"] == "missing"
        assert record["metrics"]["clarq.success"] == 0.0
        assert record["metrics"]["clarq.aqd"] == record["metrics"]["clarq.aql"] == 0.0


def test_the_release_record_decides_only_unreleased_responses() -> None:
    gold = ["Jax: Go to the mine.", "Jax: Take the north road.", "Jax: Use the big shovel."]
    said = ["Jax: what can help you?", "How?", gold[0], "Which road?", "Jax: the northern one",
            "Goodbye"]  # fmt: skip
    common = {"task_type": "T", "depth": 1, "gold": gold, "purposes": ["which road", "which tool"]}
    reworded = ClarqTranscript(task_id="en/test/T-0", messages=said, released=[1], **common)
    unreleased = ClarqTranscript(task_id="en/test/T-1", messages=said, released=[], **common)
    unknown = ClarqTranscript(task_id="en/test/T-2", messages=said, **common)  # a released file
    score = score_transcripts([reworded, unreleased, unknown], release_rule=True)
    a, b, c = score.episodes
    assert a.success is None and [s.answer.origin for s in a.judge_steps] == ["unjudged"]
    assert b.success is False and [s.answer.origin for s in b.judge_steps] == ["release"]
    assert c.success is None  # no release record: the rule does not apply
    assert score.summary.judge.from_release == 1
    assert any("release record" in w for w in score.summary.warnings)


def test_the_strict_neutral_reply_is_the_no_release_reply_word_for_word() -> None:
    """Under strict, 'nothing is left' must look exactly like a detail question that released
    nothing: a seeker that says goodbye right after it learns nothing from it."""
    from todeval.benchmarks.clarq._text import provider_message
    from todeval.benchmarks.clarq.protocol import SeekerKind
    from todeval.benchmarks.clarq.providers._replies import canned
    from todeval.benchmarks.clarq.providers.rule import RuleProvider  # noqa: F401

    for lang in ("en", "zh"):
        replies = canned(lang)  # type: ignore[arg-type]
        no_release = provider_message(replies.for_kind(SeekerKind.UNANSWERABLE))
        assert NEUTRAL_REPLIES[lang] == no_release  # type: ignore[index]
        assert NEUTRAL_REPLIES[lang] != provider_message(replies.enough)  # type: ignore[index]
