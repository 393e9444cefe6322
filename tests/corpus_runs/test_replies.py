"""The reply check: what counts as a valid reply and what is a format failure."""

from __future__ import annotations

import pytest

from todeval.benchmarks.incar_turns.prompts import reply_schema as incar_schema
from todeval.benchmarks.multiwoz_turns.prompts import reply_schema
from todeval.dialogue.replies import ReplyChecker

GOOD = (
    '{"response": "[value_name] ?", "state": {"hotel": {"area": "north"}}, '
    '"active_domains": ["hotel"]}'
)


@pytest.mark.parametrize(
    "text",
    [GOOD, f"  {GOOD}\n", f"```json\n{GOOD}\n```", f"```\n{GOOD}```", f"```JSON {GOOD} ```"],
)
def test_valid_replies(text: str) -> None:
    checked = ReplyChecker(reply_schema()).check(text)
    assert checked.error is None
    assert checked.value is not None and checked.value["state"] == {"hotel": {"area": "north"}}


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty reply"),
        ("   ", "empty reply"),
        ("hello", "not JSON"),
        (f"Here you are: {GOOD}", "not JSON"),
        (f"{GOOD} {GOOD}", "not JSON"),
        ("[]", "not a JSON object but list"),
        ('"text"', "not a JSON object but str"),
        ('{"response": "x", "state": {}}', "schema: reply: 'active_domains' is a required"),
        (
            '{"response": 3, "state": {}, "active_domains": []}',
            "schema: .response: 3 is not of type 'string'",
        ),
        (
            '{"response": "x", "state": {"hotel": {"area": 1}}, "active_domains": []}',
            "schema: .state.hotel.area",
        ),
        ('{"response": "x", "state": {"bar": {}}, "active_domains": []}', "schema: .state"),
        ('{"response": "x", "state": {}, "active_domains": ["bar"]}', "schema: .active_domains[0]"),
        ('{"response": "x", "state": {}, "active_domains": [], "extra": 1}', "schema: reply"),
        ("[" * 100_000, "not accepted: JSON nested deeper than 64 levels"),
    ],
)
def test_format_failures(text: str, reason: str) -> None:
    checked = ReplyChecker(reply_schema()).check(text)
    assert checked.value is None
    assert checked.error is not None and checked.error.startswith(reason), checked.error
    assert "\n" not in checked.error and len(checked.error) <= 200


def test_incar_schema_is_per_intent() -> None:
    checker = ReplyChecker(incar_schema("weather"))
    assert checker.check('{"response": "x", "state": {"location": "boston"}}').error is None
    failed = checker.check('{"response": "x", "state": {"poi_type": "gas station"}}')
    assert failed.error is not None and failed.error.startswith("schema: .state")
