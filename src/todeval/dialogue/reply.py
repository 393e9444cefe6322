"""What one JSON-reply model call produced (kept apart from the chat helpers, so that a
benchmark naming the type imports no model layer)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from todeval.core.records import CallUsage


class JsonReply(BaseModel):
    """What one JSON-reply call produced: the validated object, or the format failure."""

    value: dict[str, Any] | None = None
    format_error: str | None = None
    raw: str = ""
    finish_reason: str = "stop"
    usage: CallUsage
