"""Hand-made ClarQ transcripts and result files for the tests."""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from todeval.benchmarks.clarq import ClarqTask, ClarqTranscript, JudgeAnswer, JudgeQuestion
from todeval.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
REFERENCE = FIXTURES / "l2l_GPT-4o_seeker_vs_GPT-4o_provider.Comp.En.json.gz"
RECORDED_CACHE = FIXTURES / "judge_cache.json.gz"
GREETING = "Jax: what can help you?"


def dialogue(
    first: str, answers: Sequence[str], *, seeker: Sequence[str] | None = None
) -> list[str]:
    """Greeting, then seeker/provider pairs: the first answer, then ``answers`` (the
    predictions), then a final seeker goodbye. ``seeker`` replaces the seeker's turns."""
    n_seeker = len(answers) + 2
    said = list(seeker) if seeker is not None else [f"question {i} ok" for i in range(n_seeker)]
    assert len(said) == n_seeker, "one seeker turn per provider answer, plus the goodbye"
    messages = [GREETING]
    for utterance, answer in zip(said, [first, *answers], strict=False):
        messages += [utterance, answer]
    messages.append(said[-1])
    return messages


def record(
    gold: Sequence[str],
    answers: Sequence[str] | None,
    *,
    purposes: Sequence[str] | None = None,
    task_type: str = "T",
    task_id: str = "en/test/T-0",
    seeker: Sequence[str] | None = None,
) -> ClarqTranscript:
    """A transcript whose first answer is gold[0] and whose predictions are ``answers``."""
    return ClarqTranscript(
        task_id=task_id,
        task_type=task_type,
        depth=1,
        gold=list(gold),
        purposes=list(purposes) if purposes is not None else [f"purpose {g}" for g in gold[1:]],
        messages=None if answers is None else dialogue(gold[0], answers, seeker=seeker),
    )


class FakeJudge:
    """Answers questions from a list, in order; records the questions asked."""

    def __init__(self, answers: Sequence[bool | str | None]) -> None:
        self.answers = list(answers)
        self.questions: list[JudgeQuestion] = []

    async def __call__(self, question: JudgeQuestion) -> JudgeAnswer:
        self.questions.append(question)
        answer = self.answers[len(self.questions) - 1]
        if answer == "unjudged":
            return JudgeAnswer(key="k", origin="unjudged")
        assert not isinstance(answer, str)
        return JudgeAnswer(key="k", match=answer, origin="judge")


def result_entry(task: ClarqTask, dialogues: Sequence[list[str]]) -> dict[str, Any]:
    """A task in the released result format."""
    return {
        "all_response": "\n".join(task.gold_messages()),
        "background_splitted": [task.background.role, task.background.task, "", "", ""],
        "all_response_exaplain": task.purposes,
        "l2l": [list(d) for d in dialogues] or [[], []],
        "gold_structure": [n.label for n in task.nodes],
    }


def write_result_file(path: Path, types: Sequence[Sequence[dict[str, Any]]]) -> Path:
    data = json.dumps([list(t) for t in types], ensure_ascii=False).encode("utf-8")
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err
