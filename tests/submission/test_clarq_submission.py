"""ClarQ submissions under the rule provider: its replies are re-derived from the seeker's
questions, so a reply that releases a node the provider would not have released is refused
with its turn (issue 45.4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.submission.helpers import Record, archive, edited, run, verdict_of


@pytest.fixture(scope="module")
def clarq_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("clarq") / "run"
    return run("clarq", {"seeker": "wrong", "limit": 4}, out)


def test_an_honest_run_is_verified(clarq_run: Path, tmp_path: Path) -> None:
    verdict = verdict_of(archive(clarq_run, tmp_path / "c.tar.gz"))
    assert verdict.status == "verified", verdict.lines()
    assert any("rule provider re-derived" in line for line in verdict.checked)


def test_a_reply_releasing_a_node_it_would_not_have_is_refused(
    clarq_run: Path, tmp_path: Path
) -> None:
    turns: list[int] = []

    def edit(records: list[Record]) -> list[Record]:
        record = records[0]
        reply = next(
            e for e in record["events"]
            if e["kind"] == "provider_message" and e["turn"] > 0 and not e["data"]["released"]
        )  # fmt: skip
        reply["data"].update(decision="release", released=["1"], text="Jax: the first node.")
        turns.append(reply["turn"])
        record["details"]["released"] = ["1"]
        return records

    verdict = verdict_of(edited(clarq_run, tmp_path, edit))
    assert verdict.status == "refused"
    assert any(
        f"turn {turns[0]}: provider_message." in line and "replay" in line
        for line in verdict.reasons
    ), verdict.reasons
