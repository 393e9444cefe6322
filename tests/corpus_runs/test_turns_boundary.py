"""The turn runs' information boundary (issue 26): the model generating system turn i is sent
the dialogue up to turn i -- never the reference response of turn i, nor any later turn."""

from __future__ import annotations

from todeval.benchmarks.incar_turns.corpus import load_dialogues as incar_dialogues
from todeval.benchmarks.incar_turns.prompts import messages as incar_messages
from todeval.benchmarks.multiwoz_turns.corpus import load_dialogues as multiwoz_dialogues
from todeval.benchmarks.multiwoz_turns.prompts import messages as multiwoz_messages
from todeval.scoring.incar import load_gold
from todeval.testing.snoop import leaks


def _unseen(future: list[str], past: list[str]) -> list[str]:
    """Future texts distinctive enough to look for (long, and not said before)."""
    said = "\n".join(past).lower()
    return [t for t in future if len(t) >= 25 and t.lower() not in said]


def test_multiwoz_turns_hand_the_model_no_reference_or_later_turn() -> None:
    checked = 0
    for dialogue in multiwoz_dialogues()[:60]:
        for i in range(dialogue.n_turns):
            sent = multiwoz_messages(dialogue, i)
            past = [*dialogue.users[: i + 1], *dialogue.systems[:i]]
            future = [*dialogue.systems[i:], *dialogue.users[i + 1 :]]
            secrets = _unseen(future, past)
            assert leaks([sent], secrets) == [], (dialogue.dialogue_id, i)
            checked += len(secrets)
    assert checked > 500


def test_incar_turns_hand_the_model_no_reference_or_later_turn() -> None:
    checked = 0
    for dialogue in incar_dialogues("test", load_gold("test"))[:60]:
        turns = dialogue.turns
        for i in range(len(turns)):
            sent = incar_messages(dialogue, i)
            past = [u for t in turns[: i + 1] for u in t.users] + [t.response for t in turns[:i]]
            future = [t.response for t in turns[i:]] + [u for t in turns[i + 1 :] for u in t.users]
            secrets = _unseen(future, past)
            assert leaks([sent], secrets) == [], (dialogue.dialogue_id, i)
            checked += len(secrets)
    assert checked > 200
