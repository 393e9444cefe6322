"""Text rules of the ClarQ-LLM protocol: language detection, the provider prefix, punctuation.

These are the small string operations the original evaluator applies before it compares
anything; each is kept byte-for-byte compatible so re-scored transcripts agree with the paper.
"""

from __future__ import annotations

import re
from typing import Literal

Language = Literal["en", "zh"]
LANGUAGES: tuple[Language, ...] = ("en", "zh")
LANGUAGE_DIRS: dict[Language, str] = {"en": "English", "zh": "Chinese"}

PROVIDER_NAME = "Jax"
PROVIDER_PREFIX = "Jax: "
"""What every provider message starts with when emitted (the task files do not always have it)."""

SENTENCE_END = "，。？！,.?!"
"""Trailing characters removed before substring matching (and ensured in judge inputs)."""

_CJK = re.compile("[\u4e00-\u9fa5]")


def detect_language(text: str) -> Language:
    """English if ASCII letters outnumber CJK ideographs (U+4E00-U+9FA5); a tie is Chinese.

    This is the original evaluator's rule, applied to content, not to a run's language flag.
    """
    cjk = len(_CJK.findall(text))
    ascii_letters = sum(1 for ch in text if ch.isascii() and ch.isalpha())
    return "en" if ascii_letters > cjk else "zh"


def strip_provider_prefix(text: str) -> str:
    """Drop a leading case-insensitive ``jax:`` (ASCII colon), then surrounding whitespace.

    As in the original, the prefix is looked for before stripping: ``" Jax: x"`` keeps it.
    """
    if text.lower().startswith("jax:"):
        return text[4:].strip()
    return text.strip()


def provider_message(text: str) -> str:
    """A provider utterance as emitted: ``"Jax: " + text`` (the text without any prefix)."""
    return PROVIDER_PREFIX + strip_provider_prefix(text)


def strip_sentence_end(text: str) -> str:
    """``text.rstrip('，。？！,.?!')``: the cleaning step before substring matching."""
    return text.rstrip(SENTENCE_END)


def with_sentence_end(text: str, language: Language) -> str:
    """Ensure a final sentence mark: ``.`` (English) or ``。`` (Chinese); empty text stays empty."""
    if not text or text[-1] in SENTENCE_END:
        return text
    return text + ("。" if language == "zh" else ".")


def utterance_length(text: str, language: Language) -> int:
    """AQL's length unit: the number of ``' '`` characters (English) or of characters (Chinese)."""
    return text.count(" ") if language == "en" else len(text)


__all__ = [
    "LANGUAGES",
    "LANGUAGE_DIRS",
    "PROVIDER_NAME",
    "PROVIDER_PREFIX",
    "SENTENCE_END",
    "Language",
    "detect_language",
    "provider_message",
    "strip_provider_prefix",
    "strip_sentence_end",
    "utterance_length",
    "with_sentence_end",
]
