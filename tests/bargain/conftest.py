"""Every bargain test draws lists with an installation secret of its own session (a temporary
``TODEVAL_CACHE_DIR``), never the user's. The secret is a fixed one, so the lists (and every
figure a test checks against an interval) are the same in every session: a random secret made
the random labeller's 95% interval miss its expectation in about one session in ten."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from todeval.benchmarks.bargain.data import KEY_BYTES
from todeval.benchmarks.bargain.keys import secret_path

TEST_SECRET = hashlib.sha256(b"todeval bargain tests").hexdigest()[: 2 * KEY_BYTES]


@pytest.fixture(scope="session")
def _bargain_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bargain-cache")


@pytest.fixture(autouse=True)
def _isolated_cache(_bargain_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TODEVAL_CACHE_DIR", str(_bargain_cache))
    monkeypatch.delenv("TODEVAL_BARGAIN_CANDIDATE_KEY", raising=False)
    path = secret_path()
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(TEST_SECRET + "\n", encoding="ascii")
        path.chmod(0o600)
