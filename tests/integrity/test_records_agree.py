"""Records agree with themselves (issue 42): for every benchmark and every way its episodes
end, the record's outcome and reason are what its closing ``episode_end`` event says, and only
an episode that did not succeed is labelled who failed. Played with every run control every
suite declares (floors and ceilings between them reach successes, failures, aborts, turn caps
and give-ups), a few tasks each; a record that contradicts itself is refused on write."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import todeval.api as td
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord, contradictions
from todeval.dialogue.episode import EpisodeEnd, EpisodeLog, EpisodeStreams, Termination
from todeval.runner.store import RunDirectory
from todeval.validation.command import load_suite

SUITES = ("booking", "clarq", "bargain", "toy")


@pytest.mark.parametrize("suite_name", SUITES)
def test_every_control_run_writes_records_that_agree(suite_name: str, tmp_path: Path) -> None:
    suite = load_suite(suite_name)
    seen: Counter[tuple[str, str]] = Counter()
    for control in suite.controls:
        if control.run is None:
            continue
        out = tmp_path / control.name.replace("/", "-")
        td.run(control.benchmark or suite.name, {**dict(control.run), "limit": 3}, out=out,
               quiet=True)  # fmt: skip
        for record in RunDirectory(out).read_episodes():
            assert contradictions(record) == [], (control.name, record.episode_id)
            ends = [e for e in record.events if e.kind == "episode_end"]
            assert ends and ends[-1].data["outcome"] == record.outcome.value
            seen[(record.outcome.value, record.termination)] += 1
    assert len(seen) >= 2, seen  # the controls reached more than one way of ending


def test_a_scored_outcome_is_what_the_end_event_says(tmp_path: Path) -> None:
    """A dialogue that ended well but failed its scoring (booking's give-up): the end event
    carries the record's outcome, and how the dialogue ended beside it."""
    log = EpisodeLog()
    end = EpisodeEnd(Outcome.SUCCESS, Termination.DONE, "user said done")
    log.finish(end)
    streams = EpisodeStreams(run_seed=1, task_id="t")
    record = log.record(benchmark="x", streams=streams, end=end, outcome=Outcome.FAILURE,
                        reason="user said done (gave_up_system_repeats)")  # fmt: skip
    data = record.events[-1].data
    assert data["outcome"] == "failure" and data["reason"] == record.reason
    assert data["dialogue_outcome"] == "success" and data["dialogue_reason"] == "user said done"
    assert contradictions(record) == []


def test_a_record_that_contradicts_itself_is_refused_on_write(tmp_path: Path) -> None:
    log = EpisodeLog()
    end = EpisodeEnd(Outcome.SUCCESS, Termination.DONE, "done")
    log.finish(end)
    record = log.record(benchmark="x", streams=EpisodeStreams(run_seed=1, task_id="t"),
                        end=end)  # fmt: skip
    bad = EpisodeRecord.model_validate({**record.model_dump(), "outcome": "failure"})
    assert "episode_end event says 'success'" in contradictions(bad)[0]
    labelled = record.model_copy(update={"labels": {"who_failed": "agent"}})
    assert "succeeded but is labelled who_failed" in contradictions(labelled)[0]
    writer = RunDirectory(tmp_path).open_appender()
    with pytest.raises(ValueError, match="contradicts itself"):
        writer.append(bad)
    writer.close()
    assert RunDirectory(tmp_path).read_episodes() == []


def test_an_agent_raising_infrastructure_error_itself_buys_no_rerun() -> None:
    """A player under test that raises InfrastructureError on its own (to have a task it
    dislikes excluded and re-run on resume, with a fresh draw) fails the episode instead; one
    raised by our model layer stays an infrastructure error."""
    import asyncio

    from todeval.backends.errors import InfrastructureError as ModelLayerError
    from todeval.dialogue.episode import guarded
    from todeval.errors import InfrastructureError

    async def own() -> None:
        raise InfrastructureError("please re-run me")

    async def model() -> None:
        raise ModelLayerError("server down", kind="connection")

    def end_of(call: object, crash: Termination = Termination.SYSTEM_ERROR) -> EpisodeEnd:
        with pytest.raises(EpisodeEnd) as caught:
            asyncio.run(guarded(call, "labeller", crash))  # type: ignore[arg-type]
        return caught.value

    assert end_of(own()).outcome is Outcome.SYSTEM_ERROR
    assert end_of(model()).outcome is Outcome.INFRASTRUCTURE_ERROR
    simulator = end_of(own(), Termination.SIMULATOR_ERROR)  # not the agent under test
    assert simulator.outcome is Outcome.INFRASTRUCTURE_ERROR
