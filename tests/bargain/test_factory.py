"""Intent Factory: the pipeline with a scripted model that reads its prompts (hand-checked
counts, coverage and duplicate ratio), the command over real dialogues, the whole pipeline over
HTTP against the local test server as a real process, and bad input."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from todeval.backends.factory import make_backend
from todeval.backends.types import GenerationRequest
from todeval.benchmarks.bargain.baselines import fold_of
from todeval.benchmarks.bargain.data import (
    CASINO_LABELS,
    CRAIGSLIST_LABELS,
    Dialogue,
    LabelledTurn,
    Utterance,
)
from todeval.benchmarks.bargain.hierarchy import Hierarchy, parse_hierarchy
from todeval.benchmarks.bargain.tools.factory import (
    FactoryConfig,
    FactoryModels,
    IntentFactory,
    keyword_parent,
    load_prompts,
    parse_mapping,
    slug_of,
    split_dialogues,
)
from todeval.benchmarks.bargain.tools.factory_cli import add_factory_arguments, main, run_factory
from todeval.errors import BadInputError
from todeval.stats.proportions import wilson_interval
from todeval.testing.openai_server import ServerConfig
from todeval.testing.server_process import ServerProcess

# -- a small reference hierarchy and its mapping -----------------------------------------------

REFERENCE_INTENTS = [
    ("rel.greet", "relationship", "Say hello", "opens the chat with a greeting"),
    ("price.offer", "price", "Price offer", "names a price the buyer would pay"),
    ("price.discount", "price", "Ask for a discount", "asks for a lower price, naming none"),
    ("product.details", "product", "Item details", "asks a question about the item"),
    ("cond.ask", "condition", "Item condition", "asks whether the item is worn or damaged"),
    ("closing.reject", "closing", "Turn down", "rejects the seller's offer"),
]
CRAIGSLIST_MAP = {
    "greet": ["rel.greet"],
    "propose": ["price.offer"],
    "counter": ["price.offer"],
    "counter-noprice": ["price.discount", "price.offer"],
    "inquire": ["product.details"],
    "disagree": ["closing.reject"],
}
CASINO_MAP = {"small-talk": ["rel.greet"], "self-need": ["price.discount"]}


def reference_data() -> dict[str, Any]:
    parents = sorted({p for _, p, _, _ in REFERENCE_INTENTS})
    return {
        "name": "fixture",
        "version": "0.1",
        "parents": [{"id": p, "name": p, "description": p} for p in parents],
        "intents": [
            {"id": i, "name": n, "description": d, "parent": p, "actions": ["act.x"]}
            for i, p, n, d in REFERENCE_INTENTS
        ],
        "actions": [{"id": "act.x", "name": "x", "description": "x", "tools": ["API_X"]}],
        "tools": [{"id": "API_X", "name": "x", "description": "x"}],
    }


def mapping_data() -> dict[str, Any]:
    def section(labels: dict[str, str], mapped: dict[str, list[str]]) -> dict[str, Any]:
        return {k: {"intents": mapped.get(k, []), "note": "fixture"} for k in labels}

    return {
        "version": "0.1",
        "craigslist": section(CRAIGSLIST_LABELS, CRAIGSLIST_MAP),
        "casino": section(CASINO_LABELS, CASINO_MAP),
    }


@pytest.fixture()
def reference() -> Hierarchy:
    return parse_hierarchy(json.dumps(reference_data()), "fixture")


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    ref = tmp_path / "reference.json"
    ref.write_text(json.dumps(reference_data()), encoding="utf-8")
    mapping = tmp_path / "mapping.json"
    mapping.write_text(json.dumps(mapping_data()), encoding="utf-8")
    return {"reference": ref, "mapping": mapping}


# -- a scripted model that reads its prompts ---------------------------------------------------

CONCEPTS = [  # keyword in an intent's name -> concept (first hit wins)
    ("greet", "greet"),
    ("hello", "greet"),
    ("discount", "discount"),
    ("offer", "offer"),
    ("price", "offer"),
    ("condition", "condition"),
    ("damage", "condition"),
    ("detail", "details"),
    ("turn down", "reject"),
]


def concept(name: str) -> str | None:
    low = name.lower()
    return next((c for k, c in CONCEPTS if k in low), None)


def extract_rules(text: str) -> list[str]:
    """The intent names the scripted extractor finds in one buyer message."""
    low = text.lower()
    out = []
    if low.startswith(("hi", "hello")):
        out.append("Greeting")
    if "$" in text:
        out.append(
            "Propose a price" if "how about" in low else "Make an OFFER" if "offer" in low else
            "Make an offer"
        )  # fmt: skip
    if "scratch" in low:
        out.append("Ask about condition")
    if "damage" in low:
        out.append("Check for damage")
    if "blah" in low:
        out.append("Chit chat")
    return out


def _list_entries(block: str) -> list[tuple[str, str]]:
    return re.findall(r"^- ([^:\n]+): ([^:\n]+)", block, re.MULTILINE)


def scripted_reply(request: GenerationRequest) -> str:
    prompt = request.messages[-1].content or ""
    if "List every distinct intent" in prompt:
        convo = prompt.split("The conversation:\n", 1)[1].split("\n\nList every", 1)[0]
        intents: list[dict[str, str]] = []
        for line in convo.splitlines():
            speaker, _, text = line.partition(": ")
            if speaker == "Buyer":
                for name in extract_rules(text):
                    if name not in [i["name"] for i in intents]:
                        intents.append({"name": name, "description": name, "example": text})
        return json.dumps({"intents": intents})
    if "Proposed intent:" in prompt:
        proposed = re.search(r"Proposed intent: (.*)", prompt)
        assert proposed is not None
        return json.dumps({"verdict": "no" if proposed.group(1) == "Chit chat" else "yes"})
    if "New candidate intent:" in prompt:
        found = re.search(r"New candidate intent: (.*)", prompt)
        assert found is not None
        name = found.group(1)
        existing = prompt.split("(id: name: description):\n", 1)[1].split("\n\n", 1)[0]
        for ident, other in _list_entries(existing):
            if concept(other) == "offer" and concept(name) == "offer":
                return json.dumps({"same_as": ident})
        parent = {"offer": "price", "condition": "condition"}.get(concept(name) or "")
        return json.dumps({"same_as": "new"} if parent is None else
                          {"same_as": "new", "parent": parent})  # fmt: skip
    if "You label one message" in prompt:
        last = prompt.split("\n\nWhich of these intents", 1)[0].rsplit("\n", 1)[-1]
        listing = prompt.split("(id: name:\ndescription):\n", 1)[1].split("\n\n", 1)[0]
        want = "discount" if "lower" in last else "offer" if "$" in last else None
        picks = [i for i, name in _list_entries(listing) if concept(name) == want]
        return json.dumps({"intents": picks})
    if "Find the entry of the" in prompt:
        found = re.search(r"Intent: ([^:\n]+)", prompt)
        assert found is not None
        wanted = concept(found.group(1))
        listing = prompt.split("List (id: name: description):\n", 1)[1]
        for ident, name in _list_entries(listing):
            if wanted is not None and concept(name) == wanted:
                return json.dumps({"match": ident})
        return json.dumps({"match": "none"})
    raise AssertionError(f"unexpected prompt: {prompt[:80]}")


# -- hand-made dialogues -----------------------------------------------------------------------


def ids_in(fold: int, heldout: bool, n: int) -> list[str]:
    out: list[str] = []
    k = 0
    while len(out) < n:
        ident = f"fx-{k:03d}"
        if (fold_of(ident) == fold) == heldout:
            out.append(ident)
        k += 1
    return out


def dialogue(ident: str, turns: list[tuple[str, str, tuple[str, ...]]]) -> Dialogue:
    utterances = tuple(Utterance(s, t) for s, t, _ in turns)
    labelled: list[LabelledTurn] = []
    for i, (speaker, _, gold) in enumerate(turns):
        if gold:
            labelled.append(LabelledTurn(i, speaker, gold, len(labelled) + 1))
    return Dialogue(ident, "craigslist", "test", (("item", "bike"),), utterances,
                    tuple(labelled), "bike")  # fmt: skip


def hand_dialogues() -> list[Dialogue]:
    e = ids_in(0, False, 4)
    h = ids_in(0, True, 2)
    b, s = "Buyer", "Seller"
    return [
        dialogue(e[0], [(b, "Hi there!", ("greet",)), (s, "Hello", ()),
                        (b, "Would you take $50?", ("propose",)),
                        (b, "Is it scratched?", ("inquire",))]),
        dialogue(e[1], [(b, "Hello", ("greet",)), (b, "I can offer $40", ("propose",)),
                        (b, "blah blah", ("inform",))]),
        dialogue(e[2], [(b, "How about $45", ("counter",))]),
        dialogue(e[3], [(b, "Any damage on it?", ("inquire",))]),
        # held out: greet, propose, inquire, confirm (maps to nothing); counter, disagree,
        # counter-noprice (alternatives: discount or offer)
        dialogue(h[0], [(b, "hey", ("greet",)), (b, "$30?", ("propose",)),
                        (b, "what size is it", ("inquire",)), (b, "ok?", ("confirm",))]),
        dialogue(h[1], [(b, "$35 then", ("counter",)), (s, "no", ()),
                        (b, "no thanks", ("disagree",)),
                        (b, "can you go lower", ("counter-noprice",))]),
    ]  # fmt: skip


def scripted_models() -> FactoryModels:
    backend = make_backend("scripted:inline", script=scripted_reply)
    return FactoryModels(backend, backend, backend, backend, {"extractor": "scripted:inline"})


def run_hand_case(reference: Hierarchy, seed: int = 0) -> Any:
    mapping = parse_mapping(json.dumps(mapping_data()), "fixture", reference)
    config = FactoryConfig(source="craigslist", seed=seed, quiet=True)
    factory = IntentFactory(config, scripted_models(), load_prompts(), reference, mapping)
    return asyncio.run(factory.run(hand_dialogues()))


def test_split_is_disjoint_and_by_fold() -> None:
    dialogues = hand_dialogues()
    extraction, heldout = split_dialogues(dialogues, 0)
    assert len(extraction) == 4 and len(heldout) == 2
    assert not {d.dialogue_id for d in extraction} & {d.dialogue_id for d in heldout}
    assert all(fold_of(d.dialogue_id) == 0 for d in heldout)


def test_slug_and_keyword_parent() -> None:
    assert slug_of("Make an OFFER!") == slug_of("make an offer") == "make_an_offer"
    assert slug_of("  ?? ") == ""
    assert keyword_parent("Greeting: says hello") == "relationship"
    assert keyword_parent("Ask about shipping") == "logistics"
    assert keyword_parent("something else entirely") == "relationship"


def test_hand_checked_counts(reference: Hierarchy) -> None:
    result = run_hand_case(reference)
    c = result.report["counts"]
    # D1: Greeting, Make an offer, Ask about condition; D2: Greeting, Make an OFFER, Chit chat;
    # D3: Propose a price; D4: Check for damage
    assert c["candidates"] == 8
    assert (c["verified"], c["rejected"], c["verify_failures"]) == (7, 1, 0)
    # Greeting and "Make an OFFER" merge by slug, the price proposal by the maintainer
    assert (c["merged_by_slug"], c["merged_by_model"], c["merged"]) == (2, 1, 3)
    assert c["final_intents"] == 4
    assert result.report["format_failures"] == {}
    h = result.hierarchy
    parents = h.parent_of()
    assert parents["greeting"] == "relationship"  # the keyword rule (no parent named)
    assert {r["id"]: r["parent_by"] for r in result.report["intents"]}["greeting"] == "keyword"
    assert parents["ask_about_condition"] == "condition"
    offer = next(i for i in h.intents if i.id in ("make_an_offer", "propose_a_price"))
    assert offer.parent == "price" and len(offer.examples) == 3
    # the output is a valid hierarchy with placeholder actions and tools
    again = parse_hierarchy(json.dumps(h.model_dump(mode="json")), "round trip")
    assert again == h
    assert {t.id for t in h.tools} == {
        "API_PricePlaceholder",
        "API_ConditionPlaceholder",
        "API_RelationshipPlaceholder",
    }
    assert all(i.actions == (f"act.handle_{i.id}",) for i in h.intents)


def test_hand_checked_coverage_and_duplicates(reference: Hierarchy) -> None:
    report = run_hand_case(reference).report
    cov = report["coverage"]
    # held-out mapped turns: greet ok, propose ok, inquire (no extracted 'details') missed,
    # counter ok, disagree missed, counter-noprice ok (one alternative, the offer, is matched);
    # confirm maps to nothing and is excluded
    assert (cov["mapped_turns"], cov["excluded_turns"]) == (6, 1)
    assert cov["turns"]["successes"] == 4 and cov["turns"]["n"] == 6
    assert cov["turns"]["value"] == pytest.approx(4 / 6)
    assert cov["turns"]["ci95"] == pytest.approx(list(wilson_interval(4, 6)))
    assert cov["matches"]["rel.greet"] == "greeting"
    assert cov["matches"]["product.details"] is None
    assert cov["matches"]["price.discount"] is None
    # greet, offer, discount, details, reject occur; greet and offer are matched
    assert (cov["intents"]["successes"], cov["intents"]["n"]) == (2, 5)
    noprice = cov["by_label"]["counter-noprice"]
    assert noprice == {"turns": 1, "covered": 1, "covered_resolved": 0}
    # the resolver reads "can you go lower" as the discount, which nothing extracted matches
    assert (cov["resolve_calls"], cov["resolve_fallbacks"]) == (1, 0)
    assert (cov["turns_resolved"]["successes"], cov["turns_resolved"]["n"]) == (3, 6)
    picked = [r["intents"] for r in cov["resolved"] if r["labels"] == ["counter-noprice"]]
    assert picked == [["price.discount"]]
    assert cov["by_label"]["inquire"] == {"turns": 1, "covered": 0, "covered_resolved": 0}
    dup = report["duplicates"]
    # ask_about_condition and check_for_damage both mean the reference's cond.ask
    assert {k: sorted(v) for k, v in dup["shared"].items()} == {
        "cond.ask": ["ask_about_condition", "check_for_damage"]
    }
    assert (dup["redundant"], dup["ratio"]["n"], dup["unassigned"]) == (1, 4, 0)
    assert dup["in_shared_groups"] == 2
    assert dup["ratio"]["value"] == pytest.approx(0.25)
    assert dup["ratio"]["ci95"] == pytest.approx(list(wilson_interval(1, 4)))


def test_counts_do_not_depend_on_the_seeded_order(reference: Hierarchy) -> None:
    a = run_hand_case(reference, seed=0).report
    b = run_hand_case(reference, seed=7).report
    assert a["counts"] == b["counts"]
    assert a["coverage"]["turns"] == b["coverage"]["turns"]
    assert a == run_hand_case(reference, seed=0).report  # deterministic


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_factory_arguments(parser)
    return parser.parse_args(list(argv))


def test_run_factory_on_real_dialogues(
    tmp_path: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "h.json"
    args = _args("--model", "scripted:inline", "--source", "craigslist", "--limit", "5",
                 "--heldout-limit", "4", "-o", str(out), "--reference", str(files["reference"]),
                 "--mapping", str(files["mapping"]), "--max-concurrency", "2")  # fmt: skip
    args.script = scripted_reply
    assert run_factory(args) == 0
    captured = capsys.readouterr()
    assert "factory: extract 5/5" in captured.err
    assert "turn coverage, resolved" in captured.out
    hierarchy = parse_hierarchy(out.read_text(encoding="utf-8"), str(out))
    report = json.loads((tmp_path / "h.report.json").read_text(encoding="utf-8"))
    c = report["counts"]
    assert (c["dialogues_extraction"], c["dialogues_heldout"]) == (5, 4)
    assert c["candidates"] == c["verified"] + c["rejected"] + c["verify_failures"]
    assert c["verified"] == c["merged"] + c["final_intents"]
    assert c["final_intents"] == len(hierarchy.intents)
    assert not set(report["extraction_dialogues"]) & set(report["heldout_dialogues"])
    assert all(fold_of(d) == 0 for d in report["heldout_dialogues"])
    cov = report["coverage"]
    assert cov["mapped_turns"] + cov["excluded_turns"] > 0
    assert report["hierarchy_digest"] == hierarchy.digest()


# -- end to end over HTTP ----------------------------------------------------------------------

HTTP_INTENTS = {
    "intents": [
        {"name": "Make an offer", "description": "names a price", "example": "$50?"},
        {"name": "Ask about the item", "description": "asks a question", "example": "size?"},
        {"name": "Chit chat", "description": "talks", "example": "lol"},
    ]
}


def http_script(tmp_path: Path) -> Path:
    rules = [
        ("List every distinct intent", json.dumps(HTTP_INTENTS)),
        ("Proposed intent: Chit chat", '{"verdict": "no"}'),
        ("Proposed intent:", '{"verdict": "yes"}'),
        ("New candidate intent: Ask about", '{"same_as": "new", "parent": "product"}'),
        ("New candidate intent:", '{"same_as": "new", "parent": "price"}'),
        ("Intent: Price offer", '{"match": "make_an_offer"}'),
        ("Intent: Item details", '{"match": "ask_about_the_item"}'),
        ("Intent: Make an offer", '{"match": "price.offer"}'),
        ("Intent: Ask about the item", '{"match": "product.details"}'),
        ("Find the entry", '{"match": "none"}'),
        ("You label one message", '{"intents": ["price.discount"]}'),
    ]
    path = tmp_path / "script.json"
    path.write_text(
        json.dumps({"rules": [{"match": m, "reply": r} for m, r in rules]}), encoding="utf-8"
    )
    return path


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    from todeval.backends.scripted import load_script

    config = ServerConfig(script=load_script(http_script(tmp_path)))
    with ServerProcess(config) as running:
        yield running


def test_end_to_end_over_http(
    tmp_path: Path, files: dict[str, Path], server: ServerProcess
) -> None:
    out = tmp_path / "out" / "factory.json"
    out.parent.mkdir()
    report = tmp_path / "out" / "r.json"
    code = main(["--model", f"openai:scripted@{server.base_url}", "--source", "craigslist",
                 "--limit", "4", "--heldout-limit", "6", "-o", str(out), "--report", str(report),
                 "--reference", str(files["reference"]), "--mapping", str(files["mapping"]),
                 "--no-cache", "--quiet"])  # fmt: skip
    assert code == 0
    h = parse_hierarchy(out.read_text(encoding="utf-8"), str(out))
    assert [i.id for i in h.intents] == ["make_an_offer", "ask_about_the_item"]
    assert h.parent_of() == {"make_an_offer": "price", "ask_about_the_item": "product"}
    r = json.loads(report.read_text(encoding="utf-8"))
    c = r["counts"]
    # 4 dialogues x 3 candidates; Chit chat rejected each time; the rest merges by slug
    assert (c["candidates"], c["verified"], c["rejected"]) == (12, 8, 4)
    assert (c["merged_by_slug"], c["merged_by_model"], c["final_intents"]) == (6, 0, 2)
    # every reference intent occurring is matched except what maps to nothing extracted
    m = r["coverage"]["matches"]
    assert m.get("price.offer", "make_an_offer") == "make_an_offer"
    assert m.get("product.details", "ask_about_the_item") == "ask_about_the_item"
    assert all(v is None for k, v in m.items() if k not in ("price.offer", "product.details"))
    assert r["duplicates"]["redundant"] == 0 and r["duplicates"]["ratio"]["value"] == 0.0
    resolve = r["coverage"]["resolve_calls"]  # held-out counter-noprice turns
    calls = 4 + 12 + 2 + len(m) + 2 + resolve  # extract, verify, merge, match, assign, resolve
    assert r["usage"]["by_role"].get("factory.resolve", 0) == resolve
    assert r["usage"]["calls"] == calls
    bodies = [req["body"] for req in server.requests()]
    assert len(bodies) == calls
    assert r["models"]["verifier"].startswith("openai:scripted@http://127.0.0.1:")


# -- bad input ---------------------------------------------------------------------------------


def test_unknown_source_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--model", "scripted:inline", "--source", "amazon", "-o", "x.json"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "invalid choice: 'amazon'" in err and len(err.splitlines()) == 1


def test_missing_model_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-o", "x.json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["todeval: error: the intent factory needs --model SPEC"]


def test_unwritable_output_is_bad_input(
    tmp_path: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "missing" / "h.json"
    ref, mapping = str(files["reference"]), str(files["mapping"])
    code = main(["--model", "scripted:inline", "-o", str(target), "--reference", ref,
                 "--mapping", mapping])  # fmt: skip
    assert code == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "does not exist" in err[0]


def test_bad_mapping_is_bad_input(
    tmp_path: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data = mapping_data()
    data["craigslist"]["greet"]["intents"] = ["no.such.intent"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    code = main(["--model", "scripted:inline", "-o", str(tmp_path / "h.json"),
                 "--reference", str(files["reference"]), "--mapping", str(bad)])  # fmt: skip
    assert code == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no.such.intent" in err[0]
    data = mapping_data()
    del data["casino"]["uv-part"]
    with pytest.raises(BadInputError, match="'uv-part' is not mapped"):
        parse_mapping(json.dumps(data), "m", parse_hierarchy(json.dumps(reference_data()), "r"))


def test_shipped_mapping_fits_the_shipped_hierarchy() -> None:
    from todeval.benchmarks.bargain.hierarchy import default_hierarchy
    from todeval.benchmarks.bargain.tools.factory import default_mapping

    try:
        reference = default_hierarchy()
        mapping = default_mapping(reference)
    except BadInputError as exc:
        if "package data missing" in str(exc):
            pytest.skip("the shipped hierarchy or mapping is not there yet")
        raise
    assert set(mapping.craigslist) == set(CRAIGSLIST_LABELS)
    assert set(mapping.casino) == set(CASINO_LABELS)


def test_run_factory_with_the_shipped_reference(tmp_path: Path) -> None:
    out = tmp_path / "casino.json"
    args = _args("--model", "scripted:inline", "--source", "casino", "--limit", "3",
                 "--heldout-limit", "3", "-o", str(out), "--quiet")  # fmt: skip
    args.script = scripted_reply
    try:
        assert run_factory(args) == 0
    except BadInputError as exc:
        if "package data missing" in str(exc):
            pytest.skip("the shipped hierarchy or mapping is not there yet")
        raise
    report = json.loads((tmp_path / "casino.report.json").read_text(encoding="utf-8"))
    assert report["reference"]["name"] and report["mapping_version"] == "1.0.0"
    cov = report["coverage"]
    assert cov["mapped_turns"] > 0 and cov["excluded_turns"] > 0  # non-strategic maps to []
    assert set(cov["by_label"]) <= set(CASINO_LABELS) - {"uv-part", "non-strategic"}


def test_unreadable_and_malformed_replies_are_counted(reference: Hierarchy) -> None:
    def reply(request: GenerationRequest) -> str:
        prompt = request.messages[-1].content or ""
        if "List every distinct intent" in prompt and "Any damage" in prompt:
            return "I think the buyer wants a deal"  # not JSON: an extraction failure
        if "List every distinct intent" in prompt and "How about" in prompt:
            return json.dumps({"intents": [{"name": "?!"}, {"description": "no name"}]})
        if "Proposed intent: Greeting" in prompt:
            return "yes"  # unreadable: rejected, counted apart
        return scripted_reply(request)

    backend = make_backend("scripted:inline", script=reply)
    models = FactoryModels(backend, backend, backend, backend)
    mapping = parse_mapping(json.dumps(mapping_data()), "fixture", reference)
    factory = IntentFactory(
        FactoryConfig(source="craigslist", quiet=True), models, load_prompts(), reference, mapping
    )
    report = asyncio.run(factory.run(hand_dialogues())).report
    c = report["counts"]
    assert (c["extract_failures"], c["candidates_dropped"]) == (1, 2)
    # left: D1 Greeting, Make an offer, Ask about condition; D2 Greeting, Make an OFFER, Chit chat
    assert c["candidates"] == 6
    assert (c["verified"], c["rejected"], c["verify_failures"]) == (3, 1, 2)
    assert c["final_intents"] == 2  # the offer (merged by slug) and the condition
    assert report["format_failures"] == {"extract": 1, "verify": 2}
    example = report["format_failure_examples"]["extract"][0]
    assert example["raw"] == "I think the buyer wants a deal" and example["error"]


def test_prompt_override_is_checked_and_used(
    tmp_path: Path, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "factory-match.txt").write_text("Which one? ${candidates}\n", encoding="utf-8")
    ref, mapping = str(files["reference"]), str(files["mapping"])
    base = ["--model", "scripted:inline", "-o", str(tmp_path / "h.json"), "--reference", ref,
            "--mapping", mapping, "--limit", "2", "--heldout-limit", "2", "--quiet"]  # fmt: skip
    assert main([*base, "--prompts", str(prompts)]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "lacks placeholder ${intent}" in err[0]
    seen: list[str] = []

    def reply(request: GenerationRequest) -> str:
        seen.append(request.messages[-1].content or "")
        return scripted_reply(request) if "OVERRIDDEN" not in seen[-1] else '{"match": "none"}'

    (prompts / "factory-match.txt").write_text(
        "OVERRIDDEN ${intent}\nFind the entry of the\nList (id: name: description):\n"
        "${candidates}\n",
        encoding="utf-8",
    )
    args = _args(*base, "--prompts", str(prompts))
    args.script = reply
    assert run_factory(args) == 0
    assert any(text.startswith("OVERRIDDEN ") for text in seen)


def test_the_todeval_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from todeval.cli import main as todeval_main
    from todeval.registry import discover

    if "bargain-factory" not in discover().commands.get("data", {}):
        pytest.skip("todeval data bargain-factory is not registered yet")
    target = str(tmp_path / "nowhere" / "h.json")
    assert todeval_main(["data", "bargain-factory", "--model", "scripted:x", "-o", target]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("todeval: error: ")
    with pytest.raises(SystemExit) as exc:
        todeval_main(["data", "bargain-factory", "--source", "ebay"])
    assert exc.value.code == 2
