"""A ClarQ seeker that cheats by reading: it looks its task up in the package's own data by the
id its view carries, then asks as the privileged oracle does (issue 45, point 6). In the
evaluator's process it scores S 1.000; under ``--isolate`` the package data is not there, so
it finds nothing, says so on standard error, and can only say goodbye."""

from __future__ import annotations

import sys
from typing import Any

from todeval.benchmarks.clarq import load_tasks
from todeval.benchmarks.clarq.protocol import SeekerContext, SeekerView
from todeval.benchmarks.clarq.seekers import OracleSeeker


class ReadingSeeker:
    async def start(self, context: SeekerView) -> None:
        self.oracle: OracleSeeker | None = None
        try:
            tasks = {t.task_id: t for t in load_tasks(context.lang, None)}
        except Exception as exc:  # the sandbox: no data to read
            print(f"reading seeker: no task data ({type(exc).__name__})", file=sys.stderr)
            return
        task = tasks.get(context.task_id)
        if task is None:
            return
        self.oracle = OracleSeeker()
        await self.oracle.start(SeekerContext(task, context.greeting, context.seed))

    async def respond(self, provider_message: str) -> str:
        if self.oracle is None:
            return "Thank you, goodbye."
        reply: Any = await self.oracle.respond(provider_message)
        return str(reply)
