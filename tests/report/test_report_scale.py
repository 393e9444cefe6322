"""The report at scale (issue 43, item 3): each episode line is read once and validated once,
and "Who failed" takes the verdicts stored in the records, reviewing only the episodes without
one. (Speed and memory figures live in bench/bench_report_cpu.py.)"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from todeval.core.records import EpisodeRecord, Manifest
from todeval.report import _inputs, build_html, load_inputs
from todeval.review import Review, Reviewer


def _who_failed_row(html: str, key: str) -> str:
    section = html.split('<section id="who-failed">', 1)[1].split("</section>", 1)[0]
    return section.split(f'<tr id="who-{key}">', 1)[1].split("</tr>", 1)[0]


def _rewrite(run: Path, change: Any) -> list[dict[str, Any]]:
    path = run / "episodes.jsonl"
    records = [change(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return records


def _counting_reviewer(calls: list[str]) -> Reviewer:
    """A reviewer that says ``agent`` for every episode it is given, noting which."""

    def review(manifest: Manifest, records: Iterable[EpisodeRecord]) -> Iterator[Review]:
        for record in records:
            calls.append(record.episode_id)
            failed = record.outcome.value != "success"
            yield Review(
                episode_id=record.episode_id,
                task_id=record.task_id,
                outcome=record.outcome.value,
                verdict="agent" if failed else "none",
            )

    return Reviewer(benchmark="booking", agent="system", simulator="user simulator", review=review)


def test_who_failed_shows_the_stored_verdict_without_reviewing(
    runs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "stored"
    shutil.copytree(runs["corpus"], run)

    def unclear(record: dict[str, Any]) -> dict[str, Any]:
        assert "review" in record  # written as the run went, successes included
        if record["outcome"] != "success":  # what no rule review of these episodes says
            record["review"] = {"verdict": "unclear", "faults": []}
        return record

    records = _rewrite(run, unclear)
    failed = sum(r["outcome"] != "success" for r in records)
    calls: list[str] = []
    monkeypatch.setattr(
        "todeval.review.reading.load_reviewer", lambda reference: _counting_reviewer(calls)
    )
    row = _who_failed_row(build_html(load_inputs([run])), "stored")
    assert calls == []  # every record had its verdict: the reviewer read none
    cells = row.split("<td")[1:]
    assert f"{failed}/{failed}" in cells[5] and "1.000" in cells[5]  # unclear: all of them
    assert f"0/{failed}" in cells[2]  # agent: none

    # a run written before successes had a verdict: only those are reviewed
    old = tmp_path / "old"
    shutil.copytree(runs["corpus"], old)
    _rewrite(
        old, lambda r: {k: v for k, v in r.items() if k != "review" or r["outcome"] != "success"}
    )
    build_html(load_inputs([old]))
    successes = [r["episode_id"] for r in records if r["outcome"] == "success"]
    assert calls == successes


def test_each_episode_line_is_validated_once(
    runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every line once without its events and details (what the report counts); a transcript
    the page shows is validated whole, once; nothing else is validated."""
    counted: list[str] = []
    plain, plain_json = EpisodeRecord.model_validate, EpisodeRecord.model_validate_json
    head = _inputs.head_record

    def validate(obj: Any, *args: Any, **kwargs: Any) -> EpisodeRecord:
        counted.append("whole")
        return plain(obj, *args, **kwargs)

    def validate_json(data: Any, *args: Any, **kwargs: Any) -> EpisodeRecord:
        counted.append("whole")
        return plain_json(data, *args, **kwargs)

    def validate_head(line: bytes) -> EpisodeRecord:
        counted.append("head")
        return head(line)

    monkeypatch.setattr(EpisodeRecord, "model_validate", validate)
    monkeypatch.setattr(EpisodeRecord, "model_validate_json", validate_json)
    monkeypatch.setattr(_inputs, "head_record", validate_head)
    paths = [runs["rule"], runs["corpus"]]
    lines = sum(len((p / "episodes.jsonl").read_bytes().splitlines()) for p in paths)
    inputs = load_inputs(paths)
    html = build_html(inputs)
    assert 'id="who-failed"' in html and "rule-corpus: shown 50 of 117" in html
    shown = sum(len(r.transcripts) for r in inputs.runs)
    assert counted.count("head") == lines == 234
    assert counted.count("whole") == shown == 100


def test_a_summary_read_shares_its_estimates_fields_sets(runs: dict[str, Path]) -> None:
    """A run's summary as the report reads it: estimates given the same fields share one
    fields set (pydantic gives each its own, more than half a summary's memory), and the
    summary dumps as before, unset fields and all."""
    from todeval.runner.store import RunDirectory

    fresh = RunDirectory(runs["rule"]).read_summary()
    assert fresh is not None
    read = _inputs.load_run(runs["rule"], "rule", transcripts=0, ranks=False).summary
    assert read.model_dump(exclude_unset=True) == fresh.model_dump(exclude_unset=True)
    assert read == fresh
    sets = {
        id(estimate.model_fields_set)
        for metric in read.metrics.values()
        for estimate in (metric.micro, metric.macro, *metric.by_group.values())
        if estimate is not None
    }
    assert len(sets) < 4 < len(read.metrics)
