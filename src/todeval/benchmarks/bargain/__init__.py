"""``todeval run bargain``: bargaining intent tracking on real negotiation dialogues.

Two tracks: **craigslist** (CraigslistBargain buyer turns, 11 coarse acts, silver labels from
a rule-based parser) and **casino** (CaSiNo utterances of both campers, 10 strategies, human
multi-label annotations). Each labelled turn is a task: the public context, the dialogue so
far and a candidate list; the labeller answers a set of ids. See ``docs/bargain.md``.
"""

from __future__ import annotations

from todeval.benchmarks.bargain.profile import PROFILE
from todeval.registry import Registry

HELP = "label the intents of real bargaining turns (CraigslistBargain acts, CaSiNo strategies)"


def register(registry: Registry) -> None:
    registry.profile(PROFILE)
    registry.benchmark(
        "bargain",
        HELP,
        cli="todeval.benchmarks.bargain.cli",  # imported only when the command runs
        plan_factory="todeval.benchmarks.bargain.run:plan_from_config",
    )
    registry.annotation_source(
        "bargain",
        "labelled bargaining turns: bargain:craigslist, bargain:casino[-test|-all]",
        items="todeval.benchmarks.bargain.annotation:items",  # imported only on export
    )


__all__ = ["register"]
