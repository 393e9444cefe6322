"""sacremoses' English tokenize + detokenize round trip, fast and import-free for ASCII text.

The standard evaluator normalises every response with sacremoses (``MosesTokenizer(lang="en")
.tokenize`` then ``MosesDetokenizer(lang="en").detokenize``, default options). Importing
sacremoses costs about half a second (it loads joblib, numpy and tqdm and compiles regular
expressions over large Unicode character sets), more than normalising a whole prediction file.
MultiWOZ responses are ASCII, and on ASCII text every Unicode character set of those rules
reduces to its ASCII part (letters, digits, ``$``), so :func:`ascii_round_trip` applies the
same rules, in the same order, with small ASCII sets and literal replacements, and never
imports sacremoses. Text with any non-ASCII character goes to sacremoses itself
(:class:`MosesRoundTrip` decides per text), so results are identical for every input; the
tests compare both on every response of the six published prediction files and on random
strings made of the characters these rules treat specially.

The English non-breaking prefixes (``Mr.``, ``etc.``, ...) are sacremoses' own list, read
from its data module without importing the package; where that module does not exist (another
sacremoses layout) the list comes from ``sacremoses.corpus`` instead.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_SPACES = re.compile(r"\s+")
_JUNK = re.compile(r"[\000-\037]")
# Pad every character that is not alphanumeric, whitespace or one of . ' ` , -
_PAD_NOT_ALNUM = re.compile(r"([^0-9A-Za-z\s.'`,\-])")
# The same padding as a translation table over ASCII (one regex match and template expansion
# per padded character cost more): built from the pattern itself, so the two cannot differ.
_PAD_TABLE = {c: f" {chr(c)} " for c in range(128) if _PAD_NOT_ALNUM.fullmatch(chr(c))}
_MULTIDOT_RUN = re.compile(r"\.{2,}")
_MULTIDOT_MARKER = re.compile(r"(?:DOT)+MULTI")
_COMMA_AFTER_NON_DIGIT = re.compile(r"([^0-9])[,]")
_COMMA_BEFORE_NON_DIGIT = re.compile(r"[,]([^0-9])")
_COMMA_AFTER_DIGIT_AT_END = re.compile(r"([0-9])[,]$")
_APOSTROPHE_RULES = (
    (re.compile(r"([^A-Za-z])[']([^A-Za-z])"), r"\1 ' \2"),
    (re.compile(r"([^A-Za-z0-9])[']([A-Za-z])"), r"\1 ' \2"),
    (re.compile(r"([A-Za-z])[']([^A-Za-z])"), r"\1 ' \2"),
    (re.compile(r"([A-Za-z])[']([A-Za-z])"), r"\1 '\2"),
    (re.compile(r"([0-9])[']([s])"), r"\1 '\2"),
)
_TRAILING_DOT_APOSTROPHE = re.compile(r"\.' ?$")
_ESCAPES = (
    ("&", "&amp;"), ("|", "&#124;"), ("<", "&lt;"), (">", "&gt;"), ("'", "&apos;"),
    ('"', "&quot;"), ("[", "&#91;"), ("]", "&#93;"),
)  # fmt: skip
_UNESCAPES = (
    ("&bar;", "|"), ("&#124;", "|"), ("&lt;", "<"), ("&gt;", ">"), ("&bra;", "["),
    ("&ket;", "]"), ("&quot;", '"'), ("&apos;", "'"), ("&#91;", "["), ("&#93;", "]"),
    ("&amp;", "&"),
)  # fmt: skip
_MANY_SPACES = re.compile(r" {2,}")

_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_ALPHA = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ") | _LOWER
_DIGITS = frozenset("0123456789")
_CURRENCY_OR_OPENING = frozenset("$([{")
_PUNCTUATION = frozenset(",.?!:;\\%}])")
_QUOTES = frozenset("'\"`")


@dataclass(frozen=True)
class Prefixes:
    """sacremoses' English non-breaking prefixes, split as its tokenizer uses them."""

    kept: frozenset[str]
    """Prefixes that never take a split-off period (listed, and not numeric-only)."""
    numeric_only: frozenset[str]
    """Prefixes that keep their period only before a number (``No. 5``)."""

    @classmethod
    def from_words(cls, words: list[str]) -> Prefixes:
        listed = [w.strip() for w in words]
        numeric = frozenset(
            w.rpartition(" ")[0] for w in listed if re.search(r"\s#NUMERIC_ONLY#", w)
        )
        return cls(kept=frozenset(listed) - numeric, numeric_only=numeric)


def _sacremoses_data_module() -> Path | None:
    spec = importlib.util.find_spec("sacremoses")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        path = Path(location) / "_data_nonbreaking_prefixes.py"
        if path.is_file():
            return path
    return None


def english_prefixes() -> Prefixes:
    """The English non-breaking prefixes of the installed sacremoses."""
    path = _sacremoses_data_module()
    if path is not None:
        spec = importlib.util.spec_from_file_location("_todeval_moses_prefixes", path)
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            data = getattr(module, "NONBREAKING_PREFIXES", {}).get("nonbreaking_prefix.en")
            if isinstance(data, str):
                lines = (line.strip() for line in data.splitlines())
                return Prefixes.from_words([w for w in lines if w and not w.startswith("#")])
    from sacremoses.corpus import NonbreakingPrefixes

    return Prefixes.from_words(list(NonbreakingPrefixes().words("en")))


def _split_prefix_periods(text: str, prefixes: Prefixes) -> str:
    """Detach the final period of tokens that do not end in a non-breaking prefix."""
    tokens = text.split()
    last = len(tokens) - 1
    for i, token in enumerate(tokens):
        if len(token) < 2 or token[-1] != ".":
            continue
        prefix = token[:-1]
        if (
            ("." in prefix and not _ALPHA.isdisjoint(prefix))
            or prefix in prefixes.kept
            or (i != last and tokens[i + 1][0] in _LOWER)
        ):
            continue
        if prefix in prefixes.numeric_only and i < last and tokens[i + 1][0] in _DIGITS:
            continue
        tokens[i] = prefix + " ."
    return " ".join(tokens)


def _tokenize(text: str, prefixes: Prefixes) -> list[str]:
    """``MosesTokenizer(lang="en").tokenize(text)`` for ASCII ``text`` (escaped tokens)."""
    if text.isprintable():  # no control characters: only spaces to collapse
        text = " ".join(text.split())
    else:
        text = _JUNK.sub("", _SPACES.sub(" ", text)).strip()
    text = text.translate(_PAD_TABLE)  # = _PAD_NOT_ALNUM.sub(r" \1 ", text) on ASCII text
    if ".." in text:
        end = len(text)
        text = _MULTIDOT_RUN.sub(
            lambda m: (
                " " + "DOT" * (m.end() - m.start()) + "MULTI" + (" " if m.end() < end else "")
            ),
            text,
        )
    if "," in text:
        text = _COMMA_AFTER_NON_DIGIT.sub(r"\1 , ", text)
        text = _COMMA_BEFORE_NON_DIGIT.sub(r" , \1", text)
        text = _COMMA_AFTER_DIGIT_AT_END.sub(r"\1 , ", text)
    if "'" in text:
        for pattern, replacement in _APOSTROPHE_RULES:
            text = pattern.sub(replacement, text)
    if "." in text:
        text = _split_prefix_periods(text, prefixes)
    text = " ".join(text.split())
    if ".'" in text:
        text = _TRAILING_DOT_APOSTROPHE.sub(" . ' ", text)
    if "MULTI" in text:
        text = _MULTIDOT_MARKER.sub(lambda m: "." * ((m.end() - m.start() - 5) // 3), text)
    for char, entity in _ESCAPES:
        if char in text:
            text = text.replace(char, entity)
    return text.split()


def _detokenize(tokens: list[str]) -> str:
    """``MosesDetokenizer(lang="en").detokenize(tokens)`` for ASCII tokens."""
    text = f" {' '.join(tokens)} "
    if "@-@" in text:
        text = text.replace(" @-@ ", "-")
    if "&" in text:
        for entity, char in _UNESCAPES:
            text = text.replace(entity, char)
    quotes: dict[str, int] = {}
    out: list[str] = []
    space = " "
    words = text.split()
    for i, token in enumerate(words):
        chars = set(token)
        if chars <= _CURRENCY_OR_OPENING:  # right shift
            out.append(space + token)
            space = ""
        elif chars <= _PUNCTUATION:  # left shift
            out.append(token)
            space = " "
        elif i > 0 and len(token) > 1 and token[0] == "'" and token[1] in _ALPHA:
            out.append(token)  # English contraction: left shift
            space = " "
        elif chars <= _QUOTES:
            count = quotes.get(token, 0)
            if count % 2 == 0:
                if token == "'" and i > 0 and words[i - 1].endswith("s"):
                    out.append(token)  # possessive: left shift
                    space = " "
                    quotes[token] = count
                else:
                    out.append(space + token)
                    space = ""
                    quotes[token] = count + 1
            else:
                out.append(token)
                space = " "
                quotes[token] = count + 1
        else:
            out.append(space + token)
            space = " "
    detokenized = "".join(out)
    if "  " in detokenized:
        detokenized = _MANY_SPACES.sub(" ", detokenized)
    return detokenized.strip()


def ascii_round_trip(text: str, prefixes: Prefixes) -> str:
    """Tokenize + detokenize of ASCII ``text``, as sacremoses does it in English."""
    return _detokenize(_tokenize(text, prefixes))


def sacremoses_round_trip() -> Callable[[str], str]:
    """sacremoses' own English tokenize + detokenize (imports sacremoses).

    The tokenizer subclass caches two character sets that sacremoses rebuilds from long
    strings on every call (same results, much faster).
    """
    from sacremoses import MosesDetokenizer, MosesTokenizer

    class _Tokenizer(MosesTokenizer):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__(lang="en")
            self._lower = frozenset(self.IsLower)
            self._alpha = frozenset(self.IsAlpha)

        def islower(self, text: str) -> bool:
            return set(text) <= self._lower

        def isanyalpha(self, text: str) -> bool:
            return not self._alpha.isdisjoint(text)

    tokenizer = _Tokenizer()
    detokenizer = MosesDetokenizer(lang="en")

    def round_trip(text: str) -> str:
        return str(detokenizer.detokenize(tokenizer.tokenize(text)))

    return round_trip


class MosesRoundTrip:
    """The English Moses round trip: the ASCII rules for ASCII text, sacremoses otherwise."""

    def __init__(self) -> None:
        self._prefixes = english_prefixes()
        self._general: Callable[[str], str] | None = None

    def __call__(self, text: str) -> str:
        if text.isascii():
            return _detokenize(_tokenize(text, self._prefixes))
        if self._general is None:
            self._general = sacremoses_round_trip()
        return self._general(text)
