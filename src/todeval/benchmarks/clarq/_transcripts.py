"""The typed transcript record the scorer consumes, whatever file it came from.

The scorer's core (:func:`todeval.benchmarks.clarq.score_transcripts`) takes a list of
:class:`ClarqTranscript`; readers turn files into it: the original result format
(:mod:`._original`) and run directories of our own self-play (:mod:`.rundir`).
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class ClarqTranscript(BaseModel):
    """One dialogue on one task (or the absence of one), with the gold it is scored against."""

    task_id: str = Field(description="<lang>/<split>/<type>-<index>")
    task_type: str = Field(description="the task type: per-type figures, bootstrap cluster")
    depth: int | None = Field(None, description="depth of the task's response tree")
    trial: int = Field(0, description="0, 1, ... when a task has several dialogues")
    gold: list[str] = Field(description="provider responses 0..n (a 'Jax: ' prefix is optional)")
    purposes: list[str] = Field(
        default_factory=list, description="purposes of responses 1..n (none on dev)"
    )
    messages: list[str] | None = Field(
        description="the provider's greeting, then seeker and provider alternating; None: no "
        "dialogue for this task (scores 0 on every metric)"
    )
    released: list[int] | None = Field(
        None,
        description="positions (1..n) in gold of the responses the provider released, as a "
        "self-play game master recorded them; None: not known (released result files)",
    )

    @property
    def missing(self) -> bool:
        return self.messages is None


def provider_answers(messages: list[str]) -> list[str]:
    """The predictions: provider messages after the first answer.

    ``messages[0]`` is the greeting; in ``messages[1:]`` seeker turns have even index k and
    provider turns odd k; k = 1 (the first answer, response 0 when the gate passed) is left out.
    """
    return [m for k, m in enumerate(messages[1:]) if k % 2 == 1 and k != 1]


def seeker_utterances(messages: list[str]) -> list[str]:
    """The seeker's turns, whitespace-stripped (AQL counts them, the goodbye included)."""
    return [m.strip() for k, m in enumerate(messages[1:]) if k % 2 == 0]


__all__ = ["ClarqTranscript", "provider_answers", "seeker_utterances"]
