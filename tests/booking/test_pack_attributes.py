"""Booking side metrics mean something (issue 41): the attributes metric is measured only where
a goal requests an attribute, and the reference rule system passes on every attribute a goal
asks for -- on every shipped domain pack and on the clinic docs/own-domain.md builds."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from todeval.benchmarks.booking.domains.cli import pack_folder
from todeval.benchmarks.booking.domains.tasks import generate_tasks
from todeval.cli import main

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted(p.parent.name for p in (ROOT / "src/todeval/data/domains").glob("*/domain.yaml"))
_CLINIC = re.compile(r"^```python file=make_clinic\.py\n(.*?)^```", re.S | re.M)


def _play(pack: str | Path, protocol: str, out: Path, *more: str) -> dict[str, object]:
    argv = ["run", "booking", "--domain", str(pack), "--protocol", protocol, *more]
    assert main([*argv, "--quiet", "--out", str(out)]) == 0
    return json.loads((out / "summary.json").read_text())


@pytest.fixture(scope="module")
def clinic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The docs' clinic: its script run as written, 20 tasks drawn with seed 0."""
    where = tmp_path_factory.mktemp("docs")
    script = _CLINIC.search((ROOT / "docs/own-domain.md").read_text())
    assert script is not None
    (where / "make_clinic.py").write_text(script.group(1))
    subprocess.run([sys.executable, "make_clinic.py"], cwd=where, check=True, env=os.environ)
    folder = where / "clinic"
    (folder / "tasks.json").write_text(json.dumps(generate_tasks(folder, 20, seed=0)))
    return folder


def _attributes(summary: dict[str, object], n_tasks: int, requested: int) -> None:
    metrics = summary["metrics"]
    assert isinstance(metrics, dict)
    micro = metrics["booking.attributes"]["micro"]
    assert micro["value"] == 1.0, micro
    assert micro["n"] == requested < n_tasks  # only the goals that request one are counted
    assert metrics["booking.booking_accuracy"]["micro"]["value"] == 1.0


def _requested(folder: Path, tasks: Path | None = None) -> int:
    data = json.loads((tasks or folder / "tasks.json").read_text())
    return sum(any(g.get("reqt") for g in t["domains"].values()) for t in data["tasks"])


@pytest.mark.parametrize("protocol", ["clemtodd", "strict"])
@pytest.mark.parametrize("pack", SHIPPED)
def test_the_rule_system_passes_on_every_requested_attribute_on_a_shipped_pack(
    tmp_path: Path, pack: str, protocol: str
) -> None:
    summary = _play(pack, protocol, tmp_path / "run")
    folder = pack_folder(pack)
    _attributes(summary, summary["n_episodes"], _requested(folder))  # type: ignore[arg-type]


@pytest.mark.parametrize("protocol", ["clemtodd", "strict"])
def test_the_rule_system_passes_on_every_requested_attribute_on_the_docs_clinic(
    tmp_path: Path, clinic: Path, protocol: str
) -> None:
    summary = _play(clinic, protocol, tmp_path / "run")
    assert summary["n_episodes"] == 20
    _attributes(summary, 20, _requested(clinic))


def test_attributes_are_not_applicable_on_multiwoz_test(tmp_path: Path) -> None:
    """No test goal requests an attribute: the metric is absent from every record and from the
    summary (it was a free 1.0 for any episode that did not abort)."""
    out = tmp_path / "run"
    argv = ["run", "booking", "--system", "first-row", "--limit", "12", "--quiet", "--out"]
    assert main([*argv, str(out)]) == 0
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 12
    assert not any("booking.attributes" in r["metrics"] for r in records)
    summary = json.loads((out / "summary.json").read_text())
    assert "booking.attributes" not in summary["metrics"]
    assert "booking.booking_accuracy" in summary["metrics"]
