"""Targeted questions in a person's own words release the node they target (issue 26): the
hand-written fixture ``fixtures/natural_questions.json``, each question asked right after the
opening, against the ``rule`` provider. At least 80% per language."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.benchmarks.clarq import load_tasks
from todeval.benchmarks.clarq._text import provider_message
from todeval.benchmarks.clarq.protocol import GREETINGS, ProviderView
from todeval.benchmarks.clarq.providers.rule import RuleProvider
from todeval.benchmarks.clarq.seekers import task_question

FIXTURE = Path(__file__).parent / "fixtures" / "natural_questions.json"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_natural_questions_release_their_node(lang: str) -> None:
    rows = json.loads(FIXTURE.read_text(encoding="utf-8"))[lang]
    tasks = {t.task_id: t for t in load_tasks(lang, "test")}
    provider = RuleProvider()
    hits = 0
    for task_id, label, question in rows:
        task = tasks[task_id]
        node = task.node(label)
        assert node.text.lower() not in question.lower()  # the person's own words
        history = [GREETINGS[lang], task_question(task), provider_message(task.opening), question]
        view = ProviderView(
            task=task,
            history=history,
            available=task.tree().available(),
            released=[],
            gate_open=True,
        )
        hits += provider.decide(view).released == [label]
    assert len(rows) >= 19
    assert hits / len(rows) >= 0.8, (hits, len(rows))
