"""The seeker's information boundary (issue 26): a seeker reading everything it is handed finds
no node text and no purpose; only the privileged oracle is handed the task."""

from __future__ import annotations

from pathlib import Path

import pytest

from todeval.benchmarks.clarq import load_tasks
from todeval.benchmarks.clarq.protocol import GOODBYES, SeekerContext, SeekerView
from todeval.cli import main
from todeval.testing.snoop import Snooper, leaks

IDS = ["Gather_Resources-0", "Escort_Mission-3", "Gather_Resources-7"]


class SnoopingSeeker(Snooper):
    """Reads everything, asks about the task twice, then says goodbye."""

    async def start(self, context: object) -> None:
        await super().start(context)
        self.turn = 0

    async def respond(self, observation: str) -> str:
        self.saw(observation)
        self.turn += 1
        view = self.snooped.context
        lang = getattr(view, "lang", "en")
        if self.turn > 2:
            return GOODBYES[lang]
        return "How do I complete my task?" if lang == "en" else "我该怎么完成任务？"


class PrivilegedSnoop(SnoopingSeeker):
    privileged = True


def _secrets(lang: str) -> list[str]:
    """Node texts and purposes of the played tasks (that the background does not hold)."""
    out = []
    for task in load_tasks(lang, "test"):  # type: ignore[arg-type]
        if task.task_id.split("/")[-1] not in IDS:
            continue
        b = task.background
        told = " ".join([b.role, b.task, *b.items, *b.skills, *b.scenes]).lower()
        for node in task.nodes:
            for secret in (node.text, node.purpose or ""):
                if len(secret) >= 12 and secret.lower() not in told:
                    out.append(secret)
    return out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_seeker_is_handed_no_node_text_or_purpose(lang: str, tmp_path: Path) -> None:
    SnoopingSeeker.journal = []
    argv = ["run", "clarq", "--lang", lang, "--seeker", f"{__name__}:SnoopingSeeker",
            "--task-ids", *IDS, "--out", str(tmp_path / "run"), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    journal = [s for s in SnoopingSeeker.journal if s.context is not None]
    assert len(journal) == len(IDS)
    assert all(isinstance(s.context, SeekerView) for s in journal)
    secrets = _secrets(lang)
    assert len(secrets) > 20
    assert leaks([s.everything() for s in journal], secrets) == []


def test_the_privileged_oracle_is_handed_the_task(tmp_path: Path) -> None:
    PrivilegedSnoop.journal = []
    argv = ["run", "clarq", "--seeker", f"{__name__}:PrivilegedSnoop", "--task-ids", *IDS,
            "--out", str(tmp_path / "run"), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    journal = [s for s in PrivilegedSnoop.journal if s.context is not None]
    assert journal and all(isinstance(s.context, SeekerContext) for s in journal)
    assert leaks([s.everything() for s in journal], _secrets("en"))  # the tree is there
