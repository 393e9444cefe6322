"""Every clarq test gets its own cache directory: nothing is read from or written to ~/.cache."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("TODEVAL_CACHE_DIR", str(cache))
    return cache
