"""The Python API mirrors the CLI: run, resume, load, compare, report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import todeval.api as td
from todeval.benchmarks.booking.run import BookingConfig
from todeval.cli import main
from todeval.errors import RefusedError, UsageError


def test_run_load_resume_compare_report(tmp_path: Path) -> None:
    assert {"booking", "multiwoz-turns", "incar-turns"} <= set(td.benchmarks())
    a, b = tmp_path / "a", tmp_path / "b"
    result = td.run("booking", {"limit": 6}, out=a)
    assert result.episodes_run == 6
    assert result.summary.metrics["booking.booking_accuracy"].micro.n == 6
    # a config model works as well as a dict; the same run from the CLI has the same config hash
    td.run("booking", BookingConfig(limit=6, user="corpus"), out=b)
    assert main(["run", "booking", "--limit", "6", "--out", str(a), "--quiet"]) == 0
    loaded = td.load(a)
    assert loaded.manifest.benchmark == "booking" and len(loaded.manifest.sessions) == 1
    assert len(list(loaded.episodes(light=True))) == 6
    # resume from the manifest alone: nothing left to run
    again = td.resume(a)
    assert again.already_complete and again.episodes_run == 0
    comparison = td.compare([a, b])
    assert comparison.benchmark == "booking" and comparison.pairs
    html = td.report([a, b], tmp_path / "report.html")
    assert "booking.booking_accuracy" in html.read_text() or html.stat().st_size > 10_000
    assert json.loads((a / "summary.json").read_text())["n_episodes"] == 6


def test_unknown_benchmark_names_the_choices() -> None:
    with pytest.raises(UsageError, match=r"valid choices: .*booking"):
        td.run("nonesuch", {}, out="unused")


@pytest.mark.parametrize(
    ("name", "base"),
    [("booking", {}), ("clarq", {}), ("bargain", {"labeller": "keyword"}), ("toy", {})],
)
def test_an_unknown_config_key_is_refused_not_dropped(
    name: str, base: dict[str, str], tmp_path: Path
) -> None:
    with pytest.raises(
        UsageError, match=r"unknown \w+ config key\(s\) 'sytem'; valid keys: .*seed"
    ):
        td.run(name, {**base, "sytem": "rule", "limit": 1}, out=tmp_path / "run")
    assert not (tmp_path / "run" / "manifest.json").exists()
    with pytest.raises(UsageError, match="'sytem'"):
        td.build_plan(name, {**base, "sytem": "rule"})


@pytest.mark.parametrize(
    ("name", "config"),
    [
        ("booking", {"limit": 2}),
        ("clarq", {"limit": 2}),
        ("bargain", {"labeller": "keyword", "limit": 2}),
        ("toy", {"limit": 2}),
        ("multiwoz-turns", {"limit": 1, "limit_mode": "first"}),
        ("incar-turns", {"limit": 1, "limit_mode": "first"}),
    ],
)
def test_resume_refuses_changed_prompt_templates_for_every_benchmark(
    name: str, config: dict[str, object], tmp_path: Path
) -> None:
    """A run continued after its prompt templates changed is refused (CLI, API, Ray alike):
    the manifest's digest stands for the templates the finished episodes were played with."""
    if name.endswith("-turns"):
        script = tmp_path / "script.json"
        script.write_text(json.dumps({"default": json.dumps({"response": "ok"})}), "utf-8")
        config = {**config, "model": f"scripted:{script}"}
    out = tmp_path / "run"
    td.run(name, config, out=out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["prompts_sha256"]
    manifest["config"]["prompts_sha256"] = "0" * 64  # as if the package's templates changed
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(RefusedError, match="prompt templates differ from the run's"):
        td.resume(out)
