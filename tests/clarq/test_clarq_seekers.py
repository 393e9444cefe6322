"""The built-in seekers: the scripted ones against the ``rule`` provider on a stratified sample
of both languages (the bench runs all 520 tasks), the LLM seeker's two prompt modes, replay of
a run directory and of a released result file, and a person at a real terminal (tmux)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from tests.clarq.helpers import REFERENCE
from tests.clarq.selfplay import HERE, episodes, messages, metric, need, run_clarq, summary
from todeval.backends.factory import make_backend
from todeval.backends.types import GenerationRequest
from todeval.benchmarks.clarq import load_tasks, read_original
from todeval.benchmarks.clarq.protocol import GREETINGS, SeekerContext, seeker_view
from todeval.benchmarks.clarq.seekers import LLMSeeker, clean_reply, oracle_question
from todeval.dialogue.prompts import PromptSet
from todeval.testing.tmux import Tmux

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ("--limit", "52")  # two tasks per task type, seeded


@pytest.fixture(scope="module")
def scripted_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("seekers")
    runs = {}
    for lang in ("en", "zh"):
        for seeker in ("oracle", "wrong", "quitter"):
            name = f"{lang}-{seeker}"
            runs[name] = run_clarq(base / name, "--lang", lang, "--seeker", seeker, *SAMPLE)
    return runs


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_scripted_seekers_against_the_rule_provider(
    scripted_runs: dict[str, Path], lang: str
) -> None:
    oracle, wrong, quitter = (scripted_runs[f"{lang}-{s}"] for s in ("oracle", "wrong", "quitter"))
    assert summary(oracle)["metrics"]["clarq.success"]["micro"]["n"] == 52
    assert metric(oracle, "clarq.success") == 1.0  # the rule provider releases every node
    assert metric(oracle, "clarq.released") == 1.0
    assert metric(wrong, "clarq.success") <= 0.05
    # fluent questions about nothing in its background (it no longer reads the tree to avoid
    # it, so a question may brush a node now and then)
    assert metric(wrong, "clarq.released") <= 0.05
    assert metric(quitter, "clarq.success") == 0.0 and metric(quitter, "clarq.aqd") < 0
    assert summary(quitter)["labels"]["clarq.end"] == {"quit": 52}
    judge = summary(wrong)["judge"]  # offline: the release record decided the leftovers
    assert judge["from_release"] >= 52 and judge["unjudged"] == 0
    for run in (oracle, wrong, quitter):
        records = episodes(run)
        assert all(r["outcome"] in ("success", "failure") for r in records)
        assert {r["group"] for r in records} == set(summary(run)["task_types"])


def test_oracle_questions_paraphrase_the_node_never_its_purpose() -> None:
    for lang in ("en", "zh"):
        for task in load_tasks(lang):
            for node in task.nodes:
                assert node.purpose is not None
                for attempt in range(3):
                    question = oracle_question(node, lang, attempt)
                    assert question.strip().endswith(("?", "？", "吗？"))
                    for piece in re.split(r"[,.;:，。；：]", node.purpose):
                        if len(piece) >= 25 and piece not in node.text:
                            assert piece not in question
    (task,) = [t for t in load_tasks("en") if t.task_id == "en/test/Gather_Resources-0"]
    assert oracle_question(task.nodes[0], "en", 0) == (
        "Is it right that if I stun the monsters, then I can enter the mine?"
    )


def _recorder(replies: list[str]) -> tuple[list[GenerationRequest], object]:
    seen: list[GenerationRequest] = []

    def reply(request: GenerationRequest) -> str:
        seen.append(request)
        return replies[len(seen) - 1]

    return seen, reply


@pytest.mark.parametrize("mode", ["completion", "chat"])
def test_llm_seeker_prompt_modes(mode: str) -> None:
    (task,) = [t for t in load_tasks("zh") if t.task_id == "zh/test/Gather_Resources-0"]
    seen, reply = _recorder(["You: 我该去哪个矿山？\nJax: 北矿山。", "再见"])
    backend = make_backend("scripted:inline", script=reply)  # type: ignore[arg-type]
    seeker = LLMSeeker(backend, PromptSet.load("todeval.benchmarks.clarq"), mode=mode)

    async def play() -> list[str]:
        usage: list[object] = []
        full = SeekerContext(task=task, greeting=GREETINGS["zh"], seed=7, usage=usage)  # type: ignore[arg-type]
        await seeker.start(seeker_view(full))
        first = await seeker.respond(GREETINGS["zh"])
        second = await seeker.respond("Jax: 你可以到矿山去挖掘红宝石。")
        assert len(usage) == 2
        return [first, second]

    assert asyncio.run(play()) == ["我该去哪个矿山？", "再见"]  # speaker tag and Jax's line cut
    last = seen[-1].messages
    if mode == "completion":
        (prompt,) = last
        assert prompt.role == "user" and prompt.content is not None
        assert prompt.content.endswith("You:") and "收集红宝石" in prompt.content
        assert (
            "Jax: 有什么可以帮助你？\nYou: 我该去哪个矿山？\nJax: 你可以到矿山去挖掘红宝石。"
            in prompt.content
        )
    else:
        assert [m.role for m in last] == ["system", "user", "assistant", "user"]
        assert last[0].content is not None and "收集红宝石" in last[0].content
        assert "空气吸收器" in last[0].content  # the items, as a list
        assert (
            last[2].content == "我该去哪个矿山？"
            and last[3].content == "Jax: 你可以到矿山去挖掘红宝石。"
        )
    assert seen[0].seed == seen[1].seed == 7


def test_clean_reply() -> None:
    assert clean_reply("  You: Which mine?  ") == "Which mine?"
    assert clean_reply("Which mine?\nJax: The north one.\nYou: ok") == "Which mine?"
    assert clean_reply("你：去哪里？") == "去哪里？"


def test_replay_of_a_run_directory_and_of_a_released_result_file(tmp_path: Path) -> None:
    ids = ["--task-ids", "Gather_Resources-0", "Escort_Mission-3"]
    original = run_clarq(tmp_path / "oracle", *ids)
    again = run_clarq(
        tmp_path / "replay", *ids, "--seeker", "replay", "--seeker-replay", str(original)
    )
    assert [messages(r) for r in episodes(again)] == [messages(r) for r in episodes(original)]
    released = run_clarq(
        tmp_path / "gpt4o", *ids, "--seeker", "replay", "--seeker-replay", str(REFERENCE)
    )
    recorded = {r.task_id: r.messages for r in read_original(REFERENCE).records}
    for record in episodes(released):
        said = messages(record)[1::2]
        assert said == recorded[record["task_id"]][1::2]  # the GPT-4o seeker's turns, in order
        assert record["outcome"] in ("success", "failure")
    manifest = json.loads((released / "manifest.json").read_text())
    assert manifest["config"]["seeker_replay_sha256"]


def test_a_person_plays_the_seeker_in_the_terminal(tmp_path: Path) -> None:
    need("tmux", shutil.which("tmux") is not None)
    out = tmp_path / "human"
    command = [sys.executable, "-m", "todeval.cli", "run", "clarq", "--seeker", "human"]
    command += ["--task-ids", "Gather_Resources-0", "--out", str(out), "--no-cache"]
    command += ["--provider", f"{HERE}:GenerousProvider"]  # the terminal is tested, not Jax
    shell = f"cd {shlex.quote(str(ROOT))} && {shlex.join(command)}; echo EXIT=$?; sleep 30"
    with Tmux(f"todeval-clarq-{os.getpid()}") as tmux:
        tmux.start(shell)
        screen = tmux.wait_for(r"^you> ")
        assert "collect rubies" in screen and "An air sucker" in screen  # the background
        assert "Jax: what can help you?" in screen
        tmux.type("How do I collect rubies?")
        tmux.wait_for(r"Jax: You can go to the mine to dig for rubies\.\n(.*\n)*you> ")
        tmux.type("How do I get into the mine?")
        tmux.wait_for(r"then you can enter the mine\.\n(.*\n)*you> ")
        tmux.type("Goodbye")
        screen = tmux.wait_for(r"EXIT=\d+")
    assert "EXIT=0" in screen, screen
    assert "in flight" not in screen  # interactive: no progress line over the dialogue
    (record,) = episodes(out)
    assert messages(record)[1::2] == [
        "How do I collect rubies?", "How do I get into the mine?", "Goodbye"
    ]  # fmt: skip
    assert record["details"]["released"] == ["1"]
    assert record["labels"]["clarq.end"] == "goodbye" and record["outcome"] == "failure"
