"""The corpus user: replays MultiWOZ user turns; refuses task sets without dialogues."""

from __future__ import annotations

import asyncio
import random

import pytest

from todeval.benchmarks.booking.messages import UserContext, UserSimulator
from todeval.benchmarks.booking.tasks import load_tasks
from todeval.benchmarks.booking.users import CorpusUser, EndReason
from todeval.errors import UsageError


def test_replays_user_turns_in_order_then_done() -> None:
    task = load_tasks("test")[1]
    expected = [t.text for t in task.corpus_turns if t.speaker == "user"]
    assert len(expected) >= 3
    user = CorpusUser()
    assert isinstance(user, UserSimulator)

    async def main() -> list[str]:
        await user.start(UserContext(task=task, rng=random.Random(0), seed=0))
        said = [(await user.respond(None)).text]
        for i in range(len(expected)):
            said.append((await user.respond(f"whatever the system says {i}")).text)
        return said

    said = asyncio.run(main())
    assert said == [*expected, "done"]
    assert user.end_reason == EndReason.CORPUS_REPLAYED and not user.gave_up


@pytest.mark.parametrize("task_set", ["synthetic", "unrealistic"])
def test_task_sets_without_dialogues_are_refused(task_set: str) -> None:
    message = (
        f"the corpus user needs MultiWOZ dialogues; task set {task_set} has none (use test or dev)"
    )
    with pytest.raises(UsageError) as info:
        CorpusUser.check_selection(task_set)
    assert info.value.message == message
    task = load_tasks(task_set)[0]
    with pytest.raises(UsageError) as info:
        asyncio.run(CorpusUser().start(UserContext(task=task, rng=random.Random(0), seed=0)))
    assert info.value.message == message


def test_check_selection_accepts_test_and_dev_and_rejects_unknown() -> None:
    CorpusUser.check_selection("test")
    CorpusUser.check_selection("dev")
    with pytest.raises(UsageError):
        CorpusUser.check_selection("nonsense")


def test_every_corpus_task_has_user_turns() -> None:
    for task_set in ("test", "dev"):
        for task in load_tasks(task_set):
            assert any(t.speaker == "user" and t.text.strip() for t in task.corpus_turns)
