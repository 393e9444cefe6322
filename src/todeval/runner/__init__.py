"""Running episodes: plans, the run directory, resume, summaries.

Names are imported on first use, so reading a run directory (:mod:`todeval.runner.store`)
never loads the engine that writes one (:mod:`todeval.runner.execute`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from todeval.core.imports import lazy_attributes

if TYPE_CHECKING:
    from todeval.runner.execute import RunResult, execute_plan
    from todeval.runner.plan import EpisodeJob, RunPlan, config_hash
    from todeval.runner.store import RunDirectory
    from todeval.runner.summary import summarize

_WHERE = {
    "EpisodeJob": "todeval.runner.plan",
    "RunPlan": "todeval.runner.plan",
    "config_hash": "todeval.runner.plan",
    "RunResult": "todeval.runner.execute",
    "execute_plan": "todeval.runner.execute",
    "RunDirectory": "todeval.runner.store",
    "summarize": "todeval.runner.summary",
}


__getattr__ = lazy_attributes(globals(), _WHERE)


__all__ = [
    "EpisodeJob",
    "RunDirectory",
    "RunPlan",
    "RunResult",
    "config_hash",
    "execute_plan",
    "summarize",
]
