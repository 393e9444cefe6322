"""A benchmark declared as a spec, and the one framework function that builds its run plan."""

from todeval.spec.build import BenchmarkSpec, build_plan, close_scoring_context, scoring_context
from todeval.spec.declare import AgentSeat, Episode, Rescore, Rescored, RoleSpec, RunContext, Tasks

__all__ = [
    "AgentSeat",
    "BenchmarkSpec",
    "Episode",
    "Rescore",
    "Rescored",
    "RoleSpec",
    "RunContext",
    "Tasks",
    "build_plan",
    "close_scoring_context",
    "scoring_context",
]
