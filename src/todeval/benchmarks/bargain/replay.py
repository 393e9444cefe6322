"""Bargaining episodes replayed for ``todeval submit verify`` (:mod:`todeval.submission.replay`).

A turn's candidate list is drawn with the run's secret key, which the run directory records
when its session ends (``candidate-keys.json``, :mod:`.keys`). The replay reads the key each
record names (by fingerprint), draws every labelled turn's list again from the installed
dialogue, and checks that each recorded turn is one of the dialogue's labelled turns (none
left out), shown the list the key draws, against the installed gold, with the counts the
scorer gives for the labels it read.
"""

from __future__ import annotations

import json
from typing import Any

from todeval.benchmarks.bargain.data import (
    Dialogue,
    candidates,
    key_fingerprint,
    labels_of,
    parent_groups,
)
from todeval.benchmarks.bargain.keys import KEY_FILE
from todeval.benchmarks.bargain.scoring import TurnScore, score_turn
from todeval.core.records import EpisodeRecord
from todeval.errors import RefusedError
from todeval.submission.replay import Mismatch, Replay, Replayer, RunFiles, first_difference

_COUNTS = ("correct", "missed", "incorrect", "invalid", "failed", "k")


def _keys(files: RunFiles) -> dict[str, bytes]:
    """The recorded keys by fingerprint (each checked against its fingerprint)."""
    body = files.get(KEY_FILE)
    if body is None:
        raise RefusedError(f"no {KEY_FILE}: the candidate lists cannot be drawn again")
    try:
        recorded = json.loads(body).get("keys", {})
        keys = {str(fp): bytes.fromhex(str(hex_key)) for fp, hex_key in recorded.items()}
    except (ValueError, AttributeError, TypeError):
        raise RefusedError(f"{KEY_FILE}: not a candidate key file") from None
    for fp, key in keys.items():
        if key_fingerprint(key) != fp:
            raise RefusedError(f"{KEY_FILE}: key {fp} does not match its fingerprint")
    return keys


def _start(context: Any, files: RunFiles) -> Replayer[Dialogue]:
    cfg = context.config
    keys = _keys(files)
    labels = list(labels_of(cfg.track))
    groups = parent_groups(cfg.track) if cfg.distractors == "hard" else None

    async def episode(dialogue: Dialogue, record: EpisodeRecord) -> list[Mismatch]:
        fp = str(record.details.get("candidate_key", ""))
        if fp not in keys:
            return [Mismatch(f"its lists were drawn with key {fp or '(none)'}, not recorded")]
        key = keys[fp]
        turns = [TurnScore.model_validate(t) for t in record.details.get("turns", [])]
        expected = [t.index for t in dialogue.turns]
        if sorted(t.index for t in turns) != expected:
            got = sorted(t.index for t in turns)
            return [Mismatch(f"labelled turns {got} recorded, the dialogue has {expected}")]
        shown = [e for e in record.events if e.kind == "labels"]
        found: list[Mismatch] = []
        of = {t.index: t for t in dialogue.turns}
        for n, t in enumerate(turns, 1):
            gold = of[t.index]
            drawn = candidates(
                dialogue.dialogue_id, gold, labels, cfg.k, cfg.candidate_seed, key, groups=groups
            )
            if list(t.candidates) != drawn:
                what = first_difference(list(t.candidates), drawn, "candidates")
                found.append(Mismatch(f"turn {t.index}: {what}", n))
                continue
            if n <= len(shown) and shown[n - 1].data.get("candidates") != drawn:
                found.append(Mismatch(f"turn {t.index}: the labels event shows another list", n))
                continue
            if list(t.gold) != list(gold.gold):
                found.append(Mismatch(f"turn {t.index}: gold {t.gold} recorded, {gold.gold}", n))
                continue
            again = score_turn(
                t.index, t.speaker, gold.depth, drawn, list(gold.gold), t.predicted,
                raw=t.raw, error=t.error,
            )  # fmt: skip
            recorded = {name: getattr(t, name) for name in _COUNTS}
            scored = {name: getattr(again, name) for name in _COUNTS}
            what = first_difference(recorded, scored, f"turn {t.index}")
            if what:
                found.append(Mismatch(what, n))
        return found

    return Replayer(
        episode=episode,
        replays="every candidate list drawn again with the run's recorded key, every labelled "
        "turn present, gold and counts scored again",
    )


REPLAY: Replay[Any, Dialogue] = Replay(start=_start, set_keys=("track", "split", "scripted_set"))
"""The bargaining benchmark's replay (its spec's ``replay``)."""

__all__ = ["REPLAY"]
