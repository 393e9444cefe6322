"""The six published prediction files and the reference corpus reproduce the published figures.

Published values: tests/fixtures/multiwoz_predictions/published.csv (budzianowski/multiwoz
README, computed with the standard evaluator). Quirks: DoTS only matches with its own
active_domains ignored (``state``), SOLOIST only with domains from its slot names
(``placeholders``); HDSA ships no states, so the gold states decide.
"""

from __future__ import annotations

import csv
import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

from todeval.scoring.multiwoz import CorpusData, MultiwozResult, VenueDatabase, evaluate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "multiwoz_predictions"
MODES = {"dots": "state", "soloist": "placeholders"}
FILES = ["augpt", "damd", "dots", "galaxy-e2e", "hdsa", "soloist"]
METRICS = ["inform", "success", "bleu", "richness"]


def _published() -> dict[str, dict[str, str]]:
    with (FIXTURES / "published.csv").open(encoding="utf-8") as f:
        rows = [line for line in f if not line.startswith("#")]
    return {
        row["prediction_file"].removesuffix(".json"): row
        for row in csv.DictReader(rows)
        if row["prediction_file"]
    }


PUBLISHED = _published()


def _rounded(value: float, published: str) -> str:
    """``value`` rounded (half up) to the number of decimals ``published`` is given with."""
    decimals = len(published.split(".")[1]) if "." in published else 0
    quantum = Decimal(1).scaleb(-decimals)
    return str(Decimal(repr(value)).quantize(quantum, rounding=ROUND_HALF_UP))


@pytest.fixture(scope="module")
def shared() -> tuple[CorpusData, VenueDatabase]:
    return CorpusData(), VenueDatabase()


@pytest.fixture(scope="module")
def results(shared: tuple[CorpusData, VenueDatabase]) -> dict[str, MultiwozResult]:
    corpus, database = shared
    return {
        name: evaluate(
            FIXTURES / f"{name}.json.gz",
            metrics=METRICS,
            active_domains=MODES.get(name, "given"),  # type: ignore[arg-type]
            corpus=corpus,
            database=database,
        )
        for name in FILES
    }


def test_all_six_files_have_published_rows() -> None:
    assert set(FILES) <= set(PUBLISHED)


@pytest.mark.parametrize("name", FILES)
def test_bleu_inform_success_match_published(name: str, results: dict[str, MultiwozResult]) -> None:
    result, row = results[name], PUBLISHED[name]
    assert result.bleu is not None and result.inform is not None and result.success is not None
    assert _rounded(result.bleu, row["bleu"]) == row["bleu"]
    assert f"{result.inform:.1f}" == row["inform"]
    assert f"{result.success:.1f}" == row["success"]


@pytest.mark.parametrize("name", FILES)
def test_richness_matches_published(name: str, results: dict[str, MultiwozResult]) -> None:
    richness, row = results[name].richness, PUBLISHED[name]
    assert richness is not None
    assert f"{richness.avg_length:.2f}" == row["avg_len"]
    assert f"{richness.cond_entropy:.2f}" == row["cbe"]
    assert richness.unique_words == int(row["uniq_words"])
    assert richness.unique_trigrams == int(row["uniq_3grams"])


def test_all_six_pinned(results: dict[str, MultiwozResult]) -> None:
    """One table of all six reproduced figures (BLEU, Inform, Success)."""
    table = {
        name: (f"{r.bleu:.2f}", f"{r.inform:.1f}", f"{r.success:.1f}")
        for name, r in results.items()
    }
    assert table == {
        "augpt": ("16.77", "76.6", "60.5"),
        "damd": ("16.42", "57.9", "47.6"),
        "dots": ("16.82", "80.4", "68.7"),
        "galaxy-e2e": ("19.64", "85.4", "75.7"),
        "hdsa": ("20.74", "87.9", "79.4"),
        "soloist": ("13.59", "82.3", "72.4"),
    }
    assert results["damd"].n_dialogues == 999  # damd ships 999 of the 1000 dialogues
    assert results["hdsa"].options.gold_states


def test_combined_is_inform_success_half_plus_bleu(results: dict[str, MultiwozResult]) -> None:
    for name, result in results.items():
        assert result.combined is not None
        expected = 0.5 * (result.inform or 0) + 0.5 * (result.success or 0) + (result.bleu or 0)
        assert result.combined == pytest.approx(expected)
        row = PUBLISHED[name]
        from_published = 0.5 * (float(row["inform"]) + float(row["success"])) + float(row["bleu"])
        if name != "damd":  # the README's DAMD Combined (84.8) does not follow from its row
            assert _rounded(from_published, row["combined"]) == row["combined"]


@pytest.mark.parametrize(("name", "mode"), [("dots", "given"), ("soloist", "given")])
def test_quirk_options_are_needed(
    name: str, mode: str, shared: tuple[CorpusData, VenueDatabase]
) -> None:
    """Without the documented quirk options these two files do not reproduce."""
    corpus, database = shared
    result = evaluate(
        FIXTURES / f"{name}.json.gz",
        metrics=["inform", "success"],
        active_domains=mode,  # type: ignore[arg-type]
        corpus=corpus,
        database=database,
    )
    row = PUBLISHED[name]
    assert (f"{result.inform:.1f}", f"{result.success:.1f}") != (row["inform"], row["success"])


_CLASS_BACK = {
    "ADDRESS": "address", "AREA": "area", "TIME": "time", "DAY": "day", "PLACE": "destination",
    "FOOD": "food", "NAME": "name", "PHONE": "phone", "POST": "postcode", "PRICE": "price",
    "REFERENCE": "reference", "COUNT": "choice", "TYPE": "type", "TRAINID": "trainid",
    "INTERNET": "internet", "PARKING": "parking", "ID": "hospital_id",
    "DEPARTMENT": "department", "OPEN": "openhours",
}  # fmt: skip
_CLASS_RE = re.compile(r"\b(" + "|".join(sorted(_CLASS_BACK, key=len, reverse=True)) + r")\b")


def test_reference_corpus_scores(shared: tuple[CorpusData, VenueDatabase]) -> None:
    """The shipped references, placeholders bracketed again, scored with gold states."""
    corpus, database = shared
    predictions = {
        dialogue: [
            {"response": _CLASS_RE.sub(lambda m: f"[{_CLASS_BACK[m.group(1)]}]", ref)}
            for ref in refs
        ]
        for dialogue, refs in corpus.references.items()
    }
    result = evaluate(predictions, metrics=METRICS, corpus=corpus, database=database)
    assert result.options.gold_states
    assert result.inform == pytest.approx(93.7, abs=0.2)
    assert result.success == pytest.approx(90.9, abs=0.2)
    assert result.richness is not None
    assert result.richness.unique_words == pytest.approx(1407, abs=2)
    assert result.bleu is not None and result.bleu > 99.0


def test_shipped_corpus_files_are_the_recorded_ones() -> None:
    """The package's gzipped corpus files decompress to the files the README's hashes name."""
    import gzip
    import hashlib
    from importlib import resources

    folder = resources.files("todeval") / "data" / "multiwoz" / "corpus"
    readme = (folder / "README.md").read_text("utf-8")
    recorded = dict(
        (name, digest)
        for digest, name in re.findall(r"^([0-9a-f]{64})  (\S+\.json)$", readme, re.MULTILINE)
    )
    assert len(recorded) == 4
    for name, digest in recorded.items():
        data = gzip.decompress((folder / f"{name}.gz").read_bytes())
        assert hashlib.sha256(data).hexdigest() == digest, name
