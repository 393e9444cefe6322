"""The fast path for the brackets outside strings (texts without backslashes) gives the same
brackets as removing the strings with the regular expression, on random texts."""

from __future__ import annotations

import random

from todeval.core import safejson


def _by_regex(text: str) -> str:
    return safejson._NOT_BRACKET.sub("", safejson._STRING.sub("", text))


def test_outer_brackets_equal_the_regex_way_on_random_texts() -> None:
    rng = random.Random(5)
    alphabet = ["[", "]", "{", "}", '"', '"', "a", ",", ":", " ", "1", "\u00e9", "\ud800", "\\"]
    for i in range(50_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        if i % 2:
            text = text.replace("\\", "")  # the fast path
        assert safejson._outer_brackets(text) == _by_regex(text), repr(text)


def test_depth_limit_is_unchanged() -> None:
    for depth, deep in ((64, False), (65, True)):
        assert safejson.depth_exceeds("[" * depth + "]" * depth) is deep
        assert safejson.depth_exceeds('{"a":' * depth + "1" + "}" * depth) is deep
        assert safejson.depth_exceeds('["' + "[" * 100 + '"]') is False  # inside a string
