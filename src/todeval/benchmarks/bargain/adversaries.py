"""The text-blind adversary families ``todeval validate bargain`` searches.

Each family is one track and list setting (craigslist, casino, scripted; uniform and hard
distractors; the default ``k`` and ``--k 5``). Its agents are ``text-blind`` labellers
(:mod:`.textfree`): a learner (the in-list prior, logistic regression, gradient boosting)
fitted on the training turns with features of the candidate lists and the turn structure only
(``position``, ``structure``, ``all``: position in the list, list length, label identity and
rank, turn index and depth, speaker, the earlier turns' lists), cross-fitted over dialogues as
the baselines are and scored by the benchmark's own run; or the inverse-shuffle attacker, which
rebuilds the pre-issue-41 generation from public values. A learner draws its training lists
under a key of its own; the lists it is scored on are the run's, drawn under the run's secret.
The band's upper end is the best text-free baseline of the setting (``majority`` or ``prior``,
measured with ``bench/bench_bargain_adversaries.py``) + 0.02.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from todeval.benchmarks.bargain.keys import KEY_ENV
from todeval.benchmarks.bargain.textfree import EMITS, FEATURES, LEARNERS
from todeval.dialogue.participants import with_params
from todeval.errors import UsageError

if TYPE_CHECKING:
    from todeval.core.records import Summary
    from todeval.validation.search import AdversaryFamily, AdversaryJob

MARGIN = 0.02

SETTINGS: dict[str, tuple[dict[str, Any], float, str]] = {
    # name -> (run config, best text-free baseline F1 measured at seed 0, which baseline)
    "craigslist": ({"track": "craigslist"}, 0.378, "prior"),
    "craigslist-k5": ({"track": "craigslist", "k": 5}, 0.546, "in-list prior"),
    "casino": ({"track": "casino"}, 0.353, "prior"),
    "casino-k5": ({"track": "casino", "k": 5}, 0.512, "in-list prior"),
    "scripted": ({"track": "scripted"}, 0.262, "in-list prior"),
    "scripted-k5": ({"track": "scripted", "k": 5}, 0.530, "in-list prior"),
    "scripted-hard": ({"track": "scripted", "distractors": "hard"}, 0.260, "in-list prior"),
}
"""The families' settings and their floors' reference (``bench/bench_bargain_adversaries.py``
measures them; ``--k 5 --distractors hard`` draws the same 21-intent lists as the default hard
setting, so it has no family of its own)."""

DIALOGUES = {"craigslist": 181, "casino": 42, "scripted": 1000}
"""Dialogues a family's point plays (every one of the track: the floors are set for full runs;
on a sample the prior's own noise is larger than the 0.02 margin)."""
CI_POINTS = {"craigslist": 2, "casino": 2, "scripted": 1}
"""Points ``todeval validate bargain`` plays per family (its budget in episodes is these times
the track's dialogues): a learner's cost is its cross-fitting on the training dialogues, ~27 s
of CPU for gradient boosting on scripted, whatever the number of dialogues scored, so CI keeps
to one or two points a family (the whole ``validate bargain``, controls included, in about two
minutes of CPU); ``bench/bench_bargain_adversaries.py`` spends ``--budget`` episodes a family."""

SPACE: dict[str, tuple[Any, ...]] = {
    "learner": LEARNERS,
    "features": FEATURES,
    "emit": EMITS,
}


def labeller_name(params: Mapping[str, Any], run: Mapping[str, Any]) -> str:
    """The ``text-blind`` labeller of one point, with the run's public list settings."""
    return with_params(
        "text-blind",
        {
            "learner": params["learner"],
            "features": params["features"],
            "emit": params["emit"],
            "k": run.get("k", 20),
            "distractors": run.get("distractors", "uniform"),
            "seed": run.get("candidate_seed", 0),
        },
    )


def setting_of(name: str) -> dict[str, Any]:
    """A family's run config by its name (``text-blind/<setting>``)."""
    setting = name.rpartition("/")[2]
    if setting not in SETTINGS:
        raise UsageError(f"no bargain text-blind setting {setting!r}")
    return dict(SETTINGS[setting][0])


def validation_key(seed: int) -> bytes:
    """The candidate key of every point of a search with ``seed``: one key for all points, so
    they are scored on the same lists (paired, as the search compares them) and ``validate``
    is reproducible. The family's agents never read it: they see the labeller's view only."""
    return hashlib.sha256(f"bargain-validate-candidate-key|{seed}".encode()).digest()


@contextmanager
def pinned(key: bytes) -> Iterator[None]:
    """Runs in this block draw their lists with ``key`` (:data:`~.keys.KEY_ENV`)."""
    before = os.environ.get(KEY_ENV)
    os.environ[KEY_ENV] = key.hex()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(KEY_ENV, None)
        else:
            os.environ[KEY_ENV] = before


def play(job: AdversaryJob) -> Summary:
    """Play one point: a bargain run with the ``text-blind`` labeller it describes, its lists
    drawn with the search's key (:func:`validation_key`)."""
    from todeval.validation.play import play_run

    run = setting_of(job.family.name)
    with pinned(validation_key(job.seed)):
        return play_run(job, {**run, "labeller": labeller_name(job.params, run)})


def families() -> tuple[AdversaryFamily, ...]:
    from todeval.validation.search import AdversaryFamily

    return tuple(
        AdversaryFamily(
            name=f"text-blind/{setting}",
            description="a learner on the candidate lists and turn structure only (or the "
            f"inverse-shuffle attacker); floor: {which} {best:.3f} + {MARGIN}",
            metric="bargain.f1",
            low=0.0,
            high=round(best + MARGIN, 3),
            space=SPACE,
            play="todeval.benchmarks.bargain.adversaries:play",
            group=str(run["track"]),
            budget=DIALOGUES[str(run["track"])] * CI_POINTS[str(run["track"])],
        )
        for setting, (run, best, which) in SETTINGS.items()
    )


__all__ = [
    "CI_POINTS",
    "DIALOGUES",
    "MARGIN",
    "SETTINGS",
    "SPACE",
    "families",
    "labeller_name",
    "pinned",
    "play",
    "setting_of",
    "validation_key",
]
