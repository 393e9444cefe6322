"""Issue 41, item 2: a turn that only confirms the seeker's own plan ("... Is that correct?")
asks about the task as a whole -- the original provider's type 1 -- not about a detail: it
releases nothing, and with nothing left to release it is not "enough" either. A confirmation
that brings a held-back node's own words (a guess at the answer) is still a question about it."""

from __future__ import annotations

import pytest

from todeval.benchmarks.clarq import load_tasks
from todeval.benchmarks.clarq._text import provider_message
from todeval.benchmarks.clarq.protocol import GREETINGS, Decision, ProviderView, SeekerKind
from todeval.benchmarks.clarq.providers.rule import RuleProvider, WordRuleProvider
from todeval.benchmarks.clarq.seekers import task_question

EN = "en/test/Gather_Resources-0"
ZH = "zh/test/Alliance_Building-0"
PROVIDERS = [RuleProvider(), WordRuleProvider()]


def _view(task_id: str, question: str, released: tuple[str, ...] = ()) -> ProviderView:
    lang = task_id[:2]
    task = next(t for t in load_tasks(lang, "test") if t.task_id == task_id)  # type: ignore[arg-type]
    tree = task.tree()
    for label in released:
        tree.release(label)
    history = [GREETINGS[task.lang], task_question(task), provider_message(task.opening)]
    return ProviderView(
        task=task,
        history=[*history, question],
        available=tree.available(),
        released=list(tree.released),
        gate_open=True,
    )


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    ("task_id", "question"),
    [
        (EN, "So I will go to the mine to dig for rubies. Is that correct?"),
        (EN, "Just to confirm, I will go to the North Mine and dig with the excavator, right?"),
        (ZH, "我会去黑市找马尔扎哈，把信件找回来，对吗？"),
        # a guess among what it was told is no question either ("Is my token the jade one?" is)
        (ZH, "我的使者信物是白玉令牌，对吗？"),
    ],
)
def test_a_confirmation_of_the_plan_releases_nothing(
    provider: RuleProvider, task_id: str, question: str
) -> None:
    turn = provider.decide(_view(task_id, question))
    assert turn.decision is Decision.NO_RELEASE and turn.kind is SeekerKind.WHOLE_TASK


@pytest.mark.parametrize("provider", PROVIDERS)
def test_with_nothing_left_a_confirmation_is_not_enough(provider: RuleProvider) -> None:
    everything = ("1", "1.1", "1.1.1", "2", "3")
    view = _view(
        EN, "So I go to the North Mine and stun the monsters first. Is that correct?", everything
    )
    assert view.available == []
    assert provider.decide(view).decision is Decision.NO_RELEASE
    # a detail question there is still told it has enough
    asked = _view(EN, "Where can I sell the rubies afterwards?", everything)
    assert provider.decide(asked).decision is Decision.ENOUGH


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    ("task_id", "question", "label"),
    [
        (EN, "Just to be sure: the rubies are buried deep underground, correct?", "3"),
        (ZH, "我要把信交给国王的秘书，他会安排我见国王，对吗？", "2"),
    ],
)
def test_a_confirmation_with_a_held_back_nodes_words_still_asks_about_it(
    provider: RuleProvider, task_id: str, question: str, label: str
) -> None:
    assert provider.decide(_view(task_id, question)).released == [label]


def test_the_rule_can_be_turned_off() -> None:
    question = "So I will go to the mine to dig for rubies. Is that correct?"
    turn = RuleProvider(confirm_plan=False).decide(_view(EN, question))
    assert turn.kind is not SeekerKind.WHOLE_TASK
