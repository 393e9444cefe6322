"""How toy results are shown: its columns, its ending label, its transcript rendering."""

from __future__ import annotations

from todeval.results.profile import (
    BenchmarkProfile,
    Column,
    DetailView,
    EventView,
    LabelSpec,
    LabelValue,
    PanelRoles,
    RoleView,
    episode_log_events,
)

PROFILE = BenchmarkProfile(
    benchmark="toy",
    title="toy (number guessing)",
    primary="toy.success",
    primary_title="Found",
    columns=(
        Column(metric="toy.success", title="Found"),
        Column(metric="toy.success", aggregate="macro", title="Found"),
        Column(metric="toy.guesses", title="Guesses", kind="number"),
    ),
    success_metric="toy.success",
    cost=False,
    group_noun="range size",
    roles=(RoleView(name="guesser", title="Guesser"), RoleView(name="host", title="Host")),
    labels=(
        LabelSpec(
            name="ending",
            title="How the game ended",
            failure=True,
            note="found: the secret was guessed; out of guesses; out of range (strict only).",
            values=(
                LabelValue(value="done", title="found", colour="#1b7837"),
                LabelValue(value="turn_cap", title="out of guesses", colour="#c51b7d"),
                LabelValue(value="format_violation", title="out of range", colour="#e08214"),
            ),
        ),
    ),
    events={
        "guess": EventView(style="message", title="Guesser", text="guess"),
        "answer": EventView(style="message", title="Host", text="answer"),
        **episode_log_events("rule broken"),
    },
    details=(DetailView(key="guesses", title="Guesses", layout="list"),),
    panel=PanelRoles(subject="guesser", varied="host"),
    notes=("Found = share of games where the secret was guessed within the cap.",),
)
