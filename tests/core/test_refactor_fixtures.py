"""The dialogue-core refactor changed no result: the same commands give the same run
directories as the ones recorded before it (tests/fixtures/before_refactor), apart from the
differences listed in ALLOWED -- timings, timestamps and the fields the refactor added."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

from todeval.api import build_plan
from todeval.cli import main
from todeval.runner.options import RuntimeOptions

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "before_refactor"

RUNS = {
    # the fixtures were recorded by the schema-validated game master: --protocol strict (issue 17)
    # the agenda user's wording before issue 41 (its default now paraphrases): agenda?phrasing=
    "booking-default": ["run", "booking", "--user", "agenda?phrasing=verbatim", "--protocol",
                        "strict"],
    "booking-corpus": ["run", "booking", "--user", "corpus", "--protocol", "strict"],
    "booking-monolithic": [
        "run", "booking", "--system", "monolithic", "--user", "agenda?phrasing=verbatim",
        "--protocol", "strict",
        "--system-model", f"scripted:{FIXTURES / 'booking_script.json'}",
        "--on-violation", "reprompt", "--limit", "20", "--limit-mode", "first", "--no-cache",
    ],
    "multiwoz-turns": [
        "run", "multiwoz-turns", "--model", f"scripted:{FIXTURES / 'multiwoz_script.json'}",
        "--limit", "10", "--limit-mode", "first", "--no-cache",
    ],
}  # fmt: skip
# 0.1.0 took the first --limit tasks; --limit-mode first is that rule (the default is stratified)

# Paths (file:json/path, regular expressions) allowed to differ, each with why.
ALLOWED = {
    r"manifest:/git_commit": "recorded at another commit",
    r"manifest:/sessions/.*": "host, command and timestamps of the session",
    r"manifest:/config_hash": "follows from the new config fields",
    r"manifest:/config/(protocol|prompts_sha256|prompt_overrides|trials)": "new config fields",
    r"manifest:/config/(user_transcripts|few_shot)": "new config fields (issue 18)",
    r"manifest:/config/system_(channel|timeout_s)": "new config fields (issue 20)",
    r"(summary:|episodes:\d+)/usage/[^/]+/tokens_unknown_calls": "new usage field (issue 20)",
    r"manifest:/players/models/scripted:.*": "the scripted model's path (the fixture dir)",
    r"manifest:/config/(system_model|model)": "the scripted model's path (the fixture dir)",
    r"manifest:/players/system": "the scripted model's path (multiwoz-turns names the model)",
    r"summary:/source": "the prediction file's path in the run directory",
    r"summary:/timing/.*": "wall time",
    r"summary:/latency/.*": "call latencies",
    r"(summary:|episodes:\d+)/usage/[^/]+/(latency_s|call_latencies_s/\d+)": "call latencies",
    r"summary:/outcomes/system_error": "new outcome (0 here)",
    r"episodes:\d+/timing/.*": "wall time",
    r"episodes:\d+/events/\d+/t": "seconds since the episode started",
    r"episodes:\d+/termination": "new typed termination field",
    r"(manifest:|summary:|episodes:\d+)/schema_version": "schema 2: the typed run identity",
    r"manifest:/package_version": "0.2.0",
    r"manifest:/(roles|selection|protocol)": "schema 2: the typed run identity",
    r"manifest:/config/limit_mode": "new config field: how --limit draws",
    r"summary:/tables": "new summary field: benchmark tables (none here)",
    r"summary:/protocol": "new summary field: the protocol, as in the manifest (issue 17)",
    r"summary:/missing_(dialogues|turns)": "MultiWOZ: what the predictions lack (issue 16)",
    r"summary:/warnings": "MultiWOZ: the warning counting missing dialogues (issue 16)",
    r"manifest:/task_set_aliases": "new field: the legacy hashes of the same task set (issue 28)",
    r"episodes:\d+/events/\d+/type": "typed events: the type a 0.2.0 reader derives from the "
    "kind, or tool_call/tool_result for booking's DB queries and results (issue 28)",
    r"summary:/metrics/.*/(n_tasks|n_effective)": "new Estimate fields (issue 29): the tasks "
    "and the effective sample size with trials (null here: one trial)",
    r"manifest:/config/domain(_tasks|_sha256)?": "new config fields (issue 31): a domain pack",
    r"summary:/labels/who_failed": "new label (issue 30): the verdicts of the failed episodes",
    r"episodes:\d+/labels/who_failed": "new label (issue 30): a failed episode's verdict",
    r"episodes:\d+/review": "new field (issue 30): a failed episode's verdict and faults",
    r"summary:/trials": "new summary field (issue 29): consistency and variance split of "
    "trials (null here: one trial)",
    r"(summary:|episodes:\d+)/metrics/booking\.attributes": "issue 41: not applicable (left out "
    "of the record and the summary) when no goal domain requests an attribute, as in every "
    "test goal; it was a free 1.0",
    r"episodes:\d+/events/\d+/data/(outcome|reason|dialogue_outcome|dialogue_reason)": "issue "
    "42: the episode_end event says the record's outcome and reason (scoring's), how the "
    "dialogue itself ended beside them",
    r"manifest:/(config|players)/user": "issue 41: the agenda user's verbatim wording, which "
    "the fixtures were recorded with, is now the parameter agenda?phrasing=verbatim",
    r"manifest:/task_set_hash": "one format for every benchmark (issue 28); the recorded value "
    "must be the new plan's hash or its legacy alias (checked below)",
    r"(summary:|episodes:\d+)/scorer_version": "new field (issue 45): the version of the "
    "benchmark's scoring that gave the figures",
    r"episodes:\d+/channels": "new field (issue 45.6): how each role's player ran, as the "
    "manifest's roles say",
}


def _diff(a: Any, b: Any, path: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                out.append(f"{path}/{key}")
            else:
                _diff(a[key], b[key], f"{path}/{key}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, f"{path}/{i}", out)
    elif a != b:
        out.append(path)


def _episodes(lines: list[str]) -> list[Any]:
    return sorted((json.loads(line) for line in lines if line.strip()), key=lambda r: r["key"]
                  if "key" in r else r["episode_id"])  # fmt: skip


def _without_model_calls(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` without its model-call events (new in issue 28: the fixtures recorded no call
    text), after checking there is one per accounted call."""
    calls = [e for e in record["events"] if e["type"] == "model_call"]
    assert len(calls) == sum(u["calls"] for u in record["usage"].values())
    return {**record, "events": [e for e in record["events"] if e["type"] != "model_call"]}


def differences(before: Path, after: Path) -> list[str]:
    found: list[str] = []
    for name in ("manifest", "summary"):
        old = json.loads((before / f"{name}.json").read_text())
        new = json.loads((after / f"{name}.json").read_text())
        _diff(old, new, f"{name}:", found)
    with gzip.open(before / "episodes.jsonl.gz", "rt", encoding="utf-8") as fh:
        old_episodes = _episodes(fh.read().splitlines())
    new_episodes = [
        _without_model_calls(e)
        for e in _episodes((after / "episodes.jsonl").read_text().splitlines())
    ]
    assert len(old_episodes) == len(new_episodes)
    for i, (x, y) in enumerate(zip(old_episodes, new_episodes, strict=True)):
        _diff(x, y, f"episodes:{i}", found)
    if (before / "predictions.json").exists():
        old = json.loads((before / "predictions.json").read_text())
        new = json.loads((after / "predictions.json").read_text())
        _diff(old, new, "predictions:", found)
    return found


def unexpected(found: list[str]) -> list[str]:
    return [p for p in found if not any(re.fullmatch(rule, p) for rule in ALLOWED)]


@pytest.mark.parametrize("name", sorted(RUNS))
def test_same_results_as_before_the_refactor(name: str, tmp_path: Path) -> None:
    out = tmp_path / name
    assert main([*RUNS[name], "--out", str(out), "--quiet"]) == 0
    found = differences(FIXTURES / name, out)
    assert unexpected(found) == []
    # the task set is the same: the recorded hash is the new one or its legacy alias, so the
    # fixture's run directory would resume
    recorded = json.loads((FIXTURES / name / "manifest.json").read_text())
    manifest = json.loads((out / "manifest.json").read_text())
    plan = build_plan(recorded["benchmark"], manifest["config"], RuntimeOptions(cache=False))
    assert manifest["task_set_hash"] == plan.task_set_hash
    assert recorded["task_set_hash"] in (plan.task_set_hash, *plan.legacy_task_set_hashes)
    # the comparison can fail: a changed metric is reported
    summary = json.loads((out / "summary.json").read_text())
    first = sorted(summary["metrics"])[0]
    summary["metrics"][first]["micro"]["value"] = -1.0
    (out / "summary.json").write_text(json.dumps(summary))
    assert unexpected(differences(FIXTURES / name, out)) == [
        f"summary:/metrics/{first}/micro/value"
    ]
