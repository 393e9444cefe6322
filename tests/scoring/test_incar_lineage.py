"""todeval's In-Car preprocessing against the lineage's own output (issue 19).

``tests/fixtures/incar/lineage_reference/`` holds the output of the LABES KVRET preprocessing
(thu-spmi/LABES @ 6070442, run unmodified with WordNet 3.0; see its README): user turns,
delexicalized responses and constraints of every test and dev turn, and the entity list.
Four fields are uncertain (street abbreviations kept as ``ave.`` or split as ``ave .``); either
form is accepted for at most four fields per split.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

from todeval.scoring.incar._delex import replace_words
from todeval.scoring.incar._evaluate import evaluate
from todeval.scoring.incar._gold import GoldSplit, Split, load_gold
from todeval.scoring.incar._metrics import lineage_text
from todeval.scoring.incar._ontology import Lexicon, load_lexicon

REFERENCE = Path(__file__).parents[1] / "fixtures" / "incar" / "lineage_reference"
_STREET = re.compile(r"\b(ave|st|ct) \.")
N_UNCERTAIN = 4


def _reference(name: str) -> Any:
    return json.loads(gzip.decompress((REFERENCE / name).read_bytes()).decode("utf-8"))


@pytest.fixture(scope="module")
def lexicon() -> Lexicon:
    return load_lexicon()


def _same(ours: str, theirs: str) -> bool | None:
    """True if equal, None if equal up to the documented uncertainty, else False."""
    if ours == theirs:
        return True
    if _STREET.sub(r"\1.", ours) == _STREET.sub(r"\1.", theirs):
        return None
    return False


def _mismatches(gold: GoldSplit, reference: dict[str, Any]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {"user": [], "response": [], "constraint": [], "uncertain": []}
    assert sorted(reference, key=int) == [d.dialogue_id for d in gold.dialogues]
    for dialogue in gold.dialogues:
        theirs = reference[dialogue.dialogue_id]
        assert len(theirs) == len(dialogue.turns), dialogue.dialogue_id
        for i, (turn, ref) in enumerate(zip(dialogue.turns, theirs, strict=True)):
            where = f"{dialogue.dialogue_id}/{i}"
            for field, ours, their in (
                ("user", turn.user, ref["user"]),
                ("response", turn.response, ref["response"]),
            ):
                same = _same(ours, their)
                if same is None:
                    found["uncertain"].append(f"{where} {field}")
                elif not same:
                    found[field].append(f"{where}: {ours!r} != {their!r}")
            constraint = {k.split("-", 1)[1]: v for k, v in json.loads(ref["constraint"]).items()}
            if turn.state != constraint:
                found["constraint"].append(f"{where}: {turn.state} != {constraint}")
    return found


@pytest.mark.parametrize("split", ["test", "dev"])
def test_preprocessing_equals_the_lineage_field_by_field(split: Split, lexicon: Lexicon) -> None:
    gold = load_gold(split, lexicon)
    found = _mismatches(gold, _reference(f"{split}_preprocessed.json.gz"))
    assert found["user"] == []
    assert found["response"] == []
    assert found["constraint"] == []
    assert len(found["uncertain"]) <= N_UNCERTAIN


def test_lexicon_equals_the_lineage_entity_list_in_order(lexicon: Lexicon) -> None:
    reference = [tuple(pair) for pair in _reference("entity_dict.json.gz")]
    assert list(lexicon.entities.items()) == reference


def test_the_lineage_forms_behind_the_former_differences(lexicon: Lexicon) -> None:
    by_id = load_gold("test", lexicon).by_id()
    # ``481 Amaranta Ave.``: the am/pm join runs first, so the address pattern does not apply
    assert any("at 481amaranta ave ." in t.response for t in by_id["128"].turns)
    assert any("home .." in t.response for t in by_id["21"].turns)


def _lineage_gold_as_predictions(split: Split) -> dict[str, list[dict[str, Any]]]:
    reference = _reference(f"{split}_preprocessed.json.gz")
    return {
        dialogue_id: [
            {"response": t["response"], "state": json.loads(t["constraint"])} for t in turns
        ]
        for dialogue_id, turns in reference.items()
    }


def test_the_lineage_gold_scores_perfectly_on_every_lineage_metric() -> None:
    result = evaluate(_lineage_gold_as_predictions("test"), "test", resamples=20)
    assert not result.gold_states
    assert result.match == pytest.approx(100.0)
    assert result.succ_f1 == pytest.approx(100.0, abs=1e-5)
    assert result.bleu_lineage == pytest.approx(100.0, abs=1e-5)
    assert result.combined_lineage == pytest.approx(200.0, abs=1e-4)
    assert result.bleu == pytest.approx(100.0)


def test_lineage_clean_takes_responses_as_given(lexicon: Lexicon) -> None:
    # not re-normalized (issue 19, cause 4): wrap tokens, then re-delexicalize on the wrapped text
    assert lineage_text("<sos_r> at [value_time] . <eos_r>", lexicon) == (
        "<sos_r> at [value_time] . <eos_r>"
    )
    assert lineage_text("Meeting at 7pm", lexicon) == "<sos_r> Meeting at [value_time] <eos_r>"
    # GALAXY strips only its own start token: a ``<go_r>`` stays a word (issue 27)
    assert lineage_text("<go_r> ok <eos_r>", lexicon) == "<sos_r> <go_r> ok <eos_r>"


def test_responses_wrapped_in_galaxy_tokens_score_like_bare_ones() -> None:
    # issue 27: ``<sos_r> … <eos_r>`` around every response is what GALAXY's own output looks
    # like; its evaluator strips them, so the lineage BLEU stays 100 (it was 83.52 with <go_r>)
    predictions = {
        dialogue_id: [{**t, "response": f"<sos_r> {t['response']} <eos_r>"} for t in turns]
        for dialogue_id, turns in _lineage_gold_as_predictions("test").items()
    }
    result = evaluate(predictions, "test", resamples=20)
    assert result.bleu_lineage == pytest.approx(100.0, abs=1e-5)
    assert result.succ_f1 == pytest.approx(100.0, abs=1e-5)


def test_word_extension_stops_at_characters_that_are_neither_letters_nor_digits() -> None:
    # GALAXY extends a replaced entity with ``isalpha() or isdigit()``: ``½`` is alphanumeric
    # for Python's isalnum() but neither, so it stays after the placeholder (issue 27)
    assert replace_words("go home½ now", "home", "[value_poi_type]") == ("go [value_poi_type]½ now")
    assert replace_words("go homes now", "home", "[value_poi_type]") == "go [value_poi_type] now"
    assert replace_words("go home2 now", "home", "[value_poi_type]") == "go [value_poi_type] now"


def test_a_state_slot_prefixed_with_another_intent_is_dropped() -> None:
    # GALAXY keeps only the dialogue's own intent's slots: a ``weather-date`` key in a schedule
    # dialogue is not a constraint, so every-key-misprefixed states score like empty states
    gold = _lineage_gold_as_predictions("test")
    intent_of = {d.dialogue_id: d.intent for d in load_gold("test").dialogues}
    others = {"schedule": "weather", "weather": "navigate", "navigate": "schedule"}

    def prefixed(choose: Any) -> dict[str, list[dict[str, Any]]]:
        return {
            dialogue_id: [
                {
                    **t,
                    "state": {
                        f"{choose(intent_of[dialogue_id])}-{k.split('-', 1)[-1]}": v
                        for k, v in t["state"].items()
                    },
                }
                for t in turns
            ]
            for dialogue_id, turns in gold.items()
        }

    own = evaluate(prefixed(lambda intent: intent), "test", resamples=20)
    other = evaluate(prefixed(lambda intent: others[intent]), "test", resamples=20)
    empty = evaluate(
        {d: [{**t, "state": {}} for t in turns] for d, turns in gold.items()}, "test", resamples=20
    )
    assert own.match == pytest.approx(100.0)
    assert other.match == empty.match == pytest.approx(0.0)
