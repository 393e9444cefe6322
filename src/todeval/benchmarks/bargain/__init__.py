"""``todeval run bargain``: bargaining intent tracking on real negotiation dialogues.

Two tracks: **craigslist** (CraigslistBargain buyer turns, 11 coarse acts, silver labels from
a rule-based parser) and **casino** (CaSiNo utterances of both campers, 10 strategies, human
multi-label annotations). Each labelled turn is a task: the public context, the dialogue so
far and a candidate list; the labeller answers a set of ids. See ``docs/bargain.md``.
"""

from __future__ import annotations

from todeval.registry import Registry

HELP = (
    "label the intents of bargaining turns (CraigslistBargain acts, CaSiNo strategies, "
    "scripted Problem-Weaver tasks)"
)
DATA_HELP = "the scripted bargaining set: --generate (Problem Weaver) or --check its figures"
FACTORY_HELP = "Intent Factory: extract, verify and merge intents from dialogues into a hierarchy"


def register(registry: Registry) -> None:
    registry.profile(f"{__name__}.profile:PROFILE", benchmark="bargain")
    registry.controls("bargain", f"{__name__}.controls:SUITE")
    registry.benchmark(
        "bargain",
        HELP,
        cli="todeval.benchmarks.bargain.cli",  # imported only when the command runs
        spec="todeval.benchmarks.bargain.run:SPEC",
    )
    registry.lazy(
        "data",
        "bargain",
        DATA_HELP,
        "todeval.benchmarks.bargain.tools.data_cli",
        add="add_data_arguments",
        run="run_data",
    )
    registry.lazy(
        "data",
        "bargain-factory",
        FACTORY_HELP,
        "todeval.benchmarks.bargain.tools.factory_cli",
        add="add_factory_arguments",
        run="run_factory",
    )
    registry.annotation_source(
        "bargain",
        "labelled bargaining turns: bargain:craigslist, bargain:casino[-test|-all], "
        "bargain:scripted",
        items="todeval.benchmarks.bargain.annotation:items",  # imported only on export
    )


__all__ = ["register"]
