"""Context-to-response runs checked for ``todeval submit verify`` (:mod:`todeval.submission.
replay`).

Each turn is generated from the gold history, so there is no world to answer: what can be
re-derived is the run's scoring. Every dialogue must hold one predicted turn per gold turn (none
left out), and the prediction file the run wrote must be exactly the predictions of its records
(the corpus scores themselves are re-computed from the records by the generic metrics check,
through the benchmark's ``finalize``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from todeval.core.records import EpisodeRecord, Summary
from todeval.submission.replay import Mismatch, Replay, Replayer, RunFiles, first_difference

Predictions = Callable[[Sequence[EpisodeRecord]], Any]
"""The prediction file's content from a run's records (the plan's ``predictions_of``)."""


def turns_replay(file_name: str, predictions: Predictions) -> Replay[Any, Any]:
    """The replay of a context-to-response benchmark whose runs write ``file_name``, holding
    ``predictions(records)``."""

    def start(context: Any, files: RunFiles) -> Replayer[Any]:
        written = files.get(file_name)

        async def episode(dialogue: Any, record: EpisodeRecord) -> list[Mismatch]:
            turns = record.details.get("turns", [])
            if len(turns) != dialogue.n_turns:
                return [Mismatch(f"{len(turns)} predicted turns, the dialogue has "
                                 f"{dialogue.n_turns}")]  # fmt: skip
            return []

        def run(records: Sequence[EpisodeRecord], summary: Summary | None) -> list[Mismatch]:
            if written is None:
                return [Mismatch(f"no {file_name}: the scored predictions are missing")]
            try:
                stored = json.loads(written)
            except ValueError:
                return [Mismatch(f"{file_name} is not JSON")]
            again = predictions(records)
            what = first_difference(stored, again, file_name)
            return [Mismatch(f"{what} (the records' predictions)")] if what else []

        return Replayer(
            episode=episode,
            replays="every gold turn predicted, the prediction file equal to the records' "
            "predictions (corpus scores re-computed with the metrics)",
            run=run,
        )

    return Replay(start=start, set_keys=("split",))


__all__ = ["turns_replay"]
