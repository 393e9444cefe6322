"""Gymnasium environments for the agent-under-test role of every benchmark (docs/gym.md).

``import todeval.gym`` registers ``todeval/<benchmark>-v0`` for every registered benchmark
(plug-ins included: their spec is all it takes), so ``gymnasium.make("todeval/booking-v0",
config={"protocol": "strict"})`` works; :func:`make` builds one directly. Needs the optional
``gymnasium`` package (``pip install 'todeval[gym]'``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium

from todeval.gym.env import AgentEnv

ENTRY_POINT = "todeval.gym.env:AgentEnv"


def env_id(benchmark: str) -> str:
    return f"todeval/{benchmark}-v0"


def register_envs() -> list[str]:
    """Register an environment id for every registered benchmark; the ids."""
    from todeval.registry import discover

    ids = []
    for name in sorted(discover().benchmarks):
        ids.append(env_id(name))
        if env_id(name) not in gymnasium.registry:
            gymnasium.register(id=env_id(name), entry_point=ENTRY_POINT, kwargs={"benchmark": name})
    return ids


def make(
    benchmark: str,
    config: Mapping[str, Any] | None = None,
    role: str | None = None,
    *,
    step_rewards: bool = False,
    control: bool = False,
) -> AgentEnv:
    """The environment of ``benchmark``'s role under test with a run ``config`` (``control``:
    a privileged policy, handed the full start context and recorded as a control)."""
    return AgentEnv(benchmark, config, role, step_rewards=step_rewards, control=control)


ENV_IDS = register_envs()

__all__ = ["ENV_IDS", "AgentEnv", "env_id", "make", "register_envs"]
