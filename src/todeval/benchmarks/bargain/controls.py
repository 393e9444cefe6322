"""The bargaining controls ``todeval validate bargain`` plays on all three tracks.

Floors: ``garbage`` (never a readable answer), ``copy-example`` (the prompt's example answer,
copied: it must not encode the label prior), ``random``, ``majority`` and ``prior`` (privileged
baselines fitted on the other dialogues' gold; ``prior`` is the text-free in-list prior at the
turn's depth and speaker). Ceiling: ``gold`` (privileged: copies the answer key).

Adversary families (issue 41, :mod:`.adversaries`): text-blind learners on the candidate lists
and turn structure, and the inverse-shuffle attacker, one family per track and list setting,
each held to the best text-free baseline + 0.02.
"""

from __future__ import annotations

from typing import Literal

from todeval.benchmarks.bargain.adversaries import families
from todeval.validation import Control, ControlSuite

TRACKS = ("craigslist", "casino", "scripted")
_CONTROLS: dict[str, tuple[Literal["floor", "ceiling"], float, float, str]] = {
    "garbage": ("floor", 0.0, 0.05, "never a readable answer"),
    "copy-example": ("floor", 0.0, 0.05, "the prompt's example answer, every turn"),
    "random": ("floor", 0.0, 0.2, "random candidates (privileged: fitted label counts)"),
    "majority": ("floor", 0.0, 0.35, "the most frequent gold set (privileged: fitted)"),
    "prior": ("floor", 0.0, 0.45, "the in-list prior at the turn's depth (privileged: fitted)"),
    "gold": ("ceiling", 0.99, 1.0, "privileged: copies the answer key"),
}

SUITE = ControlSuite(
    name="bargain",
    controls=tuple(
        Control(
            name=f"{labeller}/{track}",
            kind=kind,
            description=what,
            metric="bargain.f1",
            low=low,
            high=high,
            run={"track": track, "labeller": labeller},
            group=track,
        )
        for track in TRACKS
        for labeller, (kind, low, high, what) in _CONTROLS.items()
    ),
    adversaries=families(),
    notes=(
        "Micro F1 over every labelled turn of the track (craigslist: silver acts, 181 "
        "dialogues; casino: human strategies, 42; scripted: constructed intents, 1,000).",
        "Candidate lists are drawn from the installation's secret key (the same list for a "
        "turn in every run) in the label set's order; a "
        "text-blind family's floor is the best text-free baseline (majority, prior) + 0.02.",
    ),
)
