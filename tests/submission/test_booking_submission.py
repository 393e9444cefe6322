"""todeval submit prepare / verify on booking runs: an honest run is verified, and every hand
edit of its trajectories is refused with the turn that gives it away (issue 45.3-4)."""

from __future__ import annotations

import copy
import json
import tarfile
from pathlib import Path

import pytest

from tests.submission.helpers import Record, archive, cli, edited, run, verdict_of


@pytest.fixture(scope="module")
def booking_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("booking") / "run"
    return run("booking", {"system": "rule", "user": "corpus", "limit": 8}, out)


def _first(records: list[Record], outcome: str) -> Record:
    return next(r for r in records if r["outcome"] == outcome)


def test_an_honest_run_is_verified_and_the_archive_is_deterministic(
    booking_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = archive(booking_run, tmp_path / "a.tar.gz")
    b = archive(booking_run, tmp_path / "b.tar.gz")
    assert a.read_bytes() == b.read_bytes()
    with tarfile.open(a) as tar:
        names = tar.getnames()
    assert names == ["submission.json", "run/episodes.jsonl", "run/manifest.json",
                     "run/summary.json"]  # fmt: skip
    verdict = verdict_of(a)
    assert verdict.status == "verified", verdict.lines()
    assert not verdict.standard  # six tasks of the set: custom
    assert verdict.custom == ["a selection of 8 of the 117 tasks (stratified)"]
    assert verdict.channel == "built-in"
    assert any(line.startswith("replayed 8 episodes") for line in verdict.checked)
    assert cli("submit", "verify", str(a)) == 0
    assert capsys.readouterr().out.startswith("verified custom (built-in): booking test")


def test_failures_and_successes_both_present(booking_run: Path) -> None:
    outcomes = {
        json.loads(line)["outcome"]
        for line in (booking_run / "episodes.jsonl").read_text().splitlines()
    }
    assert {"success", "failure"} <= outcomes | {"aborted"}


def _refused(path: Path, *needles: str) -> list[str]:
    verdict = verdict_of(path)
    assert verdict.status == "refused", verdict.lines()
    text = "\n".join(verdict.reasons)
    for needle in needles:
        assert needle in text, text
    return verdict.reasons


def test_a_hand_edited_booking_result_is_refused_with_its_turn(
    booking_run: Path, tmp_path: Path
) -> None:
    where: list[str] = []

    def edit(records: list[Record]) -> list[Record]:
        for r in records:
            for e in r["events"]:
                if e["kind"] == "booking_result" and not e["data"]["ok"]:
                    e["data"].update(ok=True, reference="FAKE01", message="Booking confirmed.")
                    where.append(f"{r['episode_id']} turn {e['turn']}")
                    return records
        for r in records:  # no failed booking: change a confirmed one's reference
            for e in r["events"]:
                if e["kind"] == "booking_result" and e["data"]["ok"]:
                    e["data"]["reference"] = "FAKE01"
                    where.append(f"{r['episode_id']} turn {e['turn']}")
                    return records
        raise AssertionError("no booking in the run")

    path = edited(booking_run, tmp_path, edit)
    _refused(path, f"replay: {where[0]}: booking_result")
    assert cli("submit", "verify", str(path)) == 4


def test_a_hand_edited_db_result_is_refused(booking_run: Path, tmp_path: Path) -> None:
    def edit(records: list[Record]) -> list[Record]:
        for r in records:
            for e in r["events"]:
                if e["kind"] == "db_result" and e["data"]["rows"]:
                    e["data"]["rows"][0]["name"] = "a place that does not exist"
                    return records
        raise AssertionError("no DB result")

    _refused(edited(booking_run, tmp_path, edit), "db_result.rows[0].name")


def test_a_deleted_failed_episode_is_refused(booking_run: Path, tmp_path: Path) -> None:
    deleted: list[str] = []

    def edit(records: list[Record]) -> list[Record]:
        failed = next(r for r in records if r["outcome"] != "success")
        deleted.append(failed["episode_id"])
        return [r for r in records if r is not failed]

    _refused(edited(booking_run, tmp_path, edit), f"episode {deleted[0]} is missing")


def test_a_duplicated_success_is_refused(booking_run: Path, tmp_path: Path) -> None:
    def append(records: list[Record]) -> list[Record]:
        return [*records, copy.deepcopy(_first(records, "success"))]

    _refused(edited(booking_run, tmp_path, append), "appears 2 times")

    def replace(records: list[Record]) -> list[Record]:
        # a success copied over a failed episode of another task: its id and seed changed
        failed = next(r for r in records if r["outcome"] != "success")
        fake = copy.deepcopy(_first(records, "success"))
        fake.update({k: failed[k] for k in ("episode_id", "task_id", "trial", "seed", "group")})
        return [fake if r is failed else r for r in records]

    reasons = _refused(edited(booking_run, tmp_path, replace), "replay: ")
    assert any(" turn " in line for line in reasons), reasons


def test_a_changed_goal_value_is_refused(booking_run: Path, tmp_path: Path) -> None:
    def edit(records: list[Record]) -> list[Record]:
        goal = records[0]["details"]["goal"]
        domain = next(iter(goal))
        slot = next(iter(goal[domain]["info"]))
        goal[domain]["info"][slot] = "changed"
        return records

    reasons = _refused(edited(booking_run, tmp_path, edit), "goal.")
    assert any(" turn " in line and "goal." in line for line in reasons), reasons


def test_an_archive_edited_after_prepare_is_refused(booking_run: Path, tmp_path: Path) -> None:
    good = archive(booking_run, tmp_path / "good.tar.gz")
    bad = tmp_path / "bad.tar.gz"
    with tarfile.open(good) as src, tarfile.open(bad, "w:gz") as dst:
        for member in src.getmembers():
            data = src.extractfile(member)
            assert data is not None
            body = data.read()
            if member.name == "run/summary.json":
                body = body.replace(b'"n_episodes": 8', b'"n_episodes": 9')
                member.size = len(body)
            import io

            dst.addfile(member, io.BytesIO(body))
    _refused(bad, "summary.json: changed since the archive was prepared")


def test_bad_files_exit_3(tmp_path: Path) -> None:
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not an archive")
    assert cli("submit", "verify", str(junk)) == 3
    assert cli("submit", "verify", str(tmp_path / "missing.tar.gz")) == 3
    assert cli("submit", "prepare", str(tmp_path), "-o", str(tmp_path / "x.tar.gz"),
               "--description", "d") == 3  # fmt: skip


def test_damaged_and_hostile_archives_are_bad_files(booking_run: Path, tmp_path: Path) -> None:
    import io
    import random

    good = archive(booking_run, tmp_path / "good.tar.gz").read_bytes()
    rng = random.Random(0)
    for i in range(12):
        damaged = bytearray(good)
        damaged[rng.randrange(len(damaged))] ^= 0xFF
        path = tmp_path / f"damaged-{i}.tar.gz"
        path.write_bytes(bytes(damaged))
        assert cli("submit", "verify", str(path)) in (3, 4)
    (tmp_path / "cut.tar.gz").write_bytes(good[: len(good) // 2])
    assert cli("submit", "verify", str(tmp_path / "cut.tar.gz")) == 3
    for name, kind in (("run/../../escape", tarfile.REGTYPE), ("run/link", tarfile.SYMTYPE)):
        path = tmp_path / "hostile.tar.gz"
        with tarfile.open(path, "w:gz") as tar:
            member = tarfile.TarInfo(name)
            member.type = kind
            member.linkname = "/etc/passwd" if kind == tarfile.SYMTYPE else ""
            tar.addfile(member, io.BytesIO(b"") if kind == tarfile.REGTYPE else None)
        assert cli("submit", "verify", str(path)) == 3
        assert not (tmp_path.parent / "escape").exists()


def test_a_violation_the_rules_would_not_give_is_refused(tmp_path: Path) -> None:
    out = run("booking", {"system": "first-row", "limit": 3}, tmp_path / "first-row")
    assert verdict_of(archive(out, tmp_path / "honest.tar.gz")).status == "verified"

    def edit(records: list[Record]) -> list[Record]:
        for r in records:
            for e in r["events"]:
                if e["kind"] == "violation":  # a valid search, recorded as a violation
                    e["data"]["raw"] = 'retrievefromrestaurantdb({"area": "centre"})'
                    return records
        raise AssertionError("no violation in the run")

    _refused(edited(out, tmp_path, edit), "the record has violation by system, the replay gives")


def test_the_agenda_user_s_turns_are_re_derived(tmp_path: Path) -> None:
    def edit(records: list[Record]) -> list[Record]:
        last = next(e for e in records[0]["events"] if e["kind"] == "user_message")
        last["data"]["text"] = "Please book anything."
        return records

    rule_run = run("booking", {"system": "rule", "limit": 2}, tmp_path / "agenda")
    verdict = verdict_of(archive(rule_run, tmp_path / "agenda.tar.gz"))
    assert any("agenda user's turns re-derived" in line for line in verdict.checked)
    _refused(edited(rule_run, tmp_path, edit), "turn 1: user_message.text")


def test_a_record_the_replay_cannot_read_is_refused_not_a_crash(
    booking_run: Path, tmp_path: Path
) -> None:
    def edit(records: list[Record]) -> list[Record]:
        for e in records[0]["events"]:
            if e["kind"] == "db_query":
                e["data"]["domain"] = 7
                e["data"]["arguments"] = {"area": {"operator": "~~", "value": [1, {"a": None}]}}
                return records
        raise AssertionError("no search")

    path = edited(booking_run, tmp_path, edit)
    assert cli("submit", "verify", str(path)) == 4
    _refused(path, "replay: ")
