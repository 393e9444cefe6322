"""Controls and ``todeval validate``: every benchmark proves it cannot be won without the skill.

A benchmark declares its controls (:class:`Control`) in a :class:`ControlSuite` and registers it
from its own folder (:meth:`todeval.registry.Registry.controls`); nothing here names a
benchmark. A control is a player (or a prediction file) whose score is known in advance:

* a **floor** control has no skill -- does nothing, dumps every word it was given, echoes,
  copies the prompt's example, answers at random -- and must score *low*;
* a **ceiling** control has the answer (an oracle, the gold) and must score *high*: it shows
  the benchmark can be won at all.

A benchmark also declares *families* of skill-less agents with parameters
(:class:`AdversaryFamily`); ``validate`` searches each within a budget of episodes and fails
when the best agent it finds scores above the family's floor band (:mod:`.search`).

``todeval validate NAME`` plays every control of the suite (offline, seeded; each run
concurrent over its episodes), prints one table (control, headline with its 95% CI, band,
PASS/FAIL), writes the results as JSON with ``-o`` and exits 4 (refused) when a control falls
outside its band (:mod:`todeval.validation.command`).
"""

from todeval.validation.controls import (
    Control,
    ControlJob,
    ControlResult,
    ControlSuite,
    ValidationReport,
)
from todeval.validation.search import AdversaryFamily, AdversaryJob, AdversaryResult

__all__ = [
    "AdversaryFamily",
    "AdversaryJob",
    "AdversaryResult",
    "Control",
    "ControlJob",
    "ControlResult",
    "ControlSuite",
    "ValidationReport",
]
