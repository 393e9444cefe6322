"""The tracks' data facts, the CaSiNo alignment, candidate lists and what a labeller sees."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from importlib import resources
from typing import Any

from todeval.benchmarks.bargain.baselines import random_expectation
from todeval.benchmarks.bargain.data import (
    CASINO_LABELS,
    CRAIGSLIST_LABELS,
    candidates,
    casino_dialogues,
    craigslist_dialogues,
    load_track,
    new_key,
)
from todeval.benchmarks.bargain.labellers import LabellerView, render_turn
from todeval.benchmarks.bargain.run import _turn_views


def _raw(*parts: str) -> bytes:
    node = resources.files("todeval") / "data" / "bargain"
    for part in parts:
        node = node / part
    return node.read_bytes()


def test_craigslist_facts() -> None:
    dialogues = craigslist_dialogues()
    assert len(dialogues) == 181
    turns = [t for d in dialogues for t in d.turns]
    assert len(turns) == 710
    assert {t.speaker for t in turns} == {"Buyer"}
    acts = Counter(t.gold[0] for t in turns)
    assert acts.most_common(1)[0] == ("counter", 159)  # 22.4 %
    assert set(acts) == set(CRAIGSLIST_LABELS)


def test_casino_alignment_and_facts() -> None:
    per_split = {s: casino_dialogues(s) for s in ("train", "valid", "test")}
    assert [len(v) for v in per_split.values()] == [347, 7, 42]
    assert [sum(d.n_turns for d in v) for v in per_split.values()] == [4047, 76, 492]
    turns = [t for v in per_split.values() for d in v for t in d.turns]
    assert len(turns) == 4615
    assert round(sum(len(t.gold) > 1 for t in turns) / len(turns), 2) == 0.21
    assert {t.speaker for t in turns} == {"Camper 1", "Camper 2"}
    assert all(set(t.gold) <= set(CASINO_LABELS) and t.gold for t in turns)
    # the speaker comes from chat_logs and the text matches exactly
    rows = {
        r["dialogue_id"]: r
        for r in json.loads(gzip.decompress(_raw("casino", "casino_test.json.gz")))
    }
    d = next(x for x in per_split["test"] if x.dialogue_id == "casino-test-35")
    assert d.n_turns == len(rows[35]["annotations"])
    assert (
        load_track("casino", "all") == per_split["train"] + per_split["valid"] + per_split["test"]
    )


def test_depths_count_the_speakers_own_labelled_turns() -> None:
    d = casino_dialogues("test")[0]
    seen: Counter[str] = Counter()
    for t in d.turns:
        seen[t.speaker] += 1
        assert t.depth == seen[t.speaker]


def test_candidates_hold_the_gold_and_are_the_same_for_one_key() -> None:
    """Issue 41: every label in the label set's order at the default K (the seed no longer
    reorders it); smaller lists follow the key and the seed."""
    labels = list(CASINO_LABELS)
    key = new_key()
    for d in casino_dialogues("test"):
        for t in d.turns:
            c = candidates(d.dialogue_id, t, labels, 20, 0, key)
            assert c == labels
            small = candidates(d.dialogue_id, t, labels, 3, 0, key)
            assert len(small) == max(3, len(t.gold)) and set(t.gold) <= set(small)
            assert small == candidates(d.dialogue_id, t, labels, 3, 0, key)
    d = casino_dialogues("test")[0]
    lists = {tuple(candidates(d.dialogue_id, d.turns[0], labels, 3, s, key)) for s in range(8)}
    assert len(lists) > 1  # the seed matters


def _rows(track: str) -> dict[str, dict[str, Any]]:
    if track == "craigslist":
        text = gzip.decompress(_raw("craigslistbargain_acts_test.jsonl.gz")).decode()
        return {f"cb-{i:03d}": json.loads(line) for i, line in enumerate(text.splitlines())}
    out = {}
    for split in ("train", "valid", "test"):
        for row in json.loads(gzip.decompress(_raw("casino", f"casino_{split}.json.gz"))):
            out[f"casino-{split}-{row['dialogue_id']}"] = row
    return out


def test_no_private_field_reaches_any_prompt() -> None:
    """The last prompt of every dialogue of both tracks: the context block holds only public
    fields, and no private value appears anywhere unless a participant said it aloud."""
    for track in ("craigslist", "casino"):
        rows = _rows(track)
        dialogues = load_track(track, "all")  # type: ignore[arg-type]
        for d in dialogues:
            row = rows[d.dialogue_id]
            ctx = LabellerView(
                track=d.track,
                dialogue_id=d.dialogue_id,
                labels=CRAIGSLIST_LABELS if track == "craigslist" else CASINO_LABELS,
                context=d.context,
                seed=0,
            )
            view = _turn_views(d, 20, 0, new_key())[-1][0]
            parts = render_turn(ctx, view)
            said = " ".join(u.text for u in d.utterances)
            if track == "craigslist":
                assert [k for k, _ in d.context] == ["item", "listing price", "description"]
                assert dict(d.context)["listing price"] == f"${row['seller_price']}"
                target = f"${row['buyer_price']}"
                assert target not in parts["context"] or row["buyer_price"] == row["seller_price"]
                private = [target]
            else:
                assert parts["context"].startswith("scenario: ")
                private = [
                    r.strip()
                    for info in row["participant_info"].values()
                    for r in info["value2reason"].values()
                    if len(r.strip()) > 12
                ]
            text = "\n".join(parts.values())
            assert [p for p in private if p in text and p not in said] == []


def test_random_expectation_formula() -> None:
    # one gold among 10, always one draw: P = R = 1/10
    assert random_expectation([(1, 10, [(1, 1.0)])] * 4) == (0.1, 0.1)
    p, r = random_expectation([(2, 10, [(1, 0.5), (2, 0.5)]), (1, 10, [(1, 0.5), (2, 0.5)])])
    assert abs(r - (1.5 * 0.2 + 1.5 * 0.1) / 3) < 1e-12
    assert abs(p - (1.5 * 0.2 + 1.5 * 0.1) / 3.0) < 1e-12
