"""Problem Weaver: the shipped scripted set regenerates byte for byte, set files are checked,
the scripted track scores gold/garbage/random as it must, hard distractors, ``--check``, and
``llm`` mode with a blind verifier against the local OpenAI-compatible test server."""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from todeval.backends.scripted import Script, ScriptedReply, ScriptRule
from todeval.benchmarks.bargain import weaver
from todeval.benchmarks.bargain.data import (
    LabelledTurn,
    candidates,
    labels_of,
    load_track,
    new_key,
    parent_groups,
)
from todeval.benchmarks.bargain.hierarchy import default_hierarchy
from todeval.cli import main
from todeval.errors import BadInputError
from todeval.testing.openai_server import ServerConfig
from todeval.testing.server_process import ServerProcess

# The content hash of the shipped set (data/bargain/scripted-v1.jsonl.gz). Changing the
# hierarchy, the templates or the weaver changes it: regenerate the set and update this.
SHIPPED_SHA256 = "9eeb6807d92ce25b2965df6b4e2d2ee37002ca02022413217abc45fac294a3f3"


def _shipped_bytes() -> bytes:
    node = resources.files("todeval") / "data" / "bargain" / weaver.DEFAULT_SET
    return gzip.decompress(node.read_bytes())


def test_shipped_set_regenerates_byte_identically() -> None:
    header, tasks = weaver.default_set()
    assert header.mode == "template" and header.seed == weaver.DEFAULT_SEED
    assert header.n_tasks == len(tasks) >= 1000
    again_header, again = weaver.regenerate(header)
    rebuilt = weaver.set_bytes(again_header, again)
    assert rebuilt == _shipped_bytes()
    assert hashlib.sha256(weaver.task_lines(again)).hexdigest() == header.content_sha256
    assert header.content_sha256 == SHIPPED_SHA256


def test_generate_command_rebuilds_the_shipped_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "set.jsonl.gz"
    assert main(["data", "bargain", "--generate", "-o", str(out)]) == 0
    assert "identical to the shipped set" in capsys.readouterr().out
    shipped = (resources.files("todeval") / "data" / "bargain" / weaver.DEFAULT_SET).read_bytes()
    assert gzip.decompress(out.read_bytes()) == gzip.decompress(shipped)
    assert out.read_bytes() == shipped  # gzip without a timestamp: equal bytes too
    assert main(["data", "bargain", "--generate", "-n", "5", "--seed", "3",
                 "-o", str(tmp_path / "small.jsonl.gz")]) == 0  # fmt: skip
    assert "differs from the shipped set" in capsys.readouterr().out


def test_tasks_are_well_formed() -> None:
    h = default_hierarchy()
    templates = weaver.default_templates()
    _, tasks = weaver.default_set()
    seen: set[str] = set()
    multi = 0
    for task in tasks:
        used = [i for t in task.turns for i in t.intents]
        assert len(used) == len(set(used)), task.task_id  # no intent twice in a task
        for i, turn in enumerate(task.turns):
            assert 1 <= len(turn.intents) <= 3 and turn.buyer
            assert (turn.seller is None) == (i == len(task.turns) - 1)
            assert "{" not in turn.buyer and "}" not in turn.buyer  # every slot filled
            for intent in turn.intents:
                assert templates.intents[intent].fits(task.category), (task.task_id, intent)
            multi += len(turn.intents) > 1
        assert templates.intents[task.turns[0].intents[0]].stage == "opening"
        seen.update(used)
    assert seen == set(h.intent_ids)  # every intent occurs
    assert 0.2 < multi / sum(len(t.turns) for t in tasks) < 0.6
    assert len({t.post_id for t in tasks}) == len(tasks)  # distinct listings
    assert {t.category for t in tasks} == set(weaver.CATEGORIES)


def test_same_seed_same_tasks_other_seed_other_tasks() -> None:
    a = weaver.weave_templates(20, 7)
    assert weaver.task_lines(a) == weaver.task_lines(weaver.weave_templates(20, 7))
    assert weaver.task_lines(a) != weaver.task_lines(weaver.weave_templates(20, 8))


def test_a_changed_set_file_is_refused(tmp_path: Path) -> None:
    lines = _shipped_bytes().splitlines(keepends=True)
    tampered = lines[0] + lines[1].replace(b"Buyer", b"Buyer").replace(
        b'"buyer": "', b'"buyer": "X'
    )
    path = tmp_path / "t.jsonl"
    path.write_bytes(tampered + b"".join(lines[2:]))
    with pytest.raises(BadInputError, match="content hash differs"):
        weaver.read_set(path)
    path.write_bytes(b"".join(lines[:11]))
    with pytest.raises(BadInputError, match="header says 1000 tasks"):
        weaver.read_set(path)
    path.write_bytes(b'{"kind": "other"}\n')
    with pytest.raises(BadInputError, match="not a scripted-set header"):
        weaver.read_set(path)


def test_bad_set_file_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(b"\x1f\x8b not gzip")
    assert main(["data", "bargain", "--check", str(bad)]) == 3
    assert main(["run", "bargain", "--track", "scripted", "--scripted-set", str(bad),
                 "--labeller", "gold", "--out", str(tmp_path / "r"), "--quiet"]) == 3  # fmt: skip
    assert main(["run", "bargain", "--track", "casino", "--distractors", "hard",
                 "--labeller", "gold", "--out", str(tmp_path / "r2"), "--quiet"]) == 2  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("todeval: error:") for line in err)


def test_hard_distractors_come_from_the_gold_parent() -> None:
    """Issue 41: a hard list holds 3 intents of every parent (21), the gold's siblings filling
    its parent; it used to hold 20 with the gold's siblings first."""
    h = default_hierarchy()
    labels = list(labels_of("scripted"))
    gold = ("price.ask_discount",)
    turn = LabelledTurn(0, "Buyer", gold, 1)
    key = new_key()
    hard = candidates("sc-x", turn, labels, 20, 0, key, parent_groups("scripted"))
    uniform = candidates("sc-x", turn, labels, 20, 0, key)
    siblings = set(h.siblings("price.ask_discount"))
    assert len(siblings & set(hard)) == 2 and len(hard) == 21 and len(uniform) == 20
    assert "price.ask_discount" in hard and "price.ask_discount" in uniform


def test_scripted_dialogues_alternate_buyer_and_seller() -> None:
    dialogue = load_track("scripted", "test")[0]
    speakers = [u.speaker for u in dialogue.utterances]
    assert speakers[0] == "Buyer" and speakers[-1] == "Buyer"
    assert all(a != b for a, b in itertools.pairwise(speakers))
    assert [t.depth for t in dialogue.turns] == list(range(1, len(dialogue.turns) + 1))
    assert dict(dialogue.context)["listing price"].startswith("$")


def _run(out: Path, *args: str) -> dict[str, Any]:
    assert main(["run", "bargain", "--track", "scripted", *args, "--out", str(out),
                 "--quiet"]) == 0  # fmt: skip
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return summary


def test_gold_garbage_random_on_the_scripted_track(tmp_path: Path) -> None:
    gold = _run(tmp_path / "gold", "--labeller", "gold", "--limit", "150")
    f1 = gold["metrics"]["bargain.f1"]
    assert f1["micro"]["value"] == 1.0 and f1["macro"]["value"] == 1.0
    assert gold["provenance"] == "constructed" and gold["verifier_agreement"] is None
    manifest = json.loads((tmp_path / "gold" / "manifest.json").read_text())
    assert manifest["selection"]["task_set"] == "scripted-v1-constructed"
    garbage = _run(tmp_path / "garbage", "--labeller", "garbage", "--limit", "60")
    assert garbage["metrics"]["bargain.failure_rate"]["micro"]["value"] == 1.0
    rand = _run(tmp_path / "random", "--labeller", "random", "--limit", "300")
    expected = rand["random_expectation"]
    for name in ("precision", "recall"):
        est = rand["metrics"][f"bargain.{name}"]["micro"]
        assert est["ci_low"] <= expected[name] <= est["ci_high"], (name, est, expected)
    assert 0.05 < expected["recall"] < 0.1  # E[m] g / K with K = 20
    hard = _run(tmp_path / "hard", "--labeller", "keyword", "--limit", "60",
                "--distractors", "hard")  # fmt: skip
    easy = _run(tmp_path / "easy", "--labeller", "keyword", "--limit", "60")
    assert (
        hard["metrics"]["bargain.f1"]["micro"]["n"] == easy["metrics"]["bargain.f1"]["micro"]["n"]
    )
    assert (tmp_path / "hard" / "manifest.json").read_text() != (
        tmp_path / "easy" / "manifest.json"
    ).read_text()


def test_check_reports_the_set_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "bargain", "--check", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["tasks"] >= 1000 and 0 < report["multi_intent_share"] < 1
    assert len(report["per_intent"]) == len(default_hierarchy().intents)
    assert sum(x["turns"] for x in report["per_intent"]) == sum(
        int(k) * v for k, v in report["intents_per_turn"].items()
    )
    assert all(0 < x["distinct_2"] <= 1 for x in report["per_intent"] if x["single_turns"])
    kw = report["keyword_f1"]
    assert 0 < kw["ci_low"] <= kw["value"] <= kw["ci_high"] < 1
    unseen = report["keyword_f1_unseen_templates"]
    assert 0 < unseen["value"] < kw["value"]  # unseen wordings are harder than memorised ones


def test_scripted_turns_export_for_human_validation(tmp_path: Path) -> None:
    out = tmp_path / "items.jsonl"
    assert main(["annotate", "export", "--from", "bargain:scripted", "--n", "30",
                 "--stratify", "depth", "-o", str(out)]) == 0  # fmt: skip
    items = [json.loads(line) for line in out.read_text().splitlines()]
    keys = [json.loads(line) for line in (tmp_path / "items.key.jsonl").read_text().splitlines()]
    assert len(items) == len(keys) == 30
    assert all(i["source"] == "bargain/scripted-v1-constructed" for i in items)
    assert all(len(i["candidates"]) == 20 and i["multiple"] for i in items)
    assert all("gold" not in i for i in items) and all(k["gold"] for k in keys)  # key file only


# -- llm mode against the test server ----------------------------------------------------------

GENERATE = r"and no\s+other \(id: meaning\):\n- ([\w.]+):"
VERIFY = r"Buyer: I am asking about ([\w.]+) here\.\n\nWhich of these buyer intents"


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    """The generator names the first sampled intent; the verifier labels the turn with the
    intent it names: it agrees on single-intent turns and disagrees on multi-intent ones."""
    script = Script(
        rules=[
            ScriptRule(
                match=GENERATE,
                expand=True,
                reply=ScriptedReply(text='{"message": "I am asking about \\1 here."}'),
            ),
            ScriptRule(match=VERIFY, expand=True, reply=ScriptedReply(text='{"labels": ["\\1"]}')),
        ],
        default=ScriptedReply(text='{"labels": []}'),
    )
    with ServerProcess(ServerConfig(script=script)) as running:
        yield running


def test_llm_mode_with_a_blind_verifier(
    server: ServerProcess, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = f"openai:scripted@{server.base_url}"
    out = tmp_path / "llm.jsonl.gz"
    assert main(["data", "bargain", "--generate", "--mode", "llm", "-n", "12",
                 "--generator", model, "--verifier", model, "--no-cache",
                 "-o", str(out)]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "disagreement rate" in printed
    header, tasks = weaver.read_set(out)
    assert header.mode == "llm" and header.generator == model and len(tasks) == 12
    turns = [t for task in tasks for t in task.turns]
    for t in turns:
        assert t.buyer == f"I am asking about {t.intents[0]} here."
        assert t.agreed == (len(t.intents) == 1) and t.verifier == [t.intents[0]]
    agreed = sum(bool(t.agreed) for t in turns)
    assert 0 < agreed < len(turns)  # both agreement and disagreement occur
    assert header.disagreement_rate == pytest.approx(1 - agreed / len(turns), abs=1e-6)
    prompts = [r["body"]["messages"][0]["content"] for r in server.requests()]
    verifier_prompts = [p for p in prompts if "Which of these buyer intents" in p]
    assert len(verifier_prompts) == len(turns)
    for p in verifier_prompts:  # blind: the verifier never sees the sampled-intents section
        assert "express exactly these intents" not in p
    # a run on that set reports the agreed subset and the disagreement rate
    s = _run(tmp_path / "run", "--scripted-set", str(out), "--labeller", "gold")
    assert s["verifier_agreement"]["disagreement_rate"] == pytest.approx(1 - agreed / len(turns))
    assert s["metrics"]["bargain.agreed.f1"]["micro"]["n"] == agreed
    assert s["metrics"]["bargain.agreed.f1"]["micro"]["value"] == 1.0
    assert main(["data", "bargain", "--check", str(out)]) == 0
    assert "blind verifier disagreement rate" in capsys.readouterr().out
