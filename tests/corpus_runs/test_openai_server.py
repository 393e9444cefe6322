"""The generation runs against the real OpenAI-compatible test server, through the openai SDK."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

from tests.corpus_runs.helpers import Key, incar_gold, multiwoz_gold, records
from todeval.backends import RetryPolicy, Script
from todeval.benchmarks._turns.options import RuntimeOptions
from todeval.benchmarks.incar_turns.run import SPEC as INCAR
from todeval.benchmarks.incar_turns.run import IncarTurnsConfig
from todeval.benchmarks.multiwoz_turns.prompts import messages, reply_schema
from todeval.benchmarks.multiwoz_turns.run import SPEC as MULTIWOZ
from todeval.benchmarks.multiwoz_turns.run import MultiwozTurnsConfig
from todeval.runner import execute_plan
from todeval.scoring.incar import evaluate as incar_evaluate
from todeval.scoring.multiwoz import evaluate as multiwoz_evaluate
from todeval.scoring.multiwoz import to_summary
from todeval.testing.openai_server import FaultConfig, ServerConfig
from todeval.testing.server_process import ServerProcess

USAGE = {"prompt_tokens": 100, "completion_tokens": 20}
FAST_RETRY = RetryPolicy(base_delay_s=0.01, max_delay_s=0.05)


def _script(table: dict[Key, Any], override: dict[str, str]) -> Script:
    """Rules matching each turn's whole last message (the test dialogues' prompts differ)."""
    contents = [content for _, content in table]
    assert len(set(contents)) == len(contents), "prompts must tell the turns apart"
    rules = [
        {
            "match": rf"\A{re.escape(content)}\Z",
            "reply": {"text": override.get(content, json.dumps(reply)), "usage": USAGE},
        }
        for (_, content), reply in table.items()
    ]
    return Script.model_validate({"rules": rules, "default": "no rule matched"})


def test_multiwoz_turns_through_the_server(tmp_path: Path) -> None:
    dialogues, table, gold = multiwoz_gold(3)
    owner = next(d for d in dialogues if d.n_turns > 2)
    bad_turn = messages(owner, 2)[-1].content or ""
    bad_text = "I think [value_name] is the best choice."
    config = ServerConfig(
        script=_script(table, {bad_turn: bad_text}),
        faults=FaultConfig(sequence=["500"]),  # every request fails once, then succeeds
    )
    cache = str(tmp_path / "cache.sqlite")
    with ServerProcess(config) as server:
        spec = f"openai:tiny@{server.base_url}"
        run_config = MultiwozTurnsConfig(model=spec, limit=3, limit_mode="first", constrained=True)
        out = tmp_path / "run"
        plan = MULTIWOZ.plan(
            run_config, RuntimeOptions(out=out, cache_path=cache, retry=FAST_RETRY)
        )
        result = execute_plan(plan, out, quiet=True)
        stats = server.stats()
        bodies = [r["body"] for r in server.requests()]

        again = tmp_path / "again"  # same config, new directory: every call from the cache
        plan = MULTIWOZ.plan(
            run_config, RuntimeOptions(out=again, cache_path=cache, retry=FAST_RETRY)
        )
        cached = execute_plan(plan, again, quiet=True)
        assert server.stats()["requests"] == stats["requests"]

    n_turns = sum(d.n_turns for d in dialogues)
    assert stats["requests"] == 2 * n_turns and stats["faults"] == {"500": n_turns}
    assert all(
        b["response_format"] == {"type": "json_schema",
                                 "json_schema": {"name": "reply", "schema": reply_schema()}}
        for b in bodies
    )  # fmt: skip

    expected = copy.deepcopy(gold)
    expected[owner.dialogue_id][2] = {
        "response": "",
        "state": expected[owner.dialogue_id][1]["state"],
        "active_domains": [],
    }
    assert json.loads((out / "predictions.json").read_text("utf-8")) == expected
    failed = [r for r in records(out) if r.details["format_failures"]]
    assert [r.details["turns"][2]["raw"] for r in failed] == [bad_text]

    summary = result.summary
    for name, metric in to_summary(multiwoz_evaluate(expected)).metrics.items():
        assert summary.metrics[name] == metric, name
    usage = summary.usage["system"]
    assert (usage.calls, usage.prompt_tokens, usage.completion_tokens) == (
        n_turns, 100 * n_turns, 20 * n_turns,
    )  # fmt: skip
    assert not usage.estimated and summary.latency["system"]["p50"] > 0
    assert cached.summary.cost["cached_calls"] == n_turns
    assert cached.summary.metrics == summary.metrics


def test_incar_turns_through_the_server(tmp_path: Path) -> None:
    _, table, gold = incar_gold(3)
    with ServerProcess(ServerConfig(script=_script(table, {}))) as server:
        config = IncarTurnsConfig(
            model=f"openai:tiny@{server.base_url}", limit=3, limit_mode="first"
        )
        out = tmp_path / "run"
        plan = INCAR.plan(config, RuntimeOptions(out=out, cache=False))
        result = execute_plan(plan, out, quiet=True)
        bodies = [r["body"] for r in server.requests()]
    assert all("response_format" not in b for b in bodies)  # unconstrained: prompt only
    assert json.loads((out / "predictions.json").read_text("utf-8")) == gold
    for name, metric in incar_evaluate(gold).summary.metrics.items():
        assert result.summary.metrics[name] == metric, name
    assert result.summary.metrics["incar.format_failure_rate"].micro.value == 0.0
