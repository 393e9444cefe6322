"""Generic wiring a plug-in declares instead of writing (issue 44.6): a person's player from a
brief and a reading, a built-in naming a class with parameters, an episode scored by the spec's
``rescore``, and a benchmark whose entry point names its spec."""

from __future__ import annotations

import asyncio
import io
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from typing import Any

import pytest

import todeval.author as td
from todeval.dialogue.episode import EpisodeStreams
from todeval.registry import discover


class AskForNumber(td.TerminalPlayer):
    other, again = "host", "a whole number, please"

    def brief(self, view: Any) -> str:
        return f"Guess a number up to {view}."

    def read(self, text: str) -> int:
        return int(text)


def test_a_terminal_player_shows_its_brief_and_asks_again_until_it_can_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = io.StringIO()
    monkeypatch.setattr("sys.stdin", io.StringIO("seven\n\n7\n"))
    monkeypatch.setattr("sys.stdout", out)
    player = AskForNumber()
    assert td.TerminalPlayer.interactive is True and player.interactive

    async def play() -> Any:
        await player.start(10)
        return await player.respond("higher")

    assert asyncio.run(play()) == 7
    screen = out.getvalue()
    assert "=== new dialogue with host" in screen and "Guess a number up to 10." in screen
    assert "host: higher" in screen and "host: a whole number, please" in screen
    assert screen.count("you> ") == 3  # the word, the empty line, the number


class Stepper:
    def __init__(self, options: td.PlayerOptions) -> None:
        self.params = dict(options.params)

    async def start(self, context: object) -> None: ...

    async def respond(self, observation: object) -> int:
        return 0


def test_a_builtin_may_name_a_class_with_parameters_and_the_name_adds_its_own() -> None:
    here = f"{__name__}:Stepper"
    role = td.Role("r", "r", object, {"still": f"{here}?step=0&start=low"}, view=lambda c: c)
    options = td.PlayerOptions(role="r")
    player = role.resolve("still").build(options)
    assert isinstance(player, Stepper) and player.params == {"step": "0", "start": "low"}
    moved = role.resolve("still?start=high").build(options)
    assert isinstance(moved, Stepper) and moved.params == {"step": "0", "start": "high"}


@dataclass(frozen=True)
class _Task:
    task_id: str = "t1"


def _scorer(run: Any, task: _Task, record: td.EpisodeRecord) -> td.Rescored:
    turns = sum(1 for e in record.events if e.kind == "step")
    return td.Rescored({"x.turns": float(turns)}, labels={"end": record.termination or ""})


def test_an_episode_closed_without_metrics_is_scored_by_the_specs_rescore() -> None:
    streams = EpisodeStreams(0, "t1", 0)
    ep: td.Episode[Any, _Task] = td.Episode(
        None,  # type: ignore[arg-type]  # the scorer here reads no run context
        _Task(), {}, streams, 0, "x", "", _scorer,
    )  # fmt: skip
    log = td.EpisodeLog()
    for _ in range(3):
        log.add("step", "a")
    record = ep.record(log, td.EpisodeEnd.success("done"), labels={"kept": "yes"})
    assert record.metrics == {"x.turns": 3.0}
    assert record.labels == {"kept": "yes", "end": "done"}
    given = ep.record(td.EpisodeLog(), td.EpisodeEnd.success("done"), metrics={"x.turns": 9.0})
    assert given.metrics == {"x.turns": 9.0}  # metrics given: the scorer is not asked


def test_an_entry_point_naming_a_spec_registers_the_benchmark_without_importing_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from importlib.metadata import entry_points

    fake = EntryPoint(name="nobench", value="no_such_module_xyz:SPEC", group="todeval.benchmarks")
    bad = EntryPoint(name="badbench", value="no_colon_here", group="todeval.benchmarks")
    monkeypatch.setattr(
        "todeval.registry.entry_points",
        lambda group: [fake, bad] if group == "todeval.benchmarks" else entry_points(group=group),
    )
    registry = discover()  # the module does not exist: nothing was imported
    entry = registry.benchmarks["nobench"]
    assert entry.spec == "no_such_module_xyz:SPEC" and entry.help == "the nobench benchmark"
    assert "nobench" in registry.commands["run"]
    (broken,) = registry.broken
    assert broken.startswith("plug-in 'badbench' (no_colon_here) failed to load")
