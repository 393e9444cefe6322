"""The bargaining controls ``todeval validate bargain`` plays on all three tracks.

Floors: ``garbage`` (never a readable answer), ``copy-example`` (the prompt's example answer,
copied: it must not encode the label prior), ``random`` and ``majority`` (privileged baselines
fitted on the other dialogues' gold). Ceiling: ``gold`` (privileged: copies the answer key).
"""

from __future__ import annotations

from typing import Literal

from todeval.validation import Control, ControlSuite

TRACKS = ("craigslist", "casino", "scripted")
_CONTROLS: dict[str, tuple[Literal["floor", "ceiling"], float, float, str]] = {
    "garbage": ("floor", 0.0, 0.05, "never a readable answer"),
    "copy-example": ("floor", 0.0, 0.05, "the prompt's example answer, every turn"),
    "random": ("floor", 0.0, 0.2, "random candidates (privileged: fitted label counts)"),
    "majority": ("floor", 0.0, 0.35, "the most frequent gold set (privileged: fitted)"),
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
    notes=(
        "Micro F1 over every labelled turn of the track (craigslist: silver acts, 181 "
        "dialogues; casino: human strategies, 42; scripted: constructed intents, 1,000).",
    ),
)
