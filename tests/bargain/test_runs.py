"""``todeval run bargain`` with the built-in labellers, through the shared runner."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from todeval.cli import main


def _run(out: Path, *args: str) -> dict[str, Any]:
    assert main(["run", "bargain", *args, "--out", str(out), "--quiet"]) == 0
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return summary


@pytest.mark.parametrize("track", ["craigslist", "casino"])
def test_gold_scores_f1_one(tmp_path: Path, track: str) -> None:
    s = _run(tmp_path / "gold", "--track", track, "--labeller", "gold")
    f1 = s["metrics"]["bargain.f1"]
    assert f1["micro"]["value"] == 1.0 and f1["macro"]["value"] == 1.0
    assert f1["micro"]["n"] == (710 if track == "craigslist" else 492)
    assert set(f1["by_group"]) == {"1", "2", "3", "4+"}
    assert s["provenance"] == ("silver" if track == "craigslist" else "human")
    manifest = json.loads((tmp_path / "gold" / "manifest.json").read_text())
    assert manifest["selection"]["task_set"].endswith(
        "silver" if track == "craigslist" else "human"
    )


@pytest.mark.parametrize("track", ["craigslist", "casino"])
def test_garbage_fails_every_turn(tmp_path: Path, track: str) -> None:
    s = _run(tmp_path / "garbage", "--track", track, "--labeller", "garbage")
    assert s["metrics"]["bargain.failure_rate"]["micro"]["value"] == 1.0
    assert s["metrics"]["bargain.recall"]["micro"]["value"] == 0.0
    record = json.loads((tmp_path / "garbage" / "episodes.jsonl").read_text().splitlines()[0])
    assert record["labels"]["reading"] == "none read"
    assert any(e["kind"] == "violation" for e in record["events"])


@pytest.mark.parametrize("track", ["craigslist", "casino"])
def test_random_matches_its_analytic_expectation(tmp_path: Path, track: str) -> None:
    s = _run(tmp_path / "random", "--track", track, "--labeller", "random")
    expected = s["random_expectation"]
    for name in ("precision", "recall"):
        est = s["metrics"][f"bargain.{name}"]["micro"]
        assert est["ci_low"] <= expected[name] <= est["ci_high"], (name, est, expected)
    if track == "craigslist":
        assert abs(expected["precision"] - 1 / 11) < 1e-12  # one act among 11 candidates


def test_baselines_and_split_all(tmp_path: Path) -> None:
    major = _run(tmp_path / "m", "--track", "craigslist", "--labeller", "majority")
    assert abs(major["metrics"]["bargain.precision"]["micro"]["value"] - 159 / 710) < 0.02
    parser = _run(tmp_path / "p", "--track", "craigslist", "--labeller", "parser")
    assert 0.3 < parser["metrics"]["bargain.f1"]["micro"]["value"] < 0.9
    keyword = _run(tmp_path / "k", "--track", "casino", "--labeller", "keyword", "--limit", "5")
    assert keyword["metrics"]["bargain.f1"]["micro"]["n"] > 0
    assert keyword["baselines_fitted_on"] == "casino train split"
    every = _run(tmp_path / "all", "--track", "casino", "--split", "all", "--labeller", "gold")
    assert every["metrics"]["bargain.f1"]["micro"]["n"] == 4615


def test_parser_is_refused_on_casino(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "bargain", "--track", "casino", "--labeller", "parser",
                 "--out", str(tmp_path / "x"), "--quiet"])  # fmt: skip
    assert code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_no_labeller_is_a_usage_error(tmp_path: Path) -> None:
    assert main(["run", "bargain", "--out", str(tmp_path / "x"), "--quiet"]) == 2


def test_resume_keeps_the_summary_and_compare_pairs_dialogues(tmp_path: Path) -> None:
    args = ["--track", "casino", "--labeller", "keyword"]
    first = _run(tmp_path / "kw", *args)
    episodes = tmp_path / "kw" / "episodes.jsonl"
    lines = episodes.read_text().splitlines(keepends=True)
    episodes.write_text("".join(lines[:10]))  # as if killed after ten dialogues
    again = _run(tmp_path / "kw", *args)
    assert first["metrics"] == again["metrics"]
    ids = [json.loads(line)["episode_id"] for line in episodes.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 42
    _run(tmp_path / "maj", "--track", "casino", "--labeller", "majority")
    out = tmp_path / "cmp.json"
    code = main(["compare", str(tmp_path / "maj"), str(tmp_path / "kw"), "-o", str(out)])
    assert code == 0
    metrics = {m["metric"] for p in json.loads(out.read_text())["pairs"] for m in p["metrics"]}
    assert "bargain.f1" in metrics


def test_trials_give_one_episode_per_dialogue_and_trial(tmp_path: Path) -> None:
    s = _run(tmp_path / "t", "--track", "casino", "--labeller", "random", "--trials", "2",
             "--limit", "4")  # fmt: skip
    assert s["n_episodes"] == 8


def test_ray_executor_gives_the_local_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("Ray is missing but CI=true requires it")
        pytest.skip("Ray is missing")
    monkeypatch.setenv("RAY_DISABLE_USAGE_STATS", "1")
    args = ["--track", "casino", "--labeller", "random", "--limit", "6", "--max-concurrency", "3"]
    local = _run(tmp_path / "local", *args)
    remote = _run(tmp_path / "ray", *args, "--executor", "ray")
    assert local["metrics"] == remote["metrics"] and local["scores"] == remote["scores"]
    manifest = json.loads((tmp_path / "ray" / "manifest.json").read_text())
    assert manifest["sessions"][-1]["executor"].startswith("ray (")


def test_prompt_override_reaches_the_model_and_changes_the_hash(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "rules": [{"match": "ZEBRA", "reply": {"text": '{"labels": ["non-strategic"]}'}}],
                "default": {"text": '{"labels": ["small-talk"]}'},
            }
        )
    )
    model = f"scripted:{script}"
    base = ["--track", "casino", "--model", model, "--limit", "2", "--no-cache"]
    default = _run(tmp_path / "default", *base)
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "casino.txt").write_text(
        "ZEBRA ${context}\n${dialogue}\n${speaker}\n${candidates}\n", encoding="utf-8"
    )
    changed = _run(tmp_path / "changed", *base, "--prompts", str(prompts))
    turns = [
        t
        for line in (tmp_path / "changed" / "episodes.jsonl").read_text().splitlines()
        for t in json.loads(line)["details"]["turns"]
    ]
    assert {tuple(t["predicted"]) for t in turns} == {("non-strategic",)}
    assert default["metrics"] != changed["metrics"]
    hashes = {
        json.loads((tmp_path / d / "manifest.json").read_text())["config_hash"]
        for d in ("default", "changed")
    }
    assert len(hashes) == 2


def test_a_bad_prompt_placeholder_is_one_line_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "craigslist.txt").write_text("${buyer_price} ${dialogue}\n", encoding="utf-8")
    code = main(["run", "bargain", "--model", "scripted:x", "--prompts", str(prompts),
                 "--out", str(tmp_path / "x"), "--quiet"])  # fmt: skip
    assert code == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "buyer_price" in err[0]


def test_k_sets_the_candidate_lists_and_the_random_expectation(tmp_path: Path) -> None:
    s = _run(tmp_path / "k3", "--track", "craigslist", "--labeller", "random", "--k", "5")
    assert abs(s["random_expectation"]["precision"] - 1 / 5) < 1e-12
    est = s["metrics"]["bargain.precision"]["micro"]
    assert est["ci_low"] <= 1 / 5 <= est["ci_high"]
    lines = (tmp_path / "k3" / "episodes.jsonl").read_text().splitlines()
    turns = [t for line in lines for t in json.loads(line)["details"]["turns"]]
    assert all(t["k"] == 5 == len(t["candidates"]) and set(t["gold"]) <= set(t["candidates"])
               for t in turns)  # fmt: skip
    other = json.loads((tmp_path / "k3" / "manifest.json").read_text())["task_set_hash"]
    _run(tmp_path / "k20", "--track", "craigslist", "--labeller", "random")
    assert json.loads((tmp_path / "k20" / "manifest.json").read_text())["task_set_hash"] != other
