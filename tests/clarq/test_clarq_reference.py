"""Re-scoring the released GPT-4o transcripts reproduces the paper's figures exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clarq.helpers import REFERENCE, dialogue, result_entry, run_cli, write_result_file
from todeval.benchmarks.clarq import (
    ClarqSummary,
    Judge,
    VerdictStore,
    load_tasks,
    read_original,
    score_transcripts,
)
from todeval.benchmarks.clarq._original import gold_lines
from todeval.core.records import Summary


@pytest.fixture(scope="module")
def reference() -> ClarqSummary:
    transcripts = read_original(REFERENCE)
    assert transcripts.language == "en" and transcripts.warnings == []
    return score_transcripts(transcripts.records, sources=[transcripts.source]).summary


def test_headline_figures(reference: ClarqSummary) -> None:
    metrics = reference.metrics
    assert round(metrics["clarq.success"].micro.value or 0, 4) == 0.4846
    assert round(metrics["clarq.aqd"].micro.value or 0, 4) == 0.4923
    assert round(metrics["clarq.aql"].micro.value or 0, 4) == 70.4906
    assert all(m.micro.n == 260 for m in metrics.values())
    assert reference.n_episodes == 260 and reference.judge.unjudged == 0


def test_routes_and_the_judges_share(reference: ClarqSummary) -> None:
    r = reference.routes
    assert (r.exact, r.member, r.substring, r.no_prediction) == (15, 110, 0, 22)
    assert (r.judge, r.judge_success, r.judge_failure, r.unjudged) == (113, 1, 112, 0)
    assert reference.judge.decided == 113
    assert reference.judge.share_decided == pytest.approx(113 / 260)
    assert reference.judge.from_recorded == reference.judge.questions == 114
    assert reference.outcomes == {"success": 126, "failure": 134, "unjudged": 0}
    assert reference.labels["clarq.route"]["judge"] == 113


def test_intervals_breakdowns_and_schema(reference: ClarqSummary) -> None:
    s = reference.metrics["clarq.success"]
    assert s.micro.ci_low is not None and s.micro.ci_high is not None
    assert s.micro.ci_low < 0.4846 < s.micro.ci_high
    assert s.micro.wilson_low == pytest.approx(0.4245, abs=1e-4)
    assert s.micro.wilson_high == pytest.approx(0.5451, abs=1e-4)
    assert len(s.by_group) == 26 and all(e.n == 10 for e in s.by_group.values())
    assert s.macro is not None and s.macro.value == pytest.approx(126 / 260)
    depth = reference.by_depth["clarq.success"]
    assert {g: e.n for g, e in depth.items()} == {"1": 141, "2": 100, "3+": 19}
    assert reference.metrics["clarq.aqd"].micro.wilson_low is None
    assert reference.task_types[0] == "Gather_Resources" and len(reference.task_types) == 26
    # the output is the shared Summary schema
    Summary.model_validate(json.loads(reference.model_dump_json()))


def test_cli_writes_the_summary_and_prints_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "summary.json"
    code, stdout, stderr = run_cli(["score", "clarq", str(REFERENCE), "-o", str(out)], capsys)
    assert code == 0, stderr
    summary = ClarqSummary.model_validate_json(out.read_text(encoding="utf-8"))
    assert round(summary.metrics["clarq.success"].micro.value or 0, 4) == 0.4846
    assert summary.benchmark == "clarq" and summary.ci.resamples == 2000
    assert "0.4846" in stdout and "0.4923" in stdout and "70.4906" in stdout
    assert "exact 15, member 110, substring 0, no prediction 22, judge 113" in stdout
    assert "decided 113 of 260 outcomes (43.5%), 0 unjudged" in stdout
    assert "warning" not in stdout and stderr == ""


def test_without_recorded_verdicts_the_judged_dialogues_are_unjudged_not_failed() -> None:
    transcripts = read_original(REFERENCE)
    judge = Judge(VerdictStore())  # no recorded layer, no model
    summary = score_transcripts(transcripts.records, judge, resamples=100).summary
    assert summary.routes.unjudged == 113 and summary.judge.unjudged == 113
    success = summary.metrics["clarq.success"].micro
    assert success.n == 147 and success.value == pytest.approx(125 / 147)
    assert summary.success_bounds == pytest.approx([125 / 260, 238 / 260])
    assert summary.outcomes["unjudged"] == 113
    assert any("113 of 260 dialogues are unjudged (offline)" in w for w in summary.warnings)
    # AQD and AQL need no judge
    assert round(summary.metrics["clarq.aqd"].micro.value or 0, 4) == 0.4923


def test_another_judge_offline_gets_a_warning_and_leaves_the_judge_cases_open(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "s.json"
    argv = ["score", "clarq", str(REFERENCE), "--offline", "-o", str(out), "--resamples", "50",
            "--judge-model", "openai:my-judge@http://127.0.0.1:9/v1"]  # fmt: skip
    code, stdout, _ = run_cli(argv, capsys)
    assert code == 0
    summary = ClarqSummary.model_validate_json(out.read_text(encoding="utf-8"))
    assert summary.judge.model == "my-judge" and summary.judge.unjudged == 113
    assert any("is not the recorded judge (gpt-4o-2024-05-13)" in w for w in summary.warnings)
    assert "warning: judge model 'my-judge' is not the recorded judge" in stdout
    assert "S with every unjudged dialogue failed / succeeded: 0.4808 / 0.9154" in stdout


def test_several_files_go_to_a_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "copy.json.gz"
    copy.write_bytes(REFERENCE.read_bytes())
    out = tmp_path / "out"
    argv = ["score", "clarq", str(REFERENCE), str(copy), "-o", str(out), "--resamples", "20",
            "--episodes", str(tmp_path / "episodes.jsonl")]  # fmt: skip
    code, stdout, _ = run_cli(argv, capsys)
    assert code == 0 and stdout.count("ClarQ-LLM (en)") == 2
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "copy.summary.json",
        "l2l_GPT-4o_seeker_vs_GPT-4o_provider.Comp.En.summary.json",
    ]
    lines = (tmp_path / "episodes.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 520 and json.loads(lines[0])["task_id"] == "en/test/Gather_Resources-0"


def test_a_chinese_file_is_matched_with_the_chinese_tasks(tmp_path: Path) -> None:
    tasks = load_tasks("zh", "test")
    task = tasks[5]
    seeker = ["你好，请问怎么做？", *(["然后呢？"] * len(task.nodes)), "谢谢，再见！"]
    answers = task.gold_messages()[1:]
    entry = result_entry(task, [dialogue(task.gold_messages()[0], answers, seeker=seeker)])
    entry["all_response"] = "\n".join(task.responses)  # the prefix is optional in the file
    others = [result_entry(t, []) for t in tasks[:5]]
    path = write_result_file(tmp_path / "zh.json.gz", [[*others, entry]])
    read = read_original(path)
    assert read.language == "zh" and len(read.records) == 260
    scored = score_transcripts(read.records, resamples=10)
    (episode,) = [e for e in scored.episodes if e.route != "missing"]
    assert episode.task_id == task.task_id == "zh/test/Gather_Resources-5"
    assert (episode.route, episode.success, episode.aqd) == ("exact", True, 0.0)
    assert episode.aql == pytest.approx((9 + 4 * len(task.nodes) + 6) / (len(task.nodes) + 2))
    assert episode.depth == task.depth
    assert gold_lines("Jax: a\nJax: b\n0\n1\n") == ["Jax: a", "Jax: b"]  # task-file form
    assert gold_lines("Jax: a\n7") == ["Jax: a", "7"]
