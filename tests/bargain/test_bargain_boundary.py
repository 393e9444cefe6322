"""Bargaining's information boundary and controls (issue 26): a labeller reading everything it
is handed finds no gold label of any turn and no cross-fitted example; the fitted baselines and
gold are privileged controls; unknown keys in an answer are ignored and recorded; no prompt's
example answer scores above the majority baseline; ``todeval validate bargain`` holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.benchmarks.bargain.baselines import Fitted
from todeval.benchmarks.bargain.labellers import (
    LabellerContext,
    LabellerView,
    LabelOutput,
    TurnView,
)
from todeval.cli import main
from todeval.testing.snoop import Snooper, objects_in, texts_in

IDS = ("--dialogue-ids", "cb-000", "cb-001", "cb-002")


class SnoopingLabeller(Snooper):
    """Reads everything, answers the first candidate."""

    async def respond(self, observation: TurnView) -> LabelOutput:
        self.saw(observation)
        return LabelOutput(ids=observation.candidates[:1], raw="")


class PrivilegedSnoop(SnoopingLabeller):
    privileged = True


class ChattyLabeller(Snooper):
    """Answers the first candidate with an extra key, as many models do."""

    async def respond(self, observation: TurnView) -> LabelOutput:
        from todeval.benchmarks.bargain.labellers import labels_checker, read_labels

        raw = json.dumps({"labels": observation.candidates[:1], "confidence": 0.9})
        checked = labels_checker().check(raw)
        return read_labels(checked.value, raw, checked.error)


def _run(tmp_path: Path, player: str, *argv: str) -> list[dict[str, object]]:
    out = tmp_path / "run"
    args = ["run", "bargain", "--labeller", player, "--out", str(out), "--quiet", *argv]
    assert main(args) == 0
    return [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("track", ["craigslist", "casino", "scripted"])
def test_a_labeller_is_handed_no_gold_and_no_fitted_examples(track: str, tmp_path: Path) -> None:
    SnoopingLabeller.journal = []
    _run(tmp_path, f"{__name__}:SnoopingLabeller", "--track", track, "--limit", "5")
    journal = [s for s in SnoopingLabeller.journal or [] if s.context is not None]
    assert len(journal) == 5
    for snooped in journal:
        assert isinstance(snooped.context, LabellerView)
        handed = objects_in(snooped.everything())
        assert not any(isinstance(x, Fitted | LabellerContext) for x in handed)
        assert not snooped.options.privileged  # type: ignore[attr-defined]
        for turn in snooped.observations:
            assert isinstance(turn, TurnView)
            assert set(type(turn).model_fields) == {"index", "speaker", "dialogue", "candidates"}
        # the gold mapping's shape (dialogue id -> turn -> labels) is nowhere
        assert "gold" not in set(texts_in(snooped.options))


def test_privileged_players_are_handed_the_fitted_baselines(tmp_path: Path) -> None:
    PrivilegedSnoop.journal = []
    _run(tmp_path, f"{__name__}:PrivilegedSnoop", "--track", "casino", "--limit", "2")
    journal = [s for s in PrivilegedSnoop.journal or [] if s.context is not None]
    assert journal and all(isinstance(s.context, LabellerContext) for s in journal)
    assert all(s.options.privileged.get("gold") for s in journal)  # type: ignore[attr-defined]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["roles"]["labeller"]["privileged"] is True


def test_unknown_keys_are_ignored_and_recorded(tmp_path: Path) -> None:
    records = _run(tmp_path, f"{__name__}:ChattyLabeller", "--track", "casino", "--limit", "2")
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["metrics"]["bargain.failure_rate"]["micro"]["value"] == 0.0
    ignored = [e for r in records for e in r["events"] if e["kind"] == "ignored_keys"]  # type: ignore[attr-defined]
    assert ignored and all(e["data"]["keys"] == ["confidence"] for e in ignored)


def test_validate_bargain_holds_on_every_track(tmp_path: Path) -> None:
    out = tmp_path / "bargain.json"
    # the controls and every text-blind family, searched within CI's budget (adversaries.py:
    # one or two points a family, every dialogue of the track)
    assert main(["validate", "bargain", "--quiet", "-o", str(out)]) == 0
    report = json.loads(out.read_text())
    results = {r["name"]: r for r in report["results"]}
    searched = {f["name"]: f for f in report["adversaries"]}
    assert len(searched) == 7 and all(f["passed"] for f in searched.values()), searched
    assert all(f["best"]["value"] <= f["high"] for f in searched.values())
    for track in ("craigslist", "casino", "scripted"):
        majority = results[f"majority/{track}"]["value"]
        assert majority <= results[f"prior/{track}"]["value"] <= 0.45  # the text-free floor
        assert results[f"copy-example/{track}"]["value"] < majority  # no prior in the example
        assert results[f"garbage/{track}"]["value"] == 0.0
        assert results[f"gold/{track}"]["value"] == 1.0


def test_hard_distractors_carry_no_parent_signal() -> None:
    """The gold's parent is the modal parent of a hard list no more often than of a uniform
    one (before issue 26: in 3,490 of 3,490 hard lists)."""
    from todeval.benchmarks.bargain.data import load_track
    from todeval.benchmarks.bargain.tools.weaver_check import modal_parent_rate

    dialogues = load_track("scripted", "test")[:300]
    hard = modal_parent_rate(dialogues, "hard")
    uniform = modal_parent_rate(dialogues, "uniform")
    assert hard <= uniform and hard < 0.5, (hard, uniform)
