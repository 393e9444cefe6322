"""Who failed in ClarQ (issue 30): the rule-read review of seeker and provider faults, on
scripted seekers against ``rule`` (no provider fault) and against a provider that plants
refusals and gifts at known rates (``todeval.testing.clarq_faults``): precision and recall of
the review per planted kind, with Wilson intervals."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from todeval.benchmarks.clarq import load_tasks
from todeval.cli import main
from todeval.review.command import review_run
from todeval.runner.store import RunDirectory
from todeval.stats import wilson_interval
from todeval.testing.clarq_faults import planted

FAULTY = "todeval.testing.clarq_faults:FaultyProvider"
GENERIC = "todeval.benchmarks.clarq.controls:GenericSeeker"
LIMIT = "60"


def _run(out: Path, seeker: str, provider: str = "rule") -> Path:
    args = ["run", "clarq", "--seeker", seeker, "--provider", provider, "--limit", LIMIT]
    assert main([*args, "--out", str(out), "--quiet"]) == 0
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("clarq-review")
    return {
        "oracle": _run(root / "oracle", "oracle"),
        "quitter": _run(root / "quitter", "quitter"),
        "oracle-faulty": _run(root / "oracle-faulty", "oracle", FAULTY),
        "generic-faulty": _run(root / "generic-faulty", GENERIC, FAULTY),
    }


def test_the_oracle_against_rule_has_no_provider_fault(runs: dict[str, Path]) -> None:
    _, reviews = review_run(runs["oracle"])
    assert len(reviews) == int(LIMIT)
    assert all(r.verdict == "none" for r in reviews)
    assert not [f for r in reviews for f in r.faults if f.side == "simulator"]


def test_a_seeker_that_quits_is_the_seeker_s_fault(runs: dict[str, Path]) -> None:
    _, reviews = review_run(runs["quitter"])
    assert {r.verdict for r in reviews} == {"agent"}
    assert all(any(f.kind == "quit_early" for f in r.faults) for r in reviews)


@pytest.mark.parametrize(
    ("run", "mistake", "kind"),
    [
        ("oracle-faulty", "refusal", "refused_targeted"),
        ("generic-faulty", "gift", "release_unasked"),
    ],
)
def test_planted_provider_mistakes_are_found(
    runs: dict[str, Path], run: str, mistake: str, kind: str
) -> None:
    """Measured on all 260 tasks (docs/user-simulators.md): refusals precision 1.000, recall
    0.986 (424 of 430); gifts 1.000 / 0.994 (177 of 178)."""
    records = {r.episode_id: r for r in RunDirectory(runs[run]).iter_episodes()}
    _, reviews = review_run(runs[run])
    hits = flagged = planted_total = 0
    for review in reviews:
        truth = {t for t, k in planted(records[review.episode_id].events).items() if k == mistake}
        found = {f.turn for f in review.faults if f.kind == kind}
        hits += len(truth & found)
        flagged += len(found)
        planted_total += len(truth)
    assert planted_total >= 20, planted_total  # enough planted to measure
    precision, recall = hits / flagged, hits / planted_total
    assert precision >= 0.9 and recall >= 0.9, (precision, recall)
    assert wilson_interval(hits, planted_total)[0] > 0.8


def test_todeval_review_of_clarq_runs(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["review", str(runs["oracle-faulty"]), "--json"]) == 0
    [summary] = json.loads(capsys.readouterr().out)
    assert summary["agent"] == "seeker" and summary["simulator"] == "provider"
    rate = summary["simulator_fault_rate"]
    assert rate["k"] > 0 and rate["low"] <= rate["value"] <= rate["high"]
    unspoiled = summary["success_unspoiled"]
    assert unspoiled["n"] == summary["episodes"] - rate["k"]
    assert main(["review", str(runs["quitter"])]) == 0
    text = capsys.readouterr().out
    assert "seeker" in text and "quit_early" in text and "(conditional)" in text


def test_review_refuses_what_it_cannot_read(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["review", str(tmp_path / "missing")]) == 3
    assert "not a run directory" in capsys.readouterr().err
    other = tmp_path / "other"
    shutil.copytree(runs["quitter"], other)
    manifest = json.loads((other / "manifest.json").read_text())
    manifest["benchmark"] = "nosuch"
    (other / "manifest.json").write_text(json.dumps(manifest))
    assert main(["review", str(other)]) == 3
    err = capsys.readouterr().err
    assert "no reviewer for nosuch runs" in err and "booking, clarq" in err


# the LLM reviewer: "agent" when the seeker said goodbye, else "simulator"; about one task
# (named by one of its responses) it answers nothing readable
def _reviewer_script(unreadable: str) -> dict[str, object]:
    return {
        "rules": [
            {"match": re.escape(unreadable), "reply": "I am not sure."},
            {"match": r"seeker: Goodbye", "reply": '{"verdict": "agent", "reason": "it quit"}'},
        ],
        "default": '{"verdict": "simulator", "reason": "the provider held back"}',
    }


def test_the_llm_reviewer_on_the_test_server(
    runs: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Failed episodes only, one call each (cached on a repeat), verdicts beside the rules'
    with their agreement and kappa, the calls accounted; an unreadable answer is counted."""
    from todeval.backends.scripted import Script
    from todeval.review.llm import parse_verdict
    from todeval.testing.openai_server import ServerConfig
    from todeval.testing.server_process import ServerProcess

    assert parse_verdict('Sure: {"verdict": "Both", "reason": "x"}') == ("both", "x")
    assert parse_verdict('{"verdict": "nobody"}') is None and parse_verdict("no") is None
    monkeypatch.setenv("TODEVAL_CACHE_DIR", str(tmp_path / "cache"))
    quitter = str(runs["quitter"])
    first = next(RunDirectory(runs["quitter"]).iter_episodes())
    [task] = [t for t in load_tasks("en", "test") if t.task_id == first.task_id]
    script = Script.model_validate(_reviewer_script(task.nodes[0].text))
    out = tmp_path / "reviews.jsonl"
    with ServerProcess(ServerConfig(script=script)) as server:
        argv = ["review", quitter, "--review-model", f"openai:reviewer@{server.base_url}"]
        assert main([*argv, "--json", "-o", str(out)]) == 0
        summary = json.loads(capsys.readouterr().out)
        asked = len(server.requests())
        assert main([*argv, "--json"]) == 0  # again: from the cache
        assert len(server.requests()) == asked
        assert main(argv) == 0
        prompt = server.requests()[0]["body"]["messages"][0]["content"]
    text = capsys.readouterr().out
    assert "LLM reviewer reviewer: " in text and "agreement with the rules: " in text
    assert asked == int(LIMIT)  # every quitter episode failed
    assert "The provider holds these responses" in prompt and "seeker: Goodbye" in prompt
    llm = summary[0]["llm"]
    assert llm["model"] == "reviewer" and llm["calls"] == int(LIMIT)
    assert llm["failures"] >= 1 and llm["reviewed"] == int(LIMIT) - llm["failures"]
    assert llm["verdicts"]["agent"]["k"] == llm["reviewed"]
    assert llm["agreement"]["value"] == 1.0 and llm["kappa"] is None  # one class on both sides
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sum(line["llm_verdict"] == "agent" for line in lines) == llm["reviewed"]


def test_failed_episodes_go_to_people_with_the_rule_verdict_as_gold(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``annotate export --from review:RUNS``: one item per failed episode (transcript, brief,
    four answers), the rules' verdict in the key; people's answers against it by ``annotate
    agreement --gold``."""
    spec = f"review:{runs['quitter']},{runs['oracle-faulty']}"
    out = tmp_path / "who.jsonl"
    argv = ["annotate", "export", "--from", spec, "--n", "500", "--stratify", "run"]
    assert main([*argv, "-o", str(out)]) == 0
    items = [json.loads(line) for line in out.read_text().splitlines()]
    key = {k["id"]: k["gold"] for k in map(json.loads, (tmp_path / "who.key.jsonl").open())}
    failed = {
        f"{path.name}/{r.episode_id}": r.verdict
        for path in (runs["quitter"], runs["oracle-faulty"])
        for r in review_run(path)[1]
        if r.verdict != "none"
    }
    assert {i["id"] for i in items} == set(failed) and len(items) > int(LIMIT)
    assert all(key[i] == [v] for i, v in failed.items())
    assert not any("verdict" in i["strata"] for i in items)  # the gold stays in the key
    first = items[0]
    assert [c["id"] for c in first["candidates"]] == ["agent", "simulator", "both", "unclear"]
    assert first["turns"][0]["speaker"] == "provider" and first["fields"][1]["name"] == "brief"
    answers = tmp_path / "who.answers.jsonl"
    rows = [
        {"item": i, "annotator": who, "choice": gold if who == "a" or n % 4 else ["both"]}
        for n, (i, gold) in enumerate(sorted(key.items()))
        for who in ("a", "b")
    ]
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    capsys.readouterr()
    assert (
        main(["annotate", "agreement", str(answers), "--gold", str(out.with_suffix(".key.jsonl"))])
        == 0
    )
    assert "majority" in capsys.readouterr().out
