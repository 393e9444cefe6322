"""Reading a folder of submission archives: each one verified, its run read for the boards.

Every ``*.tar.gz`` under the folder is opened and checked by the same function as ``todeval
submit verify`` (:func:`todeval.submission.verify.verify_opened`). A verified archive's run
is read once: its report page (every transcript, the episode viewer) is written there and
then, and only the run's summary and per-task values are kept for the boards. A refused
archive, or a file that is not a submission archive, is kept off every board with its
reasons.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from todeval.errors import BadInputError, TodevalError
from todeval.registry import discover
from todeval.report import RunInput, TranscriptCap, build_html, load_inputs
from todeval.results.profile import ProfileBook
from todeval.submission.archive import SUFFIX, open_archive
from todeval.submission.verify import Verdict, verify_opened

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")

BoardKey = tuple[str, str, str, str]
"""(benchmark, task set, task-set hash, protocol): one board each."""


@dataclass
class Submission:
    """One archive of the folder and what became of it."""

    id: str
    """A file- and URL-safe name, from the archive's path in the folder (unique)."""
    archive: str
    """The archive's path relative to the submissions folder."""
    verdict: Verdict | None = None
    """The verdict (None when the file could not be read as a submission)."""
    problem: str | None = None
    """Why the file is not a submission archive (one line)."""
    run: RunInput | None = None
    """The verified run (summary, roles, per-task values; no transcripts)."""
    task_set_hash: str = ""
    report_bytes: int = 0

    @property
    def verified(self) -> bool:
        return self.verdict is not None and self.verdict.status == "verified" and bool(self.run)

    @property
    def reasons(self) -> list[str]:
        """Why it is kept off the boards."""
        if self.problem is not None:
            return [self.problem]
        return list(self.verdict.reasons) if self.verdict is not None else []

    @property
    def board_key(self) -> BoardKey:
        v = self.verdict
        assert v is not None
        return (v.benchmark, v.task_set or "", self.task_set_hash, v.protocol or "")


@dataclass
class Collected:
    """Every submission of the folder, in the order of their paths."""

    submissions: list[Submission] = field(default_factory=list)
    profiles: ProfileBook = field(default_factory=ProfileBook)

    @property
    def verified(self) -> list[Submission]:
        return [s for s in self.submissions if s.verified]

    @property
    def excluded(self) -> list[Submission]:
        return [s for s in self.submissions if not s.verified]

    def boards(self) -> dict[BoardKey, list[Submission]]:
        """The verified submissions by board, boards in order of their key."""
        out: dict[BoardKey, list[Submission]] = {}
        for s in self.verified:
            out.setdefault(s.board_key, []).append(s)
        return dict(sorted(out.items()))


def archives(folder: Path) -> list[Path]:
    """The submission archives under ``folder`` (hidden files and folders left out), sorted."""
    if not folder.is_dir():
        why = "not a directory" if folder.exists() else "no such directory"
        raise BadInputError(f"{folder}: {why} (a folder of submission archives)")
    found: list[Path] = []
    for here, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [
            Path(here) / f for f in sorted(files) if f.endswith(SUFFIX) and not f.startswith(".")
        ]
    if not found:
        raise BadInputError(
            f"{folder}: no submission archives (*{SUFFIX}; write one with todeval submit prepare)"
        )
    return found


def _ids(paths: list[Path], folder: Path) -> Iterator[tuple[Path, str, str]]:
    used: set[str] = set()
    for path in paths:
        rel = path.relative_to(folder).as_posix()
        base = _UNSAFE.sub("_", rel.removesuffix(SUFFIX).replace("/", "--")).strip("_.")
        base = base or "submission"
        key, n = base, 2
        while key.lower() in used:
            key, n = f"{base}-{n}", n + 1
        used.add(key.lower())
        yield path, rel, key


def collect(
    folder: Path,
    write_report: Callable[[Submission, str], None],
    *,
    transcripts: TranscriptCap = "all",
    progress: Callable[[Submission], None] | None = None,
    board_href: Callable[[BoardKey], str] | None = None,
) -> Collected:
    """Verify every archive under ``folder``; for each verified one, build its report page
    (``write_report(submission, html)``) and keep its run for the boards. ``board_href`` gives
    the relative link from a report page to its board (the page's link back; none without)."""
    out = Collected(profiles=ProfileBook(discover().profiles))
    for path, rel, key in _ids(archives(folder), folder):
        sub = Submission(id=key, archive=rel)
        with tempfile.TemporaryDirectory(prefix="todeval-leaderboard-") as tmp:
            try:
                _read(sub, path, Path(tmp), out, write_report, transcripts, board_href)
            except TodevalError as exc:
                sub.problem = f"cannot be published: {exc.message}"
                sub.run = None
        out.submissions.append(sub)
        if progress is not None:
            progress(sub)
    return out


def _read(
    sub: Submission,
    path: Path,
    tmp: Path,
    out: Collected,
    write_report: Callable[[Submission, str], None],
    transcripts: TranscriptCap,
    board_href: Callable[[BoardKey], str] | None,
) -> None:
    try:
        opened = open_archive(path, tmp / "archive")
        sub.verdict = verify_opened(opened)
    except BadInputError as exc:  # not an archive, or one that holds no readable run
        sub.problem = exc.message.removeprefix(f"{path}: ")
        return
    sub.task_set_hash = opened.index.task_set_hash
    if sub.verdict.status != "verified":
        return
    run_dir = tmp / sub.id  # the run's key in its report is the folder's name
    opened.run_dir.rename(run_dir)
    inputs = load_inputs([run_dir], out.profiles, transcripts=transcripts)
    description = sub.verdict.system.description
    back = None
    if board_href is not None:
        bench, task_set, _digest, protocol = sub.board_key
        parts = [out.profiles.get(bench).display, f"task set {task_set or '–'}"]
        if protocol:
            parts.append(f"protocol {protocol}")
        back = (board_href(sub.board_key), "the board: " + " · ".join(parts))
    html = build_html(inputs, title=f"{sub.id}: {description}", back=back)
    write_report(sub, html)
    sub.report_bytes = len(html.encode("utf-8"))
    (run,) = inputs.runs
    sub.run = dataclasses.replace(run, transcripts=[], reviews=None)


__all__ = ["BoardKey", "Collected", "Submission", "archives", "collect"]
