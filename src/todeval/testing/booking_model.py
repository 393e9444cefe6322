"""A scripted booking model for load and fault tests of the runner.

The replies depend only on the conversation (how many assistant turns it holds), so a run with
the ``monolithic`` system against the test server is deterministic however requests interleave
or fail. It searches, answers, and after a few turns books nothing: the point is the traffic.
"""

from __future__ import annotations

from typing import Any

from todeval.backends.scripted import Script, ScriptedReply, ScriptedToolCall


def _call(name: str, **arguments: Any) -> ScriptedReply:
    return ScriptedReply(tool_calls=[ScriptedToolCall(name=name, arguments=arguments)])


REPLIES = [
    _call("followup", message="Hello! What are you looking for, and in which part of town?"),
    _call("retrievefromhoteldb", area="north"),
    _call("followup", message="Several places in the north match. How many people, and which day?"),
    _call("retrievefromtraindb", day="friday"),
    _call("followup", message="Sorry, I could not complete that. Anything else?"),
]


def booking_script() -> Script:
    """Five scripted system actions, then follow-ups that make no progress."""
    return Script(
        replies=REPLIES,
        default=_call("followup", message="Could you repeat what you need?"),
    )
