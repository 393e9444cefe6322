"""Files that keep the truth: one writer per run directory and per answer file (a second is
refused with exit 4 naming the holder; a killed holder blocks nothing), and append-only logs
that survive a torn last line at every byte offset of a record (the fragment set aside in a
``.torn`` sibling, never glued to the next record, never silently dropped)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import todeval.api as td
from todeval.annotation.items import AnswerLog, read_answers
from todeval.cli import main
from todeval.core.appendlog import repair_tail, torn_path
from todeval.core.lock import RUN_LOCK, hold, lock_path_for
from todeval.errors import RefusedError
from todeval.runner.store import RunDirectory

HOLD = """
import sys, time
from pathlib import Path
from todeval.core.lock import hold
with hold(Path(sys.argv[1]), "test"):
    print("held", flush=True)
    time.sleep(60)
"""


def _holder(lock: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_run_into_a_held_directory_is_refused_naming_the_holder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    out.mkdir()
    holder = _holder(out / RUN_LOCK)
    try:
        assert main(["run", "toy", "--out", str(out), "--quiet"]) == 4
        err = capsys.readouterr().err
        assert f"pid {holder.pid}" in err and "in use" in err and "since" in err
        assert len(err.strip().splitlines()) == 1
        assert not (out / "episodes.jsonl").exists()  # nothing written by the refused run
    finally:
        holder.kill()
        holder.wait()
    # the holder was killed (-9): its lock blocks nothing
    assert main(["run", "toy", "--out", str(out), "--quiet"]) == 0
    assert sum(1 for _ in (out / "episodes.jsonl").open()) == 30


def test_two_runs_started_together_write_each_episode_once(tmp_path: Path) -> None:
    out = tmp_path / "run"
    command = [sys.executable, "-m", "todeval", "run", "booking", "--limit", "40", "--out",
               str(out), "--quiet"]  # fmt: skip
    procs = [subprocess.Popen(command, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    codes = sorted(p.wait(timeout=300) for p in procs)
    errors = [p.stderr.read() if p.stderr else "" for p in procs]
    assert codes in ([0, 0], [0, 4]), errors
    lines = [json.loads(x) for x in (out / "episodes.jsonl").read_text().splitlines()]
    keys = [(r["task_id"], r["trial"]) for r in lines]
    assert len(keys) == len(set(keys)) == 40  # never an episode twice
    manifest = json.loads((out / "manifest.json").read_text())
    if codes == [0, 4]:
        assert any("in use by pid" in e for e in errors)
        assert len(manifest["sessions"]) == 1
    else:  # the second started after the first ended: a resume with nothing to do
        assert len(manifest["sessions"]) >= 1


def test_the_lock_is_free_once_the_holder_ends(tmp_path: Path) -> None:
    lock = tmp_path / "x.lock"
    with (
        hold(lock, "x"),
        pytest.raises(RefusedError, match=f"x is in use by pid {os.getpid()}"),
        hold(lock, "x"),
    ):
        pass
    with hold(lock, "x"):  # released: taken again
        pass


def test_a_second_annotation_server_on_one_answer_file_is_refused(tmp_path: Path) -> None:
    answers = tmp_path / "a.jsonl"
    first = AnswerLog(answers, "ann", "export")
    try:
        with pytest.raises(RefusedError, match=r"answer file .* is in use by pid"):
            AnswerLog(answers, "ann", "export")
        first.record("i1", ["x"])
    finally:
        first.close()
    again = AnswerLog(answers, "ann", "export")  # closed: free again
    assert set(again.answers) == {"i1"}
    again.close()
    assert lock_path_for(answers).name == ".a.jsonl.lock"


def _toy_record_lines(tmp_path: Path) -> list[bytes]:
    td.run("toy", {"ids": ["n10-00", "n10-01", "n10-02"]}, out=tmp_path / "src", quiet=True)
    return (tmp_path / "src" / "episodes.jsonl").read_bytes().splitlines(keepends=True)


def test_episode_log_torn_at_every_byte_of_a_record(tmp_path: Path) -> None:
    one, two, three = _toy_record_lines(tmp_path)
    record = RunDirectory(tmp_path / "src").read_episodes()[2]
    for cut in range(1, len(three)):  # every offset but the whole line
        run = tmp_path / f"cut{cut}"
        run.mkdir()
        store = RunDirectory(run)
        store.episodes_path.write_bytes(one + two + three[:cut])
        writer = store.open_appender()
        writer.append(record)
        writer.close()
        ids = [r.task_id for r in store.read_episodes()]
        assert ids == ["n10-00", "n10-01", "n10-02"], cut
        lines = store.episodes_path.read_bytes().splitlines()
        assert all(json.loads(line) for line in lines), cut  # every line reads whole
        fragment = three[:cut]
        if cut == len(three) - 1:  # only the newline was lost: restored, nothing set aside
            assert writer.set_aside is None and len(lines) == 4
        else:
            assert writer.set_aside == torn_path(store.episodes_path)
            assert torn_path(store.episodes_path).read_bytes() == fragment + b"\n"


def test_answer_log_torn_at_every_byte_of_an_answer(tmp_path: Path) -> None:
    base = tmp_path / "base.jsonl"
    log = AnswerLog(base, "ann", "export")
    log.record("i1", ["a"])
    log.record("i2", ["b", "c"])
    log.close()
    first, second = base.read_bytes().splitlines(keepends=True)
    for cut in range(1, len(second)):
        path = tmp_path / f"answers{cut}.jsonl"
        path.write_bytes(first + second[:cut])
        log = AnswerLog(path, "ann", "export")
        log.record("i3", ["d"])
        log.close()
        got = {a.item: a.choice for a in read_answers(path)}  # never refused
        whole = cut == len(second) - 1
        assert got == ({"i1": ["a"], "i2": ["b", "c"], "i3": ["d"]} if whole
                       else {"i1": ["a"], "i3": ["d"]}), cut  # fmt: skip
        if not whole:
            assert torn_path(path).read_bytes() == second[:cut] + b"\n"


def test_repair_tail_leaves_a_whole_file_alone(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    assert repair_tail(path) is None  # no file
    path.write_bytes(b"")
    assert repair_tail(path) is None
    path.write_bytes(b'{"a": 1}\n{"b": 2}\n')
    assert repair_tail(path) is None and path.read_bytes() == b'{"a": 1}\n{"b": 2}\n'
    big = b'{"x": "' + b"y" * 200_000  # a fragment longer than one read
    path.write_bytes(b'{"a": 1}\n' + big)
    assert repair_tail(path) == torn_path(path)
    assert path.read_bytes() == b'{"a": 1}\n' and torn_path(path).read_bytes() == big + b"\n"


def test_the_annotation_server_refuses_a_second_server_on_its_file(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    assert (
        main(["annotate", "export", "--from", "bargain:casino", "--n", "3", "-o", str(items)]) == 0
    )
    command = [sys.executable, "-m", "todeval", "annotate", "serve", str(items), "--annotator",
               "ann", "--port", "0"]  # fmt: skip
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert first.stdout is not None and "serving" in first.stdout.readline()
        second = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert second.returncode == 4, second.stderr
        assert f"in use by pid {first.pid}" in second.stderr
        assert "Traceback" not in second.stderr
    finally:
        first.send_signal(signal.SIGINT)
        try:
            first.wait(timeout=20)
        except subprocess.TimeoutExpired:
            first.kill()
    time.sleep(0.1)


def test_verdict_cache_torn_at_every_byte_of_a_verdict(tmp_path: Path) -> None:
    from todeval.benchmarks.clarq._judge import VerdictEntry, VerdictStore

    def entry(key: str) -> VerdictEntry:
        return VerdictEntry(key=key, model="m", language="en", gold="g", purpose="p",
                            predictions=["x"], match=True)  # fmt: skip

    base = tmp_path / "base.jsonl"
    store = VerdictStore(path=base)
    store.put(entry("k1"))
    store.put(entry("k2"))
    first, second = base.read_bytes().splitlines(keepends=True)
    for cut in range(1, len(second)):
        path = tmp_path / f"verdicts{cut}.jsonl"
        path.write_bytes(first + second[:cut])
        VerdictStore(path=path).put(entry("k3"))
        again = VerdictStore(path=path)
        whole = cut == len(second) - 1
        assert again.skipped_lines == 0, cut  # nothing glued to the next verdict
        assert again.get("k1") and again.get("k3") and bool(again.get("k2")) == whole, cut
        if not whole:
            assert torn_path(path).read_bytes() == second[:cut] + b"\n"
