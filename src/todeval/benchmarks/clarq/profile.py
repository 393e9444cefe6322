"""How ClarQ self-play results are shown: the headline SPQ (S weighted by question economy),
S, AQD and AQL with their CIs, S per tree depth, how each dialogue ended, and transcripts with
the provider's decision after every answer."""

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

SUCCESS = "clarq.success"
ECONOMY = "clarq.success_economy"

PROFILE = BenchmarkProfile(
    benchmark="clarq",
    title="clarq (ClarQ-LLM clarification self-play)",
    primary=ECONOMY,
    primary_title="SPQ",
    columns=(
        Column(metric=ECONOMY, title="SPQ"),
        Column(metric=SUCCESS, title="S"),
        Column(metric="clarq.aqd", title="AQD", kind="number"),
        Column(metric="clarq.aql", title="AQL", kind="number"),
        Column(metric="clarq.success.depth1", title="S depth 1"),
        Column(metric="clarq.success.depth2", title="S depth 2"),
        Column(metric="clarq.success.depth3+", title="S depth 3+"),
        Column(metric="clarq.released", title="Released"),
    ),
    success_metric=SUCCESS,
    better={
        ECONOMY: "higher",
        SUCCESS: "higher",
        "clarq.aqd": "neither",  # questions asked: SPQ weighs them against success
        "clarq.aql": "neither",
        "clarq.released": "neither",
    },
    group_noun="task type",
    roles=(
        RoleView(name="seeker", title="Seeker"),
        RoleView(name="provider", title="Provider"),
        RoleView(name="judge", title="Judge"),
    ),
    labels=(
        LabelSpec(
            name="clarq.end",
            title="How the dialogue ended",
            failure=True,
            note="goodbye: the seeker said goodbye; enough: right after the provider said "
            "nothing was left (clarq protocol: the seeker was told); quit: goodbye at once; "
            "message cap: more than 22 messages; seeker / provider error: no scored dialogue.",
            values=(
                LabelValue(value="goodbye", colour="#1b7837"),
                LabelValue(value="enough", colour="#5aae61"),
                LabelValue(value="quit", colour="#e08214"),
                LabelValue(value="message_cap", title="message cap", colour="#c51b7d"),
                LabelValue(value="seeker_error", title="seeker error", colour="#7a1f1f"),
                LabelValue(value="provider_error", title="provider error", colour="#cc79a7"),
                LabelValue(value="infrastructure", colour="#999999"),
            ),
        ),
        LabelSpec(
            name="clarq.route",
            title="How success was decided",
            note="The scorer's first deciding step: exact or member (all required responses "
            "among the answers), substring, no prediction left (failure), judge, no purpose "
            "(dev), missing (no scored dialogue).",
            values=(
                LabelValue(value="exact", colour="#1b7837"),
                LabelValue(value="member", colour="#5aae61"),
                LabelValue(value="substring", colour="#a6dba0"),
                LabelValue(value="judge", colour="#9970ab"),
                LabelValue(value="no_prediction", title="no prediction", colour="#e08214"),
                LabelValue(value="no_purpose", title="no purpose", colour="#bababa"),
                LabelValue(value="missing", colour="#7a1f1f"),
            ),
        ),
    ),
    events={
        "seeker_message": EventView(style="message", title="Seeker", text="text"),
        "provider_message": EventView(style="message", title="Jax", text="text"),
        "provider_decision": EventView(
            style="result", title="decision", bold="decision", text="summary"
        ),
        **episode_log_events("protocol broken"),
    },
    details=(
        DetailView(key="released", title="Released nodes (in order)", layout="list"),
        DetailView(key="judge", title="Judge questions", layout="rows"),
        DetailView(key="verdicts", title="Verdicts obtained", layout="json"),
    ),
    reviewer="todeval.benchmarks.clarq.review:REVIEWER",
    panel=PanelRoles(subject="seeker", varied="provider"),
    notes=(
        "SPQ (the headline, ours) = S weighted by question economy, after SPL: per dialogue "
        "S x q* / max(q, q*), q the questions the seeker asked (every question of every "
        "answered turn), q* = required responses + 1 (the oracle's). A seeker that sweeps or "
        "shotguns pays for every question; S is the paper's, reported beside it.",
        "S = share of dialogues in which every required response reached the seeker (the "
        "original evaluator's matching steps; the judge for leftovers, else the release record).",
        "AQD = provider answers after the first + 1 - required lines: signed, negative when the "
        "seeker stops early; read it with S.",
        "AQL = mean seeker utterance length (spaces in English, characters in Chinese).",
        "S depth k = S over the tasks whose response tree has depth k; Released = share of "
        "required responses the provider released.",
    ),
)
