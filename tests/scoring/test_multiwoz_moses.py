"""The ASCII Moses round trip equals sacremoses' on every input, and never imports it."""

from __future__ import annotations

import gzip
import json
import random
import string
import subprocess
import sys
from pathlib import Path

import pytest

from todeval.scoring.multiwoz._moses import (
    MosesRoundTrip,
    Prefixes,
    ascii_round_trip,
    english_prefixes,
    sacremoses_round_trip,
)
from todeval.scoring.multiwoz._normalize import canonicalize_placeholders

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "multiwoz_predictions"
ASCII = "".join(chr(i) for i in range(128))


@pytest.fixture(scope="module")
def reference() -> object:
    return sacremoses_round_trip()


@pytest.fixture(scope="module")
def prefixes() -> Prefixes:
    return english_prefixes()


def _ascii_part(chars: str) -> str:
    return "".join(sorted({c for c in chars if c in ASCII} - {"\n"}))


def test_the_ascii_character_sets_are_sacremoses_sets_restricted_to_ascii() -> None:
    from sacremoses import MosesDetokenizer, MosesTokenizer

    digits, lower = string.digits, string.ascii_lowercase
    letters = "".join(sorted(string.ascii_letters))
    assert _ascii_part(MosesTokenizer.IsAlnum) == "".join(sorted(digits + letters))
    assert _ascii_part(MosesTokenizer.IsAlpha) == letters
    assert _ascii_part(MosesTokenizer.IsN) == digits
    assert _ascii_part(MosesTokenizer.IsLower) == lower
    assert _ascii_part(MosesTokenizer.IsSc) == "$"
    assert _ascii_part(MosesTokenizer.IsSo) == ""
    assert _ascii_part(MosesDetokenizer.IsAlpha) == letters
    assert _ascii_part(MosesDetokenizer.IsSc) == "$"


def test_prefixes_are_sacremoses_english_prefixes(prefixes: Prefixes) -> None:
    from sacremoses import MosesTokenizer

    tokenizer = MosesTokenizer(lang="en")
    numeric = set(tokenizer.NUMERIC_ONLY_PREFIXES)
    assert prefixes.numeric_only == numeric
    assert prefixes.kept == set(tokenizer.NONBREAKING_PREFIXES) - numeric
    assert "Mr" in prefixes.kept and "No" in prefixes.numeric_only


def test_every_fixture_response_normalises_as_with_sacremoses(reference: object) -> None:
    texts: set[str] = set()
    for path in sorted(FIXTURES.glob("*.json.gz")):
        for turns in json.loads(gzip.decompress(path.read_bytes())).values():
            for turn in turns:
                texts.add(canonicalize_placeholders(turn["response"]))  # what is normalised
    assert len(texts) > 10_000
    fast = MosesRoundTrip()
    wrong = [t for t in sorted(texts) if fast(t) != reference(t)]  # type: ignore[operator]
    assert wrong == []


_PIECES = [
    *"aAsSzZ09 .,'\"`-@&|<>[](){}$%?!:;\\/#*+=~^_\t\n\x01\x1c\x7f",
    "...", "..", "....", "n't", "'s", "'ll", "'re", "mr.", "Mr.", "No.", "Art.", "pp.", "etc.",
    "DOTMULTI", "DOT", "MULTI", "&amp;", "&apos;", "&bar;", "&#91;", "&quot;", " @-@ ", "U.S.",
    "e.g.", "5", "5,300", "1.5", "s'", "'", "''", "``", "NAME", "cannot", "gonna",
]  # fmt: skip
_WORDS = ["hello", "there", "mr", "no", "art", "pp", "a", "i", "etc", "jan", "5", "10", "s"]


def _random_text(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(0, 14)):
        if rng.random() < 0.6:
            parts.append(rng.choice(_PIECES))
        else:
            parts.append(rng.choice(_WORDS) + rng.choice(["", " ", ".", " "]))
    return "".join(parts)


def test_random_ascii_strings_normalise_as_with_sacremoses(
    reference: object, prefixes: Prefixes
) -> None:
    rng = random.Random(0)
    texts = [_random_text(rng) for _ in range(20_000)]
    wrong = [t for t in texts if ascii_round_trip(t, prefixes) != reference(t)]  # type: ignore[operator]
    assert wrong == []


@pytest.mark.parametrize(
    "text",
    ["café NAME is at ADDRESS .", "the price is £5 .", "„quoted“ text", "日本 ok .", "naïve , no"],
)
def test_non_ascii_text_goes_to_sacremoses(reference: object, text: str) -> None:
    assert MosesRoundTrip()(text) == reference(text)  # type: ignore[operator]


def test_ascii_text_never_imports_sacremoses() -> None:
    code = (
        "import sys\n"
        "from todeval.scoring.multiwoz._moses import MosesRoundTrip\n"
        "print(MosesRoundTrip()(\"i 'm sorry , NAME is n't open .\"))\n"
        "assert 'sacremoses' not in sys.modules, 'sacremoses was imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "i 'm sorry, NAME is n't open."
