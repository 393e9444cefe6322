"""The providers: canned replies and joining, the rule provider's decisions on hand-made views,
the llm / llm-multi flow against scripted models (and once over real HTTP), the role."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from todeval.backends.factory import make_backend
from todeval.backends.scripted import Script, ScriptedReply
from todeval.backends.types import Backend, GenerationRequest
from todeval.benchmarks.clarq import load_tasks
from todeval.benchmarks.clarq._tasks import Background, ClarqTask, ResponseNode
from todeval.benchmarks.clarq._text import Language
from todeval.benchmarks.clarq.protocol import (
    GREETINGS,
    Decision,
    Provider,
    ProviderTurn,
    ProviderView,
    SeekerKind,
)
from todeval.benchmarks.clarq.providers import CANNED, PROVIDER, join_released
from todeval.benchmarks.clarq.providers._lexical import stem, tokenize
from todeval.benchmarks.clarq.providers.llm import (
    LLMMultiProvider,
    LLMProvider,
    ProviderReplyError,
    mentions_multiple,
    multiple_options,
    provider_templates,
)
from todeval.benchmarks.clarq.providers.rule import RuleProvider, Utterance
from todeval.benchmarks.clarq.seekers import oracle_question
from todeval.dialogue.episode import EpisodeEnd, Termination, guarded
from todeval.dialogue.participants import PlayerOptions
from todeval.dialogue.prompts import PromptSet
from todeval.errors import UsageError
from todeval.testing.openai_server import ServerConfig
from todeval.testing.server_process import ServerProcess

# -- hand-made tasks --------------------------------------------------------------------

MINE_PURPOSE = (
    "There are two mines and the previous response did not say which one has rubies. Note: "
    "Use this response only if the other party has noticed that there are multiple mines and "
    "is unsure which one to go to."
)


def en_task() -> ClarqTask:
    return ClarqTask(
        task_id="en/test/Gather_Resources-99",
        lang="en",
        split="test",
        type_number=1,
        type_name="Gather_Resources",
        index=99,
        background=Background(
            role="adventurer",
            task="collect rubies",
            items=["An air sucker"],
            skills=["Summon the excavator to dig", "Summon the small shovel to dig"],
            scenes=["West Mine (guarded by monsters)", "North Mine (guarded by monsters)"],
        ),
        opening="You can go to the mine to dig for rubies.",
        nodes=[
            ResponseNode(
                label="1",
                position=1,
                text="If you stun the monsters, then you can enter the mine.",
                purpose="Jax did not explain how to get past the monsters guarding the mine.",
            ),
            ResponseNode(
                label="1.1",
                position=2,
                text="You can stun the monsters with fog collected from the Fantasy Forest.",
                purpose="Jax did not explain how to stun the monsters.",
            ),
            ResponseNode(
                label="2",
                position=3,
                text="You should go to the North Mine, as only the North Mine has rubies.",
                purpose=MINE_PURPOSE,
            ),
        ],
    )


def zh_task() -> ClarqTask:
    return ClarqTask(
        task_id="zh/test/Gather_Resources-99",
        lang="zh",
        split="test",
        type_number=1,
        type_name="Gather_Resources",
        index=99,
        background=Background(
            role="冒险者",
            task="收集红宝石",
            items=["一个吸气器"],
            skills=["召唤挖掘机挖掘"],
            scenes=["西部矿山（有怪物把守）", "北部矿山（有怪物把守）"],
        ),
        opening="你可以到矿山去挖掘红宝石。",
        nodes=[
            ResponseNode(
                label="1",
                position=1,
                text="如果你把怪物迷晕，就可以进入矿山。",
                purpose="Jax没有说明如何进入有怪物把守的矿山。",
            ),
            ResponseNode(
                label="2",
                position=2,
                text="你应该去北部矿山，只有北部矿山有红宝石。",
                purpose="游戏场景中存在多个矿山，之前的回复没有说明去哪个矿山挖红宝石。",
            ),
        ],
    )


def view_of(
    task: ClarqTask,
    question: str,
    *,
    released: Sequence[str] = (),
    gate_open: bool = True,
    history: Sequence[str] | None = None,
) -> ProviderView:
    tree = task.tree(released)
    if history is None:
        history = [GREETINGS[task.lang], "How do I do my task?", f"Jax: {task.opening}"]
        for node in tree.released:
            history += ["Tell me more.", f"Jax: {node.text}"]
        history = [*history, question] if gate_open else [GREETINGS[task.lang], question]
    return ProviderView(
        task=task,
        history=list(history),
        available=tree.available(),
        released=tree.released,
        gate_open=gate_open,
    )


def decide(task: ClarqTask, question: str, **kwargs: Any) -> ProviderTurn:
    return RuleProvider().decide(view_of(task, question, **kwargs))


# -- canned replies and joining ---------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_canned_replies_reveal_nothing_and_the_redirect_names_the_goodbye(lang: Language) -> None:
    replies = CANNED[lang]
    assert ("Goodbye" if lang == "en" else "再见") in replies.unrelated
    texts = replies.model_dump().values()
    assert len(set(texts)) == len(texts)  # every situation has its own wording
    task = en_task() if lang == "en" else zh_task()
    for text in texts:
        assert not text.startswith("Jax")
        assert all(node.text not in text for node in task.nodes)
    assert replies.for_kind(SeekerKind.ANSWERABLE) == replies.unanswerable


def test_join_released_uses_connectives_up_to_four_and_lines_from_five() -> None:
    texts = [f"The fact number {i} holds." for i in range(1, 6)]
    assert join_released(texts[:1], "en") == texts[0]
    two = join_released(texts[:2], "en")
    assert two == "The fact number 1 holds. Also, the fact number 2 holds."
    four = join_released(texts[:4], "en")
    assert four.startswith("The fact number 1 holds. Also, ")
    assert " Finally, the fact number 4 holds." in four
    for text in texts[:4]:
        assert text.lower() in four.lower()  # the scorer compares English without case
    assert join_released(texts, "en") == "\n".join(texts)
    zh = join_released(["甲在北方。", "乙在南方。", "丙在西方。"], "zh")
    assert zh == "甲在北方。另外，乙在南方。最后，丙在西方。"
    assert join_released(["Henry is here.", "Lily is there."], "en").endswith(
        "Also, Lily is there."
    )
    with pytest.raises(ValueError):
        join_released([], "en")


# -- the lexical layer ------------------------------------------------------------------


def test_light_stemming_meets_inflected_forms() -> None:
    assert stem("mines") == stem("mine")
    assert stem("stunning") == stem("stun") == stem("stunned")
    assert stem("trading") == stem("trade") == stem("traded")
    assert stem("batteries") == stem("battery")
    assert tokenize("Which mine should I go to?", "en") == ["min"]


def test_chinese_is_character_bigrams_and_ascii_words() -> None:
    assert tokenize("收集红宝石", "zh") == ["收集", "集红", "红宝", "宝石"]
    assert tokenize("用24V电源", "zh") == ["用", "电源", "24v"]
    assert tokenize("的了", "zh") == []  # two stop characters make no bigram


def test_utterance_reading_finds_detail_questions_and_catch_alls() -> None:
    u = Utterance.read(
        "Thanks, Jax. I will go to the mine. Which mine has rubies? Is there anything else?",
        "en",
    )
    assert u.detail == ["Which mine has rubies?"]
    assert u.vague and not u.goodbye
    assert Utterance.read("Could you tell me how to stun the monsters", "en").detail
    assert not Utterance.read("1. I go to the mine.\n2. I dig.", "en").detail
    assert Utterance.read("Is it true that garlic is not sold in any other stores?", "en").detail
    assert Utterance.read("我应该去哪个矿山？还有什么需要注意的吗？", "zh").detail == [
        "我应该去哪个矿山？"
    ]
    assert Utterance.read("ok, goodbye then", "en").goodbye


# -- the rule provider ------------------------------------------------------------------


def test_rule_gate_passes_a_question_about_the_task_and_apologises_otherwise() -> None:
    task = en_task()
    passed = decide(task, "Hello Jax. How do I collect rubies?", gate_open=False)
    assert passed.decision is Decision.GATE_PASS
    assert passed.message == f"Jax: {task.opening}"
    assert decide(task, "Hi, can you help me?", gate_open=False).decision is Decision.GATE_PASS
    sorry = decide(task, "What's the weather like today?", gate_open=False)
    assert sorry.decision is Decision.APOLOGY
    assert sorry.message == "Jax: " + CANNED["en"].apology
    assert sorry.released == []


def test_rule_releases_the_asked_node_verbatim() -> None:
    task = en_task()
    turn = decide(task, "Which mine should I go to, the West Mine or the North Mine?")
    assert turn.decision is Decision.RELEASE
    assert turn.released == ["2"]
    assert turn.message == "Jax: " + task.node("2").text
    assert turn.kind is SeekerKind.ANSWERABLE
    turn = decide(task, "How can I enter the mine if monsters guard it?")
    assert turn.released == ["1"]
    # a child is available only once its parent was released
    child = decide(task, "How do I stun the monsters?", released=["1"])
    assert child.released == ["1.1"]


def test_rule_tries_nodes_in_label_order_and_releases_the_first_that_passes() -> None:
    task = en_task()
    turn = decide(
        task,
        "How do I get past the monsters guarding the mine, and which mine has the rubies, "
        "the North Mine or the West Mine?",
    )
    assert turn.released == ["1"]


def test_rule_releases_nothing_for_unrelated_vague_and_plan_turns() -> None:
    task = en_task()
    unrelated = decide(task, "Do you know any good songs to sing around a campfire?")
    assert unrelated.decision is Decision.NO_RELEASE
    assert unrelated.kind is SeekerKind.UNRELATED
    assert "Goodbye" in unrelated.message
    assert decide(task, "goodbye").kind is SeekerKind.UNRELATED
    vague = decide(task, "Thanks! Is there anything else I should know about the mine?")
    assert (vague.decision, vague.kind) == (Decision.NO_RELEASE, SeekerKind.VAGUE)
    plan = decide(task, "Great, so I will go to the mine and dig for rubies.")
    assert (plan.decision, plan.kind) == (Decision.NO_RELEASE, SeekerKind.WHOLE_TASK)
    detail = decide(task, "What colour is the excavator?")
    assert (detail.decision, detail.kind) == (Decision.NO_RELEASE, SeekerKind.UNANSWERABLE)


def test_rule_does_not_release_on_a_word_the_seeker_was_never_told() -> None:
    # "fog" and "Fantasy Forest" occur only in node 1.1, never in what the seeker knows
    task = en_task()
    turn = decide(task, "Where can I find fog in the Fantasy Forest?", released=["2"])
    assert turn.decision is Decision.NO_RELEASE


def test_rule_says_a_released_node_was_answered_and_enough_when_nothing_is_left() -> None:
    task = en_task()
    repeat = decide(task, "Which mine has the rubies again, the North Mine?", released=["1", "2"])
    assert (repeat.decision, repeat.kind) == (Decision.NO_RELEASE, SeekerKind.REPEAT)
    done = decide(task, "Which mine has the rubies?", released=["1", "1.1", "2"])
    assert done.decision is Decision.ENOUGH
    assert done.message == "Jax: " + CANNED["en"].enough
    # nothing left, but no detail question: no "enough" (the original gives it to types 2/3)
    plan = decide(
        task, "So I will stun them and dig in the North Mine.", released=["1", "1.1", "2"]
    )
    assert plan.decision is Decision.NO_RELEASE


def test_rule_in_chinese_matches_character_bigrams() -> None:
    task = zh_task()
    gate = decide(task, "你好，我要怎么收集红宝石？", gate_open=False)
    assert gate.decision is Decision.GATE_PASS
    which = decide(task, "我应该去哪个矿山，西部矿山还是北部矿山？")
    assert (which.decision, which.released) == (Decision.RELEASE, ["2"])
    enter = decide(task, "矿山有怪物把守，我要怎么进去？")
    assert enter.released == ["1"]
    chat = decide(task, "你最喜欢什么季节？")
    assert (chat.decision, chat.kind) == (Decision.NO_RELEASE, SeekerKind.UNRELATED)
    assert "再见" in chat.message
    assert decide(task, "北部矿山在哪里？", released=["1", "2"]).decision is Decision.ENOUGH


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_rule_releases_every_node_the_oracle_asks_for_on_every_test_task(lang: Language) -> None:
    provider = RuleProvider()
    for task in load_tasks(lang, "test"):
        tree = task.tree()
        for _ in range(len(task.nodes)):
            node = tree.available()[0]
            history = [GREETINGS[lang], "?", f"Jax: {task.opening}"]
            question = oracle_question(node, lang, 0)
            view = ProviderView(
                task=task,
                history=[*history, question],
                available=tree.available(),
                released=tree.released,
                gate_open=True,
            )
            turn = provider.decide(view)
            assert turn.released == [node.label], (task.task_id, node.label, turn.note)
            tree.release(node.label)


def test_rule_is_deterministic_and_offline() -> None:
    task = en_task()
    view = view_of(task, "Which mine has rubies?")
    first = asyncio.run(RuleProvider().respond(view))
    assert first == asyncio.run(RuleProvider().respond(view))
    assert view.usage == []


# -- the llm providers against scripted models ------------------------------------------

STEP_MARKERS = {
    "gate": "asking about the task or for help",
    "classify": "Which one of these types",
    "repeat": "may ask again about something",
    "pass_a_multiple": "This piece settles which of several",
    "pass_a": "Does this piece answer at least part",
    "pass_b": "Looking at it again",
    "pass_c_multiple": "noticed there are several possible options",
    "pass_c": "rest on a wrong assumption",
    "retry": "could not be read",
}


def step_of(request: GenerationRequest, markers: dict[str, str] = STEP_MARKERS) -> str:
    text = request.messages[-1].content or ""
    for step, marker in markers.items():
        if marker in text:
            return step
    raise AssertionError(f"unknown prompt: {text[:80]}")


def node_of(request: GenerationRequest, task: ClarqTask) -> str | None:
    """The node a pass is about (the one quoted as the piece of information)."""
    text = request.messages[0].content or ""
    if "word for word" not in text and "一字不差" not in text:  # not a pass
        return None
    for node in task.nodes:
        if f"Jax: {node.text}" in text:
            return node.label
    return None


class Model:
    """A scripted model: ``answers(step, node) -> dict | str``; records (step, node) calls."""

    def __init__(
        self,
        task: ClarqTask,
        answers: Callable[[str, str | None], Any],
        markers: dict[str, str] = STEP_MARKERS,
    ) -> None:
        self.task = task
        self.answers = answers
        self.markers = markers
        self.calls: list[tuple[str, str | None]] = []
        self.requests: list[GenerationRequest] = []

    def __call__(self, request: GenerationRequest) -> ScriptedReply:
        node = node_of(request, self.task)
        if len(request.messages) > 1:  # a retry: the step is the first message's
            step = step_of(GenerationRequest(messages=request.messages[:1]), self.markers)
        else:
            step = step_of(request, self.markers)
        self.calls.append((step, node))
        self.requests.append(request)
        value = self.answers(step, node)
        return ScriptedReply(text=value if isinstance(value, str) else json.dumps(value))

    def backend(self) -> Backend:
        return make_backend("scripted:inline", script=self)


def answering(
    *,
    related: bool = True,
    kind: int = 2,
    repeat: bool = True,
    passing: dict[str, set[str]] | None = None,
) -> Callable[[str, str | None], dict[str, Any]]:
    passes = passing or {}

    def answer(step: str, node: str | None) -> dict[str, Any]:
        if step == "gate":
            return {"analysis": "a", "related": related}
        if step == "classify":
            return {"analysis": "a", "type": kind}
        if step == "repeat":
            return {"analysis": "a", "repeat": repeat}
        key = "corrects" if step == "pass_c" else "answerable"
        return {"analysis": f"{step} on {node}", key: node in passes.get(step, set())}

    return answer


def run_llm(provider_cls: type[LLMProvider], model: Model, view: ProviderView) -> ProviderTurn:
    return asyncio.run(provider_cls(model.backend()).respond(view))


def test_llm_gate_releases_response_0_or_apologises() -> None:
    task = en_task()
    model = Model(task, answering(related=True))
    turn = run_llm(LLMProvider, model, view_of(task, "How do I collect rubies?", gate_open=False))
    assert (turn.decision, turn.message) == (Decision.GATE_PASS, f"Jax: {task.opening}")
    assert model.calls == [("gate", None)]
    model = Model(task, answering(related=False))
    turn = run_llm(LLMProvider, model, view_of(task, "Nice weather!", gate_open=False))
    assert turn.decision is Decision.APOLOGY
    assert turn.message == "Jax: " + CANNED["en"].apology


def test_llm_pass_a_releases_the_first_answerable_node_in_label_order() -> None:
    task = en_task()
    model = Model(task, answering(kind=2, passing={"pass_a_multiple": {"2"}}))
    view = view_of(task, "Which mine?")
    turn = run_llm(LLMProvider, model, view)
    assert turn.decision is Decision.RELEASE
    assert turn.released == ["2"]
    assert turn.message == "Jax: " + task.node("2").text
    # node 2's purpose names "multiple mines": pass A asks whether the seeker noticed them
    assert model.calls == [("classify", None), ("pass_a", "1"), ("pass_a_multiple", "2")]
    multiple_prompt = model.requests[2].messages[0].content or ""
    assert "which of several mines" in multiple_prompt
    assert len(view.usage) == 3 and {u.role for u in view.usage} == {"provider"}


def test_llm_type_3_also_gets_the_passes_and_b_follows_a_then_c() -> None:
    task = en_task()
    model = Model(task, answering(kind=3, passing={"pass_b": {"2"}}))
    turn = run_llm(LLMProvider, model, view_of(task, "Which mine?"))
    assert turn.released == ["2"]
    assert model.calls == [
        ("classify", None),
        ("pass_a", "1"),
        ("pass_a_multiple", "2"),
        ("pass_b", "1"),
        ("pass_b", "2"),
    ]
    # pass B sees the node's pass-A analysis
    assert "pass_a on 1" in (model.requests[3].messages[0].content or "")
    model = Model(task, answering(kind=2, passing={"pass_c": {"1"}}))
    turn = run_llm(LLMProvider, model, view_of(task, "Which mine?"))
    assert turn.released == ["1"]
    assert model.calls[-1] == ("pass_c", "1")
    model = Model(task, answering(kind=2, passing={"pass_c_multiple": {"2"}}))
    turn = run_llm(LLMProvider, model, view_of(task, "Which mine?"))
    assert turn.released == ["2"]
    assert model.calls[-2:] == [("pass_c", "1"), ("pass_c_multiple", "2")]


def test_llm_no_pass_is_answered_as_type_3_after_three_passes() -> None:
    task = en_task()
    model = Model(task, answering(kind=2))
    turn = run_llm(LLMProvider, model, view_of(task, "Which mine?"))
    assert (turn.decision, turn.kind) == (Decision.NO_RELEASE, SeekerKind.UNANSWERABLE)
    assert turn.message == "Jax: " + CANNED["en"].unanswerable
    assert len(model.calls) == 1 + 3 * 2  # classify, then 3 passes over 2 available nodes


def test_llm_enough_only_for_types_2_and_3_when_nothing_is_left() -> None:
    task = en_task()
    done = ["1", "1.1", "2"]
    for kind in (2, 3):
        model = Model(task, answering(kind=kind))
        turn = run_llm(LLMProvider, model, view_of(task, "Where?", released=done))
        assert turn.decision is Decision.ENOUGH
        assert turn.message == "Jax: " + CANNED["en"].enough
        assert model.calls == [("classify", None)]
    model = Model(task, answering(kind=6))
    turn = run_llm(LLMProvider, model, view_of(task, "Anything else?", released=done))
    assert (turn.decision, turn.kind) == (Decision.NO_RELEASE, SeekerKind.VAGUE)


@pytest.mark.parametrize(
    ("kind", "expected", "message"),
    [
        (1, SeekerKind.WHOLE_TASK, "whole_task"),
        (5, SeekerKind.UNRELATED, "unrelated"),
        (6, SeekerKind.VAGUE, "vague"),
    ],
)
def test_llm_types_1_5_6_get_their_canned_reply_without_passes(
    kind: int, expected: SeekerKind, message: str
) -> None:
    task = en_task()
    model = Model(task, answering(kind=kind, passing={"pass_a": {"1", "2"}}))
    turn = run_llm(LLMProvider, model, view_of(task, "Hmm?"))
    assert (turn.decision, turn.kind) == (Decision.NO_RELEASE, expected)
    assert turn.message == "Jax: " + getattr(CANNED["en"], message)
    assert model.calls == [("classify", None)]


def test_llm_type_4_is_double_checked() -> None:
    task = en_task()
    model = Model(task, answering(kind=4, repeat=True, passing={"pass_a": {"1"}}))
    turn = run_llm(LLMProvider, model, view_of(task, "Which mine?", released=["2"]))
    assert (turn.decision, turn.kind) == (Decision.NO_RELEASE, SeekerKind.REPEAT)
    assert model.calls == [("classify", None), ("repeat", None)]
    model = Model(task, answering(kind=4, repeat=False, passing={"pass_a": {"1"}}))
    turn = run_llm(LLMProvider, model, view_of(task, "How do I enter?", released=["2"]))
    assert (turn.decision, turn.released) == (Decision.RELEASE, ["1"])
    assert "-> 2" in turn.note


def test_llm_retries_a_malformed_reply_once_then_raises() -> None:
    task = en_task()
    replies = iter(["not json", json.dumps({"analysis": "a", "type": 6})])
    model = Model(task, lambda step, node: next(replies))
    view = view_of(task, "Anything else?")
    turn = run_llm(LLMProvider, model, view)
    assert turn.kind is SeekerKind.VAGUE
    retry = model.requests[1].messages
    assert [m.role for m in retry] == ["user", "assistant", "user"]
    assert retry[1].content == "not json"
    assert "could not be read (not JSON" in (retry[2].content or "")
    assert len(view.usage) == 2
    bad = Model(task, lambda step, node: {"analysis": "a", "type": 9})
    provider = LLMProvider(bad.backend())
    with pytest.raises(ProviderReplyError, match="classify reply was unreadable twice"):
        asyncio.run(provider.respond(view_of(task, "Which mine?")))
    assert len(bad.calls) == 2
    # the game master turns it into a simulator error
    with pytest.raises(EpisodeEnd) as ended:
        asyncio.run(
            guarded(
                provider.respond(view_of(task, "Which mine?")),
                "provider",
                Termination.SIMULATOR_ERROR,
            )
        )
    assert ended.value.termination is Termination.SIMULATOR_ERROR
    assert "ProviderReplyError" in ended.value.reason


def test_llm_multi_releases_every_answerable_node_joined() -> None:
    task = en_task()
    model = Model(task, answering(kind=2, passing={"pass_a": {"1"}, "pass_a_multiple": {"2"}}))
    turn = run_llm(LLMMultiProvider, model, view_of(task, "How do I enter, and which mine?"))
    assert turn.decision is Decision.RELEASE
    assert turn.released == ["1", "2"]
    assert turn.message == "Jax: " + join_released([task.node("1").text, task.node("2").text], "en")
    assert len(model.calls) == 3  # pass A looks at every node
    one = Model(task, answering(kind=2, passing={"pass_a": {"1"}}))
    assert run_llm(LLMMultiProvider, one, view_of(task, "How?")).message == (
        "Jax: " + task.node("1").text
    )


ZH_MARKERS = {
    "classify": "属于下面哪一种类型",
    "pass_a": "能不能回答玩家这句话里提出的至少一部分",
    "pass_b": "再看一次：这条信息能不能解决",
    "pass_c_multiple": "已经注意到这里有好几个可能的选项",
    "pass_c": "基于一个错误的假设",
}


def test_llm_in_chinese_uses_the_chinese_templates() -> None:
    task = zh_task()
    model = Model(task, answering(kind=2, passing={"pass_c_multiple": {"2"}}), ZH_MARKERS)
    turn = run_llm(LLMProvider, model, view_of(task, "我该去哪个矿山？"))
    assert turn.released == ["2"]
    # no "multiple X" special case in pass A for Chinese; pass C checks "存在多个"
    assert [step for step, _ in model.calls] == [
        "classify", "pass_a", "pass_a", "pass_b", "pass_b", "pass_c", "pass_c_multiple"
    ]  # fmt: skip
    assert "冒险者: 我该去哪个矿山？" in (model.requests[0].messages[0].content or "")


def test_multiple_options_follows_the_original_extraction() -> None:
    assert multiple_options(MINE_PURPOSE, "en") == "mines"
    assert multiple_options("noticed that there are multiple climbing routes and is", "en") == (
        "climbing routes"
    )
    too_long = "that there are multiple very long kinds of routes and"
    assert multiple_options(" " + too_long, "en") is None
    twice = MINE_PURPOSE + MINE_PURPOSE
    assert multiple_options(twice, "en") is None
    assert multiple_options(MINE_PURPOSE, "zh") is None
    assert mentions_multiple(MINE_PURPOSE) and mentions_multiple("游戏里存在多个矿山")
    assert not mentions_multiple("how to enter the mine")


def test_provider_templates_exist_with_their_placeholders() -> None:
    prompts = PromptSet.load("todeval.benchmarks.clarq")
    for name in provider_templates():
        assert name in prompts.templates
    assert prompts.placeholders_of("provider_pass_b_en") == {
        "analysis", "purpose", "question", "response", "role", "task"
    }  # fmt: skip
    assert "options" in prompts.placeholders_of("provider_pass_a_multiple_en")
    assert "provider_pass_a_multiple_zh" not in prompts.templates


def test_a_prompt_override_reaches_the_model(tmp_path: Path) -> None:
    task = en_task()
    defaults = PromptSet.load("todeval.benchmarks.clarq")
    text = defaults.templates["provider_classify_en"].replace(
        "Which one of these types", "OVERRIDDEN. Which one of these types"
    )
    prompts = PromptSet.load("todeval.benchmarks.clarq", {"provider_classify_en": text})
    model = Model(task, answering(kind=6))
    provider = PROVIDER.resolve("llm").build(
        PlayerOptions(role="provider", model=model.backend(), prompts=prompts)
    )
    asyncio.run(provider.respond(view_of(task, "Anything else?")))
    assert (model.requests[0].messages[0].content or "").startswith("You are Jax")
    assert "OVERRIDDEN" in (model.requests[0].messages[0].content or "")


def test_scripted_file_backend_drives_the_flow(tmp_path: Path) -> None:
    task = en_task()
    script = Script.model_validate(
        {
            "rules": [
                {"match": "Which one of these types", "reply": '{"analysis": "", "type": 2}'},
                {
                    "match": r"(?s)Does this piece answer.*",
                    "reply": '{"analysis": "no", "answerable": false}',
                },
                {
                    "match": r"(?s)This piece settles which of several mines",
                    "reply": '{"analysis": "yes", "answerable": true}',
                },
            ]
        }
    )
    path = tmp_path / "provider.json"
    path.write_text(script.model_dump_json(), encoding="utf-8")
    provider = LLMProvider(make_backend(f"scripted:{path}"))
    turn = asyncio.run(provider.respond(view_of(task, "Which mine, West or North?")))
    assert turn.released == ["2"]


def test_llm_provider_over_real_http() -> None:
    task = en_task()
    script = Script.model_validate(
        {
            "rules": [
                {"match": "Which one of these types", "reply": '{"analysis": "", "type": 2}'},
                {
                    "match": re.escape(task.node("1").text),
                    "reply": '{"analysis": "yes", "answerable": true}',
                },
            ],
            "default": '{"analysis": "no", "answerable": false}',
        }
    )

    async def play(base_url: str) -> tuple[ProviderTurn, ProviderView]:
        backend = make_backend(f"openai:scripted@{base_url}")
        view = view_of(task, "How do I get into the mine?")
        try:
            return await LLMProvider(backend).respond(view), view
        finally:
            await backend.aclose()

    with ServerProcess(ServerConfig(script=script)) as server:
        turn, view = asyncio.run(play(server.base_url))
        stats = server.stats()
    assert turn.released == ["1"]
    assert stats["requests"] == 2  # classify, pass A on node 1
    assert len(view.usage) == 2 and all(u.prompt_tokens > 0 for u in view.usage)


# -- the role ---------------------------------------------------------------------------


def test_provider_role_builds_the_builtins() -> None:
    rule = PROVIDER.resolve("rule").build(PlayerOptions(role="provider"))
    assert isinstance(rule, RuleProvider) and isinstance(rule, Provider)
    with pytest.raises(UsageError, match="needs a model: pass --provider-model SPEC"):
        PROVIDER.resolve("llm").build(PlayerOptions(role="provider"))
    with pytest.raises(UsageError, match="llm-multi provider needs a model"):
        PROVIDER.resolve("llm-multi").build(PlayerOptions(role="provider"))
    model = make_backend("scripted:inline", script=lambda request: "{}")
    multi = PROVIDER.resolve("llm-multi").build(PlayerOptions(role="provider", model=model))
    assert isinstance(multi, LLMMultiProvider)
    with pytest.raises(UsageError, match="unknown provider 'nope'"):
        PROVIDER.resolve("nope")
    custom = PROVIDER.resolve("todeval.benchmarks.clarq.providers.rule:RuleProvider")
    assert custom.cls is RuleProvider
    tuned = PROVIDER.resolve("rule").build(
        PlayerOptions(role="provider", extra={"rule_threshold": 3})
    )
    assert isinstance(tuned, RuleProvider) and tuned.thresholds == {"en": 3.0, "zh": 3.0}
