"""``todeval run multiwoz-turns`` with scripted models: gold, malformed replies, resume, CLI."""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from tests.corpus_runs.helpers import (
    Key,
    json_replies,
    key_of,
    multiwoz_gold,
    records,
    run,
    runtime,
)
from todeval.backends import GenerationRequest, InfrastructureError
from todeval.benchmarks.multiwoz_turns.corpus import (
    N_TEST_DIALOGUES,
    N_TEST_TURNS,
    PLACEHOLDERS,
    load_dialogues,
    load_user_turns,
)
from todeval.benchmarks.multiwoz_turns.prompts import STATE_SLOTS, reply_schema
from todeval.benchmarks.multiwoz_turns.run import SPEC, MultiwozTurnsConfig
from todeval.cli import main
from todeval.core.outcome import Outcome
from todeval.runner import RunDirectory
from todeval.scoring.multiwoz import CorpusData, evaluate, to_summary
from todeval.scoring.multiwoz._normalize import (
    PLACEHOLDER_CLASS,
    canonicalize_placeholders,
    moses_round_trip,
)


def _config(n: int, **kwargs: Any) -> MultiwozTurnsConfig:
    return MultiwozTurnsConfig(model="scripted:test", limit=n, limit_mode="first", **kwargs)


def test_user_turns_match_the_references() -> None:
    corpus = CorpusData()
    users = load_user_turns()
    assert len(users) == N_TEST_DIALOGUES
    assert set(users) == set(corpus.references)
    assert {d: len(u) for d, u in users.items()} == {
        d: len(r) for d, r in corpus.references.items()
    }
    assert sum(len(u) for u in users.values()) == N_TEST_TURNS
    assert next(iter(users)) == "sng0073"  # the official test-list order
    assert all(text.strip() == text and text for u in users.values() for text in u)


def test_shipped_user_turns_file_is_the_recorded_one() -> None:
    folder = resources.files("todeval") / "data" / "multiwoz" / "corpus"
    readme = (folder / "README.md").read_text("utf-8")
    section = readme.split("multiwoz-turns", 1)[1]
    recorded = re.search(r"uncompressed JSON:\s*`([0-9a-f]{64})`", section)
    assert recorded is not None
    data = gzip.decompress((folder / "user_turns_test.json.gz").read_bytes())
    assert hashlib.sha256(data).hexdigest() == recorded.group(1)


def test_placeholders_map_back_to_their_classes() -> None:
    for cls, name in PLACEHOLDERS.items():
        assert PLACEHOLDER_CLASS[name] == cls
    dialogue = load_dialogues()[0]
    assert dialogue.systems[1] == (
        "booking completed! your taxi will be [value_type] contact number is [value_phone]"
    )


def test_rendered_references_normalize_back_to_the_references() -> None:
    """The history's system turns are the BLEU references in the model's placeholder form."""
    corpus = CorpusData()
    round_trip = moses_round_trip()
    by_id = {d.dialogue_id: d for d in load_dialogues(corpus)}
    for dialogue_id, references in corpus.references.items():
        for reference, shown in zip(references, by_id[dialogue_id].systems, strict=True):
            assert round_trip(canonicalize_placeholders(shown)) == reference, shown


def test_gold_states_fit_the_reply_schema() -> None:
    """Every slot of the gold states is a slot of the schema (a gold reply is always valid)."""
    corpus = CorpusData()
    for states in corpus.gold_states.values():
        for state in states:
            for domain, slots in state.items():
                assert set(slots) <= set(STATE_SLOTS[domain]), (domain, slots)
    schema = reply_schema()
    assert schema["required"] == ["response", "state", "active_domains"]


def test_gold_run_scores_what_the_scorer_gives(tmp_path: Path) -> None:
    _, table, gold = multiwoz_gold(20)
    out = tmp_path / "run"
    result = run(SPEC.plan(_config(20), runtime(out, json_replies(table))), out)
    direct = evaluate(gold)
    expected = to_summary(direct)
    summary = result.summary
    assert summary.benchmark == "multiwoz-turns"
    for name, metric in expected.metrics.items():
        assert summary.metrics[name] == metric, name
    assert summary.metrics["multiwoz.bleu"].micro.value == pytest.approx(100.0)
    assert summary.metrics["multiwoz.inform"].micro.value == direct.inform == 100.0
    assert summary.metrics["multiwoz.success"].micro.value == direct.success == 100.0
    assert summary.metrics["multiwoz.dst.joint_accuracy"].micro.value == 100.0
    failures = summary.metrics["multiwoz.format_failure_rate"].micro
    assert (failures.value, failures.n) == (0.0, sum(len(t) for t in gold.values()))
    assert json.loads((out / "predictions.json").read_text("utf-8")) == gold
    stored = RunDirectory(out).read_summary()
    assert stored is not None and stored.metrics == summary.metrics
    usage = summary.usage["system"]
    assert usage.calls == failures.n and usage.prompt_tokens > 0
    assert summary.cost["new_calls"] == failures.n


def _malformed(table: dict[Key, Any], ids: list[str]) -> tuple[Any, dict[tuple[str, int], str]]:
    """Replies with four kinds of bad output (and one fenced good one) at chosen turns."""
    bad = {
        (ids[0], 1): "Sure! The restaurant is [value_name].",
        (ids[1], 0): json.dumps(
            {"response": "x", "state": {"restaurant": {"price": "cheap"}}, "active_domains": []}
        ),
        (ids[2], 2): '{"response": "truncated',
        (ids[3], 0): "[1, 2]",
    }

    def reply(request: GenerationRequest) -> str:
        content = request.messages[-1].content or ""
        turn = content.count("\nUser: ") - 1  # every user line follows a newline
        for (dialogue_id, bad_turn), text in bad.items():
            if turn == bad_turn and request.seed == _seed(dialogue_id):
                return text
        good = json.dumps(table[key_of(request)])
        if turn == 1 and request.seed == _seed(ids[4]):
            return f"```json\n{good}\n```"  # a fenced object is accepted
        return good

    return reply, bad


def _seed(dialogue_id: str) -> int:
    from todeval.core.rng import derive_seed

    return derive_seed(0, dialogue_id, 0)


def test_malformed_replies_are_recorded_and_scored_empty(tmp_path: Path) -> None:
    dialogues, table, gold = multiwoz_gold(6)
    ids = [d.dialogue_id for d in dialogues]
    reply, bad = _malformed(table, ids)
    out = tmp_path / "run"
    result = run(SPEC.plan(_config(6), runtime(out, reply)), out)

    expected = copy.deepcopy(gold)
    for dialogue_id, turn in bad:
        previous = expected[dialogue_id][turn - 1]["state"] if turn else {}
        expected[dialogue_id][turn] = {"response": "", "state": previous, "active_domains": []}
    assert json.loads((out / "predictions.json").read_text("utf-8")) == expected

    by_id = {r.task_id: r for r in records(out)}
    for dialogue_id, turn in bad:
        record = by_id[dialogue_id]
        assert record.outcome is Outcome.FAILURE
        assert record.details["format_failures"] == 1
        recorded = record.details["turns"][turn]
        assert recorded["raw"] == bad[(dialogue_id, turn)]
        assert recorded["format_error"]
    assert by_id[ids[4]].outcome is Outcome.SUCCESS
    assert by_id[ids[4]].details["turns"][1]["response"] == gold[ids[4]][1]["response"]
    reasons = [by_id[d].details["turns"][t]["format_error"] for d, t in bad]
    assert reasons[0].startswith("not JSON")
    assert reasons[1].startswith("schema: .state.restaurant")
    assert reasons[2].startswith("not JSON")
    assert reasons[3] == "not a JSON object but list"

    summary = result.summary
    direct = to_summary(evaluate(expected))
    for name, metric in direct.metrics.items():
        assert summary.metrics[name] == metric, name
    n_turns = sum(len(t) for t in gold.values())
    failure = summary.metrics["multiwoz.format_failure_rate"].micro
    assert failure.value == pytest.approx(100.0 * 4 / n_turns)
    assert failure.value is not None and failure.ci_low is not None and failure.ci_high is not None
    assert failure.ci_low <= failure.value <= failure.ci_high
    assert summary.model_dump()["generation"]["format_failures"] == 4


def test_resume_reruns_only_the_deleted_dialogues(tmp_path: Path) -> None:
    dialogues, table, _ = multiwoz_gold(6)
    out = tmp_path / "run"
    first = run(SPEC.plan(_config(6), runtime(out, json_replies(table))), out)
    path = RunDirectory(out).episodes_path
    lines = path.read_text("utf-8").splitlines(keepends=True)
    dropped = {json.loads(lines[i])["task_id"] for i in (1, 4)}
    path.write_text("".join(line for i, line in enumerate(lines) if i not in (1, 4)), "utf-8")

    seen: list[int] = []

    def counting(request: GenerationRequest) -> str:
        seen.append(request.seed or 0)
        return json.dumps(table[key_of(request)])

    second = run(SPEC.plan(_config(6), runtime(out, counting)), out)
    assert second.episodes_run == 2
    turns = {d.dialogue_id: d.n_turns for d in dialogues}
    assert sorted(seen) == sorted(_seed(d) for d in dropped for _ in range(turns[d]))
    assert second.summary.metrics == first.summary.metrics
    assert len(records(out)) == 6


def test_infrastructure_errors_are_left_out_and_retried(tmp_path: Path) -> None:
    dialogues, table, gold = multiwoz_gold(3)
    broken = dialogues[1].dialogue_id

    def flaky(request: GenerationRequest) -> str:
        if request.seed == _seed(broken):
            raise InfrastructureError("server down", kind="connection", attempts=6)
        return json.dumps(table[key_of(request)])

    out = tmp_path / "run"
    first = run(SPEC.plan(_config(3), runtime(out, flaky)), out)
    assert first.summary.excluded == {"infrastructure_error": 1}
    assert first.summary.n_episodes == 2
    written = json.loads((out / "predictions.json").read_text("utf-8"))
    assert broken not in written and len(written) == 2

    second = run(SPEC.plan(_config(3), runtime(out, json_replies(table))), out)
    assert second.episodes_run == 1
    assert second.summary.excluded == {}
    assert json.loads((out / "predictions.json").read_text("utf-8")) == gold


def test_constrained_sends_the_schema(tmp_path: Path) -> None:
    _, table, _ = multiwoz_gold(1)
    schemas: list[Any] = []

    def capture(request: GenerationRequest) -> str:
        schemas.append(request.response_schema)
        return json.dumps(table[key_of(request)])

    run(SPEC.plan(_config(1), runtime(tmp_path / "a", capture)), tmp_path / "a")
    assert schemas and all(s is None for s in schemas)
    schemas.clear()
    config = _config(1, constrained=True)
    run(SPEC.plan(config, runtime(tmp_path / "b", capture)), tmp_path / "b")
    assert schemas and all(s == reply_schema() for s in schemas)


def _script_file(tmp_path: Path, reply: dict[str, Any]) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"default": json.dumps(reply)}), "utf-8")
    return path


def test_cli_run_prints_the_scorer_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reply = {"response": "[value_name] , phone [value_phone] .", "state": {},
             "active_domains": ["restaurant"]}  # fmt: skip
    script = _script_file(tmp_path, reply)
    out = tmp_path / "run"
    argv = ["run", "multiwoz-turns", "--model", f"scripted:{script}", "--dialogue-ids",
            "SNG0073.json", "PMUL4648", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "standard MultiWOZ evaluator" in printed and "Inform" in printed
    assert "format failures: 0.00" in printed
    written = json.loads((out / "predictions.json").read_text("utf-8"))
    assert list(written) == ["sng0073", "pmul4648"]
    assert written["sng0073"][0] == reply

    assert main(argv) == 0  # complete: the stored run is shown again
    assert "already holds a complete run" in capsys.readouterr().out
    assert main([*argv, "--constrained"]) == 4  # another config in the same directory
    assert "different config" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--dialogue-ids", "nope"], "unknown dialogue id(s): 'nope'"),
        (["--limit", "0"], "--limit must be at least 1"),
        (["--model", "nomodel"], "unknown model 'nomodel'"),
    ],
)
def test_cli_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    script = _script_file(tmp_path, {"response": "", "state": {}, "active_domains": []})
    argv = ["run", "multiwoz-turns", "--model", f"scripted:{script}", "--out",
            str(tmp_path / "run"), "--quiet", *extra]  # fmt: skip
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_cli_unknown_active_domains_mode(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "multiwoz-turns", "--model", "scripted:x", "--active-domains", "x"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'x'" in capsys.readouterr().err
