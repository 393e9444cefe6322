"""``todeval compare`` end to end on real booking runs made through the CLI."""

import json
import shutil
import sys
from pathlib import Path

import pytest
from scipy.stats import binomtest

from todeval.cli import main
from todeval.errors import RefusedError
from todeval.results.compare import compare_runs
from todeval.results.comparison_record import Comparison

ROOT = Path(__file__).resolve().parents[2]
ORACLE = [
    "--system",
    "tests.booking.scripted:OracleSystem",
    "--user",
    "tests.booking.scripted:OracleUser",
]
FIRST = ["--limit-mode", "first"]  # the first N: nested selections that share tasks
RUNS = {
    "rule20": ["--limit", "20", *FIRST],
    "oracle30": [*ORACLE, "--limit", "30", *FIRST],
    "agenda60": ["--limit", "60"],
    "corpus60": ["--user", "corpus", "--limit", "60"],
    "dev5": ["--tasks", "dev", "--limit", "5"],
    "trials5": ["--limit", "5", "--trials", "2", *FIRST],
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    base = tmp_path_factory.mktemp("runs")
    out = {}
    for name, options in RUNS.items():
        path = base / name
        assert main(["run", "booking", *options, "--out", str(path), "--quiet"]) == 0
        out[name] = path
    return out


def _episodes(path: Path) -> dict[str, dict[str, float]]:
    lines = (path / "episodes.jsonl").read_text().splitlines()
    return {r["task_id"]: r["metrics"] for r in map(json.loads, lines)}


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("todeval: error: ") and "\n" not in err and "Traceback" not in err
    return err


def test_compare_reports_shared_tasks_and_writes_json(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cmp.json"
    args = ["compare", str(runs["rule20"]), str(runs["oracle30"]), "--shared-tasks", "-o", str(out)]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "shared tasks: 20 (dropped: 0 only in A, 10 only in B)" in text
    # who played each role, from the manifests' identity (not from config keys)
    assert "system:       rule -> tests.booking.scripted:OracleSystem" in text
    assert "user:         agenda -> tests.booking.scripted:OracleUser" in text
    assert "selection:    test, 20 first -> test, 30 first" in text
    assert "protocol:     clemtodd" in text  # the default
    assert "config differs: limit: 20 -> 30" in text  # the role keys are on the role lines
    assert "booking.booking_accuracy" in text and "McNemar p (b/c)" in text
    comparison = Comparison.model_validate_json(out.read_text())
    pair = comparison.pairs[0]
    assert comparison.baseline == "rule20" and pair.run == "oracle30"
    assert (pair.shared_tasks, pair.dropped_baseline_only, pair.dropped_run_only) == (20, 0, 10)
    assert pair.config_diff["limit"] == [20, 30]
    assert pair.selection_diff == ["selection.limit: 20 vs 30"]
    assert comparison.runs[1].roles == {
        "system": "tests.booking.scripted:OracleSystem",
        "user": "tests.booking.scripted:OracleUser",
    }
    assert (comparison.runs[0].selection, comparison.runs[0].protocol) == (
        "test, 20 first",
        "clemtodd",
    )
    a, b = _episodes(runs["rule20"]), _episodes(runs["oracle30"])
    shared = sorted(set(a) & set(b))
    turns = next(m for m in pair.metrics if m.metric == "booking.turns")
    expected = sum(b[t]["booking.turns"] - a[t]["booking.turns"] for t in shared) / len(shared)
    assert turns.n_tasks == 20 and turns.diff == pytest.approx(expected)
    assert turns.ci_low <= turns.diff <= turns.ci_high and turns.mcnemar is None
    # the same command again gives the same bytes
    assert main([*args[:-1], str(tmp_path / "again.json")]) == 0
    assert (tmp_path / "again.json").read_text() == out.read_text()


def test_mcnemar_counts_match_the_episodes(runs: dict[str, Path]) -> None:
    metric = "booking.booking_accuracy"
    comparison = compare_runs([runs["agenda60"], runs["corpus60"]], metrics=[metric])
    m = comparison.pairs[0].metrics[0]
    a, b = _episodes(runs["agenda60"]), _episodes(runs["corpus60"])
    b_count = sum(1 for t in a if a[t][metric] == 1.0 and b[t][metric] == 0.0)
    c_count = sum(1 for t in a if a[t][metric] == 0.0 and b[t][metric] == 1.0)
    assert b_count + c_count > 0, "the fixture runs should disagree somewhere"
    assert m.mcnemar is not None and (m.mcnemar.b, m.mcnemar.c) == (b_count, c_count)
    assert m.mcnemar.p_value == pytest.approx(binomtest(b_count, b_count + c_count).pvalue)
    assert m.binary and m.n_tasks == 60
    assert m.diff == pytest.approx((c_count - b_count) / 60)


def test_several_runs_and_trials(runs: dict[str, Path]) -> None:
    paths = [runs["trials5"], runs["rule20"], runs["oracle30"]]
    with pytest.raises(RefusedError, match=r"selection\.limit: 5 vs 20"):
        compare_runs(paths)
    comparison = compare_runs(paths, shared_tasks=True)
    assert [p.run for p in comparison.pairs] == ["rule20", "oracle30"]
    first = comparison.pairs[0]
    assert first.shared_tasks == 5 and first.dropped_run_only == 15
    assert comparison.runs[0].max_trials == 2
    assert all(m.mcnemar is None for m in first.metrics)
    assert any("several trials" in n for n in first.notes)


def test_different_task_sets_are_refused(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", str(runs["rule20"]), str(runs["dev5"])]) == 4
    err = _one_line_error(capsys)
    assert "selection.task_set: 'test' vs 'dev'" in err
    # not even on their shared tasks (there are none)
    assert main(["compare", str(runs["rule20"]), str(runs["dev5"]), "--shared-tasks"]) == 4
    assert "selection.task_set" in _one_line_error(capsys)


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _edit_json(path: Path, **changes: object) -> None:
    data = json.loads(path.read_text())
    for key, value in changes.items():
        target = data
        *parents, last = key.split("__")
        for p in parents:
            target = target[p]
        target[last] = value
    path.write_text(json.dumps(data))


def test_changed_task_content_other_benchmark_and_no_shared_tasks_are_refused(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    changed = _copy(runs["rule20"], tmp_path / "changed")
    _edit_json(changed / "manifest.json", task_set_hash="0" * 16)
    assert main(["compare", str(runs["rule20"]), str(changed)]) == 4
    assert "content differs" in _one_line_error(capsys)

    other = _copy(runs["rule20"], tmp_path / "other")
    _edit_json(other / "manifest.json", benchmark="bargain")
    assert main(["compare", str(runs["rule20"]), str(other)]) == 4
    assert "benchmark" in _one_line_error(capsys)

    ids = sorted(_episodes(runs["rule20"]))
    first = tmp_path / "first"
    second = tmp_path / "second"
    for path, task in ((first, ids[0]), (second, ids[1])):
        assert main(["run", "booking", "--task-ids", task, "--out", str(path), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["compare", str(first), str(second)]) == 4
    err = _one_line_error(capsys)
    assert f"selection.ids: [{ids[0]!r}] vs [{ids[1]!r}]" in err and "--shared-tasks" in err
    assert "content differs" not in err
    assert main(["compare", str(first), str(second), "--shared-tasks"]) == 4
    assert "share no" in _one_line_error(capsys)


def test_bad_input_and_usage_errors(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rule = str(runs["rule20"])
    assert main(["compare", rule, str(tmp_path / "missing")]) == 3
    assert "no such run directory" in _one_line_error(capsys)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["compare", rule, str(empty)]) == 3
    assert "no manifest.json" in _one_line_error(capsys)

    broken = _copy(runs["rule20"], tmp_path / "broken")
    (broken / "manifest.json").write_text("{not json")
    assert main(["compare", rule, str(broken)]) == 3
    _one_line_error(capsys)

    torn = _copy(runs["rule20"], tmp_path / "torn")
    lines = (torn / "episodes.jsonl").read_text().splitlines()
    lines[3] = "{garbage"
    (torn / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["compare", rule, str(torn)]) == 3
    assert "line 4" in _one_line_error(capsys)

    assert main(["compare", rule]) == 2
    _one_line_error(capsys)
    assert main(["compare", rule, rule, "--metrics", "booking.nope"]) == 2
    assert "booking.inform" in _one_line_error(capsys)
    assert main(["compare", rule, rule, "--resamples", "0"]) == 2
    _one_line_error(capsys)
    # an output that cannot be written is bad input
    assert main(["compare", rule, rule, "-o", str(tmp_path / "no" / "dir" / "x.json")]) == 3
    _one_line_error(capsys)


def test_cost_and_latency_ratios_from_summaries(runs: dict[str, Path], tmp_path: Path) -> None:
    a = _copy(runs["rule20"], tmp_path / "a")
    b = _copy(runs["rule20"], tmp_path / "b")
    for path, usd, p50 in ((a, 0.02, 0.5), (b, 0.05, 0.25)):
        summary = json.loads((path / "summary.json").read_text())
        summary["cost"]["usd_per_episode"] = usd
        summary["latency"] = {"system": {"p50": p50, "p90": 1.0, "mean": 0.6}}
        (path / "summary.json").write_text(json.dumps(summary))
    pair = compare_runs([a, b], metrics=["booking.inform"]).pairs[0]
    ratios = {r.name: r for r in pair.ratios}
    assert ratios["cost.usd_per_episode"].ratio == pytest.approx(2.5)
    assert ratios["latency.system.p50"].ratio == pytest.approx(0.5)
    assert ratios["latency.system.p90"].ratio == pytest.approx(1.0)
    assert "cost.usd_per_success" not in ratios  # zero in both: nothing to compare
    (b / "summary.json").unlink()
    pair = compare_runs([a, b], metrics=["booking.inform"]).pairs[0]
    assert pair.ratios == [] and any("summary.json" in n for n in pair.notes)


def test_summaries_of_runs_carry_wilson_for_binary_metrics(runs: dict[str, Path]) -> None:
    summary = json.loads((runs["agenda60"] / "summary.json").read_text())
    accuracy = summary["metrics"]["booking.booking_accuracy"]
    assert accuracy["micro"]["wilson_low"] is not None
    assert all(g["wilson_high"] is not None for g in accuracy["by_group"].values())
    assert summary["metrics"]["booking.turns"]["micro"]["wilson_low"] is None
