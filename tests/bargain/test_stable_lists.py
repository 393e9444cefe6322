"""Issue 41, round 2: lists are stable across runs on an installation and stay unpredictable.

A fresh key per run showed, in every run, a new list holding the gold; an agent remembering
lists across runs intersected them (F1 0.90-1.00 after six runs where the in-list prior scores
0.25-0.54). Lists now come from the installation's secret (next to the response cache, mode
0600): every run shows the same list for a turn, so remembering gains nothing. Also here: a
resume whose records name another key is refused; Ray workers draw the driver's lists; the
annotation export no longer draws under a public key; ``--k`` at or below the gold size is
refused; the task-set hash of a one-dialogue run no longer gives its gold away."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import stat
from pathlib import Path
from typing import Any, ClassVar

import pytest

from todeval.benchmarks.bargain.data import candidates, labels_of, load_track, public_key
from todeval.benchmarks.bargain.keys import (
    KEY_ENV,
    KEY_FILE,
    installation_key,
    key_of,
    secret_path,
)
from todeval.benchmarks.bargain.labellers import LabellerView, LabelOutput, TurnView
from todeval.cli import main
from todeval.spec.build import task_set_hash


def _run(out: Path, *args: str) -> dict[str, Any]:
    assert main(["run", "bargain", *args, "--out", str(out), "--quiet"]) == 0
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return summary


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]


def _lists(out: Path) -> dict[tuple[str, int], list[str]]:
    return {
        (r["task_id"], t["index"]): t["candidates"]
        for r in _records(out)
        for t in r["details"]["turns"]
    }


def _f1(summary: dict[str, Any]) -> float:
    return float(summary["metrics"]["bargain.f1"]["micro"]["value"])


def test_the_secret_is_made_once_next_to_the_cache_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TODEVAL_CACHE_DIR", str(tmp_path / "fresh"))  # not the tests' fixed one
    path = secret_path()
    assert path.parent == tmp_path / "fresh" and not path.exists()
    key = installation_key()
    assert path.is_file() and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert installation_key() == key  # read back, not drawn again
    assert path.read_text().strip() != key.hex()  # the run key is derived, not the secret


class Intersector:
    """Remembers every list it was shown, across runs, in a file; answers what is in every
    list of the turn so far (the gold is in each), the first of it when several remain."""

    memory: ClassVar[Path | None] = None

    async def start(self, context: LabellerView) -> None:
        self.context = context

    async def respond(self, observation: TurnView) -> LabelOutput:
        assert self.memory is not None
        seen: dict[str, list[str]] = (
            json.loads(self.memory.read_text()) if self.memory.exists() else {}
        )
        key = f"{self.context.dialogue_id}#{observation.index}"
        common = set(seen.get(key, observation.candidates)) & set(observation.candidates)
        seen[key] = [c for c in observation.candidates if c in common]
        self.memory.write_text(json.dumps(seen))
        guess = seen[key] if len(seen[key]) <= 2 else seen[key][:1]
        return LabelOutput(ids=guess, raw=str(guess))


@pytest.mark.parametrize(
    ("track", "extra"), [("scripted", []), ("craigslist", ["--k", "5"]), ("casino", ["--k", "5"])]
)
def test_an_intersecting_labeller_gains_nothing_after_the_first_run(
    tmp_path: Path, track: str, extra: list[str]
) -> None:
    Intersector.memory = tmp_path / "memory.json"
    args = ["--track", track, "--labeller", f"{__name__}:Intersector", "--limit", "20", *extra]
    scores = [_f1(_run(tmp_path / f"r{i}", *args)) for i in range(3)]
    assert scores[0] == scores[1] == scores[2], scores
    assert _lists(tmp_path / "r0") == _lists(tmp_path / "r2")
    # what it remembered is each list itself: no intersection narrowed anything
    memory = json.loads(Intersector.memory.read_text())
    for (task, index), shown in _lists(tmp_path / "r0").items():
        assert memory[f"{task}#{index}"] == shown


def test_a_resume_whose_records_name_another_key_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ["--track", "scripted", "--labeller", "prior", "--k", "5", "--limit", "6"]
    monkeypatch.setenv(KEY_ENV, "ab" * 32)  # drawn with some other key (another installation)
    _run(out, *args)
    monkeypatch.delenv(KEY_ENV)
    (out / KEY_FILE).unlink()  # the key file deleted, the last episodes cut: "resume farming"
    lines = (out / "episodes.jsonl").read_text().splitlines()
    (out / "episodes.jsonl").write_text("\n".join(lines[:3]) + "\n")
    capsys.readouterr()
    code = main(["run", "bargain", *args, "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 4 and len(err) == 1 and "candidate key" in err[0], err
    # with the key file back, it resumes on the recorded key: the same lists as before
    monkeypatch.setenv(KEY_ENV, "ab" * 32)
    _run(out, *args)
    assert len(_records(out)) == 6


def test_a_resume_without_the_key_file_keeps_the_installation_lists(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["--track", "scripted", "--labeller", "prior", "--k", "5", "--limit", "6"]
    _run(out, *args)
    before = _lists(out)
    (out / KEY_FILE).unlink()
    lines = (out / "episodes.jsonl").read_text().splitlines()
    (out / "episodes.jsonl").write_text("\n".join(lines[:2]) + "\n")
    _run(out, *args)
    assert _lists(out) == before


def test_ray_workers_draw_the_drivers_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("Ray is missing but CI=true requires it")
        pytest.skip("Ray is missing")
    monkeypatch.setenv("RAY_DISABLE_USAGE_STATS", "1")
    args = ["--track", "scripted", "--labeller", "prior", "--k", "5", "--limit", "8",
            "--max-concurrency", "3"]  # fmt: skip
    _run(tmp_path / "local", *args)
    _run(tmp_path / "ray", *args, "--executor", "ray")
    assert _lists(tmp_path / "local") == _lists(tmp_path / "ray")
    keys = {r["details"]["candidate_key"] for r in _records(tmp_path / "ray")}
    assert keys == {json.loads((tmp_path / "ray" / KEY_FILE).read_text())["current"]}
    assert key_of(tmp_path / "ray", keys.pop()) == installation_key()


def test_the_annotation_export_lists_do_not_replay_under_a_public_key() -> None:
    from todeval.benchmarks.bargain.annotation import items

    exported = items("scripted", {})[:600]
    labels = list(labels_of("scripted"))
    turns = {(d.dialogue_id, t.index): t for d in load_track("scripted", "test") for t in d.turns}
    replayed = same = 0
    for g in exported:
        dialogue_id, _, index = g.item.id.rpartition(":")
        turn = turns[(dialogue_id, int(index))]
        shown = [c.id for c in g.item.candidates]
        public = candidates(dialogue_id, turn, labels, 20, 0, public_key("annotation", 0))
        replayed += shown == public
        same += shown == candidates(dialogue_id, turn, labels, 20, 0, installation_key())
    assert replayed == 0 and same == len(exported)


@pytest.mark.parametrize(
    ("track", "k", "least"), [("craigslist", 4, 5), ("scripted", 3, 5), ("casino", 5, 6)]
)
def test_a_list_as_small_as_the_gold_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], track: str, k: int, least: int
) -> None:
    split = ["--split", "all"] if track == "casino" else []
    code = main(["run", "bargain", "--track", track, *split, "--labeller", "prior",
                 "--k", str(k), "--out", str(tmp_path / "r"), "--quiet"])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and f"at least {least}" in err[0], err


def _old_content(dialogue_id: str, turns: list[tuple[int, list[str], int]]) -> list[Any]:
    return [dialogue_id, "keyed-v2", [[i, g, n] for i, g, n in turns]]


def brute_force(manifest_hash: str, dialogue_id: str, shape: list[tuple[int, int]],
                labels: list[str]) -> list[list[str]] | None:  # fmt: skip
    """The attack on a one-dialogue run's task-set hash: try every single-label gold per turn
    (craigslist turns hold one act) in the content format of the hash's version."""
    for golds in itertools.product(labels, repeat=len(shape)):
        turns = [(i, [g], n) for (i, n), g in zip(shape, golds, strict=True)]
        if task_set_hash([_old_content(dialogue_id, turns)]) == manifest_hash:
            return [[g] for g in golds]
        body = json.dumps([dialogue_id, [[i, [g]] for i, [g], _ in turns]])
        guess = hashlib.sha256(body.encode()).hexdigest()  # the track's digest is not public
        content = [dialogue_id, "keyed-v2", "track-bound-v1", [[i, n] for i, n in shape], guess]
        if task_set_hash([content]) == manifest_hash:
            return [[g] for g in golds]
    return None


def test_a_one_dialogue_run_publishes_no_hash_the_gold_can_be_brute_forced_from(
    tmp_path: Path,
) -> None:
    dialogue = next(d for d in load_track("craigslist", "test") if 3 <= len(d.turns) <= 4)
    labels = list(labels_of("craigslist"))
    out = tmp_path / "one"
    _run(out, "--track", "craigslist", "--labeller", "prior", "--dialogue-ids",
         dialogue.dialogue_id)  # fmt: skip
    manifest = json.loads((out / "manifest.json").read_text())
    shape = [(t.index, len(labels)) for t in dialogue.turns]
    gold = [list(t.gold) for t in dialogue.turns]
    # the hash as it was (each turn's gold in the clear) gave the gold away by brute force
    turns = [(i, g, n) for (i, n), g in zip(shape, gold, strict=True)]
    old = task_set_hash([_old_content(dialogue.dialogue_id, turns)])
    assert brute_force(old, dialogue.dialogue_id, shape, labels) == gold
    # the published hashes (the task set's and its aliases): no gold reproduces one
    published = [manifest["task_set_hash"], *manifest.get("task_set_aliases", [])]
    assert old not in published
    for value in published:
        assert brute_force(value, dialogue.dialogue_id, shape, labels) is None


def test_a_run_directory_of_the_old_hash_still_resumes(tmp_path: Path) -> None:
    out = tmp_path / "old"
    args = ["--track", "craigslist", "--labeller", "prior", "--k", "5", "--limit", "5"]
    _run(out, *args)
    records = {r["task_id"]: r for r in _records(out)}
    order = [d.dialogue_id for d in load_track("craigslist", "test") if d.dialogue_id in records]
    old = task_set_hash(
        [
            _old_content(
                i, [(t["index"], t["gold"], t["k"]) for t in records[i]["details"]["turns"]]
            )
            for i in order
        ]
    )
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["task_set_hash"] = old  # as the version before the commitment wrote it
    manifest.pop("task_set_aliases", None)
    (out / "manifest.json").write_text(json.dumps(manifest))
    (out / "episodes.jsonl").write_text("\n".join(json.dumps(records[i]) for i in order[:2]) + "\n")
    _run(out, *args)
    assert len(_records(out)) == 5


def test_an_unwritable_cache_directory_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("TODEVAL_CACHE_DIR", str(blocker / "cache"))
    code = main(["run", "bargain", "--labeller", "prior", "--limit", "2",
                 "--out", str(tmp_path / "r"), "--quiet"])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and "candidate secret" in err[0], err
