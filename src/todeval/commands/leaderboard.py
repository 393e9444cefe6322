"""``todeval leaderboard build SUBMISSIONS_DIR -o SITE_DIR`` (:mod:`todeval.leaderboard`).

Exit 0 when the site has a board; 4 (refused) when every archive was refused -- the site, its
excluded page with every reason, is written all the same; 3 when the folder holds no archive.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from todeval.errors import EXIT_OK, RefusedError
from todeval.registry import Registry

if TYPE_CHECKING:
    from todeval.report import TranscriptCap

GROUP = "leaderboard"


def register(registry: Registry) -> None:
    registry.group(GROUP, "publish verified submissions as a static leaderboard site")
    registry.lazy(
        GROUP,
        "build",
        "verify every submission archive in a folder and write a static site: one board per "
        "benchmark, task set and protocol, refused ones listed apart",
        "todeval.commands.leaderboard",
        add="add_build_arguments",
        run="run_build",
    )


def add_build_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "submissions",
        metavar="DIR",
        help="a folder of submission archives (*.tar.gz, from todeval submit prepare)",
    )
    parser.add_argument(
        "-o", "--output", required=True, metavar="SITE_DIR", help="the site's folder to write"
    )
    parser.add_argument(
        "--transcripts",
        type=_cap,
        default="all",
        metavar="N|all",
        help="transcripts published per submission, failures first (default: all)",
    )
    parser.add_argument("--quiet", action="store_true", help="no line per archive")


def _cap(text: str) -> TranscriptCap:
    from todeval.report import parse_cap

    try:
        return parse_cap(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (a number >= 0 or 'all')") from None


def run_build(args: argparse.Namespace) -> int:
    from todeval.leaderboard import build_site
    from todeval.leaderboard.collect import Submission

    def progress(sub: Submission) -> None:
        if args.quiet:
            return
        if sub.verified and sub.verdict is not None:
            print(f"{sub.archive}: {sub.verdict.headline}")
        else:
            first = sub.reasons[0] if sub.reasons else "refused"
            more = f" (+{len(sub.reasons) - 1} more)" if len(sub.reasons) > 1 else ""
            print(f"{sub.archive}: excluded: {first}{more}")

    out = Path(args.output)
    index = build_site(Path(args.submissions), out, transcripts=args.transcripts, progress=progress)
    ranked = sum(len(b.rows) for b in index.boards)
    print(
        f"wrote {out}: {len(index.boards)} board(s), {ranked} verified submission(s), "
        f"{len(index.excluded)} excluded; open {out / 'index.html'}"
    )
    if ranked == 0 and index.excluded:
        # the site (its excluded page) is written: the error says the boards are empty
        first = index.excluded[0]
        why = first.reasons[0] if first.reasons else "refused"
        raise RefusedError(
            f"all {len(index.excluded)} archive(s) refused (first: {first.archive}: {why}); "
            f"the site has no board, every reason is in {out / 'excluded.html'}"
        )
    return EXIT_OK
