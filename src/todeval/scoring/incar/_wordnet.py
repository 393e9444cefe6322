"""WordNet 3.0 noun lemmatization (morphy), the lineage's lemmatizer, from shipped data.

The lineage lemmatized every token with NLTK's ``WordNetLemmatizer`` (noun part of speech).
This module is our own implementation of the documented morphy procedure for nouns, reading
WordNet 3.0's noun lemmas (``index.noun``, first column) and noun exception list
(``noun.exc``), shipped under ``todeval/data/incar/wordnet/`` with their licence:

1. if the word is in the exception list, the candidates are the word and its listed base
   forms;
2. otherwise the candidates are the word and the forms from one application of the noun
   detachment rules (:data:`DETACHMENT_RULES`); if none of these is a noun lemma, the rules
   are applied again to the new forms, repeatedly, until some are or no form is left;
3. candidates that are noun lemmas are kept (first occurrence order) and the shortest one is
   returned (the first among equals); a word without any is returned unchanged.

Real WordNet gives, e.g., ``does`` → ``doe``, ``has`` → ``ha``, ``as`` → ``a``, ``serves`` →
``serf``, and keeps ``gas``, ``is`` (exception list), ``angeles``, ``starbucks``.
"""

from __future__ import annotations

import gzip
from functools import cache, lru_cache
from importlib import resources

#: WordNet's noun suffix rules, in the order morphy applies them.
DETACHMENT_RULES: tuple[tuple[str, str], ...] = (
    ("s", ""),
    ("ses", "s"),
    ("ves", "f"),
    ("xes", "x"),
    ("zes", "z"),
    ("ches", "ch"),
    ("shes", "sh"),
    ("men", "man"),
    ("ies", "y"),
)


def _data(name: str) -> bytes:
    return (resources.files("todeval") / "data" / "incar" / "wordnet" / name).read_bytes()


@cache
def noun_lemmas() -> frozenset[str]:
    """WordNet 3.0 noun lemmas (multi-word lemmas keep WordNet's underscores)."""
    text = gzip.decompress(_data("noun_lemmas.txt.gz")).decode("utf-8")
    return frozenset(line.strip() for line in text.splitlines() if line.strip())


@cache
def noun_exceptions() -> dict[str, tuple[str, ...]]:
    """WordNet 3.0 noun exception list: inflected form → base forms."""
    out: dict[str, tuple[str, ...]] = {}
    for line in _data("noun.exc").decode("utf-8").splitlines():
        fields = line.split()
        if len(fields) >= 2:
            out[fields[0]] = tuple(fields[1:])
    return out


def _detach(forms: list[str]) -> list[str]:
    return [
        form[: len(form) - len(old)] + new
        for form in forms
        for old, new in DETACHMENT_RULES
        if form.endswith(old)
    ]


def _keep_lemmas(forms: list[str], lemmas: frozenset[str]) -> list[str]:
    kept: list[str] = []
    for form in forms:
        if form in lemmas and form not in kept:
            kept.append(form)
    return kept


def morphy_noun(word: str) -> list[str]:
    """The noun base forms morphy finds for ``word`` (empty when there are none)."""
    lemmas = noun_lemmas()
    exceptions = noun_exceptions()
    if word in exceptions:
        return _keep_lemmas([word, *exceptions[word]], lemmas)
    forms = _detach([word])
    found = _keep_lemmas([word, *forms], lemmas)
    while not found and forms:
        forms = _detach(forms)
        found = _keep_lemmas(forms, lemmas)
    return found


@lru_cache(maxsize=65536)
def lemmatize_noun(word: str) -> str:
    """The shortest noun base form of ``word``, or ``word`` itself when morphy finds none."""
    found = morphy_noun(word)
    return min(found, key=len) if found else word
