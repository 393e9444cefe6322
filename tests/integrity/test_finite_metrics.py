"""Finding 3 of issue 16: one NaN (or infinite) metric in an episode line must not turn an
aggregate into ``nan``/``null`` silently: the line is bad input (exit 3, one line naming the
file and the line), and no record with a non-finite number can be built or written."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from pydantic import ValidationError

from todeval.cli import main
from todeval.core.records import CallUsage, EpisodeRecord, Timing


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "rule"
    assert main(["run", "booking", "--limit", "3", "--out", str(out), "--quiet"]) == 0
    return out


def _poisoned(run_dir: Path, tmp_path: Path, literal: str) -> Path:
    copy = tmp_path / "poisoned"
    copy.mkdir()
    for name in ("manifest.json", "summary.json"):
        (copy / name).write_bytes((run_dir / name).read_bytes())
    lines = (run_dir / "episodes.jsonl").read_text("utf-8").splitlines()
    record = json.loads(lines[1])
    metric = sorted(record["metrics"])[0]
    text = json.dumps(record).replace(f'"{metric}": {json.dumps(record["metrics"][metric])}',
                                      f'"{metric}": {literal}', 1)  # fmt: skip
    assert literal in text
    lines[1] = text
    (copy / "episodes.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    return copy


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
@pytest.mark.parametrize("command", ["report", "compare"])
def test_non_finite_metric_in_an_episode_line_exits_3(
    run_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    literal: str,
    command: str,
) -> None:
    bad = _poisoned(run_dir, tmp_path, literal)
    before = (bad / "episodes.jsonl").read_bytes()
    if command == "report":
        argv = ["report", str(bad), "-o", str(tmp_path / "r.html")]
    else:
        argv = ["compare", str(run_dir), str(bad)]
    capsys.readouterr()
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{bad / 'episodes.jsonl'}: line 2 is not a valid episode record (metrics." in err
    assert err.rstrip().endswith(": Input should be a finite number)")
    assert (bad / "episodes.jsonl").read_bytes() == before  # nothing rewritten


def test_resume_of_a_poisoned_directory_exits_3(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = _poisoned(run_dir, tmp_path, "NaN")
    before = (bad / "episodes.jsonl").read_bytes()
    capsys.readouterr()
    assert main(["run", "booking", "--limit", "3", "--out", str(bad), "--quiet"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "line 2" in err
    assert (bad / "episodes.jsonl").read_bytes() == before


def _record(**changes: object) -> EpisodeRecord:
    base: dict[str, object] = {
        "benchmark": "toy",
        "episode_id": "t#0",
        "task_id": "t",
        "trial": 0,
        "seed": 1,
        "outcome": "success",
        "timing": Timing(started_at="a", ended_at="b", duration_s=0.0),
    }
    return EpisodeRecord.model_validate({**base, **changes})


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_record_with_a_non_finite_number_cannot_be_built(value: float) -> None:
    assert _record(metrics={"toy.success": 1.0}).metrics == {"toy.success": 1.0}
    with pytest.raises(ValidationError, match="finite"):
        _record(metrics={"toy.success": value})
    with pytest.raises(ValidationError):
        CallUsage(role="system", cost_usd=value)
    with pytest.raises(ValidationError):
        CallUsage(role="system", latency_s=value)
    with pytest.raises(ValidationError):
        CallUsage(role="system", prompt_tokens=-1)
