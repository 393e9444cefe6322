"""Issue 41: no headline without the skill. The rule provider judges a turn (at most
:data:`MAX_DETAIL` questions, the list guard over the whole turn, no release to questions
repeating what it said, patience with a fishing seeker), the headline SPQ weights success by
question economy, and the sweep adversary family reads only its view."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from todeval import api
from todeval.benchmarks.clarq import load_tasks
from todeval.benchmarks.clarq._original import read_original
from todeval.benchmarks.clarq._questions import economy, questions_asked, questions_in
from todeval.benchmarks.clarq._scoring import score_transcripts
from todeval.benchmarks.clarq._text import provider_message
from todeval.benchmarks.clarq.adversaries import SPACE, SweepSeeker, families, play
from todeval.benchmarks.clarq.controls import HEADLINE, SUITE
from todeval.benchmarks.clarq.protocol import GREETINGS, ProviderView, SeekerView
from todeval.benchmarks.clarq.providers.rule import MAX_DETAIL, RuleProvider
from todeval.benchmarks.clarq.run import ClarqConfig
from todeval.benchmarks.clarq.seekers import task_question
from todeval.runner.plan import config_hash
from todeval.validation import AdversaryJob

from .helpers import REFERENCE

TASK = "en/test/Gather_Resources-0"

# -- counting questions -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "lang", "count"),
    [
        ("Hello Jax. How do I complete my task (collecting rubies)?", "en", 1),
        ("Which mine should I go to, and how do I enter it?", "en", 2),
        ("Which X should I use, where should I go and how do I use it?", "en", 3),
        ("Is it right that I pass the forest, which is an essential path?", "en", 1),
        ("Is it right that the wood is hard and would last?", "en", 1),
        ("Which A should I use? Where is the B? How do I use the C?", "en", 3),
        ("Thank you. I will go to the North Mine.", "en", 1),  # a turn costs one at least
        ("我应该用哪个金属马车？北矿山在哪里？", "zh", 2),
        ("你的意思是我应该去北矿山吗？", "zh", 1),
    ],
)
def test_questions_in_a_turn(text: str, lang: str, count: int) -> None:
    assert questions_in(text, lang) == count  # type: ignore[arg-type]


def test_questions_asked_after_the_gate_and_before_the_goodbye() -> None:
    opening = "Jax: You need rubies."
    messages = [
        "Jax: what can help you?",
        "Hi, what should I do? Where? How?",  # answered with the opening: free
        opening,
        "Which mine? Where is it?",
        "Jax: North.",
        "How do I dig?",
        "Jax: With a shovel.",
        "Goodbye. Which? Where? How?",  # never answered: free
    ]
    assert questions_asked(messages, "en", opening) == 3
    assert questions_asked(messages, "en") == 3 + 3  # without the opening every answered turn


def test_economy_is_squared_and_zero_on_failure() -> None:
    assert economy(True, 4, 4) == 1.0
    assert economy(True, 2, 4) == 1.0  # fewer questions than the oracle's cannot beat it
    assert economy(True, 8, 4) == pytest.approx(0.25)
    assert economy(False, 4, 4) == 0.0
    assert economy(True, 8, 4, power=1) == pytest.approx(0.5)


def test_reference_keeps_s_and_reports_spq() -> None:
    """The corpus scorer's S is the paper's; SPQ is reported beside it."""
    score = score_transcripts(read_original(REFERENCE).records)
    metrics = score.summary.metrics
    assert metrics["clarq.success"].micro.value == pytest.approx(0.4846, abs=5e-5)
    spq, s = metrics[HEADLINE].micro.value, metrics["clarq.success"].micro.value
    assert metrics[HEADLINE].micro.n == 260 and spq is not None and s is not None
    assert 0.0 < spq < s
    assert all(e.economy == 0.0 for e in score.episodes if not e.success)


# -- the provider judges a turn ---------------------------------------------------------


def _view(task_id: str, question: str, lang: str = "en") -> ProviderView:
    task = next(t for t in load_tasks(lang, "test") if t.task_id == task_id)  # type: ignore[arg-type]
    history = [GREETINGS[task.lang], task_question(task), provider_message(task.opening)]
    return ProviderView(
        task=task,
        history=[*history, question],
        available=task.tree().available(),
        released=[],
        gate_open=True,
    )


def test_a_targeted_question_alone_is_released_but_not_in_a_shotgun() -> None:
    provider = RuleProvider()
    asked = "Which mine should I go to for the rubies?"
    assert provider.decide(_view(TASK, asked)).released == ["2"]
    fillers = " ".join(f"Where is the thing number {i}?" for i in range(MAX_DETAIL))
    turn = provider.decide(_view(TASK, f"{fillers} {asked}"))
    assert turn.released == [] and "questions at once" in (turn.note or "")


def test_the_list_guard_reads_the_whole_turn() -> None:
    """Two entries a sentence: each sentence passes a per-sentence guard, the turn does not."""
    task = next(t for t in load_tasks("en", "test") if t.task_id == TASK)
    b = task.background
    others = [e for e in (*b.items, *b.skills, *b.scenes) if "Mine" not in e]
    provider = RuleProvider()
    asked = "Which mine should I go to for the rubies?"
    assert provider.decide(_view(TASK, asked)).released == ["2"]
    pairs = [f"Should I use {a} or {c}?" for a, c in zip(others[::2], others[1::2], strict=False)]
    pairs += [f"Should I use {others[-1]}?"] if len(others) % 2 else []
    turn = provider.decide(_view(TASK, " ".join([*pairs, asked])))
    # the mine question is not answered inside a list of the background (a node the list
    # names itself may still be: the guard counts the entries beyond the node's own)
    assert len(pairs) + 1 <= MAX_DETAIL and len(others) == 7 and "2" not in turn.released


def test_a_fishing_seeker_gets_nothing_more() -> None:
    task = next(t for t in load_tasks("en", "test") if t.task_id == TASK)
    miss = provider_message(RuleProvider().decide(_view(TASK, "Where is the moon?")).message)
    history = [GREETINGS["en"], task_question(task), provider_message(task.opening)]
    history += ["Where is the moon?", miss, "Which star is brightest?", miss]
    view = ProviderView(
        task=task,
        history=[*history, "Which mine should I go to for the rubies?"],
        available=task.tree().available(),
        released=[],
        gate_open=True,
    )
    assert RuleProvider().decide(view).released == []
    assert RuleProvider(patience=None).decide(view).released == ["2"]


def test_chinese_questions_about_several_entries_or_which_for_how() -> None:
    """Chinese reads character pairs without meaning: a question naming two entries in full
    without asking to choose between them, and a "which" question about a node that answers
    only "how", target nothing there."""
    task_id = "zh/test/Gather_Resources-0"
    task = next(t for t in load_tasks("zh", "test") if t.task_id == task_id)
    b = task.background
    provider = RuleProvider()
    pair = f"{b.skills[0]}和{b.scenes[0]}在我的任务里要怎么用？"
    assert provider.decide(_view(task_id, pair, "zh")).released == []
    assert provider.decide(_view(task_id, "我应该去哪个矿山挖红宝石？", "zh")).released == ["2"]
    # the several-entries rule alone (round 2's singled-out rule refuses the pair too)
    without = RuleProvider(several_entries={}, margin=None)
    assert without.decide(_view(task_id, pair, "zh")).released != []


# -- the sweep family -------------------------------------------------------------------


def _seeker_turns(params: dict[str, object], lang: str = "en", n: int = 3) -> list[str]:
    task = next(t for t in load_tasks(lang, "test") if t.task_id.endswith("Gather_Resources-0"))  # type: ignore[arg-type]
    view = SeekerView(
        task_id=task.task_id,
        lang=task.lang,
        background=task.background,
        greeting=GREETINGS[task.lang],
        seed=7,
    )
    seeker = SweepSeeker(params)

    async def play_turns() -> list[str]:
        await seeker.start(view)
        out = [await seeker.respond(GREETINGS[task.lang])]
        for _ in range(n - 1):
            out.append(await seeker.respond("Jax: The North Mine has rubies."))
        return out

    return asyncio.run(play_turns())


def test_sweep_seeker_asks_per_turn_questions_and_says_goodbye() -> None:
    turns = _seeker_turns({"template": "which", "source": "background", "per_turn": 2, "turns": 2})
    assert [questions_in(t, "en") for t in turns[:2]] == [2, 2]
    assert turns[0] != turns[1] and turns[2] == "Goodbye"
    heard = _seeker_turns({"template": "where", "source": "provider", "per_turn": 99}, n=2)
    assert "north" in heard[1].lower()  # the provider's words, once it has said some
    zh = _seeker_turns({"template": "how-a-b", "per_turn": 1}, lang="zh", n=2)
    assert all("？" in t for t in zh)


def test_sweep_seeker_refuses_unknown_params() -> None:
    with pytest.raises(ValueError, match="unknown parameter"):
        SweepSeeker({"colour": "red"})
    with pytest.raises(ValueError, match="template"):
        SweepSeeker({"template": "shout"})


def test_families_are_declared_in_the_suite() -> None:
    names = {f.name: f for f in SUITE.adversaries}
    assert set(names) == {"sweep/en", "sweep/zh", "bag/en", "bag/zh"}
    for name, family in names.items():
        assert family.metric == HEADLINE and family.high == 0.10
        if name.startswith("sweep/"):
            assert dict(family.space) == SPACE
    assert families(HEADLINE, 0.1)[1].group == "zh"


def test_seeker_params_leave_other_runs_hashes_alone() -> None:
    plain = ClarqConfig().model_dump(mode="json")
    assert "seeker_params" not in plain
    assert config_hash(plain) == config_hash(
        ClarqConfig(seeker_params=None).model_dump(mode="json")
    )
    swept = ClarqConfig(seeker_params={"per_turn": 1}).model_dump(mode="json")
    assert swept["seeker_params"] == {"per_turn": 1} and config_hash(swept) != config_hash(plain)


def test_play_one_point(tmp_path: Path) -> None:
    family = SUITE.adversaries[0]
    params = {"template": "wh3", "source": "all", "per_turn": 99, "order": "given", "turns": 10}
    job = AdversaryJob(
        family=family, benchmark="clarq", params=params, seed=0, workdir=tmp_path, limit=26
    )
    summary = play(job)
    assert summary.n_episodes == 26
    value = summary.metrics[HEADLINE].micro.value
    assert value is not None and value <= 0.10  # the issue's one-turn shotgun
    manifest = json.loads(next(tmp_path.rglob("manifest.json")).read_text())
    assert "seeker_params" in json.dumps(manifest)


# -- the floors on every task (issue 41's table) ----------------------------------------

ISSUE_SEEKERS = {
    "shotgun": {"template": "wh3", "source": "all", "per_turn": 99},
    "provider words": {"template": "wh3", "source": "provider", "per_turn": 99},
    "pairs, one turn": {"template": "yesno-a-b", "source": "background", "per_turn": 99},
    "how A and B, one a turn": {"template": "how-a-b", "source": "background", "per_turn": 1},
    "one question a turn": {"template": "wh3", "source": "background", "per_turn": 1},
    "which X, one a turn": {"template": "which", "source": "background", "per_turn": 1},
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_issue_41_seekers_stay_at_the_floor(lang: str, tmp_path: Path) -> None:
    for i, (name, params) in enumerate(ISSUE_SEEKERS.items()):
        config = {
            "lang": lang,
            "protocol": "strict",
            "seeker": "todeval.benchmarks.clarq.adversaries:SweepSeeker",
            "seeker_params": params,
        }
        result = api.run("clarq", config, out=tmp_path / str(i), review=False)
        value = result.summary.metrics[HEADLINE].micro.value
        assert result.summary.n_episodes == 260, name
        assert value is not None and value <= 0.10, (name, value)
