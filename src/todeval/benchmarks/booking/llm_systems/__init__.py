"""The paper's LLM dialogue-system architectures for the self-play booking benchmark.

Each system implements :class:`todeval.benchmarks.booking.messages.BookingSystem` and is built
from :class:`~todeval.benchmarks.booking.messages.PlayerOptions` by its ``from_options``:

* ``monolithic`` -- one LLM holding the whole dialogue, with the seven tools;
* ``modular-prog`` -- fixed Python control flow over single-turn LLM modules (intent
  detection, slot extraction, follow-up generation);
* ``modular-llm`` -- an LLM dialogue manager that routes to the same modules through a tool;
* ``autotod`` -- an AutoTOD-style agent with SQL-like query tools and the booking tools;
* ``hd-pipeline`` -- the Hudeček & Dušek (2023) pipeline: domain detection, state tracking,
  DB search and booking from the state, response generation (few-shot examples by BM25;
  ``hd-pipeline-zeroshot`` without them);
* ``http`` -- a system behind an HTTP endpoint speaking the game master's action protocol;
* ``agent`` -- an agent of any framework behind its own chat endpoint, calling the booking
  tools over MCP (``todeval.agents``).

:data:`LLM_SYSTEMS` maps these names to ``"module:Class"`` references (imported on demand).
"""

from __future__ import annotations

_PACKAGE = "todeval.benchmarks.booking.llm_systems"

LLM_SYSTEMS: dict[str, str] = {
    "monolithic": f"{_PACKAGE}.monolithic:MonolithicSystem",
    "modular-prog": f"{_PACKAGE}.modular_prog:ModularProgSystem",
    "modular-llm": f"{_PACKAGE}.modular_llm:ModularLLMSystem",
    "autotod": f"{_PACKAGE}.autotod:AutoTODSystem",
    "hd-pipeline": f"{_PACKAGE}.hd_pipeline:HDPipelineSystem",
    "hd-pipeline-zeroshot": f"{_PACKAGE}.hd_pipeline:HDPipelineZeroShotSystem",
    "http": f"{_PACKAGE}.http_system:HttpSystem",
    "agent": f"{_PACKAGE}.agent_system:AgentSystem",
}

__all__ = ["LLM_SYSTEMS"]
