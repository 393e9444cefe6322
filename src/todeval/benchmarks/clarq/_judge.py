"""The success judge: our own prompt through the backends, and verdicts cached by content.

A verdict answers one question: does any of the leftover predictions convey this leftover gold
sentence, given its purpose? It is stored under a key made of that content and the judge
model's name (:func:`verdict_key`), never of a prompt text, so verdicts recorded with the
original evaluator's prompt (``data/clarq/judge_verdicts.jsonl.gz``, gpt-4o-2024-05-13) answer
the same questions asked with ours.

Lookups go through a :class:`VerdictStore`: the shipped recorded verdicts (read-only package
data) under a user file (JSON lines, default next to the response cache) where new verdicts are
appended. Without a backend (``--offline``, or no ``--judge-model``) a question the store cannot
answer stays unanswered: the scorer reports it as unjudged, never as a failure.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from todeval.backends.cache import default_cache_path
from todeval.backends.sampling import generate_accounted
from todeval.backends.types import Backend, ChatMessage, GenerationRequest
from todeval.benchmarks.clarq._text import (
    Language,
    strip_sentence_end,
    with_sentence_end,
)
from todeval.core import safejson
from todeval.core.appendlog import repair_tail
from todeval.core.records import CallUsage
from todeval.errors import BadInputError, InfrastructureError

RECORDED_JUDGE = "gpt-4o-2024-05-13"
"""The judge model of the released results (temperature 0, seed 8848, JSON mode)."""
KEY_FORMAT = 1
VERDICTS_FILE = "clarq_verdicts.jsonl"

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "analysis": {"type": "string"},
        "match": {"type": "boolean"},
    },
    "required": ["analysis", "match"],
    "additionalProperties": False,
}


class JudgeQuestion(BaseModel):
    """What a verdict depends on (besides the judge model)."""

    model_config = ConfigDict(frozen=True)

    language: Language = Field(description="of the gold sentence (decides the prompt language)")
    gold: str = Field(description="the leftover gold sentence, as cleaned by the matcher")
    purpose: str = Field(description="what the gold sentence clarifies")
    predictions: list[str] = Field(description="the leftover predictions, as cleaned")


def predictions_block(predictions: Iterable[str], language: Language) -> str:
    """The numbered list of predictions, each with a final sentence mark (the judge's view)."""
    return "\n".join(
        f"{i}. {with_sentence_end(p, language)}" for i, p in enumerate(predictions, start=1)
    )


def key_fields(
    language: Language, gold: str, purpose: str, block: str, model: str
) -> dict[str, Any]:
    """The canonical content of a key. Trailing sentence marks of the gold sentence and the
    purpose are ignored, the predictions are taken as their numbered list (so a prediction
    holding line breaks can never be split differently from how a judge saw it)."""
    return {
        "format": KEY_FORMAT,
        "language": language,
        "gold": strip_sentence_end(gold),
        "purpose": strip_sentence_end(purpose),
        "predictions": block,
        "model": model,
    }


def digest(fields: Mapping[str, Any]) -> str:
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def verdict_key(question: JudgeQuestion, model: str) -> str:
    """Content address of a verdict: language, gold sentence, purpose, predictions, model."""
    block = predictions_block(question.predictions, question.language)
    return digest(key_fields(question.language, question.gold, question.purpose, block, model))


class AskedQuestion(Protocol):
    """What a verdict records of the question it answers."""

    @property
    def language(self) -> Language: ...

    @property
    def gold(self) -> str: ...

    @property
    def purpose(self) -> str: ...

    @property
    def predictions(self) -> list[str]: ...


class VerdictEntry(BaseModel):
    """One stored verdict (one line of a verdict file)."""

    key: str
    model: str
    language: Language
    gold: str
    purpose: str
    predictions: list[str]
    match: bool | None = Field(description="None: the answer had no 'match' field")
    analysis: str = ""
    origin: Literal["recorded", "judge"] = Field(
        "judge", description="recorded: converted from the released judge cache"
    )

    @classmethod
    def answering(
        cls,
        question: AskedQuestion,
        *,
        key: str,
        model: str,
        match: bool | None,
        analysis: str,
        origin: Literal["recorded", "judge"],
    ) -> VerdictEntry:
        """The stored form of ``model``'s verdict on ``question``."""
        return cls(
            key=key,
            model=model,
            language=question.language,
            gold=question.gold,
            purpose=question.purpose,
            predictions=question.predictions,
            match=match,
            analysis=analysis,
            origin=origin,
        )


def read_verdict_lines(lines: Iterable[str], where: str) -> tuple[dict[str, VerdictEntry], int]:
    """Parse JSON lines into entries by key (a later line wins); returns (entries, bad lines)."""
    entries: dict[str, VerdictEntry] = {}
    bad = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            entry = VerdictEntry.model_validate_json(line)
        except ValidationError:
            bad += 1
            continue
        entries[entry.key] = entry
    return entries, bad


def recorded_verdicts() -> dict[str, VerdictEntry]:
    """The shipped verdicts of the released evaluator (read-only package data)."""
    node = resources.files("todeval") / "data" / "clarq" / "judge_verdicts.jsonl.gz"
    text = gzip.decompress(node.read_bytes()).decode("utf-8")
    entries, bad = read_verdict_lines(text.splitlines(), str(node))
    if bad:
        raise BadInputError(f"{node}: {bad} malformed verdict lines (reinstall todeval)")
    return entries


def default_verdicts_path() -> Path:
    """The user's verdict file, next to the response cache (``$TODEVAL_CACHE_DIR`` ...)."""
    return default_cache_path().parent / VERDICTS_FILE


class VerdictStore:
    """Verdicts by key: read-only layers (the recorded verdicts) over one appendable file."""

    def __init__(
        self,
        *,
        layers: Iterable[Mapping[str, VerdictEntry]] = (),
        path: str | Path | None = None,
    ) -> None:
        self._layers = list(layers)
        self.path = Path(path) if path is not None else None
        self._own: dict[str, VerdictEntry] = {}
        self._repaired = False
        self.skipped_lines = 0
        if self.path is not None and self.path.exists():
            try:
                text = self.path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise BadInputError(f"{self.path}: cannot read the verdict cache ({exc})") from None
            self._own, self.skipped_lines = read_verdict_lines(text.splitlines(), str(self.path))

    @classmethod
    def default(cls, path: str | Path | None = None, *, recorded: bool = True) -> VerdictStore:
        """The recorded verdicts (unless ``recorded=False``) under the user's verdict file."""
        layers = [recorded_verdicts()] if recorded else []
        return cls(layers=layers, path=default_verdicts_path() if path is None else path)

    def add_layer(self, layer: Mapping[str, VerdictEntry]) -> None:
        """One more read-only layer, looked up after the others (before the user's file)."""
        self._layers.append(layer)

    def get(self, key: str) -> VerdictEntry | None:
        for layer in self._layers:
            entry = layer.get(key)
            if entry is not None:
                return entry
        return self._own.get(key)

    def put(self, entry: VerdictEntry) -> None:
        """Keep a new verdict (and append it to the file, if the store has one)."""
        self._own[entry.key] = entry
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self._repaired:  # a torn last line (a kill mid-write) set aside first
                repair_tail(self.path)
                self._repaired = True
            with self.path.open("a", encoding="utf-8") as out:
                out.write(entry.model_dump_json() + "\n")
        except OSError as exc:
            raise BadInputError(
                f"{self.path}: cannot write the verdict cache ({exc.strerror or exc})"
            ) from None

    def __len__(self) -> int:
        keys: set[str] = set(self._own)
        for layer in self._layers:
            keys.update(layer)
        return len(keys)


_SYSTEM = {
    "en": "You grade a clarification dialogue. The information provider had to hand over "
    "specific pieces of required information; you check whether one required piece reached "
    "the seeker in any of the messages the provider actually sent.",
    "zh": "你负责评判一段澄清对话。信息提供者需要交出若干条必需信息；你要检查其中一条必需信息"
    "是否出现在提供者实际发出的某条消息里。",
}

_USER = {
    "en": "Required information:\n{gold}\n\nWhat it clarifies:\n{purpose}\n\n"
    "Messages the provider sent (numbered):\n{block}\n\n"
    "Does at least one numbered message convey the required information itself: the same "
    "specific answer (the same place, item, person, skill, order or condition), so that the "
    "uncertainty described under 'What it clarifies' is settled? A message that only lists "
    "several candidates, repeats the question, offers general encouragement or settles a "
    "different point does not count. The wording may differ; the specific content must "
    "agree.\n\n"
    'Reply with a JSON object: {{"analysis": "<one or two sentences>", "match": true or '
    "false}}.",
    "zh": "必需信息：\n{gold}\n\n这条信息要澄清的内容：\n{purpose}\n\n"
    "提供者实际发出的消息（已编号）：\n{block}\n\n"
    "是否至少有一条编号消息传达了这条必需信息本身，即给出了同样具体的答案（同一个地点、物品、"
    "人物、技能、顺序或条件），从而消除“要澄清的内容”所描述的不确定性？只列出几个候选项、"
    "重复问题、泛泛鼓励或解决了另一个问题的消息都不算。措辞可以不同，但具体内容必须一致。\n\n"
    '请用JSON对象回答：{{"analysis": "<一两句分析>", "match": true 或 false}}。',
}


def judge_messages(question: JudgeQuestion) -> list[ChatMessage]:
    """Our judge prompt (system + user) for one question, in the gold sentence's language."""
    lang = question.language
    user = _USER[lang].format(
        gold=with_sentence_end(question.gold, lang),
        purpose=with_sentence_end(question.purpose, lang),
        block=predictions_block(question.predictions, lang),
    )
    return [
        ChatMessage(role="system", content=_SYSTEM[lang]),
        ChatMessage(role="user", content=user),
    ]


class JudgeReplyError(ValueError):
    """The judge's reply is not a JSON object with a boolean (or absent) ``match``."""


def _json_object(text: str) -> dict[str, Any]:
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`")
        body = body[4:] if body.lower().startswith("json") else body
    candidates = [body]
    start, end = body.find("{"), body.rfind("}")
    if 0 <= start < end:
        candidates.append(body[start : end + 1])
    for candidate in candidates:
        try:
            value = safejson.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise JudgeReplyError(f"not a JSON object: {text[:80]!r}")


def parse_verdict(text: str) -> tuple[bool | None, str]:
    """``(match, analysis)`` from a judge reply; ``match`` is None when the field is absent."""
    value = _json_object(text)
    analysis = value.get("analysis", "")
    analysis = analysis if isinstance(analysis, str) else json.dumps(analysis, ensure_ascii=False)
    if "match" not in value:
        return None, analysis
    match = value["match"]
    if not isinstance(match, bool):
        raise JudgeReplyError(f"'match' is {match!r}, not a boolean")
    return match, analysis


Origin = Literal["recorded", "cache", "judge", "release", "unjudged", "error"]
"""Where a verdict came from: the shipped recorded verdicts, the user's verdict file, a new
judge call, the release record of a self-play dialogue (see
:func:`todeval.benchmarks.clarq._scoring.score_episode`), or none (unjudged, a judge error)."""


class JudgeAnswer(BaseModel):
    """The verdict on one question and where it came from (``None``: no verdict)."""

    key: str
    match: bool | None = None
    origin: Origin
    error: str = ""

    @property
    def decided(self) -> bool:
        return self.origin not in ("unjudged", "error")


class Judge:
    """Answers judge questions from a :class:`VerdictStore`, asking ``backend`` on a miss.

    ``model`` names the judge in the keys (a backend's model name, or the recorded judge);
    without a backend a miss is unjudged. Identical questions in flight are asked once.
    """

    def __init__(
        self,
        store: VerdictStore,
        *,
        model: str = RECORDED_JUDGE,
        backend: Backend | None = None,
        seed: int = 0,
        max_tokens: int | None = 512,
    ) -> None:
        self.store = store
        self.model = model
        self.backend = backend
        self.seed = seed
        self.max_tokens = max_tokens
        self.usage: list[CallUsage] = []
        self.calls = 0
        self.errors: list[str] = []
        self._pending: dict[str, asyncio.Future[JudgeAnswer]] = {}

    @property
    def is_recorded_model(self) -> bool:
        return self.model == RECORDED_JUDGE

    @property
    def offline(self) -> bool:
        return self.backend is None

    async def answer(self, question: JudgeQuestion) -> JudgeAnswer:
        key = verdict_key(question, self.model)
        entry = self.store.get(key)
        if entry is not None:
            origin: Origin = "recorded" if entry.origin == "recorded" else "cache"
            return JudgeAnswer(key=key, match=entry.match, origin=origin)
        if self.backend is None:
            return JudgeAnswer(key=key, origin="unjudged")
        pending = self._pending.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[JudgeAnswer] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            result = await self._ask(self.backend, key, question)
            future.set_result(result)
            return result
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning when nobody waits
            raise
        except BaseException:  # cancelled: the waiters are cancelled too
            future.cancel()
            raise
        finally:
            del self._pending[key]

    async def _ask(self, backend: Backend, key: str, question: JudgeQuestion) -> JudgeAnswer:
        request = GenerationRequest(
            messages=judge_messages(question),
            response_schema=VERDICT_SCHEMA,
            temperature=0.0,
            max_tokens=self.max_tokens,
            seed=self.seed,
        )
        self.calls += 1
        try:
            result = await generate_accounted(backend, request, role="judge", usage=self.usage)
        except InfrastructureError as exc:  # the backends' own subclasses it
            self.errors.append(str(exc))
            return JudgeAnswer(key=key, origin="error", error=str(exc))
        try:
            match, analysis = parse_verdict(result.text)
        except JudgeReplyError as exc:
            self.errors.append(str(exc))
            return JudgeAnswer(key=key, origin="error", error=str(exc))
        self.store.put(
            VerdictEntry.answering(
                question, key=key, model=self.model, match=match, analysis=analysis, origin="judge"
            )
        )
        return JudgeAnswer(key=key, match=match, origin="judge")


__all__ = [
    "KEY_FORMAT",
    "RECORDED_JUDGE",
    "VERDICT_SCHEMA",
    "Judge",
    "JudgeAnswer",
    "JudgeQuestion",
    "JudgeReplyError",
    "VerdictEntry",
    "VerdictStore",
    "default_verdicts_path",
    "digest",
    "judge_messages",
    "key_fields",
    "parse_verdict",
    "predictions_block",
    "read_verdict_lines",
    "recorded_verdicts",
    "verdict_key",
]
