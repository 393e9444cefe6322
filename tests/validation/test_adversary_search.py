"""The adversary search of ``todeval validate``: seeded random points plus hill climbing within
a budget of episodes, the best agent judged against the family's floor band, player parameters
carried in a player's name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from todeval.cli import main
from todeval.core.records import Estimate, MetricSummary, Summary
from todeval.dialogue.participants import split_params, with_params
from todeval.errors import UsageError
from todeval.validation import AdversaryFamily, AdversaryJob, ControlSuite
from todeval.validation.command import family_table, validate
from todeval.validation.search import Trial, best_of, neighbours, search

SPACE: dict[str, tuple[Any, ...]] = {
    "a": tuple(range(10)),
    "b": tuple(range(10)),
    "c": ("x", "y", "z"),
}


def peak(params: dict[str, Any]) -> float:
    """One peak at a=7, b=2, c=z (value 1.0), falling off with the distance to it."""
    distance = abs(params["a"] - 7) + abs(params["b"] - 2) + (params["c"] != "z")
    return 1.0 / (1 + distance)


def family(high: float = 0.5, **space: tuple[Any, ...]) -> AdversaryFamily:
    return AdversaryFamily(
        name="peak",
        description="a made-up family",
        metric="fake.score",
        high=high,
        space=space or SPACE,
        play=f"{__name__}:play_peak",
    )


def play_peak(job: AdversaryJob) -> Summary:
    """A ``play`` function: the peak's value as a summary of 10 episodes."""
    value = peak(job.params)
    metric = MetricSummary(micro=Estimate(value=value, ci_low=value, ci_high=value, n=10))
    return Summary(benchmark="fake", n_episodes=10, outcomes={}, metrics={"fake.score": metric})


def evaluate(params: dict[str, Any]) -> Trial:
    return Trial(params=params, value=peak(params), n=10, episodes=10)


def test_the_climb_finds_the_peak_of_a_space_too_big_to_enumerate() -> None:
    fam = family()
    assert fam.size == 300
    trials = search(fam, evaluate, budget=600, seed=0)
    best = best_of(trials)
    assert best is not None and best.value == 1.0
    assert best.params == {"a": 7, "b": 2, "c": "z"}
    assert {t.phase for t in trials} == {"random", "climb"}
    assert sum(t.episodes for t in trials) <= 600  # the budget holds
    # every point at most once
    keys = [json.dumps(t.params, sort_keys=True) for t in trials]
    assert len(keys) == len(set(keys))


def test_the_search_is_seeded() -> None:
    one = [t.params for t in search(family(), evaluate, budget=200, seed=1)]
    again = [t.params for t in search(family(), evaluate, budget=200, seed=1)]
    other = [t.params for t in search(family(), evaluate, budget=200, seed=2)]
    assert one == again and one != other


def test_a_small_space_is_played_whole_when_the_budget_allows() -> None:
    small = family(a=(1, 7), b=(2, 3), c=("z",))
    trials = search(small, evaluate, budget=10_000, seed=0)
    assert len(trials) == small.size == 4
    assert best_of(trials) is not None and best_of(trials).params == {"a": 7, "b": 2, "c": "z"}  # type: ignore[union-attr]


def test_neighbours_move_one_parameter_to_an_adjacent_choice() -> None:
    near = neighbours(SPACE, {"a": 0, "b": 5, "c": "y"})
    assert {"a": 1, "b": 5, "c": "y"} in near and {"a": 0, "b": 4, "c": "y"} in near
    assert {"a": 0, "b": 5, "c": "x"} in near and {"a": 0, "b": 5, "c": "z"} in near
    assert len(near) == 5  # a has no choice below 0


def test_the_best_agent_above_the_band_fails_the_suite(tmp_path: Path) -> None:
    low, high = family(high=0.5), family(high=1.0).model_copy(update={"name": "peak-wide"})
    suite = ControlSuite(name="fake", controls=(), adversaries=(low, high))
    report = validate(suite, (), workdir=tmp_path, families=suite.adversaries, budget=300)
    by_name = {a.name: a for a in report.adversaries}
    assert not by_name["peak"].passed and by_name["peak"].best is not None
    assert by_name["peak"].best.value == pytest.approx(1.0)  # found the peak
    assert by_name["peak-wide"].passed
    assert not report.passed
    text = family_table(report.adversaries)
    assert "a=7 b=2 c=z" in text and "1 of 2 families FAILED" in text


def test_a_family_that_cannot_be_played_fails_once_with_its_cause(tmp_path: Path) -> None:
    broken = family().model_copy(update={"metric": "no.such"})
    suite = ControlSuite(name="fake", controls=(), adversaries=(broken,))
    report = validate(suite, (), workdir=tmp_path, families=suite.adversaries, budget=300)
    (result,) = report.adversaries
    assert not result.passed and result.best is None and len(result.trials) == 1
    assert "no metric 'no.such'" in (result.error or "")


def test_a_family_declaration_is_checked() -> None:
    with pytest.raises(ValidationError, match="no choices"):
        family(a=())
    with pytest.raises(ValidationError, match="is empty"):
        AdversaryFamily(name="x", description="", metric="m", low=0.5, high=0.1,
                        space={"a": (1,)}, play="m:f")  # fmt: skip
    with pytest.raises(ValidationError, match="named twice"):
        ControlSuite(name="s", controls=(), adversaries=(family(), family()))
    base = {"name": "x", "description": "", "metric": "m", "high": 0.1, "space": {"a": (1,)}}
    for who in ({}, {"seat": "guesser"}, {"play": "m:f", "seat": "s", "player": "p"}):
        with pytest.raises(ValidationError, match="give play, or seat and player"):
            AdversaryFamily.model_validate({**base, **who})
    assert AdversaryFamily.model_validate({**base, "seat": "s", "player": "p"}).play is None


def test_player_parameters_ride_in_the_players_name() -> None:
    name = with_params("pkg.mod:Cls", {"template": "which", "per_turn": 2})
    assert name == "pkg.mod:Cls?template=which&per_turn=2"
    assert split_params(name) == ("pkg.mod:Cls", {"template": "which", "per_turn": "2"})
    assert split_params("rule") == ("rule", {})
    with pytest.raises(UsageError, match="given twice"):
        split_params("x?a=1&a=2")
    with pytest.raises(UsageError, match="key=value"):
        split_params("x?novalue")


def test_validate_searches_the_toy_plug_ins_family(tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "v.json"
    code = main(["validate", "toy", "--only", "blind", "--budget", "90", "-o", str(out)])
    assert code == 0
    report = json.loads(out.read_text())
    assert report["results"] == []  # --only named the family alone
    (blind,) = report["adversaries"]
    assert blind["name"] == "blind" and blind["size"] == 36 and blind["passed"]
    assert blind["episodes"] == 90 and len(blind["trials"]) == 3
    best = blind["best"]
    assert set(best["params"]) == {"start", "step", "direction"}
    assert 0.0 <= best["value"] <= 0.4 and best["n"] == 30
    printed = capsys.readouterr().out
    assert "best agent found" in printed and "PASS" in printed


def test_no_search_plays_the_controls_only(tmp_path: Path) -> None:
    out = tmp_path / "v.json"
    assert main(["validate", "toy", "--no-search", "--only", "repeat", "-o", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["adversaries"] == [] and [r["name"] for r in report["results"]] == ["repeat"]
    assert main(["validate", "toy", "--budget", "0"]) == 2


def test_a_blind_guesser_is_an_ordinary_player_with_parameters(tmp_path: Path) -> None:
    """The family's agent runs as any player does: its parameters are in its recorded name."""
    import todeval.api as td

    guesser = with_params("todeval_toy.game:BlindGuesser", {"start": "high", "step": 1})
    result = td.run("toy", {"guesser": guesser, "ids": ["n10-00"]}, out=tmp_path / "r")
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert guesser in json.dumps(manifest)
    assert result.summary.n_episodes == 1
    with pytest.raises(UsageError, match="takes no parameters"):
        td.run("toy", {"guesser": "bisect?step=2"}, out=tmp_path / "s")
