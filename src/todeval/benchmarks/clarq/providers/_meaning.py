"""Sentence meaning for the ``rule`` provider: how close a question comes to what a node answers.

Word overlap cannot tell that "Which shop sells rice?" asks what "where to buy rice" answers.
This module compares them by meaning with a small static embedding model: WordLlama's
``l2_supercat`` token vectors (32,000 tokens x 256 dimensions, MIT licence), which the
``wordllama`` package ships inside its wheel, so a plain ``pip install`` brings it and nothing is
downloaded at run time. A sentence's vector is the mean of its tokens' vectors, normalised;
closeness is the cosine. It is fast (a fraction of a millisecond per sentence on one core) and
deterministic.

The package is located, not imported: importing ``wordllama`` configures the root logger
(``logging.basicConfig``), which a library must not do to its host. Its two data files are read
with ``safetensors`` and ``tokenizers``, both its own dependencies.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from todeval.errors import TodevalError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

WEIGHTS = Path("weights", "l2_supercat_256.safetensors")
TOKENIZER = Path("tokenizers", "l2_supercat_tokenizer_config.json")
TENSOR = "embedding.weight"
MEMO = 1 << 16
"""Sentence vectors kept per process (about 1 KB each)."""


class MeaningUnavailable(TodevalError):
    """The embedding model's package is missing or incomplete (one line, says what to install)."""


def _package_dir() -> Path:
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise MeaningUnavailable(
            "the clarq rule provider needs the 'wordllama' package (pip install wordllama)"
        )
    return Path(next(iter(spec.submodule_search_locations)))


class Meaning:
    """Normalised mean-of-token sentence vectors over a static embedding table."""

    def __init__(self, table: npt.NDArray[np.float32], tokenizer: Tokenizer) -> None:
        self._table = table
        self._tokenizer = tokenizer
        self._memo: dict[str, npt.NDArray[np.float32]] = {}

    @classmethod
    def load(cls) -> Meaning:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        root = _package_dir()
        weights, vocab = root / WEIGHTS, root / TOKENIZER
        for path in (weights, vocab):
            if not path.is_file():
                raise MeaningUnavailable(
                    f"the wordllama package has no {path.relative_to(root)} "
                    "(reinstall it: pip install --force-reinstall wordllama)"
                )
        table = load_file(str(weights))[TENSOR].astype(np.float32)
        return cls(table, Tokenizer.from_file(str(vocab)))

    def vectors(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One unit vector per text (a zero vector for a text with no tokens). Vectors are
        memoised per text (at most :data:`MEMO` of them): a provider compares the same earlier
        questions at every decision."""
        new = [text for text in dict.fromkeys(texts) if text not in self._memo]
        if new:
            if len(self._memo) + len(new) > MEMO:
                self._memo.clear()
            encodings = self._tokenizer.encode_batch(new, add_special_tokens=False)
            for text, encoding in zip(new, encodings, strict=True):
                self._memo[text] = self._vector(encoding.ids)
        return np.stack([self._memo[text] for text in texts]) if texts else self._empty()

    def _vector(self, token_ids: Sequence[int]) -> npt.NDArray[np.float32]:
        out = np.zeros(self._table.shape[1], dtype=np.float32)
        ids = np.clip(np.asarray(token_ids, dtype=np.int64), 0, self._table.shape[0] - 1)
        if ids.size:
            mean = self._table[ids].mean(axis=0)
            norm = float(np.linalg.norm(mean))
            if norm > 0:
                out = (mean / norm).astype(np.float32)
        out.setflags(write=False)
        return out

    def _empty(self) -> npt.NDArray[np.float32]:
        return np.zeros((0, self._table.shape[1]), dtype=np.float32)


@cache
def meaning() -> Meaning:
    """The model, read once per process (its files never change)."""
    return Meaning.load()


__all__ = ["Meaning", "MeaningUnavailable", "meaning"]
