"""Issue 41, round 2: a turn releases a node only when one of its questions is aimed at that
node -- specific, not a catch-all, not a bare list, not a salad of background fragments run
together, and no other available node asked for more -- and the bag adversary family."""

from __future__ import annotations

import asyncio

import pytest

from tests.clarq.helpers import REFERENCE
from todeval.benchmarks.clarq import load_tasks, read_original
from todeval.benchmarks.clarq._tasks import Background
from todeval.benchmarks.clarq._text import provider_message
from todeval.benchmarks.clarq.adversaries import BAG_SPACE, BagSeeker, families
from todeval.benchmarks.clarq.controls import SUITE
from todeval.benchmarks.clarq.protocol import GREETINGS, ProviderView, SeekerView
from todeval.benchmarks.clarq.providers import entry_names
from todeval.benchmarks.clarq.providers.rule import (
    RuleProvider,
    WordRuleProvider,
    clauses,
    phrases,
    run_words,
)
from todeval.benchmarks.clarq.seekers import task_question
from todeval.benchmarks.clarq.tools.audit import ReferenceTurn, rebuild

EN = "en/test/Gather_Resources-0"
ZH = "zh/test/Alliance_Building-0"


def _view(task_id: str, question: str) -> ProviderView:
    lang = task_id[:2]
    task = next(t for t in load_tasks(lang, "test") if t.task_id == task_id)  # type: ignore[arg-type]
    history = [GREETINGS[task.lang], task_question(task), provider_message(task.opening)]
    return ProviderView(
        task=task,
        history=[*history, question],
        available=task.tree().available(),
        released=[],
        gate_open=True,
    )


@pytest.mark.parametrize("provider", [RuleProvider(), WordRuleProvider()])
def test_a_targeted_question_is_still_released(provider: RuleProvider) -> None:
    assert provider.decide(_view(EN, "Which mine should I go to for the rubies?")).released == ["2"]


@pytest.mark.parametrize("provider", [RuleProvider(), WordRuleProvider()])
@pytest.mark.parametrize(
    "question",
    [
        # the red team's bag: every wh-word behind a bag of words heard and told
        "Which mine dig rubies collect air sucker excavator Summon small shovel West North "
        "Miasma Mist Fantasy Primeval should I use, where, when, who, why and how?",
        # a small bag: fragments of several entries the node does not speak of
        "Which mine air Miasma Primeval Fantasy shovel should I use?",
    ],
)
def test_a_bag_releases_nothing(provider: RuleProvider, question: str) -> None:
    assert provider.decide(_view(EN, question)).released == []


def test_the_old_provider_released_to_the_bag() -> None:
    """Without the singled-out rule (``margin=None``) the red team's bag was answered."""
    question = (
        "Which mine dig rubies collect air sucker excavator Summon small shovel West North "
        "Miasma Mist Fantasy Primeval should I use, where, when, who, why and how?"
    )
    assert RuleProvider(margin=None).decide(_view(EN, question)).released != []


def test_a_chinese_bare_list_is_no_question() -> None:
    provider = RuleProvider()
    assert provider.decide(_view(ZH, "马尔扎哈、黑市、地下、鬼魅、郊区？")).released == []
    assert provider.decide(_view(ZH, "马尔扎哈在哪个黑市？")).released == ["1"]


def test_the_bag_family_is_declared_in_both_languages() -> None:
    names = {f.name for f in SUITE.adversaries}
    assert {"bag/en", "bag/zh"} <= names
    bag = {f.name: f for f in families("clarq.success_economy", 0.1)}["bag/zh"]
    assert bag.space == BAG_SPACE and bag.tasks == 52 and bag.budget == 52 * 4
    assert set(BAG_SPACE) == {"keep", "source", "template", "misses"}


def test_the_bag_seeker_packs_one_question_a_turn() -> None:
    task = next(t for t in load_tasks("zh", "test") if t.task_id == ZH)
    seeker = BagSeeker({"template": "bare", "keep": 1.0})
    view = SeekerView(
        task_id=task.task_id, lang="zh", background=task.background, greeting=GREETINGS["zh"],
        seed=0,
    )  # fmt: skip
    asyncio.run(seeker.start(view))
    asyncio.run(seeker.respond(GREETINGS["zh"]))
    asked = asyncio.run(seeker.respond(provider_message(task.opening)))
    assert asked.endswith("？") and "、" in asked and asked.count("？") == 1
    with pytest.raises(ValueError, match="unknown parameter"):
        BagSeeker({"size": 3})
    assert isinstance(task.background, Background)


def test_fragments_count_only_when_run_together() -> None:
    task = next(t for t in load_tasks("en", "test") if t.task_id == EN)
    names = entry_names(task.background)
    assert (
        run_words("Which mine air Miasma Primeval Fantasy shovel should I use?", names, "en") == 6
    )
    # a scene named in full counts one word; function words break the run
    assert run_words("Should I go through the Miasma Forest or the Mist Forest?", names, "en") == 1
    assert run_words("Where is the peculiar fog for the mine?", names, "en") == 2


def test_a_joined_question_is_read_clause_by_clause() -> None:
    question = "Could you tell me where I can find the map and how I can learn the magic?"
    assert clauses(question) == [
        "Could you tell me where I can find the map ",
        "how I can learn the magic?",
    ]
    assert clauses("Which tavern is Henry at, and which crystal will I get?") == [
        "Which tavern is Henry at",
        "which crystal will I get?",
    ]
    assert clauses("Which mine should I go to?") == ["Which mine should I go to?"]


@pytest.fixture(scope="module")
def reference() -> list[list[ReferenceTurn]]:
    return rebuild(read_original(REFERENCE))[0]


def test_the_reference_seekers_multi_part_questions(reference: list[list[ReferenceTurn]]) -> None:
    """Two of the GPT-4o reference seeker's turns the original provider answered with a node
    that round 2's first rules refused or gave away to another node: the joined question is now
    read clause by clause; the sentence touching four entries in passing is still refused (the
    run-together reading that would answer it, ``run_words``, is off: a bag joined by "and"
    walks past it; so is counting fragments by phrase, ``phrases``, which answers it too)."""
    # "... where I can find the map and how I can learn or acquire the magic ...?": the map
    # (node 1) first, as the original; read as one sentence, the magic's node scores higher
    turn = reference[94][1]
    assert turn.labels == ("1",)
    assert RuleProvider().decide(turn.view()).released == ["1"]
    assert RuleProvider(clauses=frozenset()).decide(turn.view()).released == ["2"]
    # "which beach -- East Coast, West Coast, or South Coast -- would be the best for creating a
    # beautiful beach scene for my painting?": parts of four entries, all of one phrase
    turn = reference[177][2]
    assert turn.labels == ("2",)
    assert RuleProvider().decide(turn.view()).released == []
    assert RuleProvider(run_words={"en": 5}).decide(turn.view()).released == ["2"]
    assert RuleProvider(phrases=2).decide(turn.view()).released == ["2"]


def test_fragments_are_counted_by_phrase() -> None:
    """The same words in several entries are one phrase, a fragment inside another is part of
    it; fragments of distinct phrases are counted apart."""
    assert phrases([{"mountain", "cemetery", "group"}] * 4) == 1
    assert phrases([{"part"}, {"stor", "auto", "part"}, {"auto"}, {"stor", "auto", "part"}]) == 1
    assert phrases([{"mine"}, {"air"}, {"miasma"}, {"primeval"}]) == 4
    assert phrases([{"model", "test"}, {"model", "cv", "test", "dataset"}, {"lab"}]) == 2
    assert phrases([]) == 0


def test_one_phrase_several_entries_share_names_one_thing(
    reference: list[list[ReferenceTurn]],
) -> None:
    """GPT-4o's reference turns the original answered, where the question touches four
    entries through one phrase they share: "which excavation tool (small shovel, hoe, or
    large shovel) ... in the Mountain Cemetery Groups?" (groups A, B, C, ...); "which auto
    parts store would be the best place to find these tires and the battery?". Counting
    fragments by phrase (``phrases=2``, measured and off: docs/clarq.md) answers them."""
    for dialogue, turn_index, label in ((202, 3, "3"), (184, 2, "3")):
        turn = reference[dialogue][turn_index]
        assert turn.labels == (label,)
        assert RuleProvider(phrases=2).decide(turn.view()).released == [label]
        assert RuleProvider().decide(turn.view()).released != [label]


def test_the_nodes_own_words_are_no_salad(reference: list[list[ReferenceTurn]]) -> None:
    """With ``distinct=2`` (measured and off: a parroting bag holds the provider's words too,
    docs/clarq.md), a question holding two words of the node that no other open node speaks
    of and the background lacks is read as about that node, whatever entries it touches in
    passing: "which specific church has the holy water basin I need to use to soak the regular
    knife ...?"."""
    turn = reference[78][4]
    assert turn.labels == ("1.3",)
    assert RuleProvider(distinct=2).decide(turn.view()).released == ["1.3"]
    assert RuleProvider().decide(turn.view()).released == []
    assert RuleProvider(distinct=1).decide(turn.view()).released == ["1.3"]


def test_a_bag_joined_by_function_words_is_still_a_bag() -> None:
    """Why ``run_words`` is off: the small bag with "and" between its words is no run."""
    task = "en/test/Gather_Resources-3"
    question = "Which dig and well-prepared and Mask and Vision and diamonds and Mist should I use?"
    assert RuleProvider().decide(_view(task, question)).released == []
    assert RuleProvider(run_words={"en": 5}).decide(_view(task, question)).released == ["2"]
