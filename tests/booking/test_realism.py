"""Simulator realism (issue 18, item 3): the LLM judge over agenda, corpus and LLM-user runs
on the local OpenAI-compatible test server (a real process), and the blind test's items and
scorer (the browser round trip is in ``test_realism_browser.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.annotation.items import merge_answers, read_items, read_key
from todeval.backends.scripted import Script
from todeval.benchmarks.booking.analysis.realism.blind import blind_score, parse_spec
from todeval.benchmarks.booking.analysis.realism.judge import (
    judge_prompts,
    parse_verdict,
    read_runs,
    render_prompt,
)
from todeval.cli import main
from todeval.errors import UsageError
from todeval.testing.openai_server import ServerConfig
from todeval.testing.server_process import ServerProcess

TASKS = ["test/001-sng0792", "test/002-sng1048"]

# the judge: a "please" turn is natural, an opening coherent, one wording gets no verdict
JUDGE = Script.model_validate(
    {
        "rules": [
            {"match": r">>> [^\n]*book it for 2", "reply": "It reads fine to me."},
            {"match": r">>> [^\n]*please", "reply": '{"naturalness": 5, "coherence": 4}'},
            {"match": r"nothing yet", "reply": 'Sure: {"naturalness": 4, "coherence": 5}'},
        ],
        "default": '{"naturalness": 2, "coherence": 3}',
    }
)

USER_SCRIPT = {
    "rules": [
        {"match": "(?i)reference", "reply": "done"},
        {"match": "(?i)how many|which day", "reply": "Just me, arriving friday for 5 nights."},
    ],
    "default": "That sounds good. What is the address?",
}


def _user_model(tmp: Path) -> str:
    path = tmp / "user.json"
    path.write_text(json.dumps(USER_SCRIPT), encoding="utf-8")
    return f"scripted:{path}"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("realism-runs")
    out = {}
    for user in ("agenda", "corpus", "llm"):
        argv = ["run", "booking", "--quiet", "--task-ids", *TASKS, "--user", user]
        argv += ["--out", str(tmp / user), "--max-turns", "6"]
        if user == "llm":
            argv += ["--user-model", _user_model(tmp)]
        assert main(argv) == 0
        out[user] = tmp / user
    return out


def test_parse_verdict() -> None:
    assert parse_verdict('{"naturalness": 4, "coherence": 2}') == {"naturalness": 4, "coherence": 2}
    assert parse_verdict('x {"a": 1} then {"coherence": 5, "naturalness": 1}') == {
        "naturalness": 1,
        "coherence": 5,
    }
    assert parse_verdict('{"naturalness": 6, "coherence": 2}') is None  # off the scale
    assert parse_verdict('{"naturalness": true, "coherence": 2}') is None
    assert parse_verdict("four and two") is None


def test_judge_end_to_end_on_the_test_server(
    runs: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("TODEVAL_CACHE_DIR", str(tmp_path / "cache"))
    simulators = read_runs(list(runs.values()))
    assert [s.name.split("(")[0] for s in simulators] == ["agenda", "corpus", "llm"]
    expected: dict[str, tuple[int, int, float, float]] = {}
    for sim in simulators:  # what the rules above give, turn by turn
        verdicts: list[tuple[int, int] | None] = []
        for d in sim.dialogues:
            for t in d.turns:
                assert t.text.lower() != "done"
                if "book it for 2" in t.text:
                    verdicts.append(None)
                elif "please" in t.text:
                    verdicts.append((5, 4))
                elif not t.history:
                    verdicts.append((4, 5))
                else:
                    verdicts.append((2, 3))
        good = [v for v in verdicts if v is not None]
        expected[sim.name] = (
            len(verdicts),
            len(verdicts) - len(good),
            sum(v[0] for v in good) / len(good),
            sum(v[1] for v in good) / len(good),
        )
    out = tmp_path / "realism.json"
    with ServerProcess(ServerConfig(script=JUDGE)) as server:
        argv = ["booking", "realism", "judge", *map(str, runs.values())]
        argv += ["--judge-model", f"openai:judge@{server.base_url}", "-o", str(out)]
        argv += ["--resamples", "200"]
        assert main(argv) == 0
        first = len(server.requests())
        assert main(argv) == 0  # again: every judgement from the cache
        assert len(server.requests()) == first
        assert main([*argv, "--no-cache"]) == 0  # bypassed: every turn asked again
        asked_again = len(server.requests()) - first
    table = capsys.readouterr().out
    assert "naturalness" in table and "agenda" in table and "corpus" in table
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["judge_model"] == "judge"
    prompts = judge_prompts()  # a repeated prompt (the same opening) is judged once: cached
    distinct = {render_prompt(prompts, t) for s in simulators for d in s.dialogues for t in d.turns}
    assert first == len(distinct) < sum(e[0] for e in expected.values()) == asked_again
    for fig in report["simulators"]:
        turns, failures, nat, coh = expected[fig["simulator"]]
        assert (fig["turns"], fig["failures"], fig["dialogues"]) == (turns, failures, 2)
        assert fig["naturalness"]["value"] == pytest.approx(nat)
        assert fig["coherence"]["value"] == pytest.approx(coh)
        for m in ("naturalness", "coherence"):
            assert fig[m]["ci_low"] <= fig[m]["value"] <= fig[m]["ci_high"]
            assert fig[m]["n"] == turns - failures
        usage = fig["usage"]  # every judge call accounted (the --no-cache run wrote the file)
        assert usage["calls"] == turns and usage["prompt_tokens"] > 0
        assert len(usage["call_latencies_s"]) == turns and usage["latency_s"] > 0
    assert "judge calls" in table and "cost $" in table


def test_judge_refuses_a_non_booking_directory(tmp_path: Path) -> None:
    argv = ["booking", "realism", "judge", str(tmp_path), "--judge-model", "scripted:x.json"]
    assert main(argv) == 3


def test_blind_items_export_and_score(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TODEVAL_CACHE_DIR", str(tmp_path / "cache"))
    spec = f"booking-realism:test,user-model={_user_model(tmp_path)},n=12,seed=3"
    out = tmp_path / "blind.jsonl"
    argv = ["annotate", "export", "--from", spec, "--kind", "pairwise", "--n", "50"]
    assert main([*argv, "-o", str(out)]) == 0
    items = read_items(out)
    key = read_key(tmp_path / "blind.key.jsonl")
    assert 0 < len(items) <= 12
    texts = out.read_text(encoding="utf-8")
    assert "done" not in [c.text for i in items for c in i.candidates]
    sides = set()
    for item in items:
        assert item.kind == "pairwise" and not item.cant_tell
        assert item.turns[-1].speaker == "Clerk" and item.turns[0].speaker == "Customer"
        real = next(iter(key[item.id]))
        fake = "b" if real == "a" else "a"
        sides.add(real)
        texts_by = {c.id: c.text for c in item.candidates}
        assert texts_by[fake] in (
            "Just me, arriving friday for 5 nights.",
            "That sounds good. What is the address?",
        )
    assert sides == {"a", "b"}  # the order is randomised
    assert "gold" not in texts
    # same spec, same items (seeded)
    again = tmp_path / "again.jsonl"
    assert main([*argv, "-o", str(again)]) == 0
    assert again.read_text(encoding="utf-8") == texts
    # scoring: a perfect annotator, one always answering "a", and their agreement
    ids = [i.id for i in items]
    picks = {"ann": {i: next(iter(key[i])) for i in ids}, "bob": dict.fromkeys(ids, "a")}
    for name, chosen in picks.items():
        path = tmp_path / f"blind.answers.{name}.jsonl"
        rows = [
            {"item": i, "annotator": name, "choice": [chosen[i]], "export": "blind"} for i in ids
        ]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    files = [tmp_path / "blind.answers.ann.jsonl", tmp_path / "blind.answers.bob.jsonl"]
    report = blind_score(merge_answers(files), key, resamples=50)
    n_a = sum(1 for i in ids if key[i] == frozenset({"a"}))
    per = {a.who: a for a in report.per_annotator}
    assert (per["ann"].correct, per["ann"].n, per["ann"].value) == (len(ids), len(ids), 1.0)
    assert per["bob"].correct == n_a
    assert report.all_answers.correct == len(ids) + n_a
    assert per["ann"].wilson_low is not None and per["ann"].wilson_low < 1.0
    # majority: items both got right are right, the others are ties (left out)
    assert (report.majority.correct, report.majority.n) == (n_a, n_a)
    assert report.majority_ties == len(ids) - n_a
    assert report.cohen is not None and report.fleiss is not None
    assert main(["booking", "realism", "score", *map(str, files), "--resamples", "50"]) == 0


def test_blind_spec_errors() -> None:
    with pytest.raises(UsageError, match="user-model"):
        parse_spec("test")
    with pytest.raises(UsageError, match="corpus dialogues"):
        parse_spec("train,user-model=scripted:x")
    with pytest.raises(UsageError, match="unknown option"):
        parse_spec("test,user-model=scripted:x,colour=red")
    assert parse_spec("dev,user-model=openai:m@http://h:1/v1,n=3").n == 3


def test_the_llm_user_continues_the_corpus_history_as_its_own() -> None:
    import asyncio

    from todeval.backends.factory import make_backend
    from todeval.backends.types import GenerationRequest
    from todeval.benchmarks.booking.analysis.realism.blind import continue_history, prefix_points
    from todeval.benchmarks.booking.tasks import load_tasks

    seen: list[GenerationRequest] = []

    def reply(request: GenerationRequest) -> str:
        seen.append(request)
        return "Customer: Could I get the phone number too?"

    task = load_tasks("test")[0]
    point = prefix_points(task)[1]
    prefix = [(t.speaker, t.text.strip()) for t in task.corpus_turns[:point]]
    model = make_backend("scripted:inline", script=reply)
    text = asyncio.run(continue_history(model, task, prefix, seed=0))
    assert text == "Could I get the phone number too?"  # the LLM user's own cleaning
    (request,) = seen
    roles = [m.role for m in request.messages]
    assert roles[:2] == ["system", "user"]  # the brief, the opening cue
    assert task.message in (request.messages[0].content or "")
    assert roles[2:] == ["assistant" if s == "user" else "user" for s, _ in prefix]
    assert [m.content for m in request.messages[2:]] == [t for _, t in prefix]
    assert prefix[-1][0] == "system" and point % 2 == 0
