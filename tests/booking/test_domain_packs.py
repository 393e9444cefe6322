"""Bring your own domain (issue 31): a domain pack checked with one-line errors, its tools
generated, tasks drawn from it and audited, and played end to end offline under both
protocols by the agenda user and the rule system."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import jsonschema
import pytest

from todeval.benchmarks.booking.audit import audit_task
from todeval.benchmarks.booking.domains.cli import pack_folder
from todeval.benchmarks.booking.domains.pack import cached_pack, load_pack
from todeval.benchmarks.booking.domains.tasks import (
    generate_tasks,
    load_pack_tasks,
    pack_digest,
)
from todeval.benchmarks.booking.environment import BookingEnvironment
from todeval.benchmarks.booking.world.from_packs import packs_world
from todeval.benchmarks.booking.world.model import multiwoz_world, pack_task_set
from todeval.benchmarks.booking.world.of_task_set import multiwoz_pack_folders, world_of
from todeval.cli import main
from todeval.errors import BadInputError

PACK = pack_folder("car-rental")


@pytest.fixture
def pack_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "pack"
    shutil.copytree(PACK, folder)
    return folder


def _edit(folder: Path, old: str, new: str, file: str = "domain.yaml") -> None:
    path = folder / file
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_the_example_pack_checks_and_generates_its_tools(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["data", "domain", "car-rental", "--check"]) == 0
    out = capsys.readouterr().out
    assert "car      240" in out and "parking  90" in out
    world = world_of(pack_task_set(PACK))
    names = [t["function"]["name"] for t in world.tools]
    assert names == ["followup", "searchcars", "searchparking", "bookcar", "bookparking"]
    params = world.tool_parameters()
    for schema in params.values():
        jsonschema.Draft202012Validator.check_schema(schema)
    assert params["bookcar"]["required"] == ["carid", "day", "days", "time"]
    assert params["searchcars"]["properties"]["seats"]["type"] == "object"  # operators: true
    assert "carid" not in params["searchcars"]["properties"]  # search: false
    assert params["bookcar"]["properties"]["time"]["pattern"].startswith("^([01]")


def test_integer_slots_compare_as_numbers() -> None:
    db = world_of(pack_task_set(PACK)).database()
    at_least_8 = db.query("car", {"seats": {"operator": ">=", "value": "8"}})
    assert at_least_8.total > 0 and all(int(r["seats"]) >= 8 for r in at_least_8.rows)
    assert db.query("car", {"seats": {"operator": "<", "value": "10"}}).total == 240


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        ("key: carid", "key: plate", "entities.car.key: 'plate' is not one of its slots"),
        ("data: cars.csv", "data: lorries.csv", "data file not found"),
        ("values: [manual, automatic]\n        aliases: {stick shift: manual, auto: automatic}",
         "values: [manual]", "row 1: transmission='automatic'"),
        ("type: integer\n        operators", "type: time\n        operators", "is not a time"),
        ("pack: car-rental", "pack: Car Rental", "pack: a pack name is lower-case"),
        ("search_tool: searchcars", "search_tool: followup", "tool name 'followup' is taken"),
        ("    attributes: [model, price, phone]", "    attributes: [seats]", "already a slot"),
        ("description: a rental car\n", "descripton: a rental car\n", "Field required"),
        ("case: upper, search: false}", "case: upper, search: false, check_values: false}",
         "car.slots.carid.check_values: a text slot's values are not checked"),
        ("type: integer\n", "type: integer\n        pattern: false\n",
         "car.slots.seats.pattern: only a time slot has a pattern"),
        ("\nentities:\n", "\noperators: ['>=']\nentities:\n", "operators: '=' and each"),
        ("\nentities:\n", "\noperators: ['=', '=']\nentities:\n", "operators: '=' and each"),
        ("\nentities:\n", "\noperators: ['~']\nentities:\n", "operators.0: Input should be"),
        ("\nentities:\n", "\nextends: ../nowhere\nentities:\n",
         "extends: '../nowhere' is not a pack folder"),
        ("\nentities:\n", "\nextends: .\nentities:\n", "extends: '.' extends this pack again"),
    ],
)  # fmt: skip
def test_a_broken_pack_is_one_line_naming_the_problem(
    pack_copy: Path, old: str, new: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _edit(pack_copy, old, new)
    with pytest.raises(BadInputError) as raised:
        load_pack(pack_copy)
    assert says in str(raised.value) and "\n" not in str(raised.value)
    assert main(["data", "domain", str(pack_copy), "--check"]) == 3
    assert says in capsys.readouterr().err


def test_duplicate_keys_and_bad_yaml_are_refused(pack_copy: Path) -> None:
    rows = (pack_copy / "cars.csv").read_text().splitlines()
    (pack_copy / "cars.csv").write_text("\n".join([*rows, rows[1]]) + "\n")
    with pytest.raises(BadInputError, match="names two rows"):
        load_pack(pack_copy)
    (pack_copy / "domain.yaml").write_text("pack: [unclosed\n")
    with pytest.raises(BadInputError, match="not valid YAML"):
        load_pack(pack_copy)


def test_generated_tasks_are_seeded_feasible_and_read_back(tmp_path: Path) -> None:
    first = generate_tasks(PACK, 30, seed=3)
    assert generate_tasks(PACK, 30, seed=3) == first
    assert generate_tasks(PACK, 30, seed=4)["tasks"] != first["tasks"]
    out = tmp_path / "tasks.json"
    assert main(["data", "domain", "car-rental", "--generate-tasks", "30", "--seed", "3",
                 "-o", str(out)]) == 0  # fmt: skip
    tasks = load_pack_tasks(PACK, out)
    assert [t.task_id for t in tasks][:2] == ["car-rental/000-goal0000", "car-rental/001-goal0001"]
    assert all(audit_task(t).feasible for t in tasks)
    shapes = {t.group for t in tasks} | {
        k for t in tasks for g in t.domains.values() for k in ("fail_info", "reqt") if getattr(g, k)
    }
    assert {"car", "parking", "car+parking", "fail_info", "reqt"} <= shapes
    other = json.loads(out.read_text()) | {"pack": "clinic"}
    out.write_text(json.dumps(other))
    with pytest.raises(BadInputError, match="tasks of pack 'clinic', not 'car-rental'"):
        load_pack_tasks(PACK, out)


def test_the_shipped_tasks_are_the_recorded_draw() -> None:
    shipped = json.loads((PACK / "tasks.json").read_text())
    assert shipped == generate_tasks(PACK, 240, seed=0)


def test_generated_goals_single_out_a_few_rows_as_multiwoz_test_goals_do() -> None:
    """The name alone, or MultiWOZ's two to four slots and more of the row while more than
    three rows match (issue 41: a goal many rows meet is met by chance by a blindly booked
    row; MultiWOZ's test goals leave a median of 2 hotels and 3 restaurants)."""
    from collections import Counter

    from todeval.benchmarks.booking.domains.tasks import MAX_MATCHES

    pack = cached_pack(str(PACK))
    tasks = load_pack_tasks(PACK)
    goals = [(d, g) for t in tasks for d, g in t.domains.items()]
    assert all(len(g.info) > 1 or set(g.info) == {"name"} for _, g in goals)
    for d, g in goals:
        left = [r for r in pack.rows[d] if all(r.get(k) == v for k, v in g.info.items())]
        assert 1 <= len(left) <= MAX_MATCHES, (d, g.info)
    assert Counter(len(g.info) for _, g in goals) == {1: 29, 3: 39, 4: 188, 5: 55, 6: 30}


@pytest.mark.parametrize("protocol", ["clemtodd", "strict"])
def test_rule_system_and_agenda_user_play_a_pack_end_to_end(tmp_path: Path, protocol: str) -> None:
    out = tmp_path / protocol
    argv = ["run", "booking", "--domain", "car-rental", "--protocol", protocol, "--limit", "20"]
    assert main([*argv, "--quiet", "--out", str(out)]) == 0
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 20
    success = sum(r["outcome"] == "success" for r in records)
    assert success >= 18, success
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["domain"] == "car-rental"
    assert len(manifest["config"]["domain_sha256"]) == 16


@pytest.mark.parametrize(
    ("system", "protocol", "expected"),
    [("silent", "strict", 0.0), ("first-row", "clemtodd", 0.0), ("oracle", "clemtodd", 1.0),
     ("oracle", "strict", 1.0)],
)  # fmt: skip
def test_the_controls_hold_on_a_pack(
    tmp_path: Path, system: str, protocol: str, expected: float
) -> None:
    """The floor controls score nothing on a pack; the privileged oracle books every goal."""
    out = tmp_path / system
    argv = ["run", "booking", "--domain", "car-rental", "--system", system, "--limit", "8"]
    assert main([*argv, "--protocol", protocol, "--quiet", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["booking.booking_accuracy"]["micro"]["value"] == expected


def test_an_edited_pack_refuses_to_resume(tmp_path: Path, pack_copy: Path) -> None:
    out = tmp_path / "run"
    argv = ["run", "booking", "--domain", str(pack_copy), "--limit", "2", "--quiet", "--out"]
    assert main([*argv, str(out)]) == 0
    _edit(pack_copy, "CR1006,nissan qashqai", "CR1006,nissan juke", "cars.csv")
    assert main([*argv, str(out)]) == 4


def _variant(folder: Path, base: Path, body: str) -> Path:
    folder.mkdir()
    (folder / "domain.yaml").write_text(f"extends: {base}\n{body}")
    return folder


def test_a_pack_extends_another_by_merge_patch(tmp_path: Path, pack_copy: Path) -> None:
    """A variant names itself, merges its fields over the base's (null removes one, a list
    replaces one), reads inherited data from the base's folder and its own from its own, and
    checks values outside a slot's values only when check_values is true."""
    variant_folder = _variant(
        tmp_path / "variant",
        Path("../pack"),
        """pack: car-rental-variant
operators: ['=', '>=']
entities:
  car:
    slots:
      category: {aliases: null}
      transmission: {values: [manual, automatic, sequential]}
  parking:
    data: parking.csv
    slots:
      covered: {check_values: false}
""",
    )
    rows = (pack_copy / "parking.csv").read_text().replace(",yes,", ",solar,", 1)
    (variant_folder / "parking.csv").write_text(rows)
    pack = load_pack(variant_folder)
    base = load_pack(pack_copy)
    assert pack.name == "car-rental-variant" and pack.operators == ("=", ">=")
    assert pack.rows["car"] == base.rows["car"]  # inherited data, read from the base's folder
    assert pack.entities["car"].slots["category"].aliases == {}
    assert pack.entities["car"].slots["transmission"].values == ["manual", "automatic",
                                                                 "sequential"]  # fmt: skip
    assert pack.entities["car"].slots["seats"] == base.entities["car"].slots["seats"]
    assert {r["covered"] for r in pack.rows["parking"]} == {"solar", "yes", "no"}
    assert pack.bases == ((pack_copy / "domain.yaml").resolve(),)
    tools = {t["function"]["name"]: t for t in world_of(pack_task_set(variant_folder)).tools}
    seats = tools["searchcars"]["function"]["parameters"]["properties"]["seats"]
    assert seats["properties"]["operator"]["enum"] == ["=", ">="]
    digest = pack_digest(pack)
    _edit(pack_copy, "description: a rental car", "description: a hired car")
    assert pack_digest(load_pack(variant_folder)) != digest  # the base is part of the digest


def test_an_extending_pack_needs_its_own_name_and_checked_values(
    tmp_path: Path, pack_copy: Path
) -> None:
    for body, says in [
        ("entities: {}\n", "pack: a pack that extends another needs its own name"),
        ("pack: car-rental\n", "pack: a pack that extends another needs its own name"),
        ("pack: v\nentities: {car: {slots: {transmission: {values: [manual], aliases: null}}}}\n",
         "row 1: transmission='automatic' is not one of its values"),
        ("pack: v\nentities: {car: {slots: {category: {values: [economy]}}}}\n",
         "category.aliases: 'hatchback' -> 'compact', not a value"),
    ]:  # fmt: skip
        folder = tmp_path / f"v{len(list(tmp_path.iterdir()))}"
        with pytest.raises(BadInputError) as raised:
            load_pack(_variant(folder, Path("../pack"), body))
        assert says in str(raised.value) and "\n" not in str(raised.value), raised.value


def test_a_time_slot_without_pattern_or_check_takes_any_time(pack_copy: Path) -> None:
    _edit(pack_copy, 'time: {description: "pick-up time (HH:MM)", type: time}',
          'time: {description: "pick-up time", type: time, pattern: false}')  # fmt: skip
    params = world_of(pack_task_set(pack_copy)).tool_parameters()
    assert "pattern" not in params["bookcar"]["properties"]["time"]
    assert load_pack(pack_copy).normalise("car", "time", "9:05") == "09:05"


@pytest.mark.parametrize("task_set", ["test", "dev", "synthetic", "unrealistic"])
def test_multiwoz_is_three_packs_with_nothing_changed(task_set: str) -> None:
    """Every MultiWOZ set plays in the world of three packs (test and dev: MultiWOZ's;
    synthetic and unrealistic: variants extending them): tools byte for byte, the validator's
    values, the protocols' field tables and every database row equal to the schema module's."""
    packed, constants = world_of(task_set), multiwoz_world(task_set)
    assert json.dumps(packed.tools) == json.dumps(constants.tools)
    for field in ("entities", "db_tools", "booking_tools", "informable", "book_slots",
                  "optional_attributes", "mandatory", "operators", "upper_slots",
                  "clemtodd_search", "clemtodd_booking", "clemtodd_lookup", "compare",
                  "reported", "descriptions", "service"):  # fmt: skip
        assert getattr(packed, field) == getattr(constants, field), field
    assert packed.operator_keys() == constants.operator_keys()
    wanted = {k: sorted(v) for k, v in constants.accepted.items() if k.split("-")[0] in
              packed.entities}  # fmt: skip
    assert {k: sorted(v) for k, v in packed.accepted.items()} == wanted
    ours, theirs = packed.database(), constants.database()
    for domain in packed.entities:
        assert ours.rows(domain) == theirs.rows(domain)
    for slot, value in [("type", "Guest House"), ("parking", "free"), ("trainid", "tr1234"),
                        ("leaveat", "9:15"), ("people", " 2 "), ("food", "Italian"),
                        ("internet", "Free WiFi"), ("stars", "3^8"), ("people", "6L"),
                        ("stay", " 5Long"), ("day", "RainyDay"), ("arriveby", "1000:1000"),
                        ("leaveat", "07:3X"), ("area", "Middle of Ocean")]:  # fmt: skip
        assert packed.normalise_value(slot, value) == constants.normalise_value(slot, value)
    assert not packed.from_pack  # MultiWOZ keeps its controls' conventions


def test_the_packs_of_one_world_offer_the_same_operators() -> None:
    test, unrealistic = multiwoz_pack_folders("test"), multiwoz_pack_folders("unrealistic")
    with pytest.raises(BadInputError, match="the packs offer different operators"):
        packs_world((test[0], unrealistic[1], test[2]), "mixed")


@pytest.mark.parametrize(
    ("task_set", "rows"),
    [("test", ("train   2828", "hotel   33")), ("synthetic", ("train   60", "hotel   68")),
     ("unrealistic", ("train   60", "hotel   60", "restaurant  60"))],
)  # fmt: skip
def test_multiwoz_packs_check_like_any_pack(
    task_set: str, rows: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    for folder in multiwoz_pack_folders(task_set):
        assert main(["data", "domain", folder, "--check"]) == 0
    out = capsys.readouterr().out
    assert all(r in out for r in rows), out


def test_the_llm_user_plays_a_pack_from_its_goal_message(tmp_path: Path) -> None:
    """A scripted model as the LLM user (over the model interface) books a car with the rule
    system: the user is briefed with the generated goal's message."""
    script = {
        "rules": [
            {"match": "(?i)reference number is", "reply": "done"},
            {"match": "(?i)how about", "reply": "Please book it for monday, 3 days, at 10:00."},
        ],
        "default": "I need a rental car with suv.",
    }
    model = tmp_path / "user.json"
    model.write_text(json.dumps(script))
    out = tmp_path / "llm-user"
    argv = ["run", "booking", "--domain", "car-rental", "--user", "llm", "--user-model",
            f"scripted:{model}", "--task-ids", "024-goal0024", "--quiet", "--out"]  # fmt: skip
    assert main([*argv, str(out)]) == 0
    (line,) = (out / "episodes.jsonl").read_text().splitlines()
    record = json.loads(line)
    said = [e["data"]["text"] for e in record["events"] if e["kind"] == "user_message"]
    assert said[0] == "I need a rental car with suv." and said[-1] == "done"
    assert record["details"]["bookings"]["car"]["book"] == {
        "day": "monday", "days": "3", "time": "10:00"
    }  # fmt: skip
    calls = [e for e in record["events"] if e["kind"] == "model_call"]
    briefing = json.dumps(calls[0]["data"])
    assert "You are looking for a rental car" in briefing
    assert "the booking assistant of Fenland Car Hire" in briefing  # the pack's wording
    assert "Cambridge" not in briefing


def test_the_standalone_tool_server_serves_a_pack() -> None:
    """``todeval serve tools booking --tasks car-rental``: the pack's tools, a pack task's DB."""
    from todeval.agents.sandbox import SandboxOptions
    from todeval.benchmarks.booking.tool_sandbox import tool_sandbox

    options = SandboxOptions(tasks="car-rental", task_id="024-goal0024", protocol="strict")
    sandbox = tool_sandbox(options)
    assert [t.name for t in sandbox.tools] == ["searchcars", "searchparking", "bookcar",
                                                "bookparking"]  # fmt: skip
    assert sandbox.about["task_set"] == "car-rental"
    answer = sandbox.new_episode()("searchcars", {"category": "suv", "fuel": "petrol"})
    assert json.loads(answer.answer.text)["total"] > 0
    rejected = sandbox.new_episode()("searchcars", {"category": "tank"})
    assert rejected.answer.is_error and "call rejected" in rejected.answer.text


def test_the_validator_checks_a_packs_own_booking_slots() -> None:
    """A pack's booking slots are validated by their own names (``days``, not only MultiWOZ's
    people/day/stay/time)."""
    world = world_of(pack_task_set(PACK))
    env = BookingEnvironment(world, ["car"], random.Random(1))
    row = world.database().rows("car")[0]
    good = {"carid": row["carid"], "day": "monday", "days": "3", "time": "10:00"}
    assert env.book("car", good).ok
    refused = env.book("car", {**good, "days": "99"})
    assert not refused.ok and "days" in refused.message


def test_a_slot_the_pack_compares_is_compared_everywhere(pack_copy: Path) -> None:
    """``compare: '>='`` on the seats: systems search with it, the game master looks a booking
    up with it, and scoring accepts a car with more seats than the goal asked for."""
    from todeval.benchmarks.booking.environment import Booking
    from todeval.benchmarks.booking.scoring import score_domain
    from todeval.benchmarks.booking.tasks import DomainGoal
    from todeval.benchmarks.booking.world.from_packs import pack_world

    _edit(
        pack_copy, "        operators: true\n", "        operators: true\n        compare: '>='\n"
    )
    world = pack_world(str(pack_copy.resolve()))
    assert world.compare["car"] == {"seats": ">="}
    assert world.user_operator("car", "seats") == ">=" and world.user_operator("car", "fuel") == "="
    row = next(r for r in world.database().rows("car") if r["seats"] == "7")
    env = BookingEnvironment(world, ["car"], random.Random(1))
    booking = {"carid": row["carid"], "seats": "5", "day": "monday", "days": "2", "time": "10:00"}
    assert env.book("car", booking).ok  # 7 seats is at least 5
    goal = DomainGoal(info={"seats": "5"}, book={"day": "monday"})
    booked = Booking(domain="car", reference="X", info={"seats": "7"}, book={"day": "monday"},
                     reqt={}, arguments={})  # fmt: skip
    assert score_domain(goal, booked, world.compare["car"]).inform
    assert not score_domain(goal, booked, {}).inform  # compared as equal: 7 is not 5
    _edit(pack_copy, "compare: '>='", "compare: '>'")
    with pytest.raises(BadInputError, match="compare"):
        load_pack(pack_copy)


@pytest.mark.parametrize("system", ["echo", "silent"])
def test_who_failed_on_a_pack_blames_the_system_that_never_offers(
    tmp_path: Path, system: str
) -> None:
    """The review reads a pack's dialogue with the pack's own language: a system that never
    offers anything is the one that failed (the user said its booking details while it waited;
    an entity the user never got to cannot have ended early; "victoria square car park" names a
    car park, not a car)."""
    out = tmp_path / system
    argv = ["run", "booking", "--domain", "car-rental", "--system", system, "--limit", "20",
            "--quiet", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert {r["labels"]["who_failed"] for r in records} == {"agent"}
    kinds = {f["kind"] for r in records for f in r["review"]["faults"]}
    assert kinds == {"gave_up"}
    said = [e["data"]["text"] for e in records[0]["events"] if e["kind"] == "user_message"]
    assert any("I want to book it for" in text for text in said)


def _cars_in_sqlite(folder: Path, table: str = "cars") -> Path:
    import csv
    import sqlite3

    rows = list(csv.DictReader((folder / "cars.csv").open(newline="")))
    path = folder / "cars.sqlite"
    with sqlite3.connect(path) as db:
        columns = ", ".join(f'"{c}" TEXT' for c in rows[0])
        db.execute(f"CREATE TABLE {table} ({columns})")
        marks = ", ".join("?" for _ in rows[0])
        db.executemany(f"INSERT INTO {table} VALUES ({marks})", [list(r.values()) for r in rows])
    db.close()
    _edit(folder, "data: cars.csv", f"data: cars.sqlite#{table}")
    return path


def test_pack_data_from_sqlite_goes_through_the_safe_reader(
    pack_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An SQLite table reads as its CSV did; a view and a file that is not SQLite are each one
    line and exit 3 (issue 42, point 1). (The CLI keeps
    a pack per folder for the process: cleared between edits here.)"""
    from todeval.benchmarks.booking.domains.pack import cached_pack

    csv_rows = load_pack(PACK).rows["car"]
    path = _cars_in_sqlite(pack_copy)
    assert load_pack(pack_copy).rows["car"] == csv_rows
    with sqlite3_view(path):
        assert main(["data", "domain", str(pack_copy), "--check"]) == 0
    _edit(pack_copy, "data: cars.sqlite#cars", "data: cars.sqlite#every_car")
    cached_pack.cache_clear()
    assert main(["data", "domain", str(pack_copy), "--check"]) == 3
    assert "no table 'every_car' (a view)" in capsys.readouterr().err
    path.write_bytes(b"not a database" * 100)
    cached_pack.cache_clear()
    assert main(["data", "domain", str(pack_copy), "--check"]) == 3
    err = capsys.readouterr().err
    assert "not a readable SQLite file" in err and "Traceback" not in err


class sqlite3_view:
    """Adds a view ``every_car`` over ``cars`` for the duration."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> None:
        import sqlite3

        with sqlite3.connect(self.path) as db:
            db.execute("CREATE VIEW every_car AS SELECT * FROM cars")
        db.close()

    def __exit__(self, *exc: object) -> None:
        return None
