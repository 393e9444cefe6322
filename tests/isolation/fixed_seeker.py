"""A seeker with a fixed script (five questions, then goodbye): the same work in-process and
isolated, so ``bench/bench_isolation.py`` measures what the sandbox costs."""

from __future__ import annotations

from todeval.benchmarks.clarq.protocol import SeekerView


class FixedSeeker:
    async def start(self, context: SeekerView) -> None:
        self.entries = [*context.background.items, *context.background.skills] or ["it"]
        self.turn = 0

    async def respond(self, provider_message: str) -> str:
        self.turn += 1
        if self.turn > 5:
            return "Thank you, goodbye."
        return f"How do I use the {self.entries[self.turn % len(self.entries)]}?"
