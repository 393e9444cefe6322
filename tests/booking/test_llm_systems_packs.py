"""Every built-in LLM system on a domain pack (issue 31): driven through the real game master
with scripted models, each books a car-rental task with the pack's tools, reads its prompts in
the pack's wording, and names no MultiWOZ domain."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from todeval.backends.scripted import ScriptedBackend, ScriptedReply
from todeval.backends.types import GenerationRequest
from todeval.benchmarks.booking.domains.cli import pack_folder
from todeval.benchmarks.booking.domains.tasks import load_pack_tasks
from todeval.benchmarks.booking.llm_systems.autotod import AutoTODSystem
from todeval.benchmarks.booking.llm_systems.hd_pipeline import HDPipelineSystem
from todeval.benchmarks.booking.llm_systems.modular_llm import ModularLLMSystem
from todeval.benchmarks.booking.llm_systems.modular_prog import ModularProgSystem
from todeval.benchmarks.booking.llm_systems.monolithic import MonolithicSystem
from todeval.benchmarks.booking.llm_systems.prompts import PACKAGE, world_prompts
from todeval.benchmarks.booking.world.model import pack_task_set
from todeval.benchmarks.booking.world.of_task_set import world_of
from todeval.cli import main
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord
from todeval.dialogue.participants import PlayerOptions
from todeval.dialogue.prompts import PromptSet

from .test_llm_systems_support import Recorder, as_json, events, model_info, play, text, tool

PACK = pack_folder("car-rental")
WORLD = world_of(pack_task_set(PACK))
TASK = load_pack_tasks(PACK)[0]  # a manual suv with 7 seats at the station, monday, 6 days
GOAL = TASK.domains["car"]
WANTED = dict(GOAL.info)
BOOK = dict(GOAL.book or {})
ROW = next(r for r in WORLD.database().rows("car") if all(r[k] == v for k, v in WANTED.items()))
BOOKING = {
    **{k: ROW[k] for k in WORLD.informable["car"] if k in ROW},
    **BOOK,
    **{k: ROW[k] for k in WORLD.optional_attributes["car"]},
}
LINES = [
    f"I need a {WANTED['transmission']} {WANTED['category']} car with {WANTED['seats']} seats"
    f" at the {WANTED['branch']} branch.",
    f"Please book it for {BOOK['day']}, {BOOK['days']} days, pick-up at {BOOK['time']}.",
]
PROMPTS = PromptSet.load(PACKAGE, defaults=world_prompts(WORLD))
MULTIWOZ = re.compile(r"(?i)cambridge|restaurant|hotel|train")


def _options(model: Any, module_model: Any = None, **extra: Any) -> PlayerOptions:
    return PlayerOptions(
        role="system",
        model=model,
        module_model=module_model,
        max_tokens=200,
        prompts=PROMPTS,
        extra=extra,
    )


def _reference(request: GenerationRequest) -> str | None:
    found = re.findall(r'"reference":"([A-Z0-9]+)"', json.dumps(
        [m.content for m in request.messages]).replace('\\"', '"'))  # fmt: skip
    return found[-1] if found else None


def _tool_model(search: ScriptedReply) -> Any:
    """A tool-calling model that searches with ``search``, books the row it finds, then tells
    the user the reference number."""

    def reply(request: GenerationRequest) -> ScriptedReply:
        said = [m for m in request.messages if m.role == "tool"]
        if not said:
            return search
        if len(said) == 1:
            return tool("bookcar", BOOKING)
        return tool("followup", {"message": f"Booked: reference {_reference(request)}."})

    return reply


def _assert_booked(record: EpisodeRecord, model: Recorder) -> None:
    assert record.outcome is Outcome.SUCCESS, record.reason
    assert record.metrics["booking.booking_accuracy"] == 1.0
    (booking,) = events(record, "booking_request")
    assert booking["domain"] == "car" and booking["arguments"] == BOOKING
    instructions = [m.content or "" for r in model.requests for m in r.messages if
                    m.role == "system"]  # fmt: skip
    assert instructions and all("Fenland Car Hire" in i or "You extract the car" in i
                                for i in instructions)  # fmt: skip
    assert not any(MULTIWOZ.search(i) for i in instructions), instructions
    offered = {t["function"]["name"] for r in model.requests for t in r.tools or []}
    assert not any(MULTIWOZ.search(name) for name in offered), offered


def test_the_world_wording_replaces_every_cambridge_sentence() -> None:
    for name, template in PROMPTS.templates.items():
        assert not MULTIWOZ.search(template), (name, template)
        assert PROMPTS.placeholders_of(name) == PromptSet.load(PACKAGE).placeholders_of(name)
    assert world_prompts(world_of("test")) is None  # MultiWOZ: the package's, as written


def test_monolithic_books_a_car() -> None:
    search = {k: WANTED[k] for k in ("category", "transmission", "branch")} | {
        "seats": {"operator": "=", "value": WANTED["seats"]}}  # fmt: skip
    model = Recorder(_tool_model(tool("searchcars", search)))
    record = play(MonolithicSystem.from_options(_options(model.backend)), LINES, task=TASK)
    _assert_booked(record, model)
    offered = {t["function"]["name"] for t in model.requests[0].tools or []}
    assert offered == {"followup", "searchcars", "searchparking", "bookcar", "bookparking"}


def test_autotod_queries_the_pack_with_sql() -> None:
    where = " AND ".join(f"{k} = '{v}'" for k, v in WANTED.items())
    model = Recorder(_tool_model(tool("query_cars", {"sql_where": where})))
    record = play(AutoTODSystem.from_options(_options(model.backend)), LINES, task=TASK)
    _assert_booked(record, model)
    (query,) = events(record, "db_query")
    assert query["domain"] == "car"
    assert query["arguments"]["seats"] == {"operator": "=", "value": WANTED["seats"]}
    offered = {t["function"]["name"] for t in model.requests[0].tools or []}
    assert {"query_cars", "query_parkings", "bookcar", "bookparking", "followup"} == offered


def _modules(request: GenerationRequest) -> ScriptedReply:
    """The intent, slots and follow-up modules of a competent model for the task."""
    prompt = request.messages[0].content or ""
    content = request.messages[-1].content or ""
    if prompt == PROMPTS.render("intent"):
        latest = [line for line in content.splitlines() if line.startswith("user: ")][-1]
        intent = "booking-request" if "book" in latest else "dbretrieval-request"
        return as_json({"intent": intent, "domain": "car"})
    if prompt.startswith("You extract the car"):
        return as_json({**WANTED, **BOOK})
    reference = re.search(r"reference number ([A-Z0-9]+)", content)
    return as_json({"message": f"Booked, reference {reference.group(1)}." if reference else
                    "Which car would you like?"})  # fmt: skip


def test_modular_prog_books_a_car() -> None:
    modules = Recorder(_modules, name="modules")
    main_model = ScriptedBackend(model_info("main"), lambda r: text("unused"))
    system = ModularProgSystem.from_options(_options(main_model, modules.backend))
    record = play(system, LINES, task=TASK)
    _assert_booked(record, modules)
    query = events(record, "db_query")[0]
    assert query["arguments"]["seats"] == {"operator": "=", "value": WANTED["seats"]}
    intent = next(r for r in modules.requests if r.messages[0].content == PROMPTS.render("intent"))
    assert "car or parking" in (intent.messages[0].content or "")
    told = [r.messages[-1].content or "" for r in modules.requests if
            r.messages[0].content == PROMPTS.render("followup")]  # fmt: skip
    assert any(ROW["model"] in t for t in told)  # the pack's reported columns (key, attributes)


def test_modular_llm_routes_to_the_pack_modules() -> None:
    def dm(request: GenerationRequest) -> ScriptedReply:
        answered = [m for m in request.messages if m.role == "tool"]
        if not answered:
            return tool("callmodule", {"module": "slots", "input": LINES[0], "domain": "car"})
        if len(answered) == 1:
            slots = json.loads(answered[0].content or "{}")
            seats = {"operator": "=", "value": slots.pop("seats")}
            search = {k: v for k, v in slots.items() if k in ("category", "transmission", "branch")}
            return tool("searchcars", {**search, "seats": seats})
        if len(answered) == 2:
            return tool("bookcar", BOOKING)
        return tool("followup", {"message": f"Booked: reference {_reference(request)}."})

    model = Recorder(dm, name="dm")
    modules = Recorder(_modules, name="modules")
    system = ModularLLMSystem.from_options(_options(model.backend, modules.backend))
    record = play(system, LINES, task=TASK)
    _assert_booked(record, model)
    router = next(t for t in model.requests[0].tools or [] if t["function"]["name"] ==
                  "callmodule")  # fmt: skip
    assert router["function"]["parameters"]["properties"]["domain"]["enum"] == ["car", "parking"]


@pytest.mark.parametrize("few_shot", [0, 2])
def test_hd_pipeline_books_a_car_without_multiwoz_examples(few_shot: int) -> None:
    def pipeline(request: GenerationRequest) -> ScriptedReply:
        prompt = request.messages[0].content or ""
        assert "Examples" not in prompt  # MultiWOZ's turns are no examples for a pack
        if prompt.startswith("You are the domain detector"):
            assert "car or parking" in prompt
            return as_json({"domain": "car"})
        if prompt.startswith("You are the car state tracker"):
            return as_json({**WANTED, **BOOK})
        reference = re.search(r"reference number ([A-Z0-9]+)", request.messages[-1].content or "")
        return text(f"Booked, reference {reference.group(1)}." if reference else "Which car?")

    model = Recorder(pipeline)
    system = HDPipelineSystem.from_options(_options(model.backend, few_shot=few_shot))
    record = play(system, LINES, task=TASK)
    _assert_booked(record, model)
    assert system.retriever is None


def test_a_pack_run_reads_the_world_wording(tmp_path: Path) -> None:
    """Through the CLI: the plan hands the system the pack's wording; ``--prompts DIR``
    overrides it like any default."""
    script = tmp_path / "model.json"
    script.write_text(json.dumps({"rules": [], "default": "hello"}))
    out = tmp_path / "run"
    argv = ["run", "booking", "--domain", "car-rental", "--system", "monolithic",
            "--system-model", f"scripted:{script}", "--limit", "1", "--quiet", "--out"]  # fmt: skip
    assert main([*argv, str(out)]) == 0
    record = json.loads((out / "episodes.jsonl").read_text().splitlines()[0])
    calls = [e for e in record["events"] if e["kind"] == "model_call"]
    assert "You are the booking assistant of Fenland Car Hire" in json.dumps(calls[0]["data"])
    overrides = tmp_path / "prompts"
    overrides.mkdir()
    (overrides / "monolithic.txt").write_text("You rent cars. Use the tools.\n")
    other = tmp_path / "other"
    assert main([*argv, str(other), "--prompts", str(overrides)]) == 0
    record = json.loads((other / "episodes.jsonl").read_text().splitlines()[0])
    calls = [e for e in record["events"] if e["kind"] == "model_call"]
    assert "You rent cars. Use the tools." in json.dumps(calls[0]["data"])


def test_copy_example_copies_the_pack_wording_example(tmp_path: Path) -> None:
    """The copy-example control searches with the example the pack's AutoTOD wording shows
    (not MultiWOZ's hotel query, which a pack's tools would refuse outright)."""
    assert "e.g. category = 'economy' AND seats >= '2'" in PROMPTS.render("autotod")
    out = tmp_path / "copy"
    argv = ["run", "booking", "--domain", "car-rental", "--system", "copy-example",
            "--limit", "1", "--quiet", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    record = json.loads((out / "episodes.jsonl").read_text().splitlines()[0])
    (query,) = [e["data"] for e in record["events"] if e["kind"] == "db_query"]
    assert query["arguments"] == {"category": "economy", "seats": {"operator": ">=", "value": "2"}}
    assert record["metrics"]["booking.booking_accuracy"] == 0.0


def test_a_pack_wording_written_out_reads_back_as_overrides(tmp_path: Path) -> None:
    """``todeval data domain PACK --write-prompts DIR`` writes every template in the pack's
    wording; a run takes the folder back with ``--prompts DIR`` (placeholders intact)."""
    out = tmp_path / "prompts"
    assert main(["data", "domain", "car-rental", "--write-prompts", str(out)]) == 0
    written = {p.stem: p.read_text() for p in out.glob("*.txt")}
    assert set(written) == set(PROMPTS.templates)
    assert written["monolithic"].startswith("You are the booking assistant of Fenland Car Hire")
    assert PromptSet.load(PACKAGE, {k: v.removesuffix("\n") for k, v in written.items()},
                          defaults=world_prompts(WORLD)).templates == PROMPTS.templates  # fmt: skip
    run = tmp_path / "run"
    argv = ["run", "booking", "--domain", "car-rental", "--prompts", str(out), "--limit", "1",
            "--quiet", "--out", str(run)]  # fmt: skip
    assert main(argv) == 0
