"""``todeval run clarq`` through the shared runner: the corpus summary from the scorer (equal to
the episodes' own scores and to ``todeval score clarq RUN_DIR``), the judge and its verdicts,
trials and pass^k, resume, the plan a Ray worker rebuilds, the shared-model warning, provider
panels and one-line errors."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.clarq.selfplay import HERE, episodes, metric, need, run_clarq, summary
from todeval.benchmarks.clarq.run import SPEC, ClarqConfig
from todeval.cli import main
from todeval.runner.options import RuntimeOptions

IDS = ("--task-ids", "Gather_Resources-0", "Escort_Mission-3", "Stealth_Mission-1",
       "Trade_Task-5", "Planting_Task-2", "Video_Production-9")  # fmt: skip


def _judge_script(path: Path, match: bool) -> Path:
    """A scripted model: judge questions get ``match``; anything else (a seeker's prompt) is
    answered with a goodbye."""
    verdict = json.dumps({"analysis": "scripted", "match": match})
    script = {"rules": [{"match": "Required information:", "reply": verdict}], "default": "Goodbye"}
    path.write_text(json.dumps(script), encoding="utf-8")
    return path


def test_summary_is_the_scorers_and_agrees_with_the_episodes(tmp_path: Path) -> None:
    run = run_clarq(tmp_path / "run", *IDS, "--seeker", "wrong")
    data = summary(run)
    assert data["benchmark"] == "clarq" and data["n_episodes"] == 6
    assert data["scorer"].startswith("ClarQ-LLM evaluator rules")
    assert data["routes"]["judge"] == 6 and data["judge"]["from_release"] >= 6
    assert data["language"] == "en" and data["sources"] == [str(run)]
    records = episodes(run)
    for name in ("clarq.success", "clarq.aqd", "clarq.aql", "clarq.released"):
        mean = sum(r["metrics"][name] for r in records) / len(records)
        assert metric(run, name) == pytest.approx(mean)
    assert set(data["by_depth"]["clarq.success"]) == {"1", "2", "3+"}
    assert data["metrics"]["clarq.success"]["by_group"].keys() == {r["group"] for r in records}
    assert data["labels"]["clarq.end"] == {"goodbye": 6}
    assert any("release record" in w for w in data["warnings"])
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["selection"]["task_set"] == "en/test" and manifest["protocol"] == "clarq"
    assert manifest["roles"]["seeker"]["player"] == "wrong"
    assert manifest["roles"]["judge"]["player"] == "recorded"

    out = tmp_path / "rescored.json"
    assert main(["score", "clarq", str(run), "-o", str(out)]) == 0
    rescored = json.loads(out.read_text())
    for name in ("clarq.success", "clarq.aqd", "clarq.aql"):
        assert rescored["metrics"][name] == data["metrics"][name]
    assert rescored["routes"] == data["routes"]


def test_judge_model_verdicts_are_recorded_and_rescored_offline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    judge = f"scripted:{_judge_script(tmp_path / 'yes.json', True)}"
    run = run_clarq(tmp_path / "run", *IDS[:3], "--seeker", "wrong", "--judge-model", judge)
    data = summary(run)
    assert metric(run, "clarq.success") == 1.0  # a judge that says yes to everything
    asked = data["judge"]["questions"]  # every leftover sentence: a yes never stops the loop
    assert data["judge"]["online"] and data["judge"]["new_calls"] == asked >= 3
    assert data["judge"]["from_release"] == 0
    assert data["usage"]["judge"]["calls"] == asked
    assert all(r["details"]["verdicts"] for r in episodes(run))
    capsys.readouterr()
    out = tmp_path / "offline.json"
    assert (
        main(["score", "clarq", str(run), "--judge-model", judge, "--offline", "-o", str(out)]) == 0
    )
    assert json.loads(out.read_text())["metrics"]["clarq.success"]["micro"]["value"] == 1.0
    assert main(["score", "clarq", str(run), "-o", str(out)]) == 0  # no judge: the release record
    assert json.loads(out.read_text())["metrics"]["clarq.success"]["micro"]["value"] == 0.0
    assert "the run was judged by" in capsys.readouterr().out


def test_shared_model_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = f"scripted:{_judge_script(tmp_path / 'no.json', False)}"
    out = tmp_path / "run"
    argv = ["run", "clarq", "--out", str(out), "--no-cache", *IDS[:2]]
    argv += ["--seeker", "llm", "--seeker-model", model, "--judge-model", model]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "warning: seeker and judge share the model" in err
    warnings = summary(out)["warnings"]
    assert any("seeker and judge share the model" in w for w in warnings)
    players = json.loads((out / "manifest.json").read_text())["players"]
    assert any("seeker and judge share" in w for w in players["warnings"])
    assert {r["labels"]["clarq.end"] for r in episodes(out)} == {"quit"}  # it said Goodbye


def test_trials_pass_k_and_resume(tmp_path: Path) -> None:
    reference = run_clarq(tmp_path / "reference", *IDS, "--trials", "2")
    assert summary(reference)["metrics"]["clarq.success.pass^2"]["micro"]["value"] == 1.0
    assert len(episodes(reference)) == 12
    partial = tmp_path / "partial"
    run_clarq(partial, *IDS, "--trials", "2")
    lines = (partial / "episodes.jsonl").read_text().splitlines(keepends=True)
    (partial / "episodes.jsonl").write_text("".join(lines[:5]))  # as if killed after five
    (partial / "summary.json").unlink()
    run_clarq(partial, *IDS, "--trials", "2")
    assert len(episodes(partial)) == 12
    a, b = summary(reference), summary(partial)
    for key in ("metrics", "routes", "labels", "by_depth", "outcomes"):
        assert a[key] == b[key]


def test_a_ray_worker_rebuilds_the_same_plan(tmp_path: Path) -> None:
    run = run_clarq(tmp_path / "run", *IDS[:2], "--protocol", "strict", "--seeker", "wrong")
    manifest = json.loads((run / "manifest.json").read_text())
    plan = SPEC.plan(manifest["config"], RuntimeOptions(cache=False))
    assert plan.config_hash == manifest["config_hash"]
    assert plan.task_set_hash == manifest["task_set_hash"]
    assert [j.task_id for j in plan.jobs] == [r["task_id"] for r in episodes(run)]
    assert plan.protocol == "strict" and plan.jobs[0].group == "Gather_Resources"


def test_ray_executor_gives_the_local_results(tmp_path: Path) -> None:
    need("ray", importlib.util.find_spec("ray") is not None)
    argv = [*IDS[:4], "--seeker", "wrong"]
    local = run_clarq(tmp_path / "local", *argv)
    ray = run_clarq(tmp_path / "ray", *argv, "--executor", "ray")
    assert json.loads((ray / "manifest.json").read_text())["sessions"][0]["executor"].startswith(
        "ray"
    )
    a, b = summary(local), summary(ray)
    for key in ("metrics", "routes", "labels", "by_depth", "judge"):
        assert a[key] == b[key]

    def ends(run: Path) -> dict[str, object]:
        return {r["episode_id"]: r["events"][-1]["data"] for r in episodes(run)}

    assert ends(local) == ends(ray)


def test_provider_panel_from_a_panel_file(tmp_path: Path) -> None:
    generous = f"{HERE}:GenerousProvider"
    panel_file = tmp_path / "panel.toml"
    panel_file.write_text(
        '[[seeker]]\nname = "oracle"\nplayer = "oracle"\n\n'
        '[[seeker]]\nname = "wrong"\nplayer = "wrong"\n\n'
        '[[seeker]]\nname = "dump"\nplayer = "dump"\n\n'
        '[[provider]]\nname = "rule"\nplayer = "rule"\n\n'
        f'[[provider]]\nname = "generous"\nplayer = "{generous}"\n',
        encoding="utf-8",
    )
    out = tmp_path / "panel"
    argv = ["run", "clarq", "--out", str(out), "--quiet", "--no-cache", *IDS[:4]]
    assert main([*argv, "--panel", str(panel_file)]) == 0
    panel = json.loads((out / "panel.json").read_text())
    assert panel["benchmark"] == "clarq" and panel["metric"] == "clarq.success_economy"
    assert panel["subject"] == "seeker" and panel["varied"] == "provider"
    assert panel["members"] == {
        "seeker": ["oracle", "wrong", "dump"],
        "provider": ["rule", "generous"],
    }
    assert (out / "wrong__generous" / "summary.json").exists()
    spread = panel["spread"]
    assert spread["oracle"]["spread_max_min"] == 0.0  # every node released under both
    # the generous provider gives it away (SPQ, the headline: six questions for 2-6 nodes)
    assert spread["wrong"]["spread_max_min"] > 0.3
    assert panel["controls"] == ["oracle"]  # privileged: in the spread, never ranked
    rankings = panel["rank_stability"]["rankings"]
    assert all(sorted(r) == ["dump", "wrong"] for r in rankings.values())
    faults = panel["simulator_faults"]  # todeval review's reading, per provider (issue 30)
    assert faults["rule"]["with_fault"] == 0 and faults["rule"]["episodes"] == 9
    assert faults["generous"]["rate"] > 0.5 and faults["generous"]["low"] > 0.2


@pytest.mark.parametrize(
    ("argv", "code", "words"),
    [
        (["--seeker", "replay"], 2, "--seeker-replay"),
        (["--seeker-mode", "chat"], 2, "--seeker llm"),
        (["--seeker", "llm"], 2, "--seeker-model"),
        (["--max-messages", "1"], 2, "at least 2"),
        (["--provider", "nobody"], 2, "unknown provider 'nobody'"),
        (["--provider", "llm"], 2, "--provider-model"),
        (["--task-ids", "Nothing-1"], 2, "unknown task id"),
        (["--seeker", "replay", "--seeker-replay", "/nonexistent"], 3, "/nonexistent"),
    ],
)
def test_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], code: int, words: str
) -> None:
    assert main(["run", "clarq", "--out", str(tmp_path / "x"), "--quiet", *argv]) == code
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err and "Traceback" not in err


def test_score_refuses_a_run_of_another_benchmark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    booking = tmp_path / "booking"
    assert main(["run", "booking", "--limit", "1", "--quiet", "--out", str(booking)]) == 0
    assert main(["score", "clarq", str(booking)]) == 3
    assert "a booking run, not a clarq run" in capsys.readouterr().err


def test_config_defaults_name_the_run() -> None:
    config = ClarqConfig(lang="zh", seeker="llm", seeker_model="openai:qwen@http://x/v1")
    assert config.default_out() == "runs/clarq-zh-test-llm-completion-openai_qwen-rule-s0"
    plan = SPEC.plan(ClarqConfig(limit=3), RuntimeOptions(cache=False))
    assert plan.n_tasks == 3 and len({j.group for j in plan.jobs}) == 3  # spread over types
