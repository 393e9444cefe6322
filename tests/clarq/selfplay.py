"""Stand-in players and run helpers for the self-play tests (``tests.clarq.selfplay:Class``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from todeval.benchmarks.clarq.protocol import (
    GOODBYES,
    Decision,
    ProviderTurn,
    ProviderView,
    SeekerView,
)
from todeval.benchmarks.clarq.seekers import task_question
from todeval.cli import main

CI = os.environ.get("CI") == "true"
HERE = "tests.clarq.selfplay"


def need(what: str, available: bool) -> None:
    """Skip without an optional part, except under CI=true, where it must be there."""
    if not available:
        if CI:
            pytest.fail(f"{what} is missing but CI=true requires it")
        pytest.skip(f"{what} not available")


def run_clarq(out: Path, *argv: str) -> Path:
    """``todeval run clarq ... --out OUT --quiet --no-cache`` in process (exit 0 asserted)."""
    code = main(["run", "clarq", "--quiet", "--no-cache", "--out", str(out), *argv])
    assert code == 0, argv
    return out


def episodes(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]


def summary(run: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run / "summary.json").read_text())
    return data


def metric(run: Path, name: str) -> float:
    value = summary(run)["metrics"][name]["micro"]["value"]
    assert isinstance(value, float)
    return value


def messages(record: dict[str, Any]) -> list[str]:
    kinds = ("provider_message", "seeker_message")
    return [e["data"]["text"] for e in record["events"] if e["kind"] in kinds]


class GenerousProvider:
    """Passes the gate, then releases the first available node for every message; "enough"
    once nothing is left."""

    async def respond(self, view: ProviderView) -> ProviderTurn:
        if not view.gate_open:
            return ProviderTurn(decision=Decision.GATE_PASS, message=view.task.opening)
        if not view.available:
            return ProviderTurn(decision=Decision.ENOUGH, message="You have enough.")
        node = view.available[0]
        return ProviderTurn(decision=Decision.RELEASE, message=node.text, released=[node.label])


class CheatingProvider(GenerousProvider):
    """Releases a label the tree does not have: breaks the protocol."""

    async def respond(self, view: ProviderView) -> ProviderTurn:
        if not view.gate_open:
            return await super().respond(view)
        return ProviderTurn(decision=Decision.RELEASE, message="x", released=["9.9"])


class CrashingProvider(GenerousProvider):
    async def respond(self, view: ProviderView) -> ProviderTurn:
        if view.gate_open:
            raise RuntimeError("the provider fell over")
        return await super().respond(view)


class ThankingSeeker:
    """Asks about the task, then thanks Jax for ever (never a goodbye: the message cap)."""

    async def start(self, context: SeekerView) -> None:
        self.task = context  # the view: background and language, never the tree
        self.turn = 0

    async def respond(self, provider_message: str) -> str:
        self.turn += 1
        return task_question(self.task) if self.turn == 1 else "Thank you, what else?"


class LowercaseGoodbyeSeeker(ThankingSeeker):
    """Asks about the task, then says ``goodbye`` (lower case): an end only under strict."""

    async def respond(self, provider_message: str) -> str:
        self.turn += 1
        return task_question(self.task) if self.turn == 1 else "Thanks, goodbye"


class UntilEnoughSeeker(ThankingSeeker):
    """Keeps asking until told there is nothing left, then says goodbye: under ``strict`` it is
    never told, so it runs into the message cap."""

    async def respond(self, provider_message: str) -> str:
        self.turn += 1
        if "enough" in provider_message:
            return GOODBYES[self.task.lang]
        return task_question(self.task) if self.turn == 1 else "And what else?"


class CrashingSeeker(ThankingSeeker):
    async def respond(self, provider_message: str) -> str:
        raise RuntimeError("the seeker fell over")
