"""Running episodes: plans, the run directory, resume, summaries."""

from todeval.runner.execute import EpisodeJob, RunPlan, RunResult, config_hash, execute_plan
from todeval.runner.store import RunDirectory
from todeval.runner.summary import summarize

__all__ = [
    "EpisodeJob",
    "RunDirectory",
    "RunPlan",
    "RunResult",
    "config_hash",
    "execute_plan",
    "summarize",
]
