"""A scripted model playing every ClarQ role at once, for end-to-end tests and the bench.

One model answers the LLM seeker, the ``llm`` provider and the judge, each by the text of its
own prompt, so a run against the test server is deterministic however requests interleave:

* the seeker (completion mode: by how many ``You:`` lines its prompt holds; chat mode: by its
  position) greets, asks ``questions`` detail questions, asks "Is there anything else?" and
  says "Goodbye!";
* the provider passes the gate, classifies "anything else" as vague (a canned reply: something
  left for the judge) and every other question as answerable, and pass A says yes (the first
  available node is released);
* the judge says no.
"""

from __future__ import annotations

import json
from typing import Any

from todeval.backends.scripted import Script

GREETING = "Hello Jax, how do I complete my task?"
QUESTION = "Which place should I go to first?"
VAGUE = "Is there anything else?"
GOODBYE = "Goodbye!"
_CUE = "Write your next message to Jax"  # the end of the seeker's completion prompt


def _verdict(**fields: Any) -> str:
    return json.dumps({"analysis": "scripted", **fields})


def seeker_turns(questions: int = 1) -> list[str]:
    """What the scripted seeker says, in order."""
    return [GREETING, *[QUESTION] * questions, VAGUE, GOODBYE]


def clarq_script(questions: int = 1) -> Script:
    """The script (seeker turns as :func:`seeker_turns`)."""
    turns = seeker_turns(questions)
    seeker = [
        {"match": rf"(\nYou: .*){{{n}}}{_CUE}", "reply": turns[n]}
        for n in range(len(turns) - 1, 0, -1)
    ]
    return Script.model_validate(
        {
            "rules": [
                *seeker,
                {"match": _CUE, "reply": f"You: {turns[0]}"},  # the speaker tag is stripped
                {"match": "asking about the task or for help", "reply": _verdict(related=True)},
                {
                    "match": r"anything else\?\n\nThe information you are still holding back",
                    "reply": _verdict(type=6),
                },
                {"match": "Which one of these types", "reply": _verdict(type=2)},
                {
                    "match": "Does this piece answer at least part",
                    "reply": _verdict(answerable=True),
                },
                {"match": "Required information:", "reply": _verdict(match=False)},
            ],
            "replies": turns,  # chat mode: the n-th seeker turn (the rules see Jax's message)
        }
    )


__all__ = ["GOODBYE", "GREETING", "QUESTION", "VAGUE", "clarq_script", "seeker_turns"]
