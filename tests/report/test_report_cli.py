"""``todeval report``: the HTML file, table exports, panels, corpus summaries, exit codes."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from tests.report.helpers import rule_run, write_panel
from todeval.cli import main
from todeval.report import boards, load_inputs
from todeval.runner.store import RunDirectory


def _report(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["report", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_html_report_of_real_runs(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    code, stdout, _ = _report(capsys, *map(str, runs.values()), "-o", str(out))
    assert code == 0
    assert "4 run(s)" in stdout and "381 episodes" in stdout
    html = out.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    for section in ("leaderboard", "cost", "groups", "taxonomy", "panels", "transcripts"):
        assert f'<section id="{section}">' in html
    # leaderboard: every run, best first, CIs as numbers
    assert html.index('data-run="rule-agenda"') < html.index('data-run="mono-toy"')
    assert "[0.838, 0.949]" in html  # rule vs corpus booking accuracy CI
    # the unrealistic taxonomy and the detected simulator panel (rule: agenda vs corpus)
    assert 'id="tax-unrealistic"' in html
    assert 'id="panel-auto-0"' in html and "max − min = 0.103" in html


def test_default_output_is_report_html(
    runs: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, _ = _report(capsys, str(runs["rule"]))
    assert code == 0 and (tmp_path / "report.html").stat().st_size > 10_000


def test_csv_table_has_every_ci(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _report(capsys, str(runs["rule"]), str(runs["corpus"]), "--table", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["run"] for r in rows] == ["rule-agenda", "rule-corpus"]
    corpus = rows[1]
    key = "booking.booking_accuracy:micro"
    assert float(corpus[key]) == pytest.approx(105 / 117)
    assert float(corpus[key + "_ci_low"]) < float(corpus[key]) < float(corpus[key + "_ci_high"])
    assert corpus["usd_per_dialogue"] == "0.0" and corpus["role:user"] == "corpus"
    summary = RunDirectory(runs["corpus"]).read_summary()
    assert summary is not None
    assert (
        float(corpus[key + "_ci_low"]) == summary.metrics["booking.booking_accuracy"].micro.ci_low
    )


def test_markdown_and_latex_tables(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    md = tmp_path / "t.md"
    code, _, _ = _report(
        capsys, str(runs["corpus"]), str(runs["llm"]), "--table", "md", "-o", str(md)
    )
    assert code == 0
    text = md.read_text(encoding="utf-8")
    assert "| rule-corpus | rule | corpus | test | 117 | 0.897 [0.838, 0.949] |" in text
    assert "$0.0024" in text  # the scripted model's price
    code, out, _ = _report(capsys, str(runs["corpus"]), "--table", "latex")
    assert code == 0
    assert r"\toprule" in out and r"\bottomrule" in out
    assert r"0.897 {\scriptsize [0.838, 0.949]}" in out
    assert "rule-corpus" in out and r"task set" in out
    assert out.count(r"\\") == 2  # header + one row


def test_latex_and_markdown_escape_names(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    odd = tmp_path / "odd"
    shutil.copytree(runs["rule"], odd)
    manifest = json.loads((odd / "manifest.json").read_text(encoding="utf-8"))
    manifest["roles"]["system"]["player"] = "my_sys & 50% | {x}"
    (odd / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    code, out, _ = _report(capsys, str(odd), "--table", "latex")
    assert code == 0 and r"my\_sys \& 50\% | \{x\}" in out
    code, out, _ = _report(capsys, str(odd), "--table", "md")
    assert code == 0 and r"my_sys & 50% \| {x}" in out


def test_corpus_summary_gets_its_own_board(
    runs: dict[str, Path], mwz_summary: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = load_inputs([runs["rule"], mwz_summary])
    kinds = [(b.profile.benchmark, b.kind) for b in boards(inputs)]
    assert kinds == [("booking", "run"), ("multiwoz", "score")]
    out = tmp_path / "r.html"
    code, _, _ = _report(capsys, str(runs["rule"]), str(mwz_summary), "-o", str(out))
    assert code == 0
    html = out.read_text(encoding="utf-8")
    assert '<section id="corpus">' in html and 'id="lb-multiwoz-score"' in html
    summary = json.loads(mwz_summary.read_text())
    inform = summary["metrics"]["multiwoz.inform"]["micro"]
    assert f"[{inform['ci_low']:.2f}, {inform['ci_high']:.2f}]" in html
    code, out, _ = _report(capsys, str(mwz_summary), "--table", "csv")
    assert code == 0 and "multiwoz.inform:micro" in out.splitlines()[0]


def test_panel_directory_is_expanded(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    panel = tmp_path / "panel"
    panel.mkdir()
    shutil.copytree(runs["rule"], panel / "rule__agenda")
    shutil.copytree(runs["corpus"], panel / "rule__corpus")
    write_panel(
        panel, {"rule|agenda": panel / "rule__agenda", "rule|corpus": panel / "rule__corpus"}
    )
    inputs = load_inputs([panel])
    assert [r.key for r in inputs.runs] == ["rule__agenda", "rule__corpus"]
    assert inputs.panels[0].missing == ["rule|llm-missing"]
    out = tmp_path / "r.html"
    code, _, _ = _report(capsys, str(panel), "-o", str(out))
    assert code == 0
    html = out.read_text(encoding="utf-8")
    assert 'id="panel-panel-spread"' in html and 'id="panel-panel-tau"' in html
    assert "Runs not (yet) on disk: rule|llm-missing" in html
    assert "Top system changes across user simulators: </b>no" in html
    # runs of a panel.json are not shown a second time as a detected panel
    assert 'id="panel-auto-0"' not in html


def test_run_in_progress_gets_a_provisional_summary(runs: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "partial"
    shutil.copytree(runs["corpus"], run)
    lines = (run / "episodes.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (run / "episodes.jsonl").write_text("".join(lines[:40]) + lines[40][:100], encoding="utf-8")
    (run / "summary.json").unlink()
    [loaded] = load_inputs([run]).runs
    assert loaded.provisional and loaded.n_episodes == 40  # the torn line is ignored
    assert loaded.summary.metrics["booking.booking_accuracy"].micro.n == 40


def test_recomputed_summary_equals_the_runners(runs: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "copy"
    shutil.copytree(runs["corpus"], run)
    stored = RunDirectory(run).read_summary()
    (run / "summary.json").unlink()
    [loaded] = load_inputs([run]).runs
    assert stored is not None
    assert loaded.summary.metrics == stored.metrics and loaded.summary.labels == stored.labels


def test_bad_inputs_exit_codes(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _report(capsys, str(tmp_path / "nope"))
    assert code == 3 and "no such file or directory" in err and "Traceback" not in err
    code, _, err = _report(capsys, str(tmp_path))
    assert code == 3 and "not a run directory" in err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    code, _, err = _report(capsys, str(bad))
    assert code == 3 and "not valid JSON" in err
    other = tmp_path / "other.json"
    other.write_text('{"a": 1}', encoding="utf-8")
    code, _, err = _report(capsys, str(other))
    assert code == 3 and "neither a score summary nor a panel file" in err
    broken = tmp_path / "broken"
    shutil.copytree(runs["rule"], broken)
    with (broken / "episodes.jsonl").open("a", encoding="utf-8") as fh:
        fh.write("{}\n")
    code, _, err = _report(capsys, str(broken))
    assert code == 3 and "line 118 is not a valid episode record" in err
    with pytest.raises(SystemExit) as exc:
        main(["report", str(runs["rule"]), "--table", "xlsx"])
    assert exc.value.code == 2
    code, _, err = _report(capsys, str(runs["rule"]), "-o", str(tmp_path / "no" / "dir" / "r.html"))
    assert code == 3 and "cannot write" in err


def test_same_run_twice_is_loaded_once(runs: dict[str, Path], tmp_path: Path) -> None:
    inputs = load_inputs([runs["rule"], runs["rule"] / ".." / runs["rule"].name])
    assert len(inputs.runs) == 1


def test_clashing_directory_names_get_distinct_keys(runs: dict[str, Path], tmp_path: Path) -> None:
    a = rule_run(tmp_path / "a" / "run", "--limit", "3")
    b = tmp_path / "b" / "run"
    shutil.copytree(a, b)
    keys = [r.key for r in load_inputs([a, b]).runs]
    assert keys == ["run", "b--run"]


def test_panel_from_the_panel_runner(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    panel = tmp_path / "panel"
    args = ["run", "booking", "--systems", "rule", "--users", "agenda,corpus", "--limit", "20"]
    assert main([*args, "--out", str(panel), "--quiet"]) == 0
    capsys.readouterr()
    inputs = load_inputs([panel])
    assert len(inputs.runs) == 2 and inputs.panels[0].missing == []
    assert set(inputs.panels[0].run_keys) == {"rule|agenda", "rule|corpus"}
    out = tmp_path / "r.html"
    code, _, _ = _report(capsys, str(panel), "-o", str(out))
    assert code == 0
    html = out.read_text(encoding="utf-8")
    assert 'id="panel-panel-spread"' in html and "max − min (paper)" in html
    assert "One system: no rank stability" in html


def test_generation_runs_get_corpus_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps({"default": {"text": '{"response": "Booked <b>it</b>.", "state": {}}'}}),
        encoding="utf-8",
    )
    run = tmp_path / "turns"
    argv = ["run", "multiwoz-turns", "--model", f"scripted:{script}", "--limit", "3"]
    assert main([*argv, "--no-cache", "--out", str(run), "--quiet"]) == 0
    capsys.readouterr()
    [board] = boards(load_inputs([run]))
    assert board.profile.primary == "multiwoz.combined"
    assert [c.title for c in board.profile.columns][-1] == "Format failures %"
    assert f"scripted:{script}" in board.rows[0].roles["system"]
    code, out, _ = _report(capsys, str(run), "--table", "md")
    assert code == 0 and "| Combined |" in out and "| turns |" in out


def test_wilson_is_shown_where_the_bootstrap_collapses(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The default run books all 117 goals: the bootstrap CI is [1, 1]; every rendering shows
    the Wilson interval [0.968, 1.000] instead, marked, and says why."""
    page = tmp_path / "r.html"
    code, _, _ = _report(capsys, str(runs["rule"]), "-o", str(page))
    assert code == 0
    html = page.read_text(encoding="utf-8")
    micro = '<span class="v">1.000</span><span class="ci">[0.968, 1.000]W</span>'
    assert micro in html and "1.000 [0.968, 1.000] (Wilson), n = 117" in html  # cell, error bar
    assert '<span class="ci">[1.000, 1.000]</span>' in html  # macro: no Wilson for a mean of means
    assert "Wilson score interval is shown instead" in html
    cells = {"md": "1.000 [0.968, 1.000]W", "latex": r"1.000 {\scriptsize [0.968, 1.000]W}"}
    for fmt, cell in cells.items():
        code, out, _ = _report(capsys, str(runs["rule"]), "--table", fmt)
        assert code == 0 and cell in out
        assert "Wilson score interval is shown instead" in out
    code, out, _ = _report(capsys, str(runs["rule"]), "--table", "csv")
    row = next(csv.DictReader(io.StringIO(out)))
    key = "booking.booking_accuracy:micro"
    assert float(row[key + "_ci_low"]) == float(row[key + "_ci_high"]) == 1.0
    assert float(row[key + "_wilson_low"]) == pytest.approx(0.9682, abs=1e-4)
    assert float(row[key + "_wilson_high"]) == 1.0


def test_one_board_per_task_set_and_smaller_runs_flagged(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An n=5 run is flagged on the test-set board, never ranked as if it were comparable,
    and the unrealistic-set run gets a board of its own."""
    small = rule_run(tmp_path / "rule-5", "--limit", "5")
    inputs = load_inputs([runs["rule"], runs["corpus"], small, runs["unrealistic"]])
    found = [(b.profile.benchmark, b.task_set, [r.key for r in b.rows]) for b in boards(inputs)]
    assert found == [
        ("booking", "test", ["rule-5", "rule-agenda", "rule-corpus"]),
        ("booking", "unrealistic", ["rule-unreal"]),
    ]
    test_board = boards(inputs)[0]
    assert [test_board.size_flag(r) for r in test_board.rows] == ["n = 5 of 117", None, None]
    page = tmp_path / "r.html"
    argv = [str(p) for p in (runs["rule"], small, runs["unrealistic"])]
    code, _, _ = _report(capsys, *argv, "-o", str(page))
    html = page.read_text(encoding="utf-8")
    assert code == 0 and "n = 5 of 117" in html and "Sizes differ" in html
    assert 'id="lb-booking-test-run"' in html and 'id="lb-booking-unrealistic-run"' in html
    assert "task set unrealistic" in html
    code, out, _ = _report(capsys, *argv, "--table", "md")
    assert code == 0 and "| 5 (of 117) |" in out and "Sizes differ" in out
