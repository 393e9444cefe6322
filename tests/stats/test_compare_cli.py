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
from todeval.stats.power import PowerReport

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
    # a clearly better pair (the agenda user books every goal with the rule system, the corpus
    # user's replayed turns 15 fewer) and an identical one (the same command twice)
    "corpus117": ["--user", "corpus"],
    "agenda117": [],
    "agenda60again": ["--limit", "60"],
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


def _table_rows(text: str) -> list[str]:
    """The metric rows of the first comparison table (after its dashes line)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("metric ")) + 2
    end = lines.index("", start)
    return lines[start:end]


def test_a_clearly_better_pair_gets_a_verdict_on_the_primary_metric(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cmp.json"
    args = ["compare", str(runs["corpus117"]), str(runs["agenda117"]), "-o", str(out)]
    assert main(args) == 0
    text = capsys.readouterr().out
    comparison = Comparison.model_validate_json(out.read_text())
    pair = comparison.pairs[0]
    first = pair.metrics[0]
    # the profile's primary first, then its leaderboard columns' metrics, then the rest by name
    names = [m.metric for m in pair.metrics]
    assert names[:4] == [
        "booking.booking_accuracy",
        "booking.inform",
        "booking.aborted",
        "booking.turns",
    ]
    assert names[4:] == sorted(names[4:])
    assert first.primary and first.better == "higher" and first.title == "Booking accuracy"
    a, b = _episodes(runs["corpus117"]), _episodes(runs["agenda117"])
    metric = "booking.booking_accuracy"
    gained = sum(1 for t in a if a[t][metric] == 0.0 and b[t][metric] == 1.0)
    lost = sum(1 for t in a if a[t][metric] == 1.0 and b[t][metric] == 0.0)
    assert gained >= 10 and lost == 0, "the corpus user should miss some goals the agenda books"
    assert first.diff == pytest.approx(gained / 117)
    # the pairs differ one way only, so no resample falls at or below 0: p raw is the
    # bootstrap's floor, a bound, and so is its Holm adjustment (the floor times the family):
    # both shown as bounds, never '<0.001' beside a precise-looking 0.011
    assert first.p_at_floor and first.p_value == pytest.approx(2 / 2001)
    assert first.p_adjusted_bound and first.p_adjusted == pytest.approx(
        comparison.method.family * 2 / 2001
    )
    assert first.significant
    verdict = pair.verdict
    assert verdict is not None and verdict.outcome == "better"
    expected = (
        f"verdict: B is better than A on Booking accuracy by {first.diff:.3f} "
        f"[{first.ci_low:.3f}, {first.ci_high:.3f}], Holm p <= {first.p_adjusted:.3f}"
    )
    assert expected in text.splitlines()
    assert verdict.text == expected.removeprefix("verdict: ")
    rows = _table_rows(text)
    assert rows[0].split()[:3] == ["booking.booking_accuracy", "(primary)", "higher"]
    assert f"<={first.p_adjusted:.3f}" in rows[0] and "<=0.001" in rows[0]
    assert " better " in rows[0]
    # effort: fewer turns with the agenda user, and lower is better
    turns = next(r for r in rows if r.startswith("booking.turns "))
    assert turns.split()[1] == "lower" and " better " in turns
    assert "better: the direction the benchmark's profile declares" in text


def test_an_identical_pair_detects_nothing_and_says_what_it_could(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from statsmodels.stats.power import NormalIndPower

    out = tmp_path / "cmp.json"
    args = ["compare", str(runs["agenda60"]), str(runs["agenda60again"]), "-o", str(out)]
    assert main(args) == 0
    text = capsys.readouterr().out
    comparison = Comparison.model_validate_json(out.read_text())
    first = comparison.pairs[0].metrics[0]
    assert first.metric == "booking.booking_accuracy" and first.diff == 0.0
    assert not first.significant and not first.p_at_floor and first.p_value == 1.0
    # detectable at this size: 60 paired 0/1 tasks at 80% power and Holm's strictest level
    family = comparison.method.family
    alpha = 0.05 / family
    assert comparison.method.alpha_adjusted == pytest.approx(alpha)
    effect = NormalIndPower().solve_power(
        effect_size=None, nobs1=60, alpha=alpha, power=0.8, ratio=0
    )
    k2 = effect**2 * 60  # a shift D of 0/1 values needs sd >= sqrt(D (1 - D))
    assert first.detectable == pytest.approx(k2 / (60 + k2), abs=1e-4)
    expected = (
        "verdict: no detectable difference on Booking accuracy: B - A +0.000 [+0.000, +0.000], "
        f"Holm p 1.000 (not below 0.05); detectable at this size: {first.detectable:.3f}"
    )
    assert expected in text.splitlines()
    assert comparison.pairs[0].verdict is not None
    assert comparison.pairs[0].verdict.outcome == "no_difference"
    assert all(r.split()[-3:-1] != ["better", "worse"] for r in _table_rows(text))
    # --metrics narrows the family: the same pair on the primary alone detects smaller shifts
    assert main([*args[:3], "--metrics", "booking.booking_accuracy"]) == 0
    narrow = capsys.readouterr().out
    assert "detectable at this size: " in narrow
    shown = float(narrow.split("detectable at this size: ")[1].split()[0])
    assert shown < first.detectable


def test_power_takes_two_runs_as_compare_does(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "power.json"
    a, b = str(runs["corpus117"]), str(runs["agenda117"])
    assert main(["power", a, b, "-o", str(out)]) == 0
    text = capsys.readouterr().out
    report = PowerReport.model_validate_json(out.read_text())
    assert report.metric == "booking.booking_accuracy"  # the profile's primary
    assert report.measured is not None and report.measured.tasks == 117
    ea, eb = _episodes(runs["corpus117"]), _episodes(runs["agenda117"])
    metric = "booking.booking_accuracy"
    diff = sum(eb[t][metric] - ea[t][metric] for t in ea) / len(ea)
    assert report.measured.diff == pytest.approx(diff)
    assert f"detectable at this size: {report.measured.detectable:.3f}" in text
    # the older form gives the same figures
    assert main(["power", "--from", a, b, "--metric", "booking.booking_accuracy"]) == 0
    assert capsys.readouterr().out == text
    # a pilot with trials is projected at its own trial count unless --trials says otherwise
    pilot = tmp_path / "pilot.json"
    assert main(["power", str(runs["trials5"]), "-o", str(pilot)]) == 0
    assert {r.trials for r in PowerReport.model_validate_json(pilot.read_text()).rows} == {2}
    capsys.readouterr()
    # refused where compare refuses them; both forms at once is a usage error
    assert main(["power", str(runs["rule20"]), str(runs["agenda60"])]) == 4
    assert "--shared-tasks" in _one_line_error(capsys)
    assert main(["power", a, "--from", b]) == 2
    _one_line_error(capsys)
    assert main(["power", a, b, "--metric", "booking.nope"]) == 2
    assert "booking.inform" in _one_line_error(capsys)


def test_figures_recorded_by_one_run_only_are_shown(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rule system records no latency, an agent does: the agent's p50 is shown beside
    'not recorded', with no ratio (the issue: tokens shown, latency left out)."""
    a = _copy(runs["rule20"], tmp_path / "a")
    b = _copy(runs["rule20"], tmp_path / "b")
    summary = json.loads((b / "summary.json").read_text())
    summary["latency"] = {"system": {"p50": 0.4, "p90": 0.9, "mean": 0.5}}
    (b / "summary.json").write_text(json.dumps(summary))
    out = tmp_path / "cmp.json"
    assert main(["compare", str(a), str(b), "--metrics", "booking.inform", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    row = next(line for line in text.splitlines() if line.startswith("latency.system.p50 "))
    assert row.split()[1:] == ["not", "recorded", "0.4", "-"]
    ratios = {r.name: r for r in Comparison.model_validate_json(out.read_text()).pairs[0].ratios}
    assert ratios["latency.system.p50"].a is None and ratios["latency.system.p50"].ratio is None
    assert "cost/latency (whole runs; lower is better)" in text


def test_a_verdict_explains_a_ci_that_excludes_zero_before_the_adjustment() -> None:
    from todeval.results.compare import verdict
    from todeval.results.comparison_record import MetricComparison

    m = MetricComparison(
        metric="x.success", title="Success", primary=True, better="higher", n_tasks=50,
        mean_a=0.5, mean_b=0.6, diff=0.1, ci_low=0.02, ci_high=0.18, p_value=0.02,
        p_adjusted=0.2, significant=False, detectable=0.21, binary=True,
    )  # fmt: skip
    text = verdict(m, "holm", 0.05, 10).text
    assert text == (
        "no detectable difference on Success: B - A +0.100 [+0.020, +0.180], Holm p 0.200 (not "
        "below 0.05; the CI excludes 0 before adjusting for the 10 tests, not after); "
        "detectable at this size: 0.210"
    )
    m.significant, m.p_adjusted, m.better = True, 0.03, "lower"
    assert verdict(m, "holm", 0.05, 10).text == (
        "B is worse than A on Success (lower is better) by 0.100 [0.020, 0.180], Holm p 0.030"
    )
