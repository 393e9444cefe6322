"""The start-up and loading cuts of ``todeval score multiwoz`` give the same results as before:
the column-wise venue tables, the interval's quantile without ``numpy.quantile``, the paused
collector, the benchmark entry point's help line read without the email parser, and the text
metrics' child forked from the raw JSON before validation."""

from __future__ import annotations

import gc
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from todeval.core.gcpause import collector_paused
from todeval.errors import BadInputError
from todeval.registry import _summary
from todeval.scoring.multiwoz import PredictedTurn, evaluate
from todeval.scoring.multiwoz._background import BackgroundCall
from todeval.scoring.multiwoz._bootstrap import linear_quantile
from todeval.scoring.multiwoz._corpus import CorpusData
from todeval.scoring.multiwoz._database import (
    _FUZZY_COLUMNS,
    _IGNORED_COLUMNS,
    DONTCARE,
    FUZZY_RATIO,
    VENUE_DOMAINS,
    VenueDatabase,
    _cell,
    _column_name,
    load_rows,
)
from todeval.scoring.multiwoz._fuzzy import fuzzy_match
from todeval.scoring.multiwoz._normalize import normalize_slot_value, time_to_minutes


def _scan(domain: str, rows: list[dict[str, Any]], constraints: dict[str, str]) -> frozenset[str]:
    """The documented query rules, row by row (the standard evaluator's way)."""
    ignored = _IGNORED_COLUMNS[domain]
    table = [
        {_column_name(k): _cell(_column_name(k), v) for k, v in row.items() if k not in ignored}
        for row in rows
    ]
    columns = set(table[0]) if table else set()
    query = {
        c: normalize_slot_value(c, v)
        for c, v in constraints.items()
        if c in columns and v not in DONTCARE
    }
    id_key = "trainid" if domain == "train" else "id"
    found = set()
    for row in table:
        ok = True
        for column, value in query.items():
            cell = row.get(column, "?")
            if cell == "?":
                continue
            if column == "arrive":
                ok = time_to_minutes(str(cell)) <= time_to_minutes(value)
            elif column == "leave":
                ok = time_to_minutes(str(cell)) >= time_to_minutes(value)
            elif column in _FUZZY_COLUMNS[domain]:
                ok = fuzzy_match(str(cell), value, FUZZY_RATIO)
            else:
                ok = cell == value
            if not ok:
                break
        if ok:
            found.add(str(row.get(id_key, "")))
    return frozenset(found)


def test_shipped_database_queries_equal_a_row_scan() -> None:
    goals = CorpusData().goals
    database = VenueDatabase()
    rows = {d: load_rows(d) for d in VENUE_DOMAINS}
    checked = 0
    for dialogue in sorted(goals)[::10]:  # 100 dialogues' goals, every venue domain
        for domain, goal in goals[dialogue].items():
            if domain not in VENUE_DOMAINS:
                continue
            expected = _scan(domain, rows[domain], goal.informable)
            assert database.query(domain, goal.informable) == expected, (dialogue, domain)
            checked += 1
    assert checked > 100


def test_tables_with_missing_cells_and_two_spellings_of_a_column() -> None:
    tables = {
        "restaurant": [
            {"id": "r1", "food": "thai", "area": "north"},
            {"id": "r2", "food": "thai"},  # no area: unknown, passes
            {"id": "r3", "food": "thai", "area": "south"},
        ],
        "train": [
            {"trainID": "TR1", "arriveBy": "10:00", "arriveby": "12:00", "day": "monday"},
            {"trainID": "TR2", "arriveBy": "11:00", "day": "monday"},
            {"day": "monday"},  # no id, no time
        ],
    }
    database = VenueDatabase(tables=tables)
    assert database.query("restaurant", {"area": "north"}) == {"r1", "r2"}
    for constraints in ({"arrive": "11:30"}, {"arrive": "12:30"}, {"day": "monday"}):
        assert database.query("train", constraints) == _scan("train", tables["train"], constraints)


@pytest.mark.parametrize("level", [0.95, 0.9, 0.99, 0.5])
def test_linear_quantile_is_numpy_quantile(level: float) -> None:
    rng = np.random.default_rng(7)
    alpha = (1.0 - level) / 2.0
    for trial in range(400):
        n = int(rng.integers(1, 40 if trial % 2 else 3000))
        values = [
            rng.normal(size=n) * 37.0,
            rng.integers(0, 1000, size=n) / 7.0,
            np.round(rng.uniform(0, 100, size=n), 1),
            rng.integers(0, 3, size=n).astype(float),
        ][trial % 4]
        ordered = np.sort(values)
        for q in (alpha, 1.0 - alpha, 0.0, 1.0, float(rng.uniform())):
            assert linear_quantile(ordered, q) == float(np.quantile(values, q))


def test_collector_paused_restores_the_previous_state() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(KeyError), collector_paused():
        raise KeyError("x")
    assert gc.isenabled()


class _Dist:
    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def read_text(self, name: str) -> str | None:
        return self.files.get(name)


class _EntryPoint:
    def __init__(self, dist: _Dist | None) -> None:
        self.dist = dist


def test_benchmark_help_line_from_the_metadata_headers() -> None:
    metadata = "Metadata-Version: 2.4\nName: x\nSummary:  a game  \n\nSummary: not a header\n"
    assert _summary(_EntryPoint(_Dist({"METADATA": metadata}))) == "a game"  # type: ignore[arg-type]
    legacy = "Name: x\nsummary: old style\n"
    assert _summary(_EntryPoint(_Dist({"PKG-INFO": legacy}))) == "old style"  # type: ignore[arg-type]
    body_only = "Name: x\n\nSummary: in the description\n"
    assert _summary(_EntryPoint(_Dist({"METADATA": body_only}))) == ""  # type: ignore[arg-type]
    assert _summary(_EntryPoint(None)) == ""  # type: ignore[arg-type]


def _fixture(name: str, n: int) -> dict[str, Any]:
    path = Path(__file__).resolve().parents[1] / "fixtures" / "multiwoz_predictions"
    data: dict[str, Any] = json.loads(gzip.decompress((path / f"{name}.json.gz").read_bytes()))
    return dict(list(data.items())[:n])


def test_child_from_the_raw_json_and_in_process_from_validated_turns_agree() -> None:
    corpus, database = CorpusData(), VenueDatabase()
    data = _fixture("augpt", 60)
    kw: dict[str, Any] = {"corpus": corpus, "database": database}
    serial = evaluate(data, parallel=False, **kw).model_dump()
    assert evaluate(data, parallel=True, **kw).model_dump() == serial
    # Turns given as models: the child (which reads raw JSON-like turns) fails, and the
    # in-process computation from the validated turns gives the same figures.
    models = {d: [PredictedTurn.model_validate(t) for t in turns] for d, turns in data.items()}
    assert evaluate(models, parallel=True, **kw).model_dump() == serial


def test_invalid_predictions_stop_the_child_and_fail_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _fixture("augpt", 5)
    first = next(iter(data))
    data[first][0]["response"] = 7  # not a string
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    children: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            children.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    with pytest.raises(BadInputError, match="turn 0: field response"):
        evaluate(path, parallel=True)
    assert len(children) == 1
    with pytest.raises(ChildProcessError):  # the child was stopped and reaped
        os.waitpid(children[0], os.WNOHANG)


def test_background_call_uses_the_in_process_function_without_a_child() -> None:
    job = BackgroundCall(lambda: "child", parallel=False, in_process=lambda: "here")
    assert job.result() == "here"


def test_the_child_is_forked_before_pydantic_is_imported(tmp_path: Path) -> None:
    path, out = tmp_path / "p.json", tmp_path / "o.json"
    path.write_text(json.dumps(_fixture("augpt", 3)), encoding="utf-8")
    script = (
        "import os, sys\n"
        "real = os.fork\n"
        "def fork():\n"
        "    print('pydantic' in sys.modules, file=sys.stderr)\n"
        "    return real()\n"
        "os.fork = fork\n"
        "from todeval.cli import main\n"
        f"sys.exit(main(['score', 'multiwoz', {str(path)!r}, '-o', {str(out)!r}]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == "False"
