"""How bargain results are shown: P/R/F1 with CIs, F1 by depth, provenance, transcripts."""

from __future__ import annotations

from todeval.results.profile import (
    BenchmarkProfile,
    Column,
    DetailView,
    EventView,
    LabelSpec,
    LabelValue,
    RoleView,
    episode_log_events,
)

PROFILE = BenchmarkProfile(
    benchmark="bargain",
    title="bargain (intent tracking on real and scripted negotiations)",
    primary="bargain.f1",
    primary_title="F1",
    columns=(
        Column(metric="bargain.f1", title="F1"),
        Column(metric="bargain.f1", aggregate="macro", title="F1"),
        Column(metric="bargain.precision", title="Precision"),
        Column(metric="bargain.recall", title="Recall"),
        Column(metric="bargain.failure_rate", title="Failure rate"),
        Column(metric="bargain.agreed.f1", title="F1 (verifier agreed)"),
    ),
    cost=True,
    better={
        "bargain.f1": "higher",
        "bargain.agreed.f1": "higher",
        "bargain.precision": "higher",
        "bargain.recall": "higher",
        "bargain.exact": "higher",
        "bargain.correct": "higher",
        "bargain.failure_rate": "lower",
        "bargain.incorrect": "lower",
        "bargain.invalid": "lower",
        "bargain.missed": "lower",
        "bargain.turns": "neither",
    },
    group_noun="depth",
    macro_over="label",
    roles=(RoleView(name="labeller", title="Labeller"),),
    labels=(
        LabelSpec(
            name="provenance",
            title="Label provenance",
            note="silver: craigslist acts from a rule-based parser; human: CaSiNo annotations; "
            "constructed: scripted turns labelled with the intents they were written for.",
            values=(
                LabelValue(value="silver", title="silver (rule-based parser)", colour="#e08214"),
                LabelValue(value="human", title="human annotation", colour="#1b7837"),
                LabelValue(
                    value="constructed", title="constructed (Problem Weaver)", colour="#2166ac"
                ),
            ),
        ),
        LabelSpec(
            name="reading",
            title="Outputs read",
            failure=True,
            note="whether the labeller's outputs could be parsed on every turn of the dialogue.",
            values=(
                LabelValue(value="all read", colour="#1b7837"),
                LabelValue(value="some unreadable", colour="#e08214"),
                LabelValue(value="none read", colour="#c51b7d"),
            ),
        ),
    ),
    events={
        "buyer": EventView(style="message", title="Buyer", text="text"),
        "seller": EventView(style="message", title="Seller", text="text"),
        "camper_1": EventView(style="message", title="Camper 1", text="text"),
        "camper_2": EventView(style="message", title="Camper 2", text="text"),
        "labels": EventView(
            style="good",
            title="gold vs predicted",
            text="summary",
            flag="exact",
            flag_false_title="gold vs predicted (differs)",
        ),
        **episode_log_events("unreadable output"),
    },
    details=(
        DetailView(key="provenance", title="Label provenance", layout="json"),
        DetailView(key="context", title="What the labeller sees besides the dialogue", layout="kv"),
        DetailView(
            key="turns",
            title="Turns: gold vs predicted",
            layout="list",
            item="utterance {index} · {speaker} · depth {depth} · K {k} · gold {gold} · "
            "predicted {predicted} · correct {correct}, missed {missed}, incorrect {incorrect}, "
            "invalid {invalid}",
            pre=("error",),
        ),
        DetailView(key="confusion", title="Confusion: gold label -> predicted", layout="kv"),
    ),
    notes=(
        "F1 = micro F1 over labelled turns (macro: averaged over labels); precision = correct / "
        "(correct + incorrect + invalid); recall = correct / (correct + missed); failure rate "
        "= turns whose output could not be read. 95% CIs resample dialogues.",
        "Groups are depths: the k-th labelled turn of the labelled speaker (1, 2, 3, 4+).",
        "Label provenance: craigslist acts are silver (a rule-based parser); CaSiNo "
        "strategies are human annotations; scripted intents are constructed (each generated "
        "buyer turn carries the intents it was written for). The task set's name says which.",
        "F1 (verifier agreed): scripted llm-mode sets only, the same F1 over the turns where a "
        "blind verifier model chose exactly the gold intents.",
    ),
    explainer="todeval.benchmarks.bargain.explain:explain",
)
