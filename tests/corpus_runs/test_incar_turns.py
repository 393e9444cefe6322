"""``todeval run incar-turns`` with scripted models: gold, malformed replies, CLI."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.corpus_runs.helpers import incar_gold, json_replies, key_of, records, run, runtime
from todeval.backends import GenerationRequest
from todeval.benchmarks.incar_turns.corpus import load_dialogues
from todeval.benchmarks.incar_turns.prompts import messages, reply_schema, system_prompt
from todeval.benchmarks.incar_turns.run import SPEC, IncarTurnsConfig
from todeval.cli import main
from todeval.core.rng import derive_seed
from todeval.scoring.incar import INFORMABLE, evaluate, load_gold


def _config(n: int, **kwargs: Any) -> IncarTurnsConfig:
    return IncarTurnsConfig(model="scripted:test", limit=n, limit_mode="first", **kwargs)


@pytest.mark.parametrize(("split", "dialogues", "turns"), [("test", 304, 808), ("dev", 302, 777)])
def test_turns_follow_the_scorer_gold(split: str, dialogues: int, turns: int) -> None:
    loaded = load_dialogues(split, load_gold(split))  # type: ignore[arg-type]
    assert len(loaded) == dialogues
    assert sum(d.n_turns for d in loaded) == turns
    assert [d.dialogue_id for d in loaded] == [str(i) for i in range(dialogues)]


def test_prompt_shows_kb_history_and_intent_slots() -> None:
    dialogue = next(d for d in load_dialogues("test", load_gold("test")) if d.intent == "navigate")
    prompt = system_prompt(dialogue)
    assert dialogue.rows and json.dumps(dialogue.rows[0]) in prompt
    assert "[value_poi]" in prompt and "poi_type, distance" in prompt
    last = messages(dialogue, dialogue.n_turns - 1)[-1].content or ""
    assert last.count("Driver: ") == dialogue.n_turns
    assert f"Assistant: {dialogue.turns[0].response}" in last
    schema = reply_schema("navigate")
    assert list(schema["properties"]["state"]["properties"]) == list(INFORMABLE["navigate"])


def test_gold_run_scores_what_the_scorer_gives(tmp_path: Path) -> None:
    _, table, gold = incar_gold(20)
    out = tmp_path / "run"
    result = run(SPEC.plan(_config(20), runtime(out, json_replies(table))), out)
    direct = evaluate(gold)
    summary = result.summary
    assert summary.benchmark == "incar-turns"
    for name, metric in direct.summary.metrics.items():
        assert summary.metrics[name] == metric, name
    assert direct.match == 100.0
    assert direct.succ_f1 == pytest.approx(100.0)
    assert summary.metrics["incar.bleu"].micro.value == pytest.approx(100.0)
    failures = summary.metrics["incar.format_failure_rate"].micro
    assert (failures.value, failures.n) == (0.0, sum(len(t) for t in gold.values()))
    assert json.loads((out / "predictions.json").read_text("utf-8")) == gold
    assert summary.usage["system"].calls == failures.n


def test_malformed_replies_are_recorded_and_scored_empty(tmp_path: Path) -> None:
    dialogues, table, gold = incar_gold(8)
    multi = [d.dialogue_id for d in dialogues if d.n_turns > 1][:2]
    bad_keys = {
        (derive_seed(0, multi[0], 0), messages(dialogues[int(multi[0])], 1)[-1].content or ""),
        (derive_seed(0, multi[1], 0), messages(dialogues[int(multi[1])], 0)[-1].content or ""),
    }

    def reply(request: GenerationRequest) -> str:
        if key_of(request) in bad_keys:
            return json.dumps({"response": "ok", "state": {"colour": "red"}})  # unknown slot
        return json.dumps(table[key_of(request)])

    out = tmp_path / "run"
    result = run(SPEC.plan(_config(8), runtime(out, reply)), out)
    expected = copy.deepcopy(gold)
    expected[multi[0]][1] = {"response": "", "state": expected[multi[0]][0]["state"]}
    expected[multi[1]][0] = {"response": "", "state": {}}
    assert json.loads((out / "predictions.json").read_text("utf-8")) == expected
    by_id = {r.task_id: r for r in records(out)}
    assert by_id[multi[0]].details["format_failures"] == 1
    assert "colour" in by_id[multi[0]].details["turns"][1]["raw"]
    for name, metric in evaluate(expected).summary.metrics.items():
        assert result.summary.metrics[name] == metric, name
    n_turns = sum(len(t) for t in gold.values())
    assert result.summary.metrics["incar.format_failure_rate"].micro.value == pytest.approx(
        200.0 / n_turns
    )


def test_cli_dev_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "script.json"
    reply = {"response": "your [value_event] is at [value_time] .", "state": {}}
    script.write_text(json.dumps({"default": json.dumps(reply)}), "utf-8")
    out = tmp_path / "run"
    argv = ["run", "incar-turns", "--model", f"scripted:{script}", "--split", "dev",
            "--dialogue-ids", "3", "0", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "In-Car Assistant (KVRET) dev: 2/302 dialogues" in printed
    assert "format failures: 0.00" in printed
    written = json.loads((out / "predictions.json").read_text("utf-8"))
    assert list(written) == ["0", "3"]
    assert main([*argv[:-2], "--dialogue-ids", "302", "--out", str(out), "--quiet"]) == 2
    assert "unknown dialogue id(s): '302'" in capsys.readouterr().err
