"""Running episodes: plans, the run directory, resume, summaries."""

from todeval.runner.execute import RunResult, execute_plan
from todeval.runner.plan import EpisodeJob, RunPlan, config_hash
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
