"""Every bargain test draws lists with an installation secret of its own session (a temporary
``TODEVAL_CACHE_DIR``), never the user's."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def _bargain_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bargain-cache")


@pytest.fixture(autouse=True)
def _isolated_cache(_bargain_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TODEVAL_CACHE_DIR", str(_bargain_cache))
    monkeypatch.delenv("TODEVAL_BARGAIN_CANDIDATE_KEY", raising=False)
