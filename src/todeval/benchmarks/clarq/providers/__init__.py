"""The provider role ("Jax"): the agent holding a task's response tree, and its built-ins.

A provider (:class:`~todeval.benchmarks.clarq.protocol.Provider`) answers every seeker message
with a :class:`~todeval.benchmarks.clarq.protocol.ProviderTurn` -- a decision (gate pass,
apology, release, no release, enough), the message, the released labels -- and never touches
the tree: the game master checks and applies the release.

Built-ins (``--provider NAME``; any ``package.module:Class`` works too):

* ``rule`` -- offline and deterministic: lexical matching (BM25 over node texts and purposes,
  character bigrams for Chinese) in the original's flow, and in English a small static
  embedding model for what words miss (:mod:`.rule`, :mod:`._meaning`); an approximation the
  provider audit measures;
* ``rule-words`` -- ``rule`` on words alone (no embedding model);
* ``llm`` -- the original's flow with our own prompts over a model (``--provider-model``):
  gate, six-way classification, passes A/B/C, verbatim release (:mod:`.llm`);
* ``llm-multi`` -- as ``llm``, but pass A releases every answerable node in one turn, joined
  deterministically.

Canned texts and the joining of several released responses: :mod:`._replies`.
"""

from __future__ import annotations

from todeval.benchmarks.clarq.protocol import Provider
from todeval.benchmarks.clarq.providers._lexical import tokenize
from todeval.benchmarks.clarq.providers._replies import (
    CANNED,
    CannedReplies,
    canned,
    join_released,
    release_message,
    released_message,
)
from todeval.benchmarks.clarq.providers._targeting import entry_names
from todeval.dialogue.participants import Role
from todeval.dialogue.views import same_view

PROVIDERS: dict[str, str] = {
    "rule": f"{__name__}.rule:RuleProvider",
    "rule-words": f"{__name__}.rule:WordRuleProvider",
    "llm": f"{__name__}.llm:LLMProvider",
    "llm-multi": f"{__name__}.llm:LLMMultiProvider",
}
"""Built-in providers by name (imported when chosen)."""

MODEL_PROVIDERS = frozenset({"llm", "llm-multi"})
"""Built-ins that need ``--provider-model``."""

PROVIDER: Role[Provider] = Role("provider", "provider", Provider, PROVIDERS, view=same_view)
"""The provider role: ``PROVIDER.resolve(name).build(options)``."""

__all__ = [
    "CANNED",
    "MODEL_PROVIDERS",
    "PROVIDER",
    "PROVIDERS",
    "CannedReplies",
    "canned",
    "entry_names",
    "join_released",
    "release_message",
    "released_message",
    "tokenize",
]
