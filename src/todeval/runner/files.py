"""Small helpers for files that go into a run's config."""

from __future__ import annotations

import hashlib
from pathlib import Path

from todeval.errors import BadInputError


def models_file_digest(path: str | None) -> str | None:
    """A short hash of a models file, recorded in the config so a resume notices edits."""
    if path is None:
        return None
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read the models file ({exc.strerror})") from None
