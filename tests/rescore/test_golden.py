"""Golden episodes: a change to a benchmark's scoring that leaves its scorer version unchanged
fails here.

``golden/<name>/`` is a small run directory per benchmark (and per protocol or task family
whose scoring differs: booking strict, clemtodd, a domain pack, the unrealistic set), with
successes and failures, written by ``todeval run`` and scored then. Each is scored again by
the installed scorer and must give every record's metrics, labels and outcome, and the
summary's figures, as stored. When a scoring change is meant, bump the benchmark's
``scorer_version`` and re-grade the goldens::

    todeval rescore tests/rescore/golden/* --in-place
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.registry import discover
from todeval.results.rescore import load_spec, recompute

GOLDEN = Path(__file__).parent / "golden"
NAMES = sorted(p.name for p in GOLDEN.iterdir() if (p / "manifest.json").exists())


def _benchmark(name: str) -> str:
    manifest = json.loads((GOLDEN / name / "manifest.json").read_text("utf-8"))
    return str(manifest["benchmark"])


def test_every_benchmark_that_can_be_regraded_has_golden_episodes() -> None:
    covered = {_benchmark(n) for n in NAMES}
    for name, entry in discover().benchmarks.items():
        spec = load_spec(name)
        assert spec.rescore is not None, f"{name} ({entry.spec}) declares no rescore"
        assert name in covered, f"{name} has no golden episodes under {GOLDEN}"


@pytest.mark.parametrize("name", NAMES)
def test_golden_episodes_score_as_stored(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TODEVAL_CACHE_DIR", str(tmp_path / "cache"))  # bargain's list secret
    run = GOLDEN / name
    done = recompute(run)
    stored = [json.loads(line) for line in (run / "episodes.jsonl").read_text("utf-8").splitlines()]
    versions = {r.get("scorer_version") for r in stored}
    assert versions == {done.version}, (
        f"{name}: the goldens were scored by {done.benchmark} scorer {versions}, the installed "
        f"is {done.version}: re-grade them (todeval rescore {run} --in-place)"
    )
    bump = f"{done.benchmark}'s scoring changed but its scorer_version ({done.version}) did not"
    assert len(done.records) == len(stored)
    for old, new in zip(stored, done.records, strict=True):
        assert new.metrics == old["metrics"], f"{bump}: {new.episode_id} metrics"
        assert new.labels == old["labels"], f"{bump}: {new.episode_id} labels"
        assert new.outcome.value == old["outcome"], f"{bump}: {new.episode_id} outcome"
        assert new.reason == old["reason"], f"{bump}: {new.episode_id} reason"
    summary = json.loads((run / "summary.json").read_text("utf-8"))
    assert summary["scorer_version"] == done.version
    figures = {k: v["micro"]["value"] for k, v in summary["metrics"].items()}
    now = {k: v.micro.value for k, v in done.summary.metrics.items()}
    assert now == figures, f"{bump}: the summary's figures"
    assert done.summary.outcomes == summary["outcomes"]
    assert done.summary.labels == summary["labels"]


def test_the_goldens_hold_successes_and_failures() -> None:
    """Golden episodes that all succeed would let a change to the failure rules through."""
    outcomes: dict[str, set[str]] = {}
    for name in NAMES:
        lines = (GOLDEN / name / "episodes.jsonl").read_text("utf-8").splitlines()
        outcomes.setdefault(_benchmark(name), set()).update(json.loads(x)["outcome"] for x in lines)
    for benchmark, seen in outcomes.items():
        assert "success" in seen and len(seen) > 1, f"{benchmark}: {seen}"
