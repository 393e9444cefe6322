"""A benchmark declared as a spec, and the one framework function that builds its run plan."""

from todeval.spec.build import BenchmarkSpec, build_plan
from todeval.spec.declare import AgentSeat, Episode, RoleSpec, RunContext, Tasks

__all__ = ["AgentSeat", "BenchmarkSpec", "Episode", "RoleSpec", "RunContext", "Tasks", "build_plan"]
