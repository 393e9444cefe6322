"""A board ranks in the direction the benchmark's profile declares for its primary metric.

Real toy runs (the plug-in of tests/toy_plugin) -- bisect finds the secret in fewer guesses than
repeat, which guesses the lowest number until the cap -- ranked under a test profile whose
primary metric is the toy's ``toy.guesses``, declared lower is better: bisect leads, on the
report's board (order, rank intervals, tiers) and on the leaderboard site built from their
submission archives (``site.json`` and the board page).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from todeval.cli import main
from todeval.leaderboard import collect as collect_module
from todeval.registry import discover
from todeval.report import boards, load_inputs
from todeval.results.profile import BenchmarkProfile, ProfileBook

GUESSERS = ("repeat", "random", "bisect")  # most guesses first: the reverse of the ranking


def _fewest_guesses_first(toy: BenchmarkProfile) -> BenchmarkProfile:
    assert toy.better_direction("toy.guesses") == "lower"
    return toy.model_copy(update={"primary": "toy.guesses", "primary_title": "Guesses"})


@pytest.fixture(scope="module")
def toy_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("direction")
    runs = {}
    for guesser in GUESSERS:
        out = base / "runs" / guesser
        assert main(["run", "toy", "--guesser", guesser, "--quiet", "--out", str(out)]) == 0
        runs[guesser] = out
    return runs


def _means(runs: dict[str, Path]) -> dict[str, float]:
    out = {}
    for name, path in runs.items():
        summary = json.loads((path / "summary.json").read_text(encoding="utf-8"))
        out[name] = summary["metrics"]["toy.guesses"]["micro"]["value"]
    return out


def test_the_report_board_ranks_a_lower_is_better_primary_ascending(
    toy_runs: dict[str, Path],
) -> None:
    means = _means(toy_runs)
    assert means["bisect"] < means["random"] < means["repeat"], means
    lower = _fewest_guesses_first(discover().profiles["toy"])
    inputs = load_inputs(list(toy_runs.values()), ProfileBook({"toy": lower}))
    (board,) = boards(inputs)
    assert board.lower_is_better
    assert [r.key for r in board.rows] == ["bisect", "random", "repeat"]
    assert [board.rank(r) for r in board.rows] == ["1", "2", "3"]
    bisect, _random, repeat = board.rows
    assert board.rank_ranges["bisect"][0] == 1  # the interval of the leader starts at 1
    assert board.rank_ranges["repeat"][1] == 3
    assert board.tier(bisect) == "1" and board.tier(repeat) != "1"
    # the same runs under the toy's own profile (toy.success, higher is better): bisect leads too
    (found,) = boards(load_inputs(list(toy_runs.values()), ProfileBook(discover().profiles)))
    assert not found.lower_is_better and found.rows[0].key == "bisect"
    assert found.rows[-1].key == "repeat"


@pytest.fixture(scope="module")
def site(toy_runs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("direction-site")
    subs = base / "submissions"
    subs.mkdir()
    for name, run in toy_runs.items():
        archive = str(subs / f"{name}.tar.gz")
        assert main(["submit", "prepare", str(run), "-o", archive, "--description", name]) == 0
    registry = discover()
    profiles = {**registry.profiles, "toy": _fewest_guesses_first(registry.profiles["toy"])}
    with pytest.MonkeyPatch.context() as patch:  # the site reads its profiles from discover()
        patch.setattr(collect_module, "discover", lambda: SimpleNamespace(profiles=profiles))
        out = base / "site"
        assert main(["leaderboard", "build", str(subs), "-o", str(out), "--quiet"]) == 0
    return {"dir": out, "index": json.loads((out / "site.json").read_text(encoding="utf-8"))}


def test_the_site_ranks_fewest_guesses_first(site: dict[str, Any]) -> None:
    (board,) = site["index"]["boards"]
    assert board["primary"] == "toy.guesses"
    rows = board["rows"]
    assert [r["submission"] for r in rows] == ["bisect", "random", "repeat"]
    assert [r["rank"] for r in rows] == ["1", "2", "3"]
    assert [r["primary"] for r in rows] == sorted(r["primary"] for r in rows)  # ascending
    assert rows[0]["rank_interval"].startswith("1") and rows[0]["tier"] == "1"
    assert rows[-1]["rank_interval"].endswith("3") and rows[-1]["tier"] != "1"
    page = (site["dir"] / board["page"]).read_text(encoding="utf-8")
    assert "Guesses ↓" in page  # the column says which way is better
    index = (site["dir"] / "index.html").read_text(encoding="utf-8")
    assert "bisect" in index.split('id="boards"', 1)[1]  # the leader named on the index
