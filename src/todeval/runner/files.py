"""Small helpers for files that go into a run's config."""

from __future__ import annotations

import hashlib
from pathlib import Path

from todeval.core.userfiles import read_user_bytes


def models_file_digest(path: str | None) -> str | None:
    """A short hash of a models file, recorded in the config so a resume notices edits."""
    if path is None:
        return None
    return hashlib.sha256(read_user_bytes(Path(path), what="models file")).hexdigest()[:16]
