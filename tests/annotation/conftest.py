"""Items with payloads and an in-process annotation server on loopback."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.report.helpers import PAYLOADS
from todeval.annotation.items import Candidate, ContextTurn, read_items
from todeval.annotation.server import AnnotationState, make_server
from todeval.cli import main


def payload_items(tmp: Path, n: int = 20) -> Path:
    """``n`` exported CaSiNo items whose texts carry the XSS payloads (the key is kept)."""
    out = tmp / "items.jsonl"
    assert (
        main(["annotate", "export", "--from", "bargain:casino", "--n", str(n), "-o", str(out)]) == 0
    )
    items = read_items(out)
    with out.open("w", encoding="utf-8") as fh:
        for k, item in enumerate(items):
            p = PAYLOADS[k % len(PAYLOADS)]
            turns = [ContextTurn(speaker=p, text=p), *item.turns]
            cands = [Candidate(id=c.id, text=f"{c.text} {p}") for c in item.candidates]
            fixed = item.model_copy(
                update={"turns": turns, "candidates": cands, "question": f"{item.question} {p}"}
            )
            fh.write(fixed.model_dump_json() + "\n")
    return out


class Served:
    def __init__(self, items: Path, annotator: str) -> None:
        self.state = AnnotationState(items, annotator)
        self.server = make_server(self.state, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.state.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    s = Served(payload_items(tmp_path), "alice")
    try:
        yield s
    finally:
        s.stop()
