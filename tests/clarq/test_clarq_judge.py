"""The judge: keys by content, the converted recorded verdicts, the store, and the end-to-end
path against the real OpenAI-compatible test server."""

from __future__ import annotations

import asyncio
import gzip
import json
from importlib import resources
from pathlib import Path

import pytest

from tests.clarq.helpers import (
    RECORDED_CACHE,
    dialogue,
    result_entry,
    run_cli,
    write_result_file,
)
from todeval.backends import Script, make_backend
from todeval.benchmarks.clarq import (
    ClarqSummary,
    Judge,
    JudgeQuestion,
    VerdictEntry,
    VerdictStore,
    judge_messages,
    load_tasks,
    prematch,
    recorded_verdicts,
    verdict_key,
)
from todeval.benchmarks.clarq._judge import JudgeReplyError, parse_verdict
from todeval.benchmarks.clarq.tools._convert_judge_cache import convert, parse_recorded_prompt
from todeval.benchmarks.clarq.tools._convert_judge_cache import main as convert_main
from todeval.testing.openai_server import ServerConfig
from todeval.testing.server_process import ServerProcess

SHIPPED = resources.files("todeval") / "data" / "clarq" / "judge_verdicts.jsonl.gz"
QUESTION = JudgeQuestion(
    language="en", gold="go north", purpose="which road", predictions=["a", "b\nc"]
)


def test_conversion_rebuilds_the_shipped_verdicts_byte_for_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "verdicts.jsonl.gz"
    assert convert_main([str(RECORDED_CACHE), "-o", str(out)]) == 0
    assert "560 verdicts (327 en, 233 zh), 0 skipped, 0 conflicting" in capsys.readouterr().out
    assert out.read_bytes() == SHIPPED.read_bytes()
    entries = recorded_verdicts()
    assert len(entries) == 560
    assert all(e.origin == "recorded" and e.model == "gpt-4o-2024-05-13" for e in entries.values())
    assert sum(e.match is True for e in entries.values()) > 0


def test_recorded_prompts_parse_back_to_the_matchers_questions() -> None:
    """A recorded prompt and the matcher's own question give the same key."""
    document = json.loads(gzip.decompress(RECORDED_CACHE.read_bytes()))
    by_key = convert(document).entries
    prompt = (
        "Intro text.\n\nGold Information and its Purpose：\n1. you should take the north "
        "road.\t\t\t\tPurpose of Information: Which road to take.\n\nGenerated Information：\n"
        "1. maybe the west road.\n2. steps:\n\n1. walk\n2. rest\n\nthen go.\n3. \n\n"
        "Carefully determine ... the end."
    )
    parsed = parse_recorded_prompt(prompt)
    assert parsed.gold == "you should take the north road"
    assert parsed.purpose == "Which road to take."
    assert parsed.predictions == [
        "maybe the west road",
        "steps:\n\n1. walk\n2. rest\n\nthen go",
        "",
    ]
    # the matcher, from raw transcripts, asks exactly this question
    pre = prematch(
        ["Jax: start", "Jax: You should take the north road!"],
        ["Which road to take"],
        ["Jax: Maybe the west road?", "Steps:\n\n1. walk\n2. rest\n\nThen go.", "..."],
    )
    assert pre.leftovers is not None
    asked = JudgeQuestion(
        language="en",
        gold=pre.leftovers.gold[0],
        purpose=pre.leftovers.purposes[0] or "",
        predictions=pre.leftovers.predictions,
    )
    recorded = {"messages": [{"role": "user", "content": prompt}], "response": '{"match": true}'}
    synthetic = convert({"entries": [recorded]})
    assert list(synthetic.entries) == [verdict_key(asked, "gpt-4o-2024-05-13")]
    assert len(by_key) == 560


def test_chinese_recorded_prompt() -> None:
    prompt = (
        "说明。\n\n正确信息及其信息用途：\n1. 你应该走北门。\t\t\t\t信息用途：说明走哪个门。\n\n"
        "生成信息：\n1. 你可以走南门。\n\n仔细判断……"
    )
    parsed = parse_recorded_prompt(prompt)
    assert (parsed.language, parsed.gold, parsed.predictions) == (
        "zh",
        "你应该走北门",
        ["你可以走南门"],
    )


def test_keys_ignore_trailing_marks_but_not_content_order_or_model() -> None:
    key = verdict_key(QUESTION, "m")
    assert key == verdict_key(QUESTION.model_copy(update={"purpose": "which road."}), "m")
    assert key == verdict_key(QUESTION.model_copy(update={"gold": "go north!"}), "m")
    assert key != verdict_key(QUESTION, "other-model")
    assert key != verdict_key(QUESTION.model_copy(update={"predictions": ["b\nc", "a"]}), "m")
    assert key != verdict_key(QUESTION.model_copy(update={"language": "zh"}), "m")


def test_parse_verdict() -> None:
    assert parse_verdict('{"analysis": "x", "match": true}') == (True, "x")
    assert parse_verdict('```json\n{"match": false}\n```') == (False, "")
    assert parse_verdict('Sure: {"analysis": "y"} done') == (None, "y")  # no match field
    for bad in ("yes", '{"match": "true"}', "[1, 2]"):
        with pytest.raises(JudgeReplyError):
            parse_verdict(bad)


def test_our_prompt_is_our_own_and_in_the_gold_language() -> None:
    en = judge_messages(QUESTION)
    assert [m.role for m in en] == ["system", "user"]
    user = en[1].content or ""
    assert "go north." in user and "1. a.\n2. b\nc." in user and "which road." in user
    assert "Gold Information" not in user  # not the original's wording
    zh = judge_messages(
        JudgeQuestion(language="zh", gold="走北门", purpose="哪个门", predictions=["走南门"])
    )
    assert "走北门。" in (zh[1].content or "") and "必需信息" in (zh[1].content or "")


def _entry(key: str, match: bool, origin: str = "judge") -> VerdictEntry:
    return VerdictEntry.model_validate(
        {"key": key, "model": "m", "language": "en", "gold": "g", "purpose": "p",
         "predictions": ["x"], "match": match, "origin": origin}
    )  # fmt: skip


def test_store_layers_a_user_file_under_read_only_recorded_verdicts(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "verdicts.jsonl"
    recorded = {"k1": _entry("k1", True, "recorded")}
    store = VerdictStore(layers=[recorded], path=path)
    store.put(_entry("k2", False))
    store.put(_entry("k1", False))  # never overrides the recorded layer
    assert store.get("k1") is not None and store.get("k1").match is True  # type: ignore[union-attr]
    assert len(store) == 2 and recorded["k1"].match is True
    with path.open("a", encoding="utf-8") as out:
        out.write("{broken\n")
    again = VerdictStore(path=path)
    assert again.get("k2") is not None and again.skipped_lines == 1
    assert VerdictStore.default(path).get("k2") is not None


def test_judge_reply_errors_are_unjudged_and_not_stored() -> None:
    store = VerdictStore()
    backend = make_backend("scripted:inline", script=lambda request: "I think so")
    judge = Judge(store, model="inline", backend=backend)
    answer = asyncio.run(judge.answer(QUESTION))
    assert (answer.origin, answer.decided, answer.match) == ("error", False, None)
    assert len(store) == 0 and judge.errors and judge.calls == 1


def test_identical_questions_in_flight_are_asked_once() -> None:
    calls: list[int] = []

    async def reply(request: object) -> str:
        calls.append(1)
        await asyncio.sleep(0.01)
        return '{"analysis": "", "match": true}'

    judge = Judge(
        VerdictStore(), model="inline", backend=make_backend("scripted:inline", script=reply)
    )

    async def both() -> list[bool | None]:
        answers = await asyncio.gather(judge.answer(QUESTION), judge.answer(QUESTION))
        return [a.match for a in answers]

    assert asyncio.run(both()) == [True, True] and len(calls) == 1


def _judge_file(tmp_path: Path) -> Path:
    """Task en/test/Gather_Resources-0 with every gold sentence released verbatim except one,
    which is paraphrased: exactly one judge question. Task 1 of the type: no dialogue."""
    tasks = load_tasks("en", "test")
    first, second = tasks[0], tasks[1]
    answers = [f"Jax: {n.text}" for n in first.nodes]
    answers[3] = "Jax: Head for the northern mine; only that one holds rubies."
    entry = result_entry(first, [dialogue(first.gold_messages()[0], answers)])
    return write_result_file(tmp_path / "run.json", [[entry, result_entry(second, [])]])


def test_judge_end_to_end_against_the_test_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], _private_cache_dir: Path
) -> None:
    path = _judge_file(tmp_path)
    script = Script.model_validate(
        {"rules": [{"match": "northern mine", "reply": '{"analysis": "same mine", "match": true}'}],
         "default": '{"analysis": "no", "match": false}'}
    )  # fmt: skip
    with ServerProcess(ServerConfig(script=script)) as server:
        spec = f"openai:judge-x@{server.base_url}"
        out = tmp_path / "online.json"
        argv = ["score", "clarq", str(path), "--judge-model", spec, "-o", str(out),
                "--resamples", "50"]  # fmt: skip
        code, stdout, stderr = run_cli(argv, capsys)
        assert code == 0, stderr
        bodies = [r["body"] for r in server.requests()]
        assert server.stats()["requests"] == 1
        # the same verdict again: from the cache, nothing sent
        offline = tmp_path / "offline.json"
        code, _, stderr = run_cli(
            ["score", "clarq", str(path), "--judge-model", spec, "-o", str(offline)], capsys
        )
        assert code == 0, stderr
        assert server.stats()["requests"] == 1
    (body,) = bodies
    assert body["model"] == "judge-x" and body["temperature"] == 0
    assert body["response_format"]["type"] == "json_schema"
    assert body["messages"][0]["role"] == "system"
    assert (
        "head for the northern mine; only that one holds rubies." in body["messages"][1]["content"]
    )

    summary = ClarqSummary.model_validate_json(out.read_text(encoding="utf-8"))
    assert summary.judge.new_calls == 1 and summary.judge.online
    assert (summary.routes.judge_success, summary.routes.missing) == (1, 259)
    assert summary.metrics["clarq.success"].micro.value == pytest.approx(1 / 260)
    assert summary.usage["judge"].calls == 1
    assert any("judge model 'judge-x' is not the recorded judge" in w for w in summary.warnings)
    assert any("259 of 260 test tasks" in w or "test tasks have no dialogue" in w
               for w in summary.warnings)  # fmt: skip
    assert "judge judge-x (its own verdicts, online)" in stdout

    again = ClarqSummary.model_validate_json(offline.read_text(encoding="utf-8"))
    assert again.judge.new_calls == 0 and again.judge.from_cache == 1
    assert again.metrics["clarq.success"].micro.value == pytest.approx(1 / 260)

    # the verdict landed in the default cache file, keyed by content and model
    cache_file = _private_cache_dir / "clarq_verdicts.jsonl"
    (line,) = cache_file.read_text(encoding="utf-8").splitlines()
    entry = VerdictEntry.model_validate_json(line)
    assert entry.model == "judge-x" and entry.match is True and entry.origin == "judge"
    question = JudgeQuestion(
        language=entry.language, gold=entry.gold, purpose=entry.purpose,
        predictions=entry.predictions,
    )  # fmt: skip
    assert entry.key == verdict_key(question, "judge-x")
    assert entry.gold == "you should go to the north mine, as only the north mine has rubies"


def test_offline_with_a_cache_miss_is_unjudged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _judge_file(tmp_path)
    out = tmp_path / "s.json"
    argv = ["score", "clarq", str(path), "--offline", "--judge-model",
            "openai:judge-y@http://127.0.0.1:9/v1", "-o", str(out), "--resamples", "20",
            "--judge-cache", str(tmp_path / "own.jsonl")]  # fmt: skip
    code, stdout, _ = run_cli(argv, capsys)
    assert code == 0
    summary = ClarqSummary.model_validate_json(out.read_text(encoding="utf-8"))
    assert summary.judge.unjudged == 1 and summary.routes.unjudged == 1
    assert summary.metrics["clarq.success"].micro.n == 259
    assert summary.judge.verdict_file == str(tmp_path / "own.jsonl")
    assert "1 of 260 dialogues are unjudged (offline)" in stdout
    assert not (tmp_path / "own.jsonl").exists()
