"""How booking results are shown: leaderboard columns, failure classes, transcript rendering."""

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

ACCURACY = "booking.booking_accuracy"
INFORM = "booking.inform"

_FAILURE_CLASSES = (
    LabelValue(value="success", colour="#009E73"),
    LabelValue(value="wrong_booking", colour="#E69F00", note="all domains booked, a slot wrong"),
    LabelValue(value="no_booking", colour="#F0E442"),
    LabelValue(value="turn_cap", colour="#56B4E9"),
    LabelValue(value="format_violation", prefix=True, colour="#D55E00", note="by kind; aborted"),
    LabelValue(value="inner_loop_cap", colour="#0072B2"),
    LabelValue(value="system_error", colour="#7A1F1F"),
    LabelValue(value="user_simulator_failure", colour="#CC79A7"),
    LabelValue(value="infrastructure_error", colour="#999999"),
    LabelValue(value="other", colour="#999999"),
)

_UNREALISTIC = (
    LabelValue(
        value="repair", colour="#E69F00", note="booked a realistic substitute for the goal's value"
    ),
    LabelValue(value="booked_nothing", colour="#F0E442"),
    LabelValue(value="other", colour="#999999"),
)

PROFILE = BenchmarkProfile(
    benchmark="booking",
    title="booking (self-play)",
    primary=ACCURACY,
    primary_title="Booking accuracy",
    columns=(
        Column(metric=ACCURACY, aggregate="micro", title="Booking acc."),
        Column(metric=ACCURACY, aggregate="macro", title="Booking acc."),
        Column(metric=INFORM, aggregate="micro", title="Inform"),
        Column(metric=INFORM, aggregate="macro", title="Inform"),
        Column(metric="booking.attributes", title="Attributes"),
        Column(metric="booking.aborted", title="Abort rate"),
        Column(metric="booking.turns", title="Turns", kind="number"),
    ),
    success_metric=ACCURACY,
    group_noun="domain group",
    roles=(RoleView(name="system", title="System"), RoleView(name="user", title="User sim.")),
    labels=(
        LabelSpec(
            name="failure_class",
            failure=True,
            values=_FAILURE_CLASSES,
            note="Every episode's failure class: success, wrong booking (all domains booked, a "
            "slot wrong), no booking, turn cap, format violation by kind (aborted), inner-loop "
            "cap, system error, user-simulator failure, infrastructure error.",
        ),
        LabelSpec(
            name="unrealistic",
            values=_UNREALISTIC,
            note="Unrealistic task set only: what the system did with the nonsense goal values. "
            "repair = booked a realistic substitute instead of the goal's value; booked_nothing; "
            "other.",
        ),
    ),
    events={
        "user_message": EventView(style="message", title="User", text="text"),
        "system_message": EventView(style="message", title="System", text="text"),
        "db_query": EventView(
            style="call", title="tool call", code="retrievefrom{domain}db", args="arguments"
        ),
        "booking_request": EventView(
            style="call", title="tool call", code="validate{domain}booking", args="arguments"
        ),
        "db_result": EventView(
            style="result",
            title="DB result",
            text="message",
            suffix=" (total {total})",
            rows="rows",
        ),
        "booking_result": EventView(
            style="good",
            title="booking confirmed",
            flag="ok",
            flag_false_title="booking rejected",
            bold="reference",
            text="message",
        ),
        **episode_log_events("format violation"),
    },
    details=(
        DetailView(
            key="goal",
            title="Goal",
            layout="sections",
            fields={
                "info": "info",
                "fail_info": "fail info",
                "book": "book",
                "fail_book": "fail book",
                "reqt": "requested attributes",
            },
        ),
        DetailView(
            key="bookings",
            title="Booking",
            layout="sections",
            fields={
                "reference": "reference",
                "info": "booked row",
                "book": "booking slots",
                "reqt": "attributes passed on",
                "domain": "",
                "arguments": "",
            },
        ),
        DetailView(key="domain_scores", title="Scores", layout="sections"),
        DetailView(
            key="violations",
            title="Violations",
            layout="list",
            item="turn {turn}: {reason}",
            pre=("raw",),
        ),
    ),
    better={
        ACCURACY: "higher",
        INFORM: "higher",
        "booking.attributes": "higher",
        # failures and effort: less is better (the same goal booked in fewer turns and calls)
        "booking.aborted": "lower",
        "booking.turn_cap": "lower",
        "booking.format_violations": "lower",
        "booking.violations_per_turn": "lower",
        "booking.turns": "lower",
        "booking.system_calls": "lower",
        "booking.db_queries": "lower",
        "booking.booking_attempts": "lower",
    },
    reviewer="todeval.benchmarks.booking.review:REVIEWER",
    panel=PanelRoles(subject="system", varied="user", varied_noun="user simulator"),
    notes=(
        "Macro = mean of the domain-group means (the clem:todd aggregate).",
        "Abort rate = share of episodes ended by a format violation or the inner-loop cap.",
        "Protocol clemtodd (default) = the released clem:todd game master's rules (no schema "
        "validation, several calls per response queued); strict = every tool call validated "
        "against the schema. Runs of different protocols are not comparable.",
    ),
    explainer="todeval.benchmarks.booking.explain:explain",
)
