"""``todeval score incar --from sequicity``: Sequicity's KVRET result files (issue 19 item 3).

The fixture ``tests/fixtures/incar/sequicity_gold_sample.csv`` is hand-made in Sequicity's
format from our own test gold (dialogues 32 schedule, 2 weather, 3 navigate; rows interleaved,
not sorted by dialogue): responses with ``<slot>_SLOT`` tokens, belief spans holding the gold
constraint values, ``user`` with the previous response and ``EOS_M``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from todeval.cli import main
from todeval.errors import BadInputError
from todeval.scoring.incar._evaluate import score_predictions
from todeval.scoring.incar._export import gold_as_predictions
from todeval.scoring.incar._gold import GoldSplit, load_gold
from todeval.scoring.incar._predictions import parse_predictions
from todeval.scoring.incar._sequicity import (
    Assignment,
    _entity_slots,
    assign_slots,
    parse_sequicity,
    read_sequicity,
    sequicity_response,
    span_values,
)

FIXTURE = Path(__file__).parents[1] / "fixtures" / "incar" / "sequicity_gold_sample.csv"
IDS = ("2", "3", "32")


@pytest.fixture(scope="module")
def gold() -> GoldSplit:
    return load_gold("test")


def test_response_and_span_mapping() -> None:
    assert (
        sequicity_response("a high of temperature_SLOT . EOS_M")
        == "a high of [value_temperature] ."
    )
    assert sequicity_response("weather_attribute_SLOT , traffic_info_SLOT") == (
        "[value_weather_attribute] , [value_traffic_info]"
    )
    assert sequicity_response("foo_SLOT.") == "foo_SLOT."  # glued: not a token, left as is
    assert span_values("thursday ; cleveland EOS_Z1 weather_attribute") == ["thursday", "cleveland"]
    assert span_values("meeting EOS_Z1 date party time") == ["meeting"]
    assert span_values("EOS_Z1") == [] and span_values("") == []


def test_slot_assignment_through_the_lexicon() -> None:
    slots = _entity_slots()
    report = Assignment()
    state = assign_slots(
        ["thursday", "cleveland", "nonsense words", "friday", "5677 springer street"], slots, report
    )
    assert state == {"date": "thursday", "location": "cleveland"}
    assert report.assigned == 2
    assert report.unknown == Counter({"nonsense words": 1, "5677 springer street": 1})
    assert report.collisions == Counter({"friday": 1})
    report = Assignment()
    assert assign_slots(["friday", "friday"], slots, report) == {"date": "friday"}
    assert report.repeated == 1 and report.unassignable == 0
    # no value of kvret_entities.json is listed under two *informable* slots; the only
    # multi-slot entities are three addresses that are also poi names (both requestable only)
    multi = {v: s for v, s in slots.items() if len(s) > 1}
    assert set(multi) == {
        "5677 southwest 4th street",
        "5672 barringer street",
        "5677 springer street",
    }
    fake = {"x": frozenset({"date", "event"})}
    report = Assignment()
    assert assign_slots(["x"], fake, report) == {} and report.ambiguous == Counter({"x": 1})


def test_gold_in_sequicity_format_maps_to_the_gold(gold: GoldSplit) -> None:
    mapped = read_sequicity(FIXTURE, gold)
    assert mapped.config["dataset"] == "kvret" and mapped.rows == 10
    expected = {k: v for k, v in gold_as_predictions(gold).items() if k in IDS}
    assert mapped.predictions.model_dump()["dialogues"] == expected
    assert mapped.assignment.unassignable == 0 and mapped.assignment.assigned == 20


def test_gold_in_sequicity_format_scores_like_the_gold(gold: GoldSplit) -> None:
    mapped = read_sequicity(FIXTURE, gold)
    json_gold = parse_predictions(
        {k: v for k, v in gold_as_predictions(gold).items() if k in IDS}, gold
    )
    a = score_predictions(mapped.predictions, gold, resamples=20)
    b = score_predictions(json_gold, gold, resamples=20)
    assert a.model_dump() == b.model_dump()
    assert a.n_scored == 3 and a.n_turns == 10 and not a.gold_states
    assert a.match == pytest.approx(100.0) and a.match_evaluated == 2  # 32: no gold [value turn
    assert a.succ_f1 == pytest.approx(100.0)
    assert a.bleu_lineage == pytest.approx(100.0, abs=1e-3)
    assert a.combined_lineage == pytest.approx(200.0, abs=1e-3)


def _text(body: str, header: str | None = None) -> str:
    head = header or (
        "dial_id,turn_num,user,generated_bspan,bspan,generated_response,response,u_len,m_len,"
        "supervised"
    )
    return f"dataset : kvret\nSTART_CSV_SECTION\n{head}\n{body}"


def _rows(dial_id: int, turns: int, start: int = 0) -> str:
    return "".join(
        f"{dial_id},{t},hi,EOS_Z1,EOS_Z1,ok,ok,1,1,True\n" for t in range(start, start + turns)
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("dial_id,turn_num\n0,0\n", "no START_CSV_SECTION line"),
        ("dataset : camrest\nSTART_CSV_SECTION\n", "dataset is 'camrest'"),
        (_text(_rows(2, 4), header="dial_id,turn_num,user"), "lacks column 'generated_bspan'"),
        (_text(_rows(304, 1)), "dial_id 304 out of range (the test split has dialogues 0 to 303)"),
        (_text(_rows(2, 4) + _rows(2, 1)), "dial_id 2 turn_num 0 repeated"),
        (_text(_rows(2, 3)), "dial_id 2: 3 turns numbered 0..2, the gold has 4 (0..3)"),
        (_text(_rows(2, 4, start=1)), "dial_id 2: 4 turns numbered 1..4, the gold has 4"),
        (_text("x,0,hi,EOS_Z1,EOS_Z1,ok,ok,1,1,True\n"), "dial_id must be an integer"),
        (_text("2,0,hi\n"), "f.csv: line 4: 3 fields, the header has 10"),
        (_text(""), "no rows after the CSV header"),
        ("dataset : kvret\nSTART_CSV_SECTION\n", "no CSV header"),
    ],
)
def test_not_sequicity_format_is_one_line_error(gold: GoldSplit, text: str, message: str) -> None:
    with pytest.raises(BadInputError) as info:
        parse_sequicity(text, gold, source="f.csv")
    assert message in str(info.value) and "\n" not in str(info.value)


def test_cli_from_sequicity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["score", "incar", "--from", "sequicity", str(FIXTURE), "--resamples", "20"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "sequicity: 10 turns of 3 dialogues; belief values: 20 assigned" in out
    bad = tmp_path / "bad.csv"
    bad.write_text("not a result file\n", encoding="utf-8")
    code = main(["score", "incar", "--from", "sequicity", str(bad)])
    out, err = capsys.readouterr()
    assert code == 3 and "no START_CSV_SECTION" in err and len(err.strip().splitlines()) == 1
    # the default is still our JSON format: a CSV file is invalid JSON there
    code = main(["score", "incar", str(FIXTURE)])
    _, err = capsys.readouterr()
    assert code == 3 and "invalid JSON" in err
