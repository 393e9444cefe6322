"""Issue 41, round 2: the red team's seekers (``tests/clarq/redteam/``, copied as they were
played) against the ``rule`` provider under the ``strict`` protocol. Before the singled-out
rule they scored SPQ 0.564 / 0.478 (bag, en / zh), 0.326 / 0.281 (bag continuing after three
misses) and 0.318 / 0.358 (parrot) on all 260 tasks; a turn now releases a node only when one
of its questions singles the node out (docs/clarq.md, "A question aimed at one node")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clarq.redteam import rt_bag
from tests.clarq.selfplay import metric, run_clarq

BAG = "tests.clarq.redteam.rt_bag:BagSeeker"
PARROT = "tests.clarq.redteam.rt_simple:SimpleSeeker"
FLOOR = 0.10
LIMIT = "52"


@pytest.mark.parametrize(
    ("name", "seeker", "lang", "knobs", "adapt"),
    [
        ("bag", BAG, "en", {}, False),
        ("bag", BAG, "zh", {"TEMPLATE": "confirm"}, False),
        ("bag after misses", BAG, "en", {"MISSES": 3}, False),
        ("bag after misses", BAG, "zh", {"MISSES": 3, "TEMPLATE": "confirm"}, True),
        ("small bag", BAG, "en", {"KEEP": 0.1}, False),
        ("parrot", PARROT, "en", {}, False),
        ("parrot", PARROT, "zh", {}, False),
    ],
)
def test_red_team_seekers_stay_at_the_floor(
    name: str,
    seeker: str,
    lang: str,
    knobs: dict[str, object],
    adapt: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for knob, value in knobs.items():
        monkeypatch.setattr(rt_bag, knob, value)
    if adapt:
        monkeypatch.setenv("RT_ADAPT", "1")
    else:
        monkeypatch.delenv("RT_ADAPT", raising=False)
    run = run_clarq(
        tmp_path / "run",
        "--seeker", seeker, "--provider", "rule", "--protocol", "strict",
        "--lang", lang, "--limit", LIMIT,
    )  # fmt: skip
    assert metric(run, "clarq.success_economy") <= FLOOR, name
