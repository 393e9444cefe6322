"""Text normalization for In-Car (KVRET) scoring: lower-casing, tokenization, lemmatization.

The lineage (Sequicity → LABES → GALAXY) tokenized with NLTK's ``word_tokenize`` (Punkt sentence
splitting plus Penn-Treebank word rules) and lemmatized every token with WordNet's noun
lemmatizer. NLTK's tokenizer data cannot be installed offline, so the tokenizer is our own
rules; the lemmatizer reads real WordNet 3.0 data. On KVRET test and dev the result equals the
lineage's preprocessed gold field by field (``tests/scoring/test_incar_lineage.py``):

* :func:`tokenize` applies Treebank-style rules: punctuation is split off, clitics become their
  own tokens (``don't`` → ``do n't``, ``chu's`` → ``chu 's``), a period is split off a word that
  is followed by a space unless the word is a known abbreviation, an initial or a number inside
  the text (a dotted word such as ``p.f.`` does lose it: ``p.f . chang``); ``home..`` becomes
  ``home ..`` and runs of three or more periods stay one token. Placeholders such as
  ``[value_time]`` are kept whole.
* :func:`lemmatize_token` is WordNet 3.0's noun morphy (:mod:`._wordnet`, from shipped WordNet
  data), as the lineage's lemmatizer: ``meetings`` → ``meeting``, and also ``does`` → ``doe``,
  ``has`` → ``ha``, ``as`` → ``a``; ``gas``, ``is``, ``angeles`` are kept.

Every function here is idempotent on its own output, so gold text exported by ``todeval data
incar --export`` is unchanged when it is scored as a prediction.
"""

from __future__ import annotations

import re

from todeval.scoring.incar._wordnet import lemmatize_noun

#: Placeholder tokens (``[value_time]``, ``[value_poi_type]``) are never split or lemmatized.
PLACEHOLDER = re.compile(r"\[[a-z0-9_]+\]")

_AM_PM = re.compile(r"(\d+) ([ap]m)")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words ending in a period that do not end a sentence (Punkt would treat them as abbreviations).
_ABBREVIATIONS = _words(
    "dr st mr mrs ms jr sr vs etc inc ltd co corp ave blvd rd ln ct pl hwy mt ft apt no jan "
    "feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat "
    "sun approx min max a.m p.m e.g i.e "
)

_CLITICS = re.compile(r"(?<=[^' ])('s|'m|'d|'ll|'re|'ve|n't|')(?= )")
_SPLIT_WORDS = re.compile(r"(?<= )(?:(can)(not)|(gon|wan)(na)|(got)(ta))(?= )")


def join_am_pm(text: str) -> str:
    """``7 pm`` → ``7pm`` (the lineage's time normalization, applied before matching)."""
    return _AM_PM.sub(r"\1\2", text)


def _split_sentence_periods(words: list[str]) -> list[str]:
    """Split the period off words that end a sentence (our stand-in for Punkt + Treebank)."""
    out: list[str] = []
    last = len(words) - 1
    for i, word in enumerate(words):
        double = re.fullmatch(r"(.*[^.])\.\.", word)
        if double is not None:  # the lineage keeps a double period as one token: ``home ..``
            out.extend((double.group(1), ".."))
            continue
        m = re.fullmatch(r"(.*[^.])\.", word)
        if m is None:
            out.append(word)
            continue
        body = m.group(1)
        if i < last and (
            body in _ABBREVIATIONS
            or re.fullmatch(r"[a-z]", body) is not None
            or re.fullmatch(r"\d+", body) is not None
        ):
            out.append(word)
            continue
        out.append(body)
        out.append(".")
    return out


def _tokenize_plain(text: str) -> list[str]:
    """Treebank-style tokenization of text that contains no placeholder."""
    text = re.sub(r'^"', " `` ", text)
    text = re.sub(r'(?<=[ (\[{<])"', " `` ", text)
    text = text.replace('"', " '' ")
    text = re.sub(r"\.{3,}", r" \g<0> ", text)  # the lineage keeps ``....`` as one token
    text = re.sub(r"[;@#$%&?!]", r" \g<0> ", text)
    text = re.sub(r"[\]\[(){}<>]", r" \g<0> ", text)
    text = text.replace("--", " -- ")
    text = re.sub(r"[:,](?!\d)", r" \g<0> ", text)
    text = " " + text + " "
    text = _CLITICS.sub(r" \1", text)
    text = _SPLIT_WORDS.sub(lambda m: " ".join(g for g in m.groups() if g is not None), text)
    return text.split()


def tokenize(text: str) -> list[str]:
    """Split lower-cased text into tokens; placeholders stay whole."""
    tokens: list[str] = []
    pos = 0
    for m in PLACEHOLDER.finditer(text):
        tokens.extend(_tokenize_plain(text[pos : m.start()]))
        tokens.append(m.group(0))
        pos = m.end()
    tokens.extend(_tokenize_plain(text[pos:]))
    return _split_sentence_periods(tokens)


def lemmatize_token(token: str) -> str:
    """WordNet 3.0 noun lemma (morphy, the lineage's lemmatizer); placeholders are kept."""
    if PLACEHOLDER.fullmatch(token):
        return token
    return lemmatize_noun(token)


def normalize(text: str, *, am_pm: bool = True) -> str:
    """Lower-case, join ``7 pm`` (unless ``am_pm`` is false), tokenize and lemmatize.

    Tokens are joined by single spaces. The lineage does not join ``7 pm`` in entity values
    (``481 amaranta ave`` stays, while the same words in a reply become ``481amaranta ave``).
    """
    lowered = text.lower()
    tokens = tokenize(join_am_pm(lowered) if am_pm else lowered)
    return " ".join(t if PLACEHOLDER.fullmatch(t) else lemmatize_token(t) for t in tokens)
