"""``todeval compare`` decides comparability from the manifests' typed identity (benchmark,
task set, protocol, selection), never from a benchmark's config keys; ``--shared-tasks``
compares runs over different selections of one task set on the tasks both scored; run
directories written by 0.1.0 still compare."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from todeval.cli import main
from todeval.results.compare import compare_runs

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "before_refactor"
MULTIWOZ_SCRIPT = FIXTURES / "multiwoz_script.json"


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("todeval: error: ") and "\n" not in err and "Traceback" not in err
    return err


def _old_run(name: str, tmp_path: Path) -> Path:
    """A copy of a run directory written by 0.1.0, its episodes unpacked."""
    out = tmp_path / f"old-{name}"
    shutil.copytree(FIXTURES / name, out)
    with gzip.open(out / "episodes.jsonl.gz", "rb") as packed:
        (out / "episodes.jsonl").write_bytes(packed.read())
    (out / "episodes.jsonl.gz").unlink()
    return out


def _multiwoz(out: Path, *options: str) -> Path:
    argv = ["run", "multiwoz-turns", "--model", f"scripted:{MULTIWOZ_SCRIPT}", "--no-cache"]
    assert main([*argv, *options, "--out", str(out), "--quiet"]) == 0
    return out


def test_turn_runs_over_other_dialogue_ids_are_refused_unless_shared_tasks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _multiwoz(tmp_path / "a", "--dialogue-ids", "sng0073", "pmul4648", "pmul2437")
    b = _multiwoz(tmp_path / "b", "--dialogue-ids", "pmul4648", "pmul2437", "mul2499")
    capsys.readouterr()
    assert main(["compare", str(a), str(b)]) == 4
    err = _error(capsys)
    assert "selection.ids: ['sng0073', 'pmul4648', 'pmul2437'] vs" in err
    assert "['pmul4648', 'pmul2437', 'mul2499']" in err and "--shared-tasks" in err
    assert "content differs" not in err  # the old message claimed the same tasks
    assert main(["compare", str(a), str(b), "--shared-tasks"]) == 0
    text = capsys.readouterr().out
    assert "shared tasks: 2 (dropped: 1 only in A, 1 only in B)" in text
    assert "system:       llm (scripted:" in text and "selection:    test, 3 id(s)" in text
    pair = compare_runs([a, b], shared_tasks=True).pairs[0]
    assert pair.selection_diff and pair.selection_diff[0].startswith("selection.ids: ")
    assert any("selections differ" in note for note in pair.notes)


def test_stratified_and_first_limits_are_other_selections(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _multiwoz(tmp_path / "strat", "--limit", "4")
    b = _multiwoz(tmp_path / "first", "--limit", "4", "--limit-mode", "first")
    capsys.readouterr()
    assert main(["compare", str(a), str(b)]) == 4
    assert "selection.mode: 'stratified' vs 'first'" in _error(capsys)


def test_runs_under_different_protocols_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    standard, strict = tmp_path / "standard", tmp_path / "strict"
    assert main(["run", "toy", "--limit", "3", "--out", str(standard), "--quiet"]) == 0
    argv = ["run", "toy", "--limit", "3", "--protocol", "strict", "--out", str(strict)]
    assert main([*argv, "--quiet"]) == 0
    capsys.readouterr()
    for extra in ([], ["--shared-tasks"]):
        assert main(["compare", str(standard), str(strict), *extra]) == 4
        err = _error(capsys)
        assert "protocol: 'standard' vs 'strict'" in err
    manifest = json.loads((strict / "manifest.json").read_text())
    assert manifest["protocol"] == "strict"
    assert set(manifest["roles"]) == {"guesser", "host"}
    assert manifest["selection"]["task_set"] == "numbers"


def test_a_0_1_0_run_compares_with_a_current_run_and_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _old_run("booking-default", tmp_path)
    current = tmp_path / "current"
    # 0.1.0 played the schema-validated rules: the current run must use them too (issue 17),
    # and its agenda user said the schema's strings (issue 41: the verbatim phrasing)
    args = ["run", "booking", "--protocol", "strict", "--user", "agenda?phrasing=verbatim",
            "--out", str(current), "--quiet"]  # fmt: skip
    assert main(args) == 0
    capsys.readouterr()
    assert main(["compare", str(old), str(current)]) == 0
    text = capsys.readouterr().out
    assert "shared tasks: 117 (dropped: 0 only in A, 0 only in B)" in text
    assert "recorded no protocol (a 0.1.0 run)" in text and "'strict'" in text
    assert "system:       rule" in text and "selection:    test" in text
    assert main(["compare", str(current), str(old)]) == 0
    assert main(["compare", str(old), str(old)]) == 0
    pair = compare_runs([old, current]).pairs[0]
    # same code, same seed: the same results
    assert all(m.diff == 0.0 for m in pair.metrics)
    comparison = compare_runs([old, old])
    assert comparison.runs[0].protocol is None
    assert comparison.runs[0].roles == {"system": "rule", "user": "agenda"}


def test_a_0_1_0_turn_run_recorded_no_task_set_and_matches_the_current_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _old_run("multiwoz-turns", tmp_path)
    current = _multiwoz(tmp_path / "current", "--limit", "10", "--limit-mode", "first")
    capsys.readouterr()
    assert main(["compare", str(old), str(current)]) == 0
    text = capsys.readouterr().out
    assert "recorded no task set (a 0.1.0 run): taken to match the other's 'test'" in text
    assert "shared tasks: 10 (dropped: 0 only in A, 0 only in B)" in text


def test_0_1_0_run_directories_render_in_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run directories written by 0.1.0 (schema 1, no typed identity) get their roles and
    selection derived and render like current ones: boards, role columns, transcripts."""
    from todeval.report import boards, build_html, load_inputs

    old = [_old_run(name, tmp_path) for name in ("booking-default", "booking-monolithic")]
    turns = _old_run("multiwoz-turns", tmp_path)
    inputs = load_inputs([*old, turns])
    found = {(b.profile.benchmark, b.task_set): [r.roles for r in b.rows] for b in boards(inputs)}
    assert found[("booking", "test")] == [
        {"system": "rule", "user": "agenda"},
        {
            "system": f"monolithic ({inputs.runs[1].manifest.roles['system'].model})",
            "user": "agenda",
        },
    ]
    assert [r.manifest.selection.mode for r in inputs.runs] == ["all", "first", "first"]
    html = build_html(inputs)
    assert 'id="lb-booking-run"' in html and "test, 20 first" in html
    assert 'id="lb-multiwoz-turns-run"' in html and "retrievefrom" in html  # profile data sent
    out = tmp_path / "old.html"
    assert main(["report", *map(str, [*old, turns]), "-o", str(out)]) == 0
    assert main(["report", str(old[0]), "--table", "md"]) == 0
    assert "| old-booking-default | rule | agenda | test | 117 |" in capsys.readouterr().out
