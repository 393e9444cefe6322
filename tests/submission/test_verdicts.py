"""The verdict's other parts: standard vs custom, the agent's channel and trust, privileged
players, scorer versions (issue 45.3)."""

from __future__ import annotations

from pathlib import Path

from tests.submission.helpers import Record, archive, cli, edited, run, verdict_of

IN_PROCESS = "todeval.benchmarks.booking.systems.rule:RuleSystem"


def test_a_whole_task_set_with_default_options_is_standard(tmp_path: Path) -> None:
    out = run("toy", {}, tmp_path / "toy")
    verdict = verdict_of(archive(out, tmp_path / "toy.tar.gz"))
    assert (verdict.status, verdict.standard, verdict.custom) == ("verified", True, [])
    assert verdict.headline.startswith("verified standard")
    assert any("not replayed" in line for line in verdict.limits)  # the toy declares none


def test_an_in_process_agent_is_named_trusted_code_and_options_make_it_custom(
    tmp_path: Path,
) -> None:
    out = run("booking", {"system": IN_PROCESS, "limit": 3, "max_turns": 12}, tmp_path / "b")
    verdict = verdict_of(archive(out, tmp_path / "b.tar.gz"))
    assert verdict.status == "verified", verdict.lines()
    assert verdict.channel == "in-process"
    assert verdict.subject == "system"
    assert "option max_turns = 12 (standard: 15)" in verdict.custom
    assert any(line.startswith("trust: in-process: trusted code") for line in verdict.lines())


def test_a_privileged_player_and_a_stale_scorer_are_refused(tmp_path: Path) -> None:
    out = run("clarq", {"seeker": "oracle", "limit": 2}, tmp_path / "c")
    path = archive(out, tmp_path / "c.tar.gz")
    verdict = verdict_of(path)
    assert verdict.status == "refused"
    assert any("privileged player" in r for r in verdict.reasons), verdict.reasons
    assert cli("submit", "verify", str(path)) == 4

    def stale(records: list[Record]) -> list[Record]:
        for r in records:
            r["scorer_version"] = "0"
        return records

    verdict = verdict_of(edited(out, tmp_path, stale))
    assert any("scored by 0, the installed scorer is" in r for r in verdict.reasons)


def test_a_whole_booking_run_is_verified_standard(tmp_path: Path) -> None:
    # replayed in full: every episode's calls, the agenda user's turns, the scores
    out = run("booking", {}, tmp_path / "full")
    verdict = verdict_of(archive(out, tmp_path / "full.tar.gz"))
    assert (verdict.status, verdict.standard, verdict.n_tasks) == ("verified", True, 117)
    assert verdict.limits == []


def test_the_manifest_cannot_hide_a_control_or_claim_a_sandbox(tmp_path: Path) -> None:
    import json

    out = run("clarq", {"seeker": "oracle", "limit": 2}, tmp_path / "oracle")

    def unprivileged(folder: Path) -> None:
        path = folder / "manifest.json"
        manifest = json.loads(path.read_text("utf-8"))
        manifest["roles"]["seeker"].update(privileged=False, channel="isolated")
        path.write_text(json.dumps(manifest), encoding="utf-8")

    verdict = verdict_of(edited(out, tmp_path, files=unprivileged))
    text = "\n".join(verdict.reasons)
    assert "role seeker is played by oracle, a privileged player" in text
    assert "the manifest says it ran isolated, but its player oracle runs built-in" in text


def test_an_edited_config_or_seed_is_refused(tmp_path: Path) -> None:
    import json

    out = run("booking", {"limit": 2}, tmp_path / "b")

    def config(folder: Path) -> None:
        path = folder / "manifest.json"
        manifest = json.loads(path.read_text("utf-8"))
        manifest["config"]["max_turns"] = 30
        path.write_text(json.dumps(manifest), encoding="utf-8")

    verdict = verdict_of(edited(out, tmp_path, files=config))
    assert "the run's config is not the one its config hash was made from" in verdict.reasons

    def reseed(records: list[Record]) -> list[Record]:
        records[0]["seed"] += 1
        return records

    verdict = verdict_of(edited(out, tmp_path, reseed))
    assert any("is not the one the run's seed gives" in r for r in verdict.reasons)


def test_every_record_names_its_channels_and_must_agree_with_the_manifest(
    tmp_path: Path,
) -> None:
    """Each record names how its players ran (issue 45.6), as the manifest does; an archive
    whose records say otherwise is refused, one naming none (an older run) is read as before."""
    import json

    from todeval.core.records import EpisodeRecord

    out = run("booking", {"system": IN_PROCESS, "limit": 2, "max_turns": 4}, tmp_path / "b")
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    declared = {k: r["channel"] for k, r in manifest["roles"].items() if r.get("channel")}
    assert declared["system"] == "in-process"
    lines = (out / "episodes.jsonl").read_text("utf-8").splitlines()
    assert [json.loads(line)["channels"] for line in lines] == [declared] * len(lines)
    verdict = verdict_of(archive(out, tmp_path / "b.tar.gz"))
    assert verdict.status == "verified", verdict.lines()
    assert any("every record names the channels" in c for c in verdict.checked), verdict.checked

    def claims_isolated(records: list[Record]) -> list[Record]:
        records[1]["channels"]["system"] = "isolated"
        return records

    verdict = verdict_of(edited(out, tmp_path, claims_isolated))
    assert verdict.status == "refused"
    second = json.loads(lines[1])["episode_id"]
    assert f"{second}: role system ran isolated, the manifest says in-process" in verdict.reasons

    def dropped_role(records: list[Record]) -> list[Record]:
        del records[0]["channels"]["system"]
        return records

    verdict = verdict_of(edited(out, tmp_path, dropped_role))
    assert any("role system ran no recorded channel" in r for r in verdict.reasons)

    def older(records: list[Record]) -> list[Record]:
        for r in records:
            del r["channels"]
        return records

    verdict = verdict_of(edited(out, tmp_path, older))
    assert verdict.status == "verified", verdict.lines()
    assert any("name none (written before per-record channels)" in n for n in verdict.limits)
    old = json.loads(lines[0])
    del old["channels"]
    record = EpisodeRecord.model_validate(old)
    assert record.channels is None and "channels" not in record.model_dump_json()
