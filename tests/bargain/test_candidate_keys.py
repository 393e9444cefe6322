"""Issue 41: candidate lists carry nothing about the gold.

Lists are drawn from a per-run secret key in the label set's order; the key is never where a
labeller can reach it while it plays (its view, the manifest, the run directory), is written
to the run directory when a session ends, and is reused by a resumed run. The inverse-shuffle
attack that read the gold off every list before (F1 1.000 on every track) now gets no list
inverted, so it scores what the text-free prior scores."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

import pytest

from todeval.benchmarks.bargain.data import (
    CASINO_LABELS,
    CRAIGSLIST_LABELS,
    candidates,
    hard_quota,
    key_fingerprint,
    labels_of,
    list_inclusion,
    load_track,
    new_key,
    parent_groups,
)
from todeval.benchmarks.bargain.keys import KEY_ENV, KEY_FILE, key_of
from todeval.benchmarks.bargain.labellers import LabellerView, LabelOutput, TurnView
from todeval.benchmarks.bargain.textfree import invert_shuffle, v1_candidates
from todeval.cli import main


def _run(out: Path, *args: str) -> dict[str, Any]:
    assert main(["run", "bargain", *args, "--out", str(out), "--quiet"]) == 0
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return summary


def _records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]


def _f1(summary: dict[str, Any]) -> float:
    return float(summary["metrics"]["bargain.f1"]["micro"]["value"])


@pytest.mark.parametrize("track", ["craigslist", "casino"])
def test_a_default_list_is_every_label_in_order_whatever_the_gold(track: str) -> None:
    labels = list(CRAIGSLIST_LABELS if track == "craigslist" else CASINO_LABELS)
    key = new_key()
    for d in load_track(track, "test"):  # type: ignore[arg-type]
        for t in d.turns:
            assert candidates(d.dialogue_id, t, labels, 20, 0, key) == labels


@pytest.mark.parametrize("k", [3, 5, 20])
def test_lists_hold_the_gold_in_label_order_and_follow_the_key(k: int) -> None:
    labels = list(labels_of("scripted"))
    order = {x: i for i, x in enumerate(labels)}
    key, other = new_key(), new_key()
    differ = 0
    for d in load_track("scripted", "test")[:100]:
        for t in d.turns:
            c = candidates(d.dialogue_id, t, labels, k, 0, key)
            assert len(c) == max(k, len(t.gold)) == len(set(c)) and set(t.gold) <= set(c)
            assert [order[x] for x in c] == sorted(order[x] for x in c)
            assert c == candidates(d.dialogue_id, t, labels, k, 0, key)  # same key, same list
            differ += c != candidates(d.dialogue_id, t, labels, k, 0, other)
            differ += c != candidates(d.dialogue_id, t, labels, k, 1, key)  # the seed salts it
    assert differ > 300


def test_hard_lists_hold_the_same_quota_of_every_parent() -> None:
    labels = list(labels_of("scripted"))
    groups = parent_groups("scripted")
    key = new_key()
    for k in (5, 20, 21):
        quota = hard_quota(labels, groups, k)
        assert set(quota.values()) == {3} and sum(quota.values()) == 21
    for d in load_track("scripted", "test")[:200]:
        for t in d.turns:
            c = candidates(d.dialogue_id, t, labels, 20, 0, key, groups)
            assert set(t.gold) <= set(c) and Counter(groups[x] for x in c) == Counter(quota)
            assert list_inclusion(t.gold, labels, 20, groups) > 0


SETTINGS = [
    ("craigslist", 20),
    ("craigslist", 5),
    ("casino", 20),
    ("scripted", 20),
    ("scripted", 5),
]


@pytest.mark.parametrize(("track", "k"), SETTINGS)
def test_the_inverse_shuffle_attack_read_every_old_list_and_reads_no_keyed_one(
    track: str, k: int
) -> None:
    labels = list(labels_of(track))  # type: ignore[arg-type]
    key = new_key()
    dialogues = load_track(track, "test")[:150]  # type: ignore[arg-type]
    old = new = turns = 0
    for d in dialogues:
        for t in d.turns:
            turns += 1
            before = v1_candidates(d.dialogue_id, t.index, t.gold, labels, k, 0)
            old += set(invert_shuffle(d.dialogue_id, t.index, before, labels, 0) or ()) == set(
                t.gold
            )
            now = candidates(d.dialogue_id, t, labels, k, 0, key)
            found = invert_shuffle(d.dialogue_id, t.index, now, labels, 0)
            new += found is not None and set(found) == set(t.gold)
    assert old == turns  # before issue 41: the gold of every turn, from the list alone
    assert new <= turns * 0.01  # now: a chance match at most (a short list "inverts" by luck)


class FileSnoop:
    """A labeller that opens every file of the run directory while it plays."""

    seen: ClassVar[list[str]] = []
    run_dir: ClassVar[Path | None] = None

    async def start(self, context: LabellerView) -> None:
        self.context = context

    async def respond(self, observation: TurnView) -> LabelOutput:
        assert self.run_dir is not None
        for path in self.run_dir.rglob("*"):
            if path.is_file():
                FileSnoop.seen.append(path.name + "\n" + path.read_text(errors="replace"))
        return LabelOutput(ids=observation.candidates[:1], raw="")


def test_the_key_is_nowhere_a_labeller_can_read_and_is_written_at_the_end(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    FileSnoop.run_dir, FileSnoop.seen = out, []
    args = ["--track", "scripted", "--labeller", f"{__name__}:FileSnoop", "--k", "5"]
    _run(out, *args, "--limit", "6")
    first = json.loads((out / KEY_FILE).read_text())
    (fp,) = first["keys"]
    key = key_of(out, fp)
    assert key_fingerprint(key) == fp and first["current"] == fp
    records = _records(out)
    assert {r["details"]["candidate_key"] for r in records} == {fp}
    manifest = (out / "manifest.json").read_text()
    assert key.hex() not in manifest and fp not in manifest
    assert FileSnoop.seen and not any(key.hex() in text for text in FileSnoop.seen)
    assert not any(text.startswith(KEY_FILE) for text in FileSnoop.seen)
    # a resume that is refused leaves the key file where it was
    assert main(["run", "bargain", *args, "--limit", "7", "--out", str(out), "--quiet"]) != 0
    assert json.loads((out / KEY_FILE).read_text())["keys"] == {fp: key.hex()}
    # a resumed run reuses the key, and takes the file away while its episodes play
    lines = (out / "episodes.jsonl").read_text().splitlines()
    (out / "episodes.jsonl").write_text("\n".join(lines[:3]) + "\n")
    FileSnoop.seen = []
    _run(out, *args, "--limit", "6")
    assert FileSnoop.seen and not any(key.hex() in text for text in FileSnoop.seen)
    assert not any(text.startswith(KEY_FILE) for text in FileSnoop.seen)
    again = _records(out)
    assert len(again) == 6 and {r["details"]["candidate_key"] for r in again} == {fp}
    assert json.loads((out / KEY_FILE).read_text())["keys"] == {fp: key.hex()}
    lists = {r["task_id"]: r["details"]["turns"] for r in records}
    assert all(lists[r["task_id"]] == r["details"]["turns"] for r in again)


def test_the_recorded_key_redraws_the_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["--track", "scripted", "--labeller", "prior", "--limit", "4"]
    _run(tmp_path / "a", *args)
    fp = json.loads((tmp_path / "a" / KEY_FILE).read_text())["current"]
    # another installation (another secret) draws other lists; pinned to a's key, a's lists
    monkeypatch.setenv("TODEVAL_CACHE_DIR", str(tmp_path / "elsewhere"))
    _run(tmp_path / "c", *args)
    monkeypatch.setenv(KEY_ENV, key_of(tmp_path / "a", fp).hex())
    _run(tmp_path / "b", *args)

    def lists(name: str) -> list[list[str]]:
        return [t["candidates"] for r in _records(tmp_path / name) for t in r["details"]["turns"]]

    assert lists("a") == lists("b") != lists("c")
    hashes = {json.loads((tmp_path / n / "manifest.json").read_text())["task_set_hash"]
              for n in "abc"}  # fmt: skip
    assert len(hashes) == 1  # the task set does not depend on the key: runs compare


def test_a_bad_pinned_key_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(KEY_ENV, "abc")
    assert main(["run", "bargain", "--labeller", "majority", "--out", str(tmp_path / "r"),
                 "--quiet"]) == 2  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and KEY_ENV in err[0]


@pytest.mark.parametrize("extra", [[], ["--k", "5"]])
def test_the_inverse_shuffle_attacker_now_scores_the_text_free_prior(
    tmp_path: Path, extra: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, new_key().hex())  # both runs on the same (secret) lists
    args = ["--track", "craigslist", "--limit", "40", *extra]
    attack = _run(
        tmp_path / "attack",
        *args,
        "--labeller",
        "text-blind?learner=inverse-shuffle&features=all&emit=auto",
    )
    prior = _run(tmp_path / "prior", *args, "--labeller", "prior")
    # no list inverted (a short list might by luck, and wrongly): the prior's answers
    assert _f1(attack) == pytest.approx(_f1(prior), abs=0.01)


@pytest.mark.parametrize("setting", ["craigslist", "scripted-k5"])
def test_a_small_search_of_the_text_blind_family_stays_on_the_floor(
    tmp_path: Path, setting: str
) -> None:
    from todeval.benchmarks.bargain.adversaries import families
    from todeval.validation.search import run_family

    (family,) = [f for f in families() if f.name == f"text-blind/{setting}"]
    limit = 30
    found = run_family(
        family,
        benchmark="bargain",
        seed=0,
        budget=3 * limit,
        limit=limit,
        max_concurrency=4,
        workdir=tmp_path,
    )
    assert found.best is not None and found.error is None, found
    assert len(found.trials) == 3 and all(t.value is not None for t in found.trials)
    # the prior on the same dialogues and lists: the best of three learners stays near it
    from todeval import api
    from todeval.benchmarks.bargain.adversaries import pinned, setting_of, validation_key

    with pinned(validation_key(0)):
        config = {**setting_of(family.name), "labeller": "prior", "limit": limit}
        prior = api.run("bargain", config, out=tmp_path / "prior", quiet=True, review=False)
    floor = prior.summary.metrics["bargain.f1"].micro.value
    assert floor is not None and found.best.value is not None
    assert found.best.value <= floor + 0.04, (found.best, floor)
