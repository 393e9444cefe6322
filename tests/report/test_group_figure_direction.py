"""The per-group figure draws the best runs in the primary metric's declared direction."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from todeval.report._sections import _best


def _run(key: str, value: float | None) -> Any:
    micro = SimpleNamespace(value=value)
    summary = SimpleNamespace(metrics={"m": SimpleNamespace(micro=micro)})
    return SimpleNamespace(key=key, summary=summary)


def test_best_higher_is_better_keeps_the_largest() -> None:
    runs = [_run("a", 0.2), _run("b", 0.9), _run("c", None), _run("d", 0.5)]
    kept = _best(cast(Any, runs), "m", 2)
    assert [r.key for r in kept] == ["b", "d"]


def test_best_lower_is_better_keeps_the_smallest() -> None:
    runs = [_run("a", 0.2), _run("b", 0.9), _run("c", None), _run("d", 0.5)]
    kept = _best(cast(Any, runs), "m", 2, lower_is_better=True)
    assert [r.key for r in kept] == ["a", "d"]


def test_best_runs_without_a_value_come_last_either_way() -> None:
    runs = [_run("c", None), _run("a", 3.0)]
    assert [r.key for r in _best(cast(Any, runs), "m", 1)] == ["a"]
    assert [r.key for r in _best(cast(Any, runs), "m", 1, lower_is_better=True)] == ["a"]
