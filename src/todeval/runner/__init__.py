"""Running episodes: plans, the run directory, resume, summaries.

Names are imported on first use, so reading a run directory (:mod:`todeval.runner.store`)
never loads the engine that writes one (:mod:`todeval.runner.execute`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'todeval.runner' has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)


__all__ = [
    "EpisodeJob",
    "RunDirectory",
    "RunPlan",
    "RunResult",
    "config_hash",
    "execute_plan",
    "summarize",
]
