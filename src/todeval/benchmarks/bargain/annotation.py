"""Bargaining turns as multi-choice annotation items (``todeval annotate export --from
bargain:TRACK[-SPLIT]`` or a bargain run directory).

Each labelled turn is an item: the public context, the dialogue up to the turn (the turn
itself marked), and the same candidate list a labeller gets in a run (label id and
description); the gold label set goes to the key file only. The lists are drawn with the
installation's secret list key (or the pinned one), as a run draws them: under a public key an
item file's lists could be replayed to read the gold off them (F1 0.659 on scripted, where the
in-list prior scores 0.251). Strata: ``speaker``, ``depth``,
``group`` and ``track`` (none derived from the gold, which the item file never shows).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from todeval.annotation.items import Candidate, ContextField, ContextTurn, GoldItem, Item
from todeval.benchmarks.bargain.data import (
    DEFAULT_K,
    SPLITS,
    TRACKS,
    Dialogue,
    Split,
    Track,
    candidates,
    labels_of,
    load_track,
    task_set_name,
)
from todeval.benchmarks.bargain.keys import list_key
from todeval.errors import UsageError


def _track_split(spec: str, config: Mapping[str, Any]) -> tuple[Track, Split]:
    if not spec:
        track, split = str(config.get("track", "craigslist")), str(config.get("split", "test"))
    else:
        track, _, split = spec.partition("-")
        split = split or "test"
    if track not in TRACKS or split not in SPLITS:
        raise UsageError(
            f"--from bargain:{spec}: expected TRACK[-SPLIT] with TRACK one of "
            f"{', '.join(TRACKS)} and SPLIT one of {', '.join(SPLITS)}"
        )
    return track, split


def dialogue_items(
    dialogue: Dialogue, k: int, seed: int, source: str, key: bytes | None = None
) -> list[GoldItem]:
    labels = labels_of(dialogue.track)
    key = list_key() if key is None else key
    out = []
    for turn in dialogue.turns:
        ids = candidates(dialogue.dialogue_id, turn, list(labels), k, seed, key)
        shown = dialogue.utterances[: turn.index + 1]
        item = Item(
            id=f"{dialogue.dialogue_id}:{turn.index}",
            kind="multi-choice",
            source=source,
            question=(
                f"Which of these describe the marked turn by {turn.speaker}? "
                "Choose every one that applies."
            ),
            fields=[ContextField(name=n, value=v) for n, v in dialogue.context],
            turns=[
                ContextTurn(speaker=u.speaker, text=u.text, focus=i == turn.index)
                for i, u in enumerate(shown)
            ],
            candidates=[Candidate(id=c, text=f"{c} -- {labels[c]}") for c in ids],
            multiple=True,
            strata={
                "speaker": turn.speaker,
                "depth": turn.depth_bucket,
                "group": dialogue.group,
                "track": dialogue.track,
            },
        )
        out.append(GoldItem(item=item, gold=list(turn.gold)))
    return out


def items(spec: str, config: Mapping[str, Any]) -> list[GoldItem]:
    """Every labelled turn of the track (and split), with the run's ``k`` and seed."""
    track, split = _track_split(spec, config)
    k = int(config.get("k", DEFAULT_K))
    seed = int(config.get("candidate_seed", 0))
    wanted = set(config.get("ids") or ())
    source = f"bargain/{task_set_name(track, split)}"
    key = list_key()
    out = []
    for dialogue in load_track(track, split):
        if wanted and dialogue.dialogue_id not in wanted:
            continue
        out += dialogue_items(dialogue, k, seed, source, key)
    return out


__all__ = ["dialogue_items", "items"]
