"""``todeval leaderboard build``: a folder of submission archives as a static site.

Layout of the site::

    index.html                      the boards: one per benchmark, task set (hash) and protocol
    board-<id>.html                 one board: rank, rank interval and tier, the verification
                                    badge, description, tasks x trials, the profile's metrics
                                    with CIs, cost and time per dialogue, a transcripts link
    excluded.html                   archives refused by verify (or unreadable), with the reasons
    submissions/<id>.html           a verified submission's report (every transcript, the
                                    episode viewer: #ep=<id>/<episode>), linking back to its
                                    board
    submissions/<id>.verdict.json   its verdict
    site.json                       the boards and the excluded, for machines (:class:`SiteIndex`)

The site is written into a fresh folder beside ``SITE_DIR`` and moved into place when whole; an
existing ``SITE_DIR`` is replaced only when it is a site this command wrote (its ``site.json``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from todeval import __version__
from todeval.core.files import write_atomic
from todeval.core.safejson import loads
from todeval.errors import BadInputError, UsageError
from todeval.leaderboard.collect import BoardKey, Collected, Submission, collect
from todeval.leaderboard.pages import (
    EXCLUDED,
    INDEX,
    REPORTS,
    SiteBoard,
    badge,
    board_file,
    board_page,
    excluded_page,
    index_page,
    report_file,
    verdict_file,
)
from todeval.report import ReportInputs, TranscriptCap, boards
from todeval.results.profile import Column

SITE_INDEX = "site.json"
FORMAT: Literal["todeval-leaderboard"] = "todeval-leaderboard"


class SiteRow(BaseModel):
    submission: str
    rank: str
    rank_interval: str = Field("", description="95% rank interval, '' when not computed")
    tier: str = ""
    primary: float | None = None
    badge: str
    standard: bool
    channel: str | None = None
    description: str
    report: str = Field(description="the submission's report page, relative to the site")


class SiteBoardEntry(BaseModel):
    id: str
    page: str
    benchmark: str
    task_set: str
    task_set_hash: str
    protocol: str
    primary: str
    rows: list[SiteRow]


class SiteExcluded(BaseModel):
    archive: str
    benchmark: str | None = None
    reasons: list[str]


class SiteIndex(BaseModel):
    """``site.json``: what the site shows, and the mark that this command wrote the folder."""

    format: Literal["todeval-leaderboard"] = FORMAT
    todeval_version: str = __version__
    generated_at: str
    boards: list[SiteBoardEntry]
    excluded: list[SiteExcluded]


def _board_base(key: BoardKey) -> str:
    """A board's id unless another board of the site has the same one (then its hash follows)."""
    from todeval.runner.naming import slug

    return slug("-".join(p for p in (key[0], key[1], key[3]) if p), default="board")


def _board_ids(keys: list[BoardKey]) -> dict[BoardKey, str]:
    base = {k: _board_base(k) for k in keys}
    clash = {b for b in base.values() if list(base.values()).count(b) > 1}
    return {k: f"{b}-{k[2][:8]}" if b in clash else b for k, b in base.items()}


def site_boards(collected: Collected) -> list[SiteBoard]:
    """The boards: the report's board (ranks, intervals, tiers) over each group's runs."""
    groups = collected.boards()
    ids = _board_ids(list(groups))
    out = []
    for key, subs in groups.items():
        runs = [s.run for s in subs if s.run is not None]
        found = boards(ReportInputs(runs=runs, profiles=collected.profiles))
        (board,) = [b for b in found if b.kind == "run"]  # one benchmark, one task set
        out.append(SiteBoard(ids[key], key, board, {s.id: s for s in subs}))
    return out


def _entry(sb: SiteBoard) -> SiteBoardEntry:
    primary = Column(metric=sb.board.profile.primary, title="").key
    rows = []
    for row in sb.board.rows:
        sub = sb.submissions[row.key]
        assert sub.verdict is not None
        est = row.cells.get(primary)
        rows.append(
            SiteRow(
                submission=sub.id,
                rank=sb.board.rank(row),
                rank_interval=sb.board.rank_range(row),
                tier=sb.board.tier(row),
                primary=est.value if est is not None else None,
                badge=badge(sub.verdict)[0],
                standard=sub.verdict.standard,
                channel=sub.verdict.channel,
                description=sub.verdict.system.description,
                report=report_file(sub),
            )
        )
    bench, task_set, digest, protocol = sb.key
    return SiteBoardEntry(
        id=sb.id,
        page=board_file(sb.id),
        benchmark=bench,
        task_set=task_set,
        task_set_hash=digest,
        protocol=protocol,
        primary=sb.board.profile.primary,
        rows=rows,
    )


def _check_target(site_dir: Path) -> None:
    if site_dir.is_symlink() or (site_dir.exists() and not site_dir.is_dir()):
        raise UsageError(f"-o {site_dir}: not a directory")
    if not site_dir.exists() or not any(site_dir.iterdir()):
        return
    try:
        data = loads((site_dir / SITE_INDEX).read_text(encoding="utf-8"))
        ours = isinstance(data, dict) and data.get("format") == FORMAT
    except (OSError, ValueError, UnicodeDecodeError):
        ours = False
    if not ours:
        raise UsageError(
            f"-o {site_dir}: the folder exists and is not a site todeval leaderboard build "
            f"wrote (no {SITE_INDEX}): choose a new or empty folder"
        )


def _write(path: Path, text: str) -> None:
    try:
        write_atomic(path, text, fsync=False)
    except OSError as exc:
        raise BadInputError(f"cannot write {path} ({exc.strerror or exc})") from None


def build_site(
    folder: Path,
    site_dir: Path,
    *,
    transcripts: TranscriptCap = "all",
    progress: Callable[[Submission], None] | None = None,
) -> SiteIndex:
    """Verify every archive under ``folder`` and write the site to ``site_dir``."""
    _check_target(site_dir)
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    parent = site_dir.resolve().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInputError(f"cannot write {site_dir} ({exc.strerror or exc})") from None
    work = parent / f".{site_dir.name}.{os.getpid()}.tmp"
    shutil.rmtree(work, ignore_errors=True)
    try:
        (work / REPORTS).mkdir(parents=True)

        def write_report(sub: Submission, html: str) -> None:
            _write(work / report_file(sub), html)

        collected = collect(
            folder,
            write_report,
            transcripts=transcripts,
            progress=progress,
            board_href=lambda key: f"../{board_file(_board_base(key))}",
        )
        for sub in collected.verified:
            assert sub.verdict is not None
            _write(work / verdict_file(sub), sub.verdict.model_dump_json(indent=2) + "\n")
        site = site_boards(collected)
        for sb in site:
            _write(work / board_file(sb.id), board_page(sb, generated))
            if sb.id != _board_base(sb.key):  # the report pages were written before the clash
                for sub in sb.submissions.values():
                    _relink(work / report_file(sub), _board_base(sb.key), sb.id)
        _write(work / INDEX, index_page(site, collected, generated))
        _write(work / EXCLUDED, excluded_page(collected, generated))
        index = SiteIndex(
            generated_at=generated,
            boards=[_entry(sb) for sb in site],
            excluded=[
                SiteExcluded(
                    archive=s.archive,
                    benchmark=s.verdict.benchmark if s.verdict is not None else None,
                    reasons=s.reasons,
                )
                for s in collected.excluded
            ],
        )
        _write(work / SITE_INDEX, index.model_dump_json(indent=2) + "\n")
        _replace(work, site_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return index


def _relink(report: Path, old_id: str, new_id: str) -> None:
    """Point a report page's link back to its board at the board's final file (its id took the
    task-set hash: another board had the same benchmark, task set name and protocol)."""
    old = f'href="../{board_file(old_id)}" id="up"'
    try:
        text = report.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInputError(f"cannot read {report} ({exc.strerror or exc})") from None
    if old not in text:
        raise AssertionError(f"{report}: no link back to {board_file(old_id)}")
    _write(report, text.replace(old, f'href="../{board_file(new_id)}" id="up"', 1))


def _replace(work: Path, site_dir: Path) -> None:
    """Move the finished site into place (an older site of this command removed)."""
    old = site_dir.with_name(f".{site_dir.name}.{os.getpid()}.old")
    moved = False
    try:
        if site_dir.exists():
            site_dir.rename(old)
            moved = True
        work.rename(site_dir)
    except OSError as exc:
        if moved and not site_dir.exists():
            old.rename(site_dir)
        raise BadInputError(f"cannot write {site_dir} ({exc.strerror or exc})") from None
    shutil.rmtree(old, ignore_errors=True)


__all__ = ["SITE_INDEX", "SiteIndex", "build_site", "site_boards"]
