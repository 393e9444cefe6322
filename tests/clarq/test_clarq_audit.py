"""The provider audit: rebuilding the reference provider's decisions, the agreement figures
(pinned for ``rule`` on the released GPT-4o transcript), and ``todeval clarq audit``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest

from tests.clarq.helpers import REFERENCE, run_cli
from todeval.benchmarks.clarq import load_tasks, read_original
from todeval.benchmarks.clarq.protocol import (
    GREETINGS,
    Decision,
    Provider,
    ProviderTurn,
    ProviderView,
)
from todeval.benchmarks.clarq.providers import CANNED
from todeval.benchmarks.clarq.providers.rule import RuleProvider
from todeval.benchmarks.clarq.tools._audit_cli import format_audit
from todeval.benchmarks.clarq.tools.audit import (
    CLASSES,
    ORIGINAL_ENOUGH,
    AuditSummary,
    Reconstruction,
    ReferenceTurn,
    audit_provider,
    is_enough_message,
    kappa_of,
    rebuild,
    rebuild_dialogue,
)


@pytest.fixture(scope="module")
def reference() -> tuple[list[list[ReferenceTurn]], Reconstruction]:
    return rebuild(read_original(REFERENCE))


def test_the_reference_provider_is_rebuilt_turn_by_turn(
    reference: tuple[list[list[ReferenceTurn]], Reconstruction],
) -> None:
    dialogues, stats = reference
    assert stats.dialogues == len(dialogues) == 260
    assert stats.turns == 1537
    assert stats.decisions == {
        "gate_pass": 260,
        "apology": 0,
        "release": 969,
        "no_release": 250,
        "enough": 58,
    }
    assert stats.later_turns == 1277
    assert stats.later_release_share == pytest.approx(969 / 1277)
    assert round(stats.later_release_share or 0, 3) == 0.759  # the 75.9%
    assert stats.enough_dialogues == 56  # the spec's 56 of 260 dialogues
    assert (stats.multi_releases, stats.repeated_node_texts, stats.locked_node_texts) == (0, 0, 0)
    assert stats.skipped == []
    first = dialogues[0]
    assert first[0].decision is Decision.GATE_PASS and not first[0].gate_open
    assert all(turn.gate_open for turn in first[1:])
    for turns in dialogues:
        for turn in turns:
            assert len(turn.history) % 2 == 0  # greeting, then pairs: ends with the seeker
            assert turn.history[0] == GREETINGS["en"]
            if turn.decision is Decision.RELEASE:
                assert turn.labels[0] in [n.label for n in turn.available]
            if turn.decision is Decision.ENOUGH:
                assert turn.available == ()


def test_rebuilding_a_hand_made_dialogue() -> None:
    task = next(t for t in load_tasks("en", "test") if t.task_id == "en/test/Gather_Resources-0")
    node = {n.label: n.text for n in task.nodes}
    messages = [
        GREETINGS["en"],
        "hello",
        "Jax: I am sorry, I did not follow.",
        "How do I collect rubies?",
        f"Jax: {task.opening}",
        "How do I get into the mine?",
        f"Jax:  {node['1']} ",  # spacing and the prefix do not matter
        "And which mine, with which tool?",
        f"Jax: {node['2']} Also, {node['3'].lower()}",  # two nodes in one message
        "Which mine again?",
        f"Jax: {node['2']}",  # a released node repeated
        "How do I stun them?",
        f"Jax: {node['1.1']}",
        "Where is the fog?",
        f"Jax: {node['1.1.1']}",
        "Anything else?",
        "Jax: " + CANNED["en"].enough,
        "Goodbye",
    ]
    stats = Reconstruction()
    turns = rebuild_dialogue(0, task, messages, stats)
    assert [t.decision for t in turns] == [
        Decision.APOLOGY,
        Decision.GATE_PASS,
        Decision.RELEASE,
        Decision.RELEASE,
        Decision.NO_RELEASE,
        Decision.RELEASE,
        Decision.RELEASE,
        Decision.ENOUGH,
    ]
    assert [t.gate_open for t in turns[:3]] == [False, False, True]
    assert turns[3].labels == ("2", "3")
    assert [n.label for n in turns[3].available] == ["1.1", "2", "3"]
    assert turns[4].note == "repeats a released node"
    assert [n.label for n in turns[5].released] == ["1", "2", "3"]
    assert turns[7].available == ()
    assert (stats.multi_releases, stats.repeated_node_texts) == (1, 1)
    assert turns[2].view().question == "How do I get into the mine?"


def test_enough_is_recognised_in_the_original_and_our_wording() -> None:
    for lang in ("en", "zh"):
        assert is_enough_message("Jax: " + ORIGINAL_ENOUGH[lang])
        assert is_enough_message(CANNED[lang].enough)
    assert is_enough_message(
        "jax:  you have already collected enough information to complete the task"
    )
    assert not is_enough_message("Jax: You have enough gold.")


def test_kappa() -> None:
    k = len(CLASSES)
    m = np.zeros((k, k))
    r, n = CLASSES.index(Decision.RELEASE), CLASSES.index(Decision.NO_RELEASE)
    m[r, r], m[r, n], m[n, r], m[n, n] = 20, 5, 10, 15
    assert kappa_of(m) == pytest.approx(0.4)  # po 0.7, pe 0.5
    single = np.zeros((k, k))
    single[r, r] = 10
    assert np.isnan(kappa_of(single))  # one class on both sides: undefined


def test_rule_on_the_reference_transcript() -> None:
    """The figures docs/clarq.md reports (seed 0, 2000 resamples)."""
    source = read_original(REFERENCE)
    result = asyncio.run(audit_provider(RuleProvider, source, name="rule"))
    later = result.summary.scopes["later"]
    assert later.turns == 1277 and later.dialogues == 260
    # the targeting provider with the meaning matcher (issue 26) and the turn-level rules
    # (issue 41: at most 8 questions, the list guard over the turn, patience; round 2: a
    # question must be aimed at its node -- 0.9021 / 0.7544 / 0.8044 before it, 0.8935 / 0.7365
    # / 0.7917 when it had to beat every other node by the margin, before the margin became a
    # tie and joined questions were read clause by clause; 0.8974 / 0.7448 / 0.7996 before a
    # turn confirming the seeker's plan became type 1 and the English share became 0.2); lexical:
    # below
    assert later.accuracy.value == pytest.approx(0.9029, abs=5e-5)
    assert later.kappa.value == pytest.approx(0.7587, abs=5e-5)
    assert later.node_agreement.value == pytest.approx(0.8038, abs=5e-5)
    assert later.both_released == 892
    assert later.strict_accuracy.value == pytest.approx(0.7659, abs=5e-5)
    assert later.baseline_accuracy.value == pytest.approx(969 / 1277)
    assert later.baseline_kappa.value == 0.0
    assert later.baseline_node_agreement.value == pytest.approx(0.7792, abs=5e-5)
    # beating always-release on kappa by a margin the CI shows (0.70 / 0.88 before round 2)
    assert (later.kappa_gain.ci_low or 0) > 0.68
    assert later.accuracy.ci_low is not None and later.accuracy.ci_low > 0.86
    assert (later.accuracy.ci_low or 0) > (later.baseline_accuracy.ci_high or 1)
    assert later.confusion["release"] == {
        "gate_pass": 0, "apology": 0, "release": 892, "no_release": 77, "enough": 0
    }  # fmt: skip
    assert later.confusion["no_release"]["no_release"] == 211
    assert later.confusion["enough"]["enough"] == 50
    gate = result.summary.scopes["gate"]
    assert gate.accuracy.value == 1.0 and gate.kappa.value is None  # every gate turn passes
    everything = result.summary.scopes["all"]
    assert everything.turns == 1537
    assert everything.kappa.value == pytest.approx(0.8556, abs=5e-5)
    assert everything.baseline_kappa.value == pytest.approx(0.5523, abs=5e-5)
    assert result.summary.errors == 0 and result.summary.usage["calls"] == 0
    assert len(result.turns) == 1537


def test_rule_without_meaning_is_the_lexical_provider() -> None:
    """``rule_meaning: false`` (or ``meaning={}``) gives the word-only provider's figures:
    kappa 0.7404, node ids 0.8138 (0.7267 / 0.8073 before the plan-confirmation rule and the
    English share 0.2, 0.7106 / 0.8028 with round 2's first margin rule, 0.7376 /
    0.8067 before round 2's aimed-at rule, 0.7420 /
    0.8177 before issue 41's turn-level rules); the
    word-overlap provider before targeting had 0.7745 / 0.8342 and released to dumps."""
    source = read_original(REFERENCE)
    result = asyncio.run(
        audit_provider(lambda: RuleProvider(meaning={}), source, name="rule", resamples=20)
    )
    later = result.summary.scopes["later"]
    assert later.kappa.value == pytest.approx(0.7404, abs=5e-5)
    assert later.node_agreement.value == pytest.approx(0.8138, abs=5e-5)
    assert later.confusion["release"]["release"] == 881


class ReplayingProvider:
    """Decides as the reference did (looked up by task and history length)."""

    def __init__(self, turns: dict[tuple[str, int], ReferenceTurn]) -> None:
        self.turns = turns

    async def respond(self, view: ProviderView) -> ProviderTurn:
        ref = self.turns[(view.task.task_id, len(view.history))]
        assert view.history == list(ref.history)
        assert [n.label for n in view.available] == [n.label for n in ref.available]
        return ProviderTurn(decision=ref.decision, message=ref.message, released=list(ref.labels))


def test_a_provider_deciding_as_the_reference_agrees_perfectly(
    reference: tuple[list[list[ReferenceTurn]], Reconstruction],
) -> None:
    dialogues, _ = reference
    lookup = {(t.task.task_id, len(t.history)): t for turns in dialogues for t in turns}
    source = read_original(REFERENCE)
    result = asyncio.run(
        audit_provider(lambda: ReplayingProvider(lookup), source, name="replay", resamples=50)
    )
    later = result.summary.scopes["later"]
    assert later.accuracy.value == 1.0 and later.kappa.value == 1.0
    assert later.node_agreement.value == 1.0 and later.strict_accuracy.value == 1.0


class Flaky:
    async def respond(self, view: ProviderView) -> ProviderTurn:
        if len(view.history) == 4:
            raise RuntimeError("boom")
        return ProviderTurn(decision=Decision.NO_RELEASE, message="Jax: hm")


def test_turns_a_provider_fails_on_are_counted_and_left_out() -> None:
    source = read_original(REFERENCE)
    provider: Provider = Flaky()
    result = asyncio.run(
        audit_provider(lambda: provider, source, name="flaky", limit=5, resamples=10)
    )
    assert result.summary.errors == 5  # the second provider turn of each dialogue
    assert "RuntimeError: boom" in result.summary.error_examples[0]
    assert result.summary.reconstruction.dialogues == 5
    assert sum(a.turns for s, a in result.summary.scopes.items() if s != "all") == len(result.turns)
    assert any("failed on 5 turns" in w for w in result.summary.warnings)
    shown = format_audit(result.summary)
    assert "failed on 5 turns (left out)" in shown and "first failure: " in shown


# -- the command ------------------------------------------------------------------------


def test_audit_command_prints_the_figures_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, turns = tmp_path / "audit.json", tmp_path / "turns.jsonl"
    code, text, err = run_cli(
        ["clarq", "audit", "--transcripts", str(REFERENCE), "-o", str(out), "--turns", str(turns)],
        capsys,
    )
    assert code == 0, err
    assert "releases are 0.759 of the 1277 later turns" in text
    assert "Cohen's kappa" in text and "0.759 [0.716, 0.801]" in text
    assert "always-release accuracy" in text and "0.759 [" in text
    assert "confusion, later turns" in text
    summary = AuditSummary.model_validate_json(out.read_text(encoding="utf-8"))
    assert summary.provider == "rule" and summary.language == "en"
    assert summary.scopes["later"].kappa.value == pytest.approx(0.7587, abs=5e-5)
    lines = turns.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1537
    first = json.loads(lines[1])
    assert first["scope"] == "later" and first["reference"] == "release"


def test_audit_command_audits_an_llm_provider(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "provider.json"
    script.write_text(
        json.dumps(
            {
                "rules": [
                    {"match": "asking about the task", "reply": '{"analysis":"","related":true}'},
                    {"match": "Which one of these types", "reply": '{"analysis":"","type":2}'},
                ],
                "default": '{"analysis": "", "answerable": true}',
            }
        ),
        encoding="utf-8",
    )
    out = tmp_path / "audit.json"
    argv = ["clarq", "audit", "--transcripts", str(REFERENCE), "--provider", "llm"]
    argv += ["--provider-model", f"scripted:{script}", "--limit", "3", "-o", str(out)]
    code, text, err = run_cli(argv, capsys)
    assert code == 0, err
    summary = AuditSummary.model_validate_json(out.read_text(encoding="utf-8"))
    assert summary.reconstruction.dialogues == 3
    assert summary.model is not None and summary.usage["calls"] > 0
    later = summary.scopes["later"]
    # the script releases the first available node while one is left, then says "enough"
    assert {k for k, v in later.predicted_counts.items() if v} == {"release", "enough"}
    assert later.node_agreement.value == later.baseline_node_agreement.value
    assert (later.accuracy.value or 0) >= (later.baseline_accuracy.value or 1)
    assert "provider calls:" in text
    assert summary.errors == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--provider", "llm"], "the llm provider needs a model: pass --provider-model SPEC"),
        (["--provider-model", "scripted:x.json"], "the rule provider takes no model"),
        (["--provider", "nope"], "unknown provider 'nope'"),
        (["--limit", "0"], "--limit must be at least 1"),
        (["--models-file", "m.yaml"], "--models-file needs --provider-model"),
    ],
)
def test_audit_command_usage_errors_exit_2(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(["clarq", "audit", "--transcripts", str(REFERENCE), *extra], capsys)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_audit_command_bad_file_exits_3_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    code, _, err = run_cli(["clarq", "audit", "--transcripts", str(bad)], capsys)
    assert code == 3
    assert "not valid JSON" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(["clarq", "audit", "--transcripts", str(tmp_path / "none")], capsys)
    assert code == 3 and "cannot read" in err
