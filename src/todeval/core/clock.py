"""Wall-clock timestamps written to run directories (one format everywhere)."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> str:
    """The current time as ISO 8601 UTC with millisecond precision."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")
