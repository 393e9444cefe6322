"""``--protocol clemtodd``: one test per rule of the released clem:todd game master
(kranti-up/clemtoddfw @ bfefff79, files under ``clemtodd/``), each also checking what
``--protocol strict`` does instead. Calls go through the public
:func:`todeval.benchmarks.booking.rules.handle_output` or a played episode."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.booking.scripted import ScriptedSystem, ScriptedUser
from todeval.benchmarks.booking import clemtodd
from todeval.benchmarks.booking.db import load_database
from todeval.benchmarks.booking.environment import BookingEnvironment
from todeval.benchmarks.booking.game import GameRules, play_episode
from todeval.benchmarks.booking.messages import (
    DbResult,
    Observation,
    SystemContext,
    SystemOutput,
    ToolCall,
)
from todeval.benchmarks.booking.rules import OutputHandling, handle_output
from todeval.benchmarks.booking.schema import DB_TOOLS
from todeval.benchmarks.booking.tasks import load_tasks
from todeval.benchmarks.booking.world.of_task_set import played_world, world_of
from todeval.cli import main
from todeval.core.outcome import Outcome
from todeval.core.records import CallUsage, EpisodeRecord

RESTAURANT = "retrievefromrestaurantdb"
HOTEL = "retrievefromhoteldb"
TRAIN = "retrievefromtraindb"
BOOK_RESTAURANT = "validaterestaurantbooking"
BOOK_TRAIN = "validatetrainbooking"
BOOK_HOTEL = "validatehotelbooking"
BOOK_KEYS = {"restaurant": ["people", "day", "time"], "hotel": ["people", "day", "stay"]}


def handle(
    protocol: str, name: str, arguments: Any, domains: tuple[str, ...] = ()
) -> OutputHandling:
    return handle_output(
        "test",
        protocol,
        list(domains),
        {"name": name, "arguments": arguments},
        goal_book_keys=BOOK_KEYS,
    )


def result(protocol: str, name: str, arguments: Any, domains: tuple[str, ...] = ()) -> Any:
    handled = handle(protocol, name, arguments, domains)
    assert handled.violation is None, handled.violation
    return handled.calls[0].result


def total(protocol: str, name: str, arguments: Any) -> int:
    """Rows a search finds in a dialogue whose goal has the searched domain."""
    found = result(protocol, name, arguments, (DB_TOOLS[name],))
    assert isinstance(found, DbResult)
    return found.total


def booked(protocol: str, name: str, arguments: dict[str, Any], domain: str) -> bool:
    found = result(protocol, name, arguments, (domain,))
    return bool(found.ok)


# -- tool calls: processfunccallresp.py, utils.py ----------------------------------------------


def test_unknown_keys_dropped() -> None:
    """processfunccallresp.py: only the fields of its RestaurantDB model pass on (keys matched
    case-insensitively); strict: ``additionalProperties: false`` makes an unknown key a
    violation."""
    handled = handle("clemtodd", RESTAURANT, {"Food": "chinese", "cuisine": "x", "Foo": 1})
    assert handled.violation is None
    assert handled.actions[0].model_dump()["constraints"] == {"food": "chinese"}
    assert handle("strict", RESTAURANT, {"food": "chinese", "cuisine": "x"}).violation


def test_values_of_any_case_or_form_pass_on() -> None:
    """processfunccallresp.py: no schema validation, so ``Centre``, ``people: "15"``, ``7pm``
    and a day in capitals pass on (the DB search lower-cases); strict: enum and pattern
    violations."""
    assert total("clemtodd", RESTAURANT, {"area": "Centre", "food": "Chinese"}) > 0
    booking = {"name": "charlie chan", "people": "15", "day": "Friday", "time": "7pm"}
    assert booked("clemtodd", BOOK_RESTAURANT, booking, "restaurant")
    assert handle("strict", RESTAURANT, {"area": "Centre"}).violation
    full = {**booking, "food": "chinese", "area": "centre", "pricerange": "cheap"}
    strict = handle("strict", BOOK_RESTAURANT, full, ("restaurant",))
    assert strict.violation is not None and "schema violation" in strict.violation.reason


def test_tool_name_must_be_exact() -> None:
    """processfunccallresp.py ``_get_function_details``: the name must be one of the seven as
    spelled; strict strips and lower-cases it first."""
    assert handle("clemtodd", "RetrieveFromRestaurantDB", {"food": "chinese"}).violation
    assert handle("strict", " RetrieveFromRestaurantDB", {"food": "chinese"}).violation is None


def test_followup_message_may_be_empty() -> None:
    """utils.py ``preparemodelresponse``: a follow-up needs a ``message`` key, any string;
    strict: an empty follow-up message is a violation."""
    assert handle("clemtodd", "followup", {"message": ""}).violation is None
    assert handle("clemtodd", "followup", {"text": "hi"}).violation is not None
    assert handle("strict", "followup", {"message": " "}).violation is not None


def test_empty_query_aborts() -> None:
    """processfunccallresp.py: a search with no known field left (``{}``, only unknown keys or
    ``None`` values) is an error, and an error aborts the episode; strict: an empty search is
    valid (it matches every row)."""
    for arguments in ({}, {"cuisine": "thai"}, {"food": None}):
        assert handle("clemtodd", RESTAURANT, arguments).violation is not None
    assert total("strict", RESTAURANT, {}) > 5


def test_all_values_skipped_is_an_error_message() -> None:
    """dbquerybuilder.py: values that survive the parser but are all skipped leave an empty
    WHERE clause, whose SQL error goes back to the system as the result (no abort); strict:
    skipped values leave an unconstrained search."""
    found = result("clemtodd", RESTAURANT, {"food": "", "area": "donotcare"}, ("restaurant",))
    assert found.total == 0 and "no constraint" in found.message
    assert total("strict", RESTAURANT, {"food": "", "name": "dontcare"}) > 5


def test_booking_without_search_or_booking_field_aborts() -> None:
    """processfunccallresp.py: a booking keeps the fields of both the DB and the Book model and
    needs at least one of each; strict: the schema's required keys decide."""
    only_book = {"people": "2", "trainid": "TR1234"}
    assert handle("clemtodd", BOOK_TRAIN, only_book, ("train",)).violation is not None
    only_info = {"name": "charlie chan"}
    assert handle("clemtodd", BOOK_RESTAURANT, only_info, ("restaurant",)).violation is not None
    assert handle("strict", BOOK_TRAIN, only_book, ("train",)).violation is not None


def test_train_price_and_duration_dropped_from_booking_calls() -> None:
    """processfunccallresp.py: TrainBook has only people and trainid, so a train booking's
    price and duration never reach the booking (and a requested price or duration is never
    passed on); strict: they are optional booking arguments, recorded as attributes."""
    handled = handle(
        "clemtodd",
        BOOK_TRAIN,
        {"trainid": "TR9386", "people": "2", "day": "sunday", "price": "x", "duration": "y"},
        ("train",),
    )
    assert set(handled.actions[0].model_dump()["slots"]) == {"trainid", "people", "day"}


# -- DB search: dbquerybuilder.py ----------------------------------------------------------------


def test_search_skips_none_empty_and_donotcare() -> None:
    """dbquerybuilder.py (about line 99): ``""``, ``[]``, ``{}`` and ``donotcare`` (any case)
    are skipped; strict: ``dontcare``-like values are skipped too."""
    base = total("clemtodd", RESTAURANT, {"food": "chinese"})
    skip_values: list[Any] = ["", [], {}, "donotcare", "DoNotCare"]
    for skipped in skip_values:
        assert total("clemtodd", RESTAURANT, {"food": "chinese", "area": skipped}) == base
    assert total("strict", RESTAURANT, {"food": "chinese", "name": ""}) == base


def test_search_matches_dontcare_and_any_literally() -> None:
    """dbquerybuilder.py: ``dontcare`` and ``any`` are not in its skip list, so they are
    compared with the column and match nothing; strict: they are ignored."""
    for value in ("dontcare", "any"):
        assert total("clemtodd", RESTAURANT, {"food": "chinese", "name": value}) == 0
        assert total("strict", RESTAURANT, {"food": "chinese", "name": value}) > 0


def test_search_does_not_strip_spaces() -> None:
    """dbquerybuilder.py: values are lower-cased, never stripped; strict strips them."""
    assert total("clemtodd", RESTAURANT, {"food": " chinese "}) == 0
    assert total("strict", RESTAURANT, {"food": " chinese "}) > 0


def test_search_does_not_map_free_or_guest_house() -> None:
    """dbquerybuilder.py: ``free`` and ``guest house`` are compared as given (the DB says
    ``yes`` and ``guesthouse``); strict maps them like the data."""
    assert total("clemtodd", HOTEL, {"parking": "free"}) == 0
    assert total("clemtodd", HOTEL, {"type": "guest house"}) == 0
    assert handle("strict", HOTEL, {"parking": "free"}).violation is not None  # enum yes|no
    env = BookingEnvironment(world_of("test"), [], random_rng())
    assert env.search("hotel", {"type": "guest house"}).total > 0


def test_invalid_operator_returns_an_error_message() -> None:
    """dbquerybuilder.py: an operator outside ``= > < >= <=`` returns an error message to the
    system and the episode goes on; strict: a schema violation (abort)."""
    found = result("clemtodd", HOTEL, {"stars": {"operator": "!=", "value": "4"}}, ("hotel",))
    assert found.total == 0 and "Invalid operator" in found.message
    assert handle("strict", HOTEL, {"stars": {"operator": "!=", "value": "4"}}).violation


def test_operator_given_as_json_string_is_parsed() -> None:
    """dbquerybuilder.py: for stars and the train times a string value is tried as JSON, so an
    ``{operator, value}`` object written as text works; strict: a string where the schema
    wants an object is a violation."""
    text = json.dumps({"operator": ">=", "value": "4"})
    parsed = total("clemtodd", HOTEL, {"stars": text})
    assert parsed == total("clemtodd", HOTEL, {"stars": {"operator": ">=", "value": "4"}}) > 0
    assert handle("strict", HOTEL, {"stars": text}).violation is not None


def test_times_compare_as_strings() -> None:
    """dbquerybuilder.py: times are compared as text in SQLite, so ``9:30`` is later than every
    ``1x:xx`` time; strict requires ``HH:MM`` (a violation otherwise)."""
    query = {"departure": "cambridge", "destination": "ely", "day": "sunday"}
    late = total("clemtodd", TRAIN, {**query, "leaveat": {"operator": ">=", "value": "9:30"}})
    padded = total("clemtodd", TRAIN, {**query, "leaveat": {"operator": ">=", "value": "09:30"}})
    assert late < padded
    strict = handle("strict", TRAIN, {**query, "leaveat": {"operator": ">=", "value": "9:30"}})
    assert strict.violation is not None


# -- the data: the original's values and database (issue 44) ----------------------------------


def test_synthetic_values_as_given_under_clemtodd_normalised_under_strict() -> None:
    """The original reads the synthetic set's goals and database as given (``guest house``,
    ``free``, ``8:00``); strict keeps todeval's normalised values (``guesthouse``, ``yes``,
    ``08:00``). The test set reads the same under both."""
    from todeval.benchmarks.booking.run import BookingConfig, run_tasks

    def values(protocol: str, task_set: str = "synthetic") -> set[str]:
        tasks = run_tasks(BookingConfig(task_set=task_set, protocol=protocol))
        return {v for t in tasks for g in t.domains.values() for v in g.info.values()}

    as_given = {"guest house", "free", "8:00"}
    assert as_given <= values("clemtodd") and not as_given & values("strict")
    assert {"guesthouse", "yes", "08:00"} <= values("strict")
    assert values("clemtodd", "test") == values("strict", "test")

    def column(protocol: str, domain: str, name: str) -> list[str]:
        return played_world("synthetic", protocol).database().values(domain, name)

    assert "free" in column("clemtodd", "hotel", "parking")
    assert column("strict", "hotel", "parking") == ["no", "yes"]
    assert "8:00" in column("clemtodd", "train", "arriveby")
    assert "8:00" not in column("strict", "train", "arriveby")


def test_three_restaurants_carry_the_original_names_under_clemtodd() -> None:
    """The original's restaurant-dbase.db names three restaurants otherwise than MultiWOZ's JSON:
    ``ask`` (JSON ``ask restaurant``), ``meze bar restaurant`` (``meze bar``) and ``pizza express
    Fen Ditton``, whose capitals its lower-cased queries never match; strict plays the JSON's
    names, lower-cased."""
    original = {"ask", "meze bar restaurant", "pizza express Fen Ditton"}
    json_names = {"ask restaurant", "meze bar", "pizza express fen ditton"}
    for task_set in ("test", "dev"):
        names = set(played_world(task_set, "clemtodd").database().values("restaurant", "name"))
        assert original <= names and not json_names & names
        names = set(played_world(task_set, "strict").database().values("restaurant", "name"))
        assert json_names <= names and not original & names
    when = {"people": "2", "day": "friday", "time": "18:00"}
    assert booked(
        "clemtodd", BOOK_RESTAURANT, {"name": "meze bar restaurant", **when}, "restaurant"
    )
    assert not booked("clemtodd", BOOK_RESTAURANT, {"name": "meze bar", **when}, "restaurant")
    assert not booked("clemtodd", BOOK_RESTAURANT, {"name": "pizza express fen ditton", **when},
                      "restaurant")  # fmt: skip
    full = {"name": "meze bar", "food": "turkish", "area": "centre", "pricerange": "expensive"}
    assert booked("strict", BOOK_RESTAURANT, {**full, **when}, "restaurant")


# -- booking validation: processbooking.py -------------------------------------------------------


def test_mandatory_key_empty_or_dontcare_accepted() -> None:
    """processbooking.py ``_validate_gen_book_slots``: a mandatory key only has to be present,
    so ``name: ""`` (skipped in the lookup) or ``day: "dontcare"`` book; strict: empty and
    dontcare mandatory values are missing."""
    booking = {"name": "", "food": "chinese", "pricerange": "expensive", "area": "east"}
    booking |= {"people": "2", "day": "dontcare", "time": "18:00"}
    assert booked("clemtodd", BOOK_RESTAURANT, booking, "restaurant")
    bad = handle_output("test", "strict", ["restaurant"], {"name": BOOK_RESTAURANT,
                        "arguments": booking})  # fmt: skip
    assert bad.violation is not None or not bad.calls[0].result.ok  # type: ignore[union-attr]


def test_empty_or_dontcare_optional_slot_rejected_or_literal() -> None:
    """processbooking.py: a categorical lookup slot must be one of the schema's values, so an
    empty or ``dontcare`` area rejects the booking; a non-categorical one (food) is matched
    literally and finds nothing; strict ignores both."""
    booking = {"name": "charlie chan", "people": "2", "day": "friday", "time": "18:00"}
    for extra in ({"area": ""}, {"area": "dontcare"}, {"food": "dontcare"}):
        assert not booked("clemtodd", BOOK_RESTAURANT, booking | extra, "restaurant")
    env = BookingEnvironment(world_of("test"), ["restaurant"],
                             random_rng())  # fmt: skip
    assert env.book("restaurant", booking | {"area": "dontcare", "food": "dontcare"}).ok


def test_train_times_match_exactly_in_booking_lookup() -> None:
    """processbooking.py: the booking's lookup uses ``leaveat`` as given (equality); strict
    treats it as a bound (``>=``), so the user's earliest time books the train."""
    row = next(r for r in load_database("test").rows("train") if r["trainid"] == "TR9386")
    booking = {"trainid": "TR9386", "people": "2", "departure": row["departure"]}
    env = BookingEnvironment(world_of("test"), ["train"], random_rng())
    assert clemtodd.book(env, "train", booking | {"leaveat": row["leaveat"]}).ok
    assert not clemtodd.book(env, "train", booking | {"leaveat": "00:01"}).ok
    bound = {"leaveat": {"operator": ">=", "value": "00:01"}}  # passed on as given: a bound
    assert clemtodd.book(env, "train", booking | bound).ok
    assert env.book("train", booking | {"leaveat": "00:01"}).ok


def test_train_duration_is_a_lookup_key() -> None:
    """processbooking.py / instancegenerator.py: ``duration`` is one of the train lookup keys,
    so a wrong duration rejects a booking that reaches the validator with it (the monolithic
    parser drops it first, see test_train_price_and_duration_dropped_from_booking_calls);
    strict: duration is an optional attribute, not looked up."""
    row = next(r for r in load_database("test").rows("train") if r["trainid"] == "TR9386")
    booking = {"trainid": "TR9386", "people": "2", "day": row["day"]}
    env = BookingEnvironment(world_of("test"), ["train"], random_rng())
    assert clemtodd.book(env, "train", booking | {"duration": row["duration"]}).ok
    assert not clemtodd.book(env, "train", booking | {"duration": "1 minutes"}).ok
    assert env.book("train", booking | {"duration": "1 minutes"}).ok


def test_goal_booking_keys_must_be_present() -> None:
    """processbooking.py: the goal's booking keys (``book_keys``) must be present as well as
    the mandatory ones; strict checks only the mandatory keys and the schema's required ones."""
    booking = {"name": "charlie chan", "people": "2", "day": "friday", "time": "18:00"}
    env = BookingEnvironment(world_of("test"), ["restaurant"],
                             random_rng())  # fmt: skip
    assert clemtodd.book(env, "restaurant", booking, ("people", "day", "time")).ok
    assert not clemtodd.book(env, "restaurant", booking, ("people", "day", "time", "stay")).ok


# -- the loop: master.py, monollm.py ---------------------------------------------------------------

TASK = next(t for t in load_tasks("test") if t.group == "restaurant")


def play(system: Any, lines: list[str], protocol: str = "clemtodd", **rules: Any) -> EpisodeRecord:
    game = GameRules(protocol=protocol, **rules)
    return asyncio.run(play_episode(TASK, system, ScriptedUser(lines), run_seed=3, rules=game))


def kinds(record: EpisodeRecord) -> list[str]:
    return [e["kind"] for e in record.model_dump()["events"]]


def test_sixteenth_consecutive_db_search_aborts() -> None:
    """master.py ``_handle_dbquery``: up to 15 DB searches in a row are run, a 16th consecutive
    one aborts; strict: at most 15 outputs per user turn, the 15th must be a follow-up."""
    query: tuple[str, Any] | str = (RESTAURANT, {"food": "chinese"})
    followup: tuple[str, Any] | str = ("followup", {"message": "Found some."})
    fifteen = play(ScriptedSystem([query] * 15 + [followup]), ["hi"])
    assert fifteen.outcome is not Outcome.ABORTED
    assert kinds(fifteen).count("db_query") == 15
    sixteen = play(ScriptedSystem([query] * 16), ["hi"])
    assert sixteen.outcome is Outcome.ABORTED and "inner-loop cap" in sixteen.reason
    assert kinds(sixteen).count("db_query") == 15
    strict = play(ScriptedSystem([query] * 15 + [followup]), ["hi"], "strict")
    assert strict.outcome is Outcome.ABORTED


def test_consecutive_count_restarts_when_kind_changes() -> None:
    """master.py ``_handle_dbquery``/``_handle_booking``: each loop counts its own kind and
    returns on the other, so alternating searches and bookings are unbounded within a turn;
    strict: 15 outputs per turn whatever their kind."""
    query = (RESTAURANT, {"food": "chinese"})
    booking = (BOOK_RESTAURANT, {"name": "nowhere", "people": "2", "day": "friday",
                                 "time": "18:00"})  # fmt: skip
    outputs: list[Any] = ([query] * 10 + [booking] * 10) * 2 + [("followup", {"message": "x"})]
    record = play(ScriptedSystem(outputs), ["hi"])
    assert record.outcome is not Outcome.ABORTED
    assert kinds(record).count("db_query") == 20 and kinds(record).count("booking_request") == 20
    assert play(ScriptedSystem(list(outputs)), ["hi"], "strict").outcome is Outcome.ABORTED


class MultiCallSystem:
    """Answers with scripted responses, each a list of tool calls; counts its model calls and
    what it was shown through ``observe``."""

    def __init__(self, responses: list[list[tuple[str, dict[str, Any]]]]) -> None:
        self.responses = list(responses)
        self.responds = 0
        self.observed: list[Observation] = []

    async def start(self, context: SystemContext) -> None:
        self.context = context

    async def respond(self, observation: Observation) -> SystemOutput:
        self.responds += 1
        calls = self.responses.pop(0) if self.responses else [("followup", {"message": "ok"})]
        tools = [ToolCall(name=n, arguments=a) for n, a in calls]
        return SystemOutput(tool_call=tools[0], more_calls=tools[1:])

    def observe(self, observation: Observation) -> None:
        self.observed.append(observation)


def test_several_calls_per_response_are_queued() -> None:
    """monollm.py: the calls after the first are queued and each is taken as the system's next
    output without a model call (the previous result is shown to the system first); strict:
    only the first call is acted on."""
    query = (RESTAURANT, {"food": "chinese"})
    system = MultiCallSystem([[query, query, ("followup", {"message": "Two searches done."})]])
    record = play(system, ["hi"])
    assert system.responds == 1  # one model response, three outputs
    assert kinds(record).count("db_query") == 2
    assert [o.kind for o in system.observed] == ["db_result", "db_result"]
    assert system.context.queues_calls
    strict_system = MultiCallSystem([[query, query, ("followup", {"message": "x"})]])
    strict = play(strict_system, ["hi"], "strict", max_calls_per_turn=3)
    assert kinds(strict).count("db_query") == 1 and not strict_system.observed


def test_queued_calls_count_toward_the_cap() -> None:
    """monollm.py + master.py: queued calls are outputs like any other, so 16 consecutive
    searches in one response abort."""
    query = (RESTAURANT, {"food": "chinese"})
    record = play(MultiCallSystem([[query] * 16]), ["hi"])
    assert record.outcome is Outcome.ABORTED and "inner-loop cap" in record.reason


def test_queued_call_that_fails_to_parse_aborts() -> None:
    """monollm.py: a queued call goes through the same parsing, and a failure aborts."""
    query = (RESTAURANT, {"food": "chinese"})
    record = play(MultiCallSystem([[query, ("nosuchtool", {})]]), ["hi"])
    assert record.outcome is Outcome.ABORTED and "unknown tool" in record.reason


def test_followup_in_the_middle_ends_turn_rest_queued_for_next_turn() -> None:
    """monollm.py + master.py: a follow-up ends the turn; the calls after it stay queued and are
    played as the system's first outputs of the next turn."""
    query = (RESTAURANT, {"food": "chinese"})
    first = [("followup", {"message": "Searching next turn."}), query,
             ("followup", {"message": "Found them."})]  # fmt: skip
    system = MultiCallSystem([first])
    record = play(system, ["hi", "thanks"])
    events = [(e["kind"], e["data"].get("text")) for e in record.model_dump()["events"]]
    messages = [text for kind, text in events if kind == "system_message"]
    assert messages[:2] == ["Searching next turn.", "Found them."]
    user_turns = [i for i, (kind, _) in enumerate(events) if kind == "user_message"]
    search = events.index(("db_query", None))
    assert user_turns[1] < search  # played after the user's second message
    assert system.responds == 1


def test_done_only_when_whole_reply() -> None:
    """master.py ``_process_player_response``: the reply, stripped and lower-cased, must be
    ``done``, ``done,`` or ``done.``; strict also allows spaces before the punctuation."""
    assert clemtodd.is_done("  DONE. ") and clemtodd.is_done("done,")
    assert not clemtodd.is_done("done .") and not clemtodd.is_done("thanks, done")
    from todeval.benchmarks.booking.messages import is_done

    assert is_done("done .")


def random_rng() -> Any:
    import random

    return random.Random(0)


# -- through the real runner -----------------------------------------------------------------------


def _script(path: Path) -> Path:
    """A scripted model: a search with capitals and an unknown key, then a booking with
    ``people: "15"``, ``7pm`` and a capitalised day, each response carrying several calls."""
    search = {"name": RESTAURANT, "arguments": {"Food": "Chinese", "Area": "Centre", "mood": 1}}
    book = {"name": BOOK_RESTAURANT, "arguments": {"name": "charlie chan", "people": "15",
            "day": "Friday", "time": "7pm", "food": "chinese", "note": "window seat"}}  # fmt: skip
    say = {"name": "followup", "arguments": {"message": "Booked: charlie chan."}}
    ask = {"name": "followup", "arguments": {"message": "What else can I do?"}}
    script = {
        "replies": [{"tool_calls": [search, book, say]}],
        "default": {"tool_calls": [ask]},
    }
    path.write_text(json.dumps(script))
    return path


def _run(tmp_path: Path, protocol: str) -> dict[str, Any]:
    out = tmp_path / protocol
    args = ["run", "booking", "--system", "monolithic", "--system-model",
            f"scripted:{_script(tmp_path / 'script.json')}", "--task-ids", TASK.task_id,
            "--no-cache", "--out", str(out), "--quiet"]  # fmt: skip
    if protocol:
        args += ["--protocol", protocol]
    assert main(args) == 0
    record: dict[str, Any] = json.loads((out / "episodes.jsonl").read_text().splitlines()[0])
    manifest = json.loads((out / "manifest.json").read_text())
    record["protocol"] = manifest["config"]["protocol"]
    return record


def test_sloppy_scripted_model_aborts_under_strict_plays_on_under_clemtodd(
    tmp_path: Path,
) -> None:
    """Lower-case/capitalised enums, unknown keys, ``7pm``, ``people: "15"`` and several calls
    per response: strict aborts at the first call; clemtodd (the default) plays to the end."""
    strict = _run(tmp_path, "strict")
    assert strict["outcome"] == "aborted" and strict["termination"] == "format_violation"
    default = _run(tmp_path, "")
    assert default["protocol"] == "clemtodd"
    assert default["outcome"] != "aborted"
    assert default["termination"] in ("done", "turn_cap")
    assert default["details"]["bookings"]["restaurant"]["book"]["people"] == "15"
    kinds = [e["kind"] for e in default["events"]]
    assert kinds.count("db_query") == 1 and kinds.count("booking_request") == 1


def test_compare_refuses_runs_of_different_protocols(tmp_path: Path) -> None:
    """The protocol is recorded in the manifest and shown in the report; ``compare`` refuses to
    pair two protocols."""
    runs = []
    for protocol in ("clemtodd", "strict"):
        out = tmp_path / protocol
        args = ["run", "booking", "--limit", "3", "--protocol", protocol, "--out", str(out),
                "--quiet"]  # fmt: skip
        assert main(args) == 0
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["config"]["protocol"] == protocol == manifest["protocol"]
        runs.append(str(out))
    assert main(["compare", *runs]) == 4
    report = tmp_path / "report.html"
    assert main(["report", *runs, "-o", str(report)]) == 0
    html = report.read_text()
    assert "<th>protocol</th><td><code>clemtodd</code>" in html
    assert "<th>protocol</th><td><code>strict</code>" in html


def test_tool_chat_answers_queued_calls_in_order() -> None:
    """monollm.py keeps every call of a reply; todeval's chat history answers each call right
    after the reply that made it, also when the user spoke in between (a follow-up first)."""
    from todeval.backends.types import GenerationResult, ToolCallOut
    from todeval.dialogue.chat import ToolChat

    chat = ToolChat("sys")
    chat.user("hi")
    calls = [ToolCallOut(id="a", name="followup", arguments="{}"),
             ToolCallOut(id="b", name=RESTAURANT, arguments="{}")]  # fmt: skip
    chat.record(GenerationResult(tool_calls=calls, usage=CallUsage(role="system")), keep_all=True)
    chat.user("thanks")  # answers the follow-up as delivered
    chat.answer("rows")  # the queued search, played in the next turn
    roles = [(m.role, m.tool_call_id) for m in chat.messages]
    assert roles == [("system", None), ("user", None), ("assistant", None), ("tool", "a"),
                     ("tool", "b"), ("user", None)]  # fmt: skip


def test_the_protocol_is_in_the_manifest_and_the_summary(tmp_path: Path) -> None:
    for protocol in ("clemtodd", "strict"):
        out = tmp_path / protocol
        argv = ["run", "booking", "--protocol", protocol, "--limit", "2", "--quiet"]
        assert main([*argv, "--out", str(out)]) == 0
        manifest = json.loads((out / "manifest.json").read_text())
        summary = json.loads((out / "summary.json").read_text())
        assert manifest["protocol"] == summary["protocol"] == protocol
