"""Checking a model's reply against the run's JSON schema.

A reply is accepted when its text is one JSON object that validates against the schema, either
bare or as the only content of a Markdown code fence (```` ```json ... ``` ````), which chat
models often add when the schema is not enforced. Anything else is a *format failure*: the
check returns a one-line reason and the caller keeps the raw text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from todeval.core import safejson

_FENCE = re.compile(r"^```[A-Za-z0-9_-]*[ \t]*\n?(.*?)\n?[ \t]*```$", re.DOTALL)
_MAX_REASON = 200


@dataclass(frozen=True)
class CheckedReply:
    """The parsed object when the reply is valid, else ``None`` and the reason."""

    value: dict[str, Any] | None
    error: str | None = None


def _where(path: list[Any]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path) or "reply"


class ReplyChecker:
    """Validates reply texts against one JSON schema (thread-safe, reusable)."""

    def __init__(self, schema: dict[str, Any]) -> None:
        Draft202012Validator.check_schema(schema)
        self.schema = schema
        self._validator = Draft202012Validator(schema)

    def check(self, text: str) -> CheckedReply:
        """Parse and validate ``text``; never raises for any input."""
        body = text.strip()
        if not body:
            return CheckedReply(None, "empty reply")
        fenced = _FENCE.match(body)
        if fenced:
            body = fenced.group(1).strip()
        try:
            value = safejson.loads(body)
        except safejson.JsonDepthError as exc:
            return CheckedReply(None, f"not accepted: JSON {exc}")
        except json.JSONDecodeError as exc:
            return CheckedReply(None, f"not JSON ({exc.msg}, at character {exc.pos})")
        if not isinstance(value, dict):
            return CheckedReply(None, f"not a JSON object but {type(value).__name__}")
        error = best_match(self._validator.iter_errors(value))
        if error is not None:
            reason = f"schema: {_where(list(error.absolute_path))}: {error.message}"
            return CheckedReply(None, " ".join(reason.split())[:_MAX_REASON])
        return CheckedReply(value)
