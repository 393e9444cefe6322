"""The ``rule`` provider's meaning matcher (issue 26): a small static embedding model shipped
by the ``wordllama`` package, read offline; what it adds to the words and what it must not."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from todeval.benchmarks.clarq import load_tasks
from todeval.benchmarks.clarq._text import provider_message
from todeval.benchmarks.clarq.protocol import GOODBYES, GREETINGS, Decision, ProviderView
from todeval.benchmarks.clarq.providers import PROVIDER
from todeval.benchmarks.clarq.providers._meaning import Meaning, MeaningUnavailable, meaning
from todeval.benchmarks.clarq.providers._targeting import entry_names
from todeval.benchmarks.clarq.providers.rule import RuleProvider, WordRuleProvider
from todeval.benchmarks.clarq.seekers import task_question
from todeval.dialogue.participants import PlayerOptions


def test_vectors_are_unit_deterministic_and_close_by_meaning() -> None:
    model = meaning()
    texts = ["Which shop sells rice?", "where to buy rice", "which forest to monitor", ""]
    first, again = model.vectors(texts), model.vectors(texts)
    assert np.array_equal(first, again)
    assert np.allclose(np.linalg.norm(first[:3], axis=1), 1.0, atol=1e-5)
    assert not first[3].any()  # no tokens, no direction
    assert first[0] @ first[1] > 0.5 > first[0] @ first[2]


def test_a_missing_model_package_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(MeaningUnavailable, match="pip install wordllama") as raised:
        Meaning.load()
    assert "\n" not in str(raised.value) and raised.value.exit_code == 1


def _ask(provider: RuleProvider, task_id: str, *questions: str) -> list[list[str]]:
    """Each question asked in turn after the opening; the labels released by each."""
    task = next(t for t in load_tasks("en", "test") if t.task_id == task_id)
    tree = task.tree()
    history = [GREETINGS["en"], task_question(task), provider_message(task.opening)]
    out = []
    for question in questions:
        history.append(question)
        view = ProviderView(
            task=task,
            history=list(history),
            available=tree.available(),
            released=tree.released,
            gate_open=True,
        )
        turn = provider.decide(view)
        for label in turn.released:
            tree.release(label)
        history.append(turn.message)
        out.append(list(turn.released))
    return out


def test_meaning_releases_what_words_miss_and_only_once() -> None:
    """ "Which store sells rice?" shares only 'rice' with the ABC Supermarket node (BM25 7.9,
    under the floor); by meaning it is that node. Asked again, nothing new is released."""
    question = "Which shop sells rice?"
    assert _ask(WordRuleProvider(), "en/test/Cooking_Delicacies-0", question) == [[]]
    again = _ask(RuleProvider(), "en/test/Cooking_Delicacies-0", question, question, question)
    assert again == [["3"], [], []]


def test_meaning_passes_over_the_node_only_the_words_chose() -> None:
    """ "Which programming language ...?" meets node 1 (Church School, which teaches operating
    systems) on its words first; by meaning it asks what node 3 answers."""
    question = "Which programming language should I write the operating system in?"
    assert _ask(WordRuleProvider(), "en/test/Electronic_Engineering-0", question) == [["1"]]
    assert _ask(RuleProvider(), "en/test/Electronic_Engineering-0", question) == [["3"]]


def test_meaning_does_not_answer_a_list_or_a_generic_question() -> None:
    task_id = "en/test/Cooking_Delicacies-0"
    task = next(t for t in load_tasks("en", "test") if t.task_id == task_id)
    dump = "Which of these should I use and how: " + ", ".join(entry_names(task.background)) + "?"
    stock = ["What else do I need to know?", "Can you give me more details?", dump]
    assert _ask(RuleProvider(), task_id, *stock) == [[], [], []]


def test_rule_words_is_registered_and_needs_no_model() -> None:
    built = PROVIDER.resolve("rule-words").build(PlayerOptions(role="provider"))
    assert isinstance(built, WordRuleProvider) and built.meaning == {}
    off = PROVIDER.resolve("rule").build(
        PlayerOptions(role="provider", extra={"rule_meaning": False})
    )
    assert isinstance(off, RuleProvider) and off.meaning == {}
    assert Decision.RELEASE.value == "release"


def test_the_harder_adversaries_ask_what_the_docs_say() -> None:
    """The measured (undeclared) adversaries of docs/validation.md, as players."""
    import asyncio

    from todeval.benchmarks.clarq.controls import ADVERSARY_SEEKERS
    from todeval.benchmarks.clarq.protocol import SeekerView
    from todeval.benchmarks.clarq.seekers import SEEKER

    task = next(t for t in load_tasks("en", "test") if t.task_id == "en/test/Cooking_Delicacies-0")
    view = SeekerView(task.task_id, "en", task.background, GREETINGS["en"], seed=0)
    entries = [task.background.role, task.background.task, *task.background.items]
    asked: dict[str, list[str]] = {}
    for name, spec in ADVERSARY_SEEKERS.items():
        seeker = SEEKER.resolve(spec).build(PlayerOptions(role="seeker"))

        async def play(player: object = seeker) -> list[str]:
            await player.start(view)  # type: ignore[attr-defined]
            return [await player.respond("Jax: ...") for _ in range(11)]  # type: ignore[attr-defined]

        asked[name] = asyncio.run(play())
    assert asked["wh-cycle"][:2] == [f"Where is {entries[0]}?", f"Where is {entries[1]}?"]
    assert asked["should-cycle"][2] == f"Should I use {entries[2]}?"
    assert asked["wh-dump"][0].startswith("Which of these should I use and how: ")
    assert set(asked["missing"][:10]) == {"Which detail am I missing, and how do I handle it?"}
    assert all(questions[10] == GOODBYES["en"] for questions in asked.values()), asked
