"""In-Car text normalization: tokenization, lemmatization, idempotency."""

from __future__ import annotations

from todeval.scoring.incar._text import lemmatize_token, normalize, tokenize
from todeval.scoring.incar._wordnet import lemmatize_noun, morphy_noun


def test_punctuation_and_clitics_are_split() -> None:
    assert tokenize("i don't know, chef chu's is near!") == [
        "i", "do", "n't", "know", ",", "chef", "chu", "'s", "is", "near", "!",
    ]  # fmt: skip


def test_sentence_final_periods_are_split_but_abbreviations_kept() -> None:
    assert tokenize("it is on main st. near you. ok.") == [
        "it", "is", "on", "main", "st.", "near", "you", ".", "ok", ".",
    ]  # fmt: skip


def test_placeholders_stay_whole() -> None:
    assert tokenize("at [value_time].") == ["at", "[value_time]", "."]
    assert tokenize("([value_poi_type])") == ["(", "[value_poi_type]", ")"]


def test_numbers_with_commas_and_times_stay_whole() -> None:
    assert tokenize("1,000 at 7:30") == ["1,000", "at", "7:30"]


def test_am_pm_is_joined_and_text_lower_cased() -> None:
    assert normalize("Meeting at 7 PM.") == "meeting at 7pm ."


def test_plural_nouns_become_singular() -> None:
    assert lemmatize_token("meetings") == "meeting"
    assert lemmatize_token("cities") == "city"
    assert lemmatize_token("addresses") == "address"
    assert lemmatize_token("miles") == "mile"
    assert lemmatize_token("matches") == "match"


def test_lemmatizer_is_wordnet_noun_morphy() -> None:
    """The lineage's WordNet lemmatizer, including its odd but real outputs (issue 19)."""
    odd = {"does": "doe", "has": "ha", "was": "wa", "its": "it", "as": "a"}
    ves = {"serves": "serf", "lives": "life"}
    for word, lemma in {**odd, **ves}.items():
        assert lemmatize_token(word) == lemma, word


def test_lemmatizer_keeps_lemmas_exceptions_and_unknown_words() -> None:
    for word in ("gas", "is", "angeles", "starbucks", "avoids", "appears", "7pm", "[value_x]"):
        assert lemmatize_token(word) == word


def test_morphy_candidates_follow_the_documented_procedure() -> None:
    assert morphy_noun("axes") == ["ax", "axis"]  # exception list first ("axes" no lemma)
    assert morphy_noun("boxes") == ["box"]  # xes -> x
    assert morphy_noun("zzzqs") == []
    assert lemmatize_noun("women") == "woman"
    assert normalize("los angeles") == "los angeles"


def test_normalize_is_idempotent() -> None:
    texts = [
        "You have a dentist appointment on Friday at 7 pm.",
        "I don't know, Chef Chu's is 5 miles away. Ok.",
        'cannot go... gonna rain? (maybe) "quoted" text',
        "Setting meeting for [value_date] at [value_time].",
        "room 100. see you at 593 Arrowhead Way.",
    ]
    for text in texts:
        once = normalize(text)
        assert normalize(once) == once


def test_the_lineage_period_rules() -> None:
    assert normalize("the address of your home.. 593 Arrowhead Way") == (
        "the address of your home .. 593 arrowhead way"
    )
    assert tokenize("the 7th....is that correct?") == [
        "the",
        "7th",
        "....",
        "is",
        "that",
        "correct",
        "?",
    ]
    assert normalize("p.f. changs is near") == "p.f . chang is near"
    assert normalize("481 Amaranta Ave", am_pm=False) == "481 amaranta ave"
    assert normalize("481 Amaranta Ave") == "481amaranta ave"
