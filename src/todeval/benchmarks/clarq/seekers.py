"""The seeker role: the agent under test, and its built-in players.

A seeker (:class:`~todeval.benchmarks.clarq.protocol.Seeker`) is started with its
:class:`~todeval.benchmarks.clarq.protocol.SeekerView` (never the tree: only the ``oracle``
control is privileged and handed the whole task) and answers every provider message
(the greeting first) with its next utterance; ``Goodbye`` / ``再见`` ends the dialogue.

Built-ins (``--seeker NAME``; any ``package.module:Class`` works too):

* ``llm`` -- a model (``--seeker-model``) in ``completion`` mode (the whole history in one
  prompt ending with the cue ``You:``) or ``chat`` mode (system = the background, Jax's
  messages as the user turns, its own as the assistant turns): ``--seeker-mode``;
* ``human`` -- a person at the terminal (the shared terminal participant): the paper's human
  baseline;
* ``oracle`` -- scripted, with privileged access to the tree: asks about the task, then for
  each unlocked node with a question built from the node's own text (pronouns turned round,
  one of three templates), never from its purpose; says goodbye once everything was released
  (or after three tries per node);
* ``wrong`` -- scripted: asks about the task, then five fluent questions about nothing in the
  task (topics that do not occur in it), then says goodbye;
* ``quitter`` -- says goodbye at once;
* ``replay`` -- the shared replay participant over a transcript (``--seeker-replay``: a run
  directory or a released result file), the recorded seeker turns of the same task and trial;
* ``agent`` -- an external agent behind its chat endpoint (``--seeker-url URL``,
  ``--channel``), told what a chat-mode LLM seeker is told (:mod:`.agent_seeker`).

Prompt templates (``prompts/``, English and Chinese, overridable with ``--prompts DIR``):

* ``seeker_background_<lang>``: ``${role}``, ``${task}``, ``${items}``, ``${skills}``,
  ``${scenes}`` (lists as ``- `` lines, ``(none)`` / ``（无）`` when empty) -- what the seeker
  is told (the human seeker reads it too);
* ``seeker_completion_<lang>``: ``${background}``, ``${history}`` (one line per message:
  Jax's as sent, the seeker's as ``You: ...``) -- ends with the cue ``You:``;
* ``seeker_chat_<lang>``: ``${background}`` -- the system message of chat mode.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Literal, Protocol

from todeval.backends.sampling import Sampling, generate_accounted
from todeval.backends.types import Backend, ChatMessage
from todeval.benchmarks.clarq._tasks import Background, ResponseNode
from todeval.benchmarks.clarq._text import Language, strip_provider_prefix
from todeval.benchmarks.clarq.protocol import (
    GOODBYES,
    Seeker,
    SeekerContext,
    SeekerView,
    seeker_view,
)
from todeval.dialogue.human import TerminalParticipant
from todeval.dialogue.participants import PlayerOptions, Role
from todeval.dialogue.prompts import PromptSet
from todeval.dialogue.replay import EpisodeReplay, Recording

SeekerMode = Literal["completion", "chat"]
SEEKER_MODES: tuple[SeekerMode, ...] = ("completion", "chat")

SEEKER_TEMPLATES = tuple(
    f"seeker_{kind}_{lang}"
    for kind in ("background", "completion", "chat")
    for lang in ("en", "zh")
)
"""The templates seekers read (the rest of the package's prompts are the provider's)."""

DEFAULT_MAX_TOKENS = 200
"""Seeker reply cap when the run sets none (the original capped LLaMA seekers at 150)."""

_NONE: dict[Language, str] = {"en": "(none)", "zh": "（无）"}
_SPEAKER = re.compile(r"^\s*(?:you|你)\s*[:：]\s*", re.IGNORECASE)
_OTHER_SIDE = re.compile(r"\n\s*jax\s*[:：]", re.IGNORECASE)


def _bullets(lines: list[str], lang: Language) -> str:
    return "\n".join(f"- {line}" for line in lines) if lines else _NONE[lang]


class _Briefed(Protocol):
    """A task or a seeker's view: what a background is rendered from."""

    @property
    def lang(self) -> Language: ...

    @property
    def background(self) -> Background: ...


def background_text(source: _Briefed, prompts: PromptSet) -> str:
    """What the seeker is told: the ``seeker_background_<lang>`` template over the
    background's role, task, items, skills and scenes."""
    b, lang = source.background, source.lang
    return prompts.render(
        f"seeker_background_{lang}",
        role=b.role,
        task=b.task,
        items=_bullets(b.items, lang),
        skills=_bullets(b.skills, lang),
        scenes=_bullets(b.scenes, lang),
    )


def clean_reply(text: str) -> str:
    """A model's reply as the seeker's utterance: a leading ``You:`` speaker tag removed (as
    the original does) and anything from a line starting ``Jax:`` on cut (a completion model
    writing the other side too); surrounding whitespace stripped."""
    text = _SPEAKER.sub("", text.strip(), count=1)
    cut = _OTHER_SIDE.search(text)
    if cut is not None:
        text = text[: cut.start()]
    return text.strip()


class LLMSeeker:
    """A model asking the questions, in completion or chat mode (``options.extra['mode']``)."""

    def __init__(
        self,
        model: Backend,
        prompts: PromptSet,
        *,
        mode: SeekerMode = "completion",
        sampling: Sampling | None = None,
    ) -> None:
        self.model = model
        self.prompts = prompts
        self.mode: SeekerMode = mode
        self.sampling = sampling or Sampling()
        self.history: list[str] = []  # the transcript: provider messages, own utterances

    @classmethod
    def from_options(cls, options: PlayerOptions) -> LLMSeeker:
        mode = options.extra.get("mode", "completion")
        if mode not in SEEKER_MODES:
            raise ValueError(f"seeker mode {mode!r}")
        return cls(
            options.require_model("the llm seeker", "--seeker-model"),
            options.require_prompts(),
            mode=mode,
            sampling=Sampling(False, options.temperature, options.max_tokens),
        )

    async def start(self, context: SeekerView) -> None:
        self.context = context
        self.lang = context.lang
        self.background = background_text(context, self.prompts)
        self.history = []

    def messages(self) -> list[ChatMessage]:
        """The request: one prompt (completion) or the chat so far (chat)."""
        if self.mode == "completion":
            lines = [m if i % 2 == 0 else f"You: {m}" for i, m in enumerate(self.history)]
            prompt = self.prompts.render(
                f"seeker_completion_{self.lang}",
                background=self.background,
                history="\n".join(lines),
            )
            return [ChatMessage(role="user", content=prompt)]
        system = self.prompts.render(f"seeker_chat_{self.lang}", background=self.background)
        chat = [ChatMessage(role="system", content=system)]
        for i, m in enumerate(self.history):
            chat.append(ChatMessage(role="user" if i % 2 == 0 else "assistant", content=m))
        return chat

    async def respond(self, provider_message: str) -> str:
        self.history.append(provider_message)
        request = self.sampling.request(
            self.messages(), seed=self.context.seed % 2**31, max_tokens=DEFAULT_MAX_TOKENS
        )
        result = await generate_accounted(
            self.model, request, role="seeker", usage=self.context.usage
        )
        text = clean_reply(result.text)
        self.history.append(text)
        return text


class HumanSeeker:
    """A person at the terminal, told what an LLM seeker is told (the human baseline)."""

    interactive = True

    def __init__(self, prompts: PromptSet) -> None:
        self.prompts = prompts
        self.terminal = TerminalParticipant(name="you", other="Jax")

    @classmethod
    def from_options(cls, options: PlayerOptions) -> HumanSeeker:
        return cls(options.require_prompts())

    async def start(self, context: SeekerView) -> None:
        how = {
            "en": "Type one message and press Enter; Goodbye ends the conversation.",
            "zh": "每次输入一条消息并按回车；输入“再见”结束对话。",
        }
        brief = background_text(context, self.prompts)
        await self.terminal.start(f"Task {context.task_id}\n{brief}\n\n{how[context.lang]}")

    async def respond(self, provider_message: str) -> str:
        return await self.terminal.respond(strip_provider_prefix(provider_message))


class QuitterSeeker:
    """Says goodbye at once (S = 0, AQD = -n: what quitting costs)."""

    async def start(self, context: SeekerView) -> None:
        self.lang = context.lang

    async def respond(self, provider_message: str) -> str:
        return GOODBYES[self.lang]


_TASK_QUESTION: dict[Language, str] = {
    "en": "Hello Jax. How do I complete my task ({task})?",
    "zh": "你好Jax，我该如何完成{task}的任务？",
}

_ORACLE_TEMPLATES: dict[Language, tuple[str, ...]] = {
    "en": (
        "Is it right that {clause}?",
        "Just to be sure: {clause}, correct?",
        "Could you confirm that {clause}?",
    ),
    "zh": (
        "请问是不是{clause}？",
        "我想确认一下，{clause}，对吗？",
        "你的意思是{clause}吗？",
    ),
}

_SUBJECT_BEFORE = frozenset(
    ("if", "then", "and", "but", "so", "when", "that", "because", "as", "until", "before",
     "after", "once", "or", "while", "where", "otherwise", "unless", "since", "though")
)  # fmt: skip
_LOWER_FIRST = frozenset(
    ("the", "a", "an", "to", "only", "if", "there", "this", "these", "those", "that", "it",
     "its", "in", "on", "at", "for", "when", "once", "after", "before", "we", "they", "he",
     "she", "there's", "it's")
)  # fmt: skip
_EN_PRONOUNS = {"your": "my", "yours": "mine", "yourself": "myself", "yourselves": "ourselves"}
_WORD = re.compile(r"[A-Za-z']+|[^A-Za-z']+")


def _turn_round_en(text: str) -> str:
    """``You should go`` -> ``I should go``, ``let you in`` -> ``let me in``, ``your`` -> ``my``."""
    out: list[str] = []
    previous = ""  # the last word seen, lower-cased ("" at the start or after , ; :)
    for piece in _WORD.findall(text):
        if not piece[0].isalpha() and piece[0] != "'":
            if any(mark in piece for mark in ",;:.!?"):
                previous = ""
            out.append(piece)
            continue
        low = piece.lower()
        if low == "you":
            out.append("I" if previous in _SUBJECT_BEFORE or previous == "" else "me")
        elif low in _EN_PRONOUNS:
            out.append(_EN_PRONOUNS[low])
        else:
            out.append(piece)
        previous = low
    return "".join(out)


_INNER_END: dict[Language, re.Pattern[str]] = {
    "en": re.compile(r"(?<=[A-Za-z0-9)'\"])[.!?;]\s+(?=\S)"),
    "zh": re.compile("[。！？；]+(?=.)"),
}
_INNER_JOIN: dict[Language, str] = {"en": "; ", "zh": "，"}


def oracle_question(node: ResponseNode, lang: Language, attempt: int) -> str:
    """The oracle's question for ``node``: its text as the seeker's own statement (its
    sentences joined into one, so that it is one question), in one of three templates
    (``attempt`` 0, 1, 2)."""
    text = strip_provider_prefix(node.text).rstrip("。！？.!? ")
    text = _INNER_END[lang].sub(_INNER_JOIN[lang], text)  # one question, one sentence
    if lang == "en":
        clause = _turn_round_en(text)
        first = clause.split(" ", 1)[0]
        if first.lower() in _LOWER_FIRST:
            clause = first.lower() + clause[len(first) :]
    else:
        clause = text.replace("你们", "我们").replace("你", "我")
    templates = _ORACLE_TEMPLATES[lang]
    return templates[attempt % len(templates)].format(clause=clause)


def task_question(source: _Briefed) -> str:
    """The opening question about the task (a task or a seeker's view)."""
    return _TASK_QUESTION[source.lang].format(task=source.background.task)


class OracleSeeker:
    """Scripted, with the tree in hand: the upper bound a provider allows (S = 1 if the
    provider releases every node asked for by its own text). A privileged control: handed the
    whole task, never ranked beside seekers under test."""

    privileged = True
    tries = 3  # questions per node (one per template) before moving on

    async def start(self, context: SeekerContext) -> None:
        self.task = context.task
        self.lang = context.lang
        self.received: list[str] = []  # labels seen in the provider's messages, in order
        self.attempts: Counter[str] = Counter()
        self.gate_tries = 0
        self.gate_open = False

    def _notice(self, message: str) -> None:
        text = strip_provider_prefix(message)
        if strip_provider_prefix(self.task.opening) in text:
            self.gate_open = True
        changed = True
        while changed:  # a child only counts once its parent was seen
            changed = False
            for node in self.task.tree(self.received).available():
                if strip_provider_prefix(node.text) in text:
                    self.received.append(node.label)
                    changed = True

    async def respond(self, provider_message: str) -> str:
        self._notice(provider_message)
        if not self.gate_open and self.gate_tries < self.tries:
            self.gate_tries += 1
            return task_question(self.task)
        for node in self.task.tree(self.received).available():
            if self.attempts[node.label] < self.tries:
                self.attempts[node.label] += 1
                return oracle_question(node, self.lang, self.attempts[node.label] - 1)
        return GOODBYES[self.lang]


_SMALL_TALK: dict[Language, tuple[str, ...]] = {
    "en": (
        "What is your favourite season, Jax?",
        "Do you know any good songs to sing around a campfire?",
        "How long have you lived around here?",
        "What do people here usually eat for breakfast?",
        "Do you think it is going to rain tomorrow?",
        "Which novel would you recommend for a quiet evening?",
        "Do you have any brothers or sisters?",
        "What colour do you like best?",
        "Have you ever been on a long sea voyage?",
        "What games do the children here like to play?",
        "Is there a festival in town this month?",
        "What did you do last weekend?",
        "Do you prefer tea or coffee?",
        "What was your favourite toy as a child?",
        "How is your family doing these days?",
        "Which holiday do you like most?",
    ),
    "zh": (
        "Jax，一年四季里你偏爱哪个季节？",
        "你知道有什么适合围着篝火唱的歌吗？",
        "你在这一带住了多久了？",
        "这里的人早餐一般吃什么？",
        "你觉得明天会下雨吗？",
        "有什么小说适合在安静的晚上读？",
        "你有兄弟姐妹吗？",
        "你最中意什么颜色？",
        "你坐船出过远海吗？",
        "这里的孩子们平时爱玩什么游戏？",
        "这个月城里有节日庆典吗？",
        "你上个周末做了什么？",
        "你爱喝茶还是爱喝咖啡？",
        "你小时候玩过什么玩具？",
        "你的家人最近还好吗？",
        "你过节时一般怎么庆祝？",
    ),
}
_FUNCTION_WORDS = frozenset(
    ("what", "is", "your", "you", "do", "know", "any", "good", "to", "how", "have", "here",
     "usually", "for", "it", "going", "think", "which", "would", "like", "best",
     "did", "last", "there", "in", "this", "the", "or", "as", "was", "doing", "these", "most",
     "ever", "been", "on", "be", "jax", "a")
)  # fmt: skip
_FUNCTION_PAIRS = frozenset(("什么", "怎么"))
_CJK_RUN = re.compile("[\u4e00-\u9fff]+")


def content_terms(question: str, lang: Language) -> list[str]:
    """What a question is about: its words outside a short list of function words (English),
    or its character pairs outside a list of function pairs (Chinese)."""
    if lang == "en":
        words = re.findall(r"[a-z]+", question.lower())
        return [w for w in words if w not in _FUNCTION_WORDS]
    pairs = [run[i : i + 2] for run in _CJK_RUN.findall(question) for i in range(len(run) - 1)]
    return [p for p in pairs if p not in _FUNCTION_PAIRS]


def task_words(source: _Briefed) -> str:
    """Everything the seeker was told (the background), lower-cased."""
    b = source.background
    parts = [b.role, b.task, *b.items, *b.skills, *b.scenes]
    return "\n".join(parts).lower()


def off_topic(question: str, source: _Briefed) -> bool:
    """No content term of ``question`` occurs in the background (English words as prefixes of
    the background's words, so ``song`` also rules out ``songs``). Only what the seeker was
    told is read: the tree stays hidden from this seeker too."""
    text = task_words(source)
    terms = content_terms(question, source.lang)
    if source.lang == "en":
        return not any(re.search(rf"\b{re.escape(t)}", text) for t in terms)
    return not any(t in text for t in terms)


class WrongSeeker:
    """Asks about the task once, then five fluent questions about nothing in its background
    (:func:`off_topic`; drawn from the seeker's own random stream), then says goodbye."""

    questions = 5

    async def start(self, context: SeekerView) -> None:
        self.view = context
        self.lang = context.lang
        pool = [q for q in _SMALL_TALK[context.lang] if off_topic(q, context)]
        self.plan = random.Random(context.seed).sample(pool, min(self.questions, len(pool)))
        self.turn = 0

    async def respond(self, provider_message: str) -> str:
        self.turn += 1
        if self.turn == 1:
            return task_question(self.view)
        if self.turn - 2 < len(self.plan):
            return self.plan[self.turn - 2]
        return GOODBYES[self.lang]


ReplayScript = Recording
"""Recorded seeker turns by episode id (``<task_id>#<trial>``)."""


class ReplaySeeker:
    """The recorded seeker turns of the same task and trial, one per provider message (the
    recording is ``options.extra['replay']``); running out ends the episode as the seeker's
    failure."""

    def __init__(self, options: PlayerOptions) -> None:
        self.replay = EpisodeReplay(options.extra, "--seeker-replay PATH")

    @classmethod
    def from_options(cls, options: PlayerOptions) -> ReplaySeeker:
        return cls(options)

    async def start(self, context: SeekerView) -> None:
        await self.replay.begin(context.task_id, context.trial, context)

    async def respond(self, provider_message: str) -> str:
        return await self.replay.respond(provider_message)


SEEKERS: dict[str, str] = {
    "llm": f"{__name__}:LLMSeeker",
    "human": f"{__name__}:HumanSeeker",
    "oracle": f"{__name__}:OracleSeeker",
    "wrong": f"{__name__}:WrongSeeker",
    "quitter": f"{__name__}:QuitterSeeker",
    "replay": f"{__name__}:ReplaySeeker",
    "agent": "todeval.benchmarks.clarq.agent_seeker:AgentSeeker",
    # floor controls: ask without clarifying (:mod:`.controls`)
    "dump": "todeval.benchmarks.clarq.controls:DumpSeeker",
    "echo-dump": "todeval.benchmarks.clarq.controls:EchoDumpSeeker",
    "cycle": "todeval.benchmarks.clarq.controls:CycleSeeker",
    "repeat-purpose": "todeval.benchmarks.clarq.controls:RepeatPurposeSeeker",
    "generic": "todeval.benchmarks.clarq.controls:GenericSeeker",
}

SEEKER: Role[Seeker] = Role("seeker", "seeker", Seeker, SEEKERS, view=seeker_view)


__all__ = [
    "DEFAULT_MAX_TOKENS",
    "SEEKER",
    "SEEKERS",
    "SEEKER_MODES",
    "SEEKER_TEMPLATES",
    "HumanSeeker",
    "LLMSeeker",
    "OracleSeeker",
    "QuitterSeeker",
    "ReplayScript",
    "ReplaySeeker",
    "SeekerMode",
    "WrongSeeker",
    "background_text",
    "clean_reply",
    "content_terms",
    "off_topic",
    "oracle_question",
    "task_question",
    "task_words",
]
