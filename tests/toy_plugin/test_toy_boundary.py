"""The toy's information boundary and its controls, through the plug-in as a user installs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from todeval_toy.game import Round, Task, load_tasks

from todeval.cli import main
from todeval.testing.snoop import Snooper, objects_in, texts_in


class SnoopingGuesser(Snooper):
    """Reads everything it is handed; always guesses 1."""

    async def respond(self, observation: object) -> int:
        self.saw(observation)
        return 1


class PrivilegedSnoop(SnoopingGuesser):
    privileged = True


def _play(tmp_path: Path, cls: type[SnoopingGuesser], name: str) -> list[dict[str, object]]:
    cls.journal = []
    out = tmp_path / name
    code = main(["run", "toy", "--guesser", f"{__name__}:{cls.__name__}", "--out", str(out)])
    assert code == 0
    return [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]


def test_a_guesser_is_handed_no_secret(tmp_path: Path) -> None:
    _play(tmp_path, SnoopingGuesser, "plain")
    journal = [s for s in SnoopingGuesser.journal or [] if s.context is not None]
    assert len(journal) == len(load_tasks())
    by_range = {(t.high, t.max_guesses) for t in load_tasks()}
    for snooped in journal:
        assert not isinstance(snooped.context, Round)
        assert not any(isinstance(x, Task | Round) for x in objects_in(snooped.everything()))
        game = snooped.context
        assert (game.high, game.max_guesses) in by_range  # type: ignore[attr-defined]
        # a whitelist: the start context holds the range, the budget and the seed, no more
        allowed = {"1", str(game.high), str(game.max_guesses), str(game.seed)}  # type: ignore[attr-defined]
        assert set(texts_in(game)) <= allowed
        assert set(texts_in(snooped.observations)) <= {"higher", "lower", "correct"}
    # the options carry no answer key
    assert all(not s.options.privileged for s in journal)  # type: ignore[attr-defined]


def test_a_privileged_guesser_is_handed_the_task_and_marked(tmp_path: Path) -> None:
    _play(tmp_path, PrivilegedSnoop, "privileged")
    journal = [s for s in PrivilegedSnoop.journal or [] if s.context is not None]
    assert journal and all(isinstance(s.context, Round) for s in journal)
    assert {str(s.context.task.secret) for s in journal} <= {  # type: ignore[union-attr]
        t for s in journal for t in texts_in(s.context)
    }
    manifest = json.loads((tmp_path / "privileged" / "manifest.json").read_text())
    assert manifest["roles"]["guesser"]["privileged"] is True
    assert manifest["roles"]["host"]["privileged"] is False


def test_validate_toy_passes_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "validate.json"
    assert main(["validate", "toy", "-o", str(out)]) == 0
    table = capsys.readouterr().out
    assert "repeat" in table and "oracle" in table and "FAIL" not in table
    report = json.loads(out.read_text())
    assert report["passed"] is True
    by_name = {r["name"]: r for r in report["results"]}
    assert by_name["repeat"]["value"] <= 0.1
    assert by_name["oracle"]["value"] == 1.0


def test_a_privileged_guesser_in_a_panel_is_a_control_never_ranked(tmp_path: Path) -> None:
    out = tmp_path / "panel"
    argv = ["run", "toy", "--guessers", "bisect,repeat,oracle", "--hosts", "rule,vague"]
    assert main([*argv, "--out", str(out), "--quiet"]) == 0
    panel = json.loads((out / "panel.json").read_text())
    assert panel["controls"] == ["oracle"]
    assert "oracle" in panel["spread"]  # its scores are shown ...
    for ranking in panel["rank_stability"]["rankings"].values():
        assert sorted(ranking) == ["bisect", "repeat"]  # ... but it is never ranked


def test_a_panels_default_directory_carries_its_selection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["run", "toy", "--guessers", "bisect,repeat", "--hosts", "rule", "--limit", "6"]
    assert main([*argv, "--quiet"]) == 0
    assert (tmp_path / "runs" / "panel-toy-bisect+repeat-s0-n6" / "panel.json").exists()
