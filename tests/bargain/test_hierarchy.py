"""The shipped intent hierarchy, its validator, the weaver templates and the source mapping."""

from __future__ import annotations

import json
import string
from collections import Counter
from typing import Any

import pytest
from pydantic import ValidationError

from todeval.benchmarks.bargain.data import CASINO_LABELS, CRAIGSLIST_LABELS
from todeval.benchmarks.bargain.hierarchy import (
    Action,
    Hierarchy,
    Intent,
    Tool,
    default_hierarchy,
    package_text,
    parse_hierarchy,
    problems,
    validate,
)
from todeval.errors import BadInputError

PARENTS = ("price", "product", "condition", "logistics", "payment", "relationship", "closing")


def _json(name: str) -> Any:
    return json.loads(package_text(name))


def _fields(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}


@pytest.fixture(scope="module")
def shipped() -> Hierarchy:
    default_hierarchy.cache_clear()
    return default_hierarchy()


# --- the shipped hierarchy -------------------------------------------------------------------


def test_shipped_hierarchy_validates(shipped: Hierarchy) -> None:
    assert problems(shipped) == []
    assert validate(shipped) is shipped
    assert shipped.name == "marketplace-bargaining"
    assert shipped.version == "1.0.0"
    assert shipped.description and shipped.sources


def test_shipped_hierarchy_has_the_seven_parents_and_enough_intents(shipped: Hierarchy) -> None:
    assert tuple(p.id for p in shipped.parents) == PARENTS
    assert len(shipped.intents) >= 40
    per_parent = {p: sum(i.parent == p for i in shipped.intents) for p in PARENTS}
    assert all(5 <= n <= 8 for n in per_parent.values()), per_parent
    for intent in shipped.intents:
        assert intent.id.startswith(intent.parent + "."), intent.id
        assert 2 <= len(intent.examples) <= 4, intent.id
        assert 1 <= len(intent.actions) <= 3, intent.id
    for action in shipped.actions:
        assert 1 <= len(action.tools) <= 3, action.id
        assert action.id.startswith("act."), action.id
    for tool in shipped.tools:
        assert tool.id.startswith("API_"), tool.id
        assert tool.arguments.get("type") == "object", tool.id
        assert set(tool.arguments.get("required", ())) <= set(tool.arguments["properties"])


def test_shipped_ids_are_unique_and_descriptions_distinct(shipped: Hierarchy) -> None:
    groups = (shipped.parents, shipped.intents, shipped.actions, shipped.tools)
    ids = [e.id for group in groups for e in group]
    assert len(ids) == len(set(ids))
    for attr in ("name", "description"):
        values = [getattr(i, attr).casefold() for i in shipped.intents]
        assert len(values) == len(set(values)), attr
    examples = [e.casefold() for i in shipped.intents for e in i.examples]
    assert len(examples) == len(set(examples))


def test_every_tool_and_action_is_reachable(shipped: Hierarchy) -> None:
    used_actions = {a for i in shipped.intents for a in i.actions}
    assert used_actions == {a.id for a in shipped.actions}
    reachable = {t for a in shipped.actions if a.id in used_actions for t in a.tools}
    assert reachable == {t.id for t in shipped.tools}


def test_the_helpers_answer_for_the_shipped_file(shipped: Hierarchy) -> None:
    assert shipped.intent("price.ask_discount").parent == "price"
    with pytest.raises(KeyError):
        shipped.intent("price.nothing")
    assert set(shipped.labels()) == set(shipped.intent_ids)
    assert "price.ask_discount" not in shipped.siblings("price.ask_discount")
    assert set(shipped.siblings("price.ask_discount")) < {
        i.id for i in shipped.intents if i.parent == "price"
    }
    assert len(shipped.digest()) == 16
    assert parse_hierarchy(package_text("hierarchy-v1.json"), "x").digest() == shipped.digest()


# --- problems() on broken copies -------------------------------------------------------------


def _one_problem(h: Hierarchy, expected: str) -> None:
    found = problems(h)
    assert any(expected in line for line in found), found
    with pytest.raises(BadInputError, match="broken"):
        validate(h, "broken")


def test_problems_catches_a_duplicate_id(shipped: Hierarchy) -> None:
    first = shipped.intents[0]
    copy = first.model_copy(update={"name": "Again", "description": "The same id twice."})
    _one_problem(shipped.model_copy(update={"intents": (*shipped.intents, copy)}), "used 2 times")


def test_problems_catches_an_id_shared_across_groups(shipped: Hierarchy) -> None:
    clash = Tool(id=shipped.actions[0].id, name="Clash", description="Shares an action's id.")
    tools = (*shipped.tools, clash)
    actions = (shipped.actions[0].model_copy(update={"tools": (clash.id,)}), *shipped.actions[1:])
    broken = shipped.model_copy(update={"tools": tools, "actions": actions})
    _one_problem(broken, "used 2 times")


def test_problems_catches_an_orphan_action(shipped: Hierarchy) -> None:
    orphan = Action(id="act.orphan", name="Orphan", description="No intent uses it.", tools=())
    _one_problem(shipped.model_copy(update={"actions": (*shipped.actions, orphan)}), "act.orphan")
    assert "action 'act.orphan' belongs to no intent (orphan)" in problems(
        shipped.model_copy(update={"actions": (*shipped.actions, orphan)})
    )


def test_problems_catches_an_unreachable_tool(shipped: Hierarchy) -> None:
    tool = Tool(id="API_Nobody", name="Nobody", description="No action uses it.")
    broken = shipped.model_copy(update={"tools": (*shipped.tools, tool)})
    _one_problem(broken, "tool 'API_Nobody' is reachable from no intent")


def test_a_tool_used_only_by_an_orphan_action_is_unreachable(shipped: Hierarchy) -> None:
    tool = Tool(id="API_Lonely", name="Lonely", description="Only an orphan uses it.")
    orphan = Action(id="act.lonely", name="Lonely", description="Unused.", tools=(tool.id,))
    broken = shipped.model_copy(
        update={"tools": (*shipped.tools, tool), "actions": (*shipped.actions, orphan)}
    )
    found = problems(broken)
    assert "tool 'API_Lonely' is reachable from no intent" in found
    assert "action 'act.lonely' belongs to no intent (orphan)" in found


def test_problems_catches_an_unknown_parent(shipped: Hierarchy) -> None:
    bad = shipped.intents[0].model_copy(update={"parent": "weather"})
    broken = shipped.model_copy(update={"intents": (bad, *shipped.intents[1:])})
    _one_problem(broken, "unknown parent 'weather'")


def test_problems_catches_a_parent_without_intents(shipped: Hierarchy) -> None:
    intents = tuple(i for i in shipped.intents if i.parent != "closing")
    used = {a for i in intents for a in i.actions}
    actions = tuple(a for a in shipped.actions if a.id in used)
    broken = shipped.model_copy(update={"intents": intents, "actions": actions})
    assert "parent 'closing' has no intent" in problems(broken)


def test_problems_catches_an_unknown_action_reference(shipped: Hierarchy) -> None:
    first = shipped.intents[0]
    bad = first.model_copy(update={"actions": (*first.actions, "act.missing")})
    broken = shipped.model_copy(update={"intents": (bad, *shipped.intents[1:])})
    _one_problem(broken, f"intent {first.id!r}: unknown action 'act.missing'")


def test_problems_catches_an_unknown_tool_reference(shipped: Hierarchy) -> None:
    first = shipped.actions[0]
    bad = first.model_copy(update={"tools": (*first.tools, "API_Missing")})
    broken = shipped.model_copy(update={"actions": (bad, *shipped.actions[1:])})
    _one_problem(broken, "unknown tool 'API_Missing'")


def test_a_small_hierarchy_from_dicts() -> None:
    data: dict[str, Any] = {
        "name": "tiny",
        "version": "0.1.0",
        "parents": [{"id": "price", "name": "Price", "description": "Money."}],
        "intents": [
            {
                "id": "price.ask",
                "name": "Ask",
                "description": "Asks for less.",
                "parent": "price",
                "actions": ["act.quote"],
            }
        ],
        "actions": [{"id": "act.quote", "name": "Quote", "description": "Quotes.", "tools": ["T"]}],
        "tools": [{"id": "T", "name": "T", "description": "A tool."}],
    }
    h = parse_hierarchy(json.dumps(data), "tiny")
    assert h.intent_ids == ("price.ask",)
    data["intents"][0]["parent"] = "nowhere"
    with pytest.raises(BadInputError, match="unknown parent 'nowhere'"):
        parse_hierarchy(json.dumps(data), "tiny")
    with pytest.raises(ValidationError, match="at least 1"):
        Intent.model_validate({**data["intents"][0], "actions": []})


# --- parse_hierarchy errors ------------------------------------------------------------------


def _one_line(exc: pytest.ExceptionInfo[BadInputError]) -> str:
    message = str(exc.value)
    assert "\n" not in message
    return message


def test_parse_hierarchy_bad_json_is_one_line() -> None:
    with pytest.raises(BadInputError) as exc:
        parse_hierarchy('{"name": "x",\n', "h.json")
    message = _one_line(exc)
    assert message.startswith("h.json: not valid JSON (line ")


def test_parse_hierarchy_missing_field_is_one_line() -> None:
    data = json.loads(package_text("hierarchy-v1.json"))
    del data["tools"]
    with pytest.raises(BadInputError) as exc:
        parse_hierarchy(json.dumps(data), "h.json")
    assert _one_line(exc) == "h.json: invalid hierarchy at tools: Field required"


def test_parse_hierarchy_missing_nested_field_names_where() -> None:
    data = json.loads(package_text("hierarchy-v1.json"))
    del data["intents"][3]["description"]
    with pytest.raises(BadInputError) as exc:
        parse_hierarchy(json.dumps(data), "h.json")
    assert _one_line(exc) == "h.json: invalid hierarchy at intents.3.description: Field required"


def test_parse_hierarchy_invalid_shipped_copy_names_the_first_problem() -> None:
    data = json.loads(package_text("hierarchy-v1.json"))
    data["intents"].append(dict(data["intents"][0]))
    with pytest.raises(BadInputError) as exc:
        parse_hierarchy(json.dumps(data), "h.json")
    assert "is used 2 times" in _one_line(exc)


# --- weaver templates ------------------------------------------------------------------------

CATEGORIES = ("bike", "car", "electronics", "furniture", "housing", "phone")


def _text(template: str | dict[str, Any]) -> str:
    return template if isinstance(template, str) else template["text"]


def _usable(entry: dict[str, Any], side: str, category: str) -> list[str]:
    """The templates of one side usable for ``category`` (general, or restricted to it)."""
    return [_text(t) for t in entry[side] if isinstance(t, str) or category in t["categories"]]


def _fits(entry: dict[str, Any]) -> list[str]:
    return [c for c in CATEGORIES if not entry.get("categories") or c in entry["categories"]]


def _all_templates() -> list[tuple[str, str]]:
    intents = _json("weaver-templates-v1.json")["intents"]
    return [
        (intent_id, _text(t))
        for intent_id, entry in intents.items()
        for t in (*entry["buyer"], *entry["seller"])
    ]


def test_templates_cover_every_intent(shipped: Hierarchy) -> None:
    templates = _json("weaver-templates-v1.json")
    assert templates["version"] == "1.0.0"
    assert set(templates) == {"version", "slots", "intents"}
    assert set(templates["intents"]) == set(shipped.intent_ids)
    for intent_id, entry in templates["intents"].items():
        assert (
            {"stage", "buyer", "seller"}
            <= set(entry)
            <= {
                "stage",
                "categories",
                "buyer",
                "seller",
            }
        ), intent_id
        assert entry["stage"] in ("opening", "middle", "closing"), intent_id
        assert set(entry.get("categories", ())) <= set(CATEGORIES), intent_id
        for t in (*entry["buyer"], *entry["seller"]):
            if not isinstance(t, str):
                assert set(t) == {"text", "categories"}, intent_id
                assert t["categories"] and set(t["categories"]) <= set(CATEGORIES), intent_id
        buyer = [_text(t) for t in entry["buyer"]]
        assert len(buyer) >= 8 and len(set(buyer)) == len(buyer), intent_id
        assert len(entry["seller"]) >= 3, intent_id
        assert _fits(entry), intent_id
        for category in _fits(entry):  # enough wording wherever the intent is sampled
            assert len(_usable(entry, "buyer", category)) >= 8, (intent_id, category)
            assert len(_usable(entry, "seller", category)) >= 3, (intent_id, category)


def test_no_template_serves_two_intents() -> None:
    buyer = Counter(
        _text(t)
        for entry in _json("weaver-templates-v1.json")["intents"].values()
        for t in entry["buyer"]
    )
    assert [t for t, n in buyer.items() if n > 1] == []


def test_every_category_has_a_wide_choice_of_intents() -> None:
    intents = _json("weaver-templates-v1.json")["intents"].values()
    for category in CATEGORIES:
        fitting = [e for e in intents if category in _fits(e)]
        assert len(fitting) >= 30, category
        assert any(e["stage"] == "opening" for e in fitting), category
        assert any(e["stage"] == "closing" for e in fitting), category


def test_templates_use_only_declared_slots() -> None:
    templates = _json("weaver-templates-v1.json")
    slots = set(templates["slots"])
    assert slots == {
        "item",
        "title",
        "category",
        "price",
        "offer",
        "counter",
        "day",
        "time",
        "place",
        "payment",
        "attribute",
    }
    for intent_id, template in _all_templates():
        assert _fields(template) <= slots, (intent_id, template)
        for _, field, spec, conversion in string.Formatter().parse(template):
            assert not spec and conversion is None, (intent_id, template)
            assert field is None or field.isidentifier(), (intent_id, template)
        filled = template.format(**{s: "X" for s in slots})
        assert "{" not in filled and "}" not in filled, (intent_id, template)


def test_templates_are_standalone_sentences() -> None:
    for intent_id, template in _all_templates():
        assert template == template.strip() and template, intent_id
        assert template[0].isupper() or template[0] == "{", (intent_id, template)
        assert template[-1] in ".?!", (intent_id, template)
        first = template.split()[0].strip(",").lower()
        assert first not in {"and", "but", "also", "so", "or"}, (intent_id, template)


def test_templates_are_not_one_keyword_per_intent() -> None:
    """No word (slots aside) occurs in every buyer template of an intent: paraphrase diversity."""
    templates = _json("weaver-templates-v1.json")
    stop = {"the", "a", "it", "i", "you", "to", "is", "for", "of", "on", "me", "my", "this"}
    for intent_id, entry in templates["intents"].items():
        for category in _fits(entry):
            bags = [
                {w.strip(".,?!;:'\"").lower() for w in t.split() if "{" not in w} - stop - {""}
                for t in _usable(entry, "buyer", category)
            ]
            common = set.intersection(*bags)
            assert not common, (intent_id, category, common)


def test_opening_and_closing_stages_are_where_expected() -> None:
    stages = {k: v["stage"] for k, v in _json("weaver-templates-v1.json")["intents"].items()}
    assert stages["relationship.greet"] == "opening"
    assert stages["closing.accept_offer"] == "closing"
    assert stages["price.make_offer"] == "middle"


# --- source mapping --------------------------------------------------------------------------


def test_mapping_covers_every_source_label(shipped: Hierarchy) -> None:
    mapping = _json("source-mapping-v1.json")
    assert mapping["version"] == "1.0.0"
    assert set(mapping["craigslist"]) == set(CRAIGSLIST_LABELS)
    assert set(mapping["casino"]) == set(CASINO_LABELS)
    assert len(mapping["craigslist"]) + len(mapping["casino"]) == 21
    ids = set(shipped.intent_ids)
    for source in ("craigslist", "casino"):
        for label, entry in mapping[source].items():
            assert set(entry) == {"intents", "note"}, label
            assert entry["note"].strip(), label
            assert set(entry["intents"]) <= ids, (label, set(entry["intents"]) - ids)
            assert len(set(entry["intents"])) == len(entry["intents"]), label


def test_every_craigslist_act_has_a_counterpart() -> None:
    mapping = _json("source-mapping-v1.json")
    assert all(entry["intents"] for entry in mapping["craigslist"].values())
    unmapped = {k for k, v in mapping["casino"].items() if not v["intents"]}
    assert unmapped <= {"uv-part", "non-strategic"}
