"""``todeval data domain PACK``: check a domain pack, draw tasks from it, or write the LLM
players' prompt templates in its wording (to read, edit and pass back with ``--prompts DIR``).

``PACK`` is a pack folder, or the name of a pack the package ships (``car-rental``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from importlib import resources
from pathlib import Path

from todeval.benchmarks.booking.domains.pack import cached_pack
from todeval.console.tables import render_rows
from todeval.core.files import write_atomic
from todeval.errors import BadInputError


def shipped_packs() -> list[str]:
    """The names of the packs shipped as package data."""
    node = resources.files("todeval") / "data" / "domains"
    return sorted(p.name for p in node.iterdir() if p.is_dir()) if node.is_dir() else []


def pack_folder(name: str) -> Path:
    """A pack folder from a path or a shipped pack's name (one-line error otherwise)."""
    path = Path(name)
    if path.is_dir():
        return path.resolve()
    node = resources.files("todeval") / "data" / "domains" / name
    if "/" not in name and node.is_dir():
        return Path(str(node)).resolve()
    shipped = ", ".join(shipped_packs()) or "none"
    raise BadInputError(f"{name}: no such pack folder (shipped packs: {shipped})")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pack", metavar="PACK", help="a pack folder or a shipped pack's name")
    parser.add_argument(
        "--check", action="store_true", help="validate the pack and print what it declares"
    )
    parser.add_argument(
        "--generate-tasks", type=int, default=None, metavar="N", help="draw N feasible goals"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    parser.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="FILE",
        help="task file to write (default <pack>-tasks-n<N>-s<seed>.json)",
    )
    parser.add_argument(
        "--write-prompts",
        default=None,
        metavar="DIR",
        help="write the LLM players' templates in the pack's wording to DIR (edit them and "
        "run with --prompts DIR)",
    )


def run_command(args: argparse.Namespace) -> int:
    folder = pack_folder(args.pack)
    pack = cached_pack(str(folder))
    if args.check or (args.generate_tasks is None and args.write_prompts is None):
        from todeval.benchmarks.booking.world.model import pack_task_set
        from todeval.benchmarks.booking.world.of_task_set import world_of

        world = world_of(pack_task_set(folder))
        rows = [
            [
                name,
                str(len(pack.rows[name])),
                ", ".join(e.slots),
                ", ".join(e.booking) or "-",
                f"{pack.search_tool(name)}, {pack.book_tool(name)}",
            ]
            for name, e in pack.entities.items()
        ]
        print(f"pack {pack.name}: {folder}")
        print(render_rows(["entity", "rows", "slots", "booking", "tools"], rows))
        print(f"ok: {len(world.tools)} tools (followup included); schema and data agree")
    if args.generate_tasks is not None:
        from todeval.benchmarks.booking.domains.tasks import generate_tasks

        content = generate_tasks(folder, args.generate_tasks, args.seed)
        out = Path(args.output or f"{pack.name}-tasks-n{args.generate_tasks}-s{args.seed}.json")
        text = json.dumps(content, indent=1, ensure_ascii=False) + "\n"
        try:
            write_atomic(out, text)
        except OSError as exc:
            raise BadInputError(f"{out}: cannot write ({exc.strerror or exc})") from None
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        kept, drawn = len(content["tasks"]), content["draws"]
        print(
            f"wrote {kept} tasks to {out} (sha256 {digest}; {kept} of {drawn} drawn goals "
            "were bookable by a perfect system)"
        )
    if args.write_prompts is not None:
        _write_prompts(folder, Path(args.write_prompts))
    return 0


def _write_prompts(folder: Path, out: Path) -> None:
    from todeval.benchmarks.booking.llm_systems.prompts import PACKAGE, world_prompts
    from todeval.benchmarks.booking.world.model import pack_task_set
    from todeval.benchmarks.booking.world.of_task_set import world_of
    from todeval.dialogue.prompts import PromptSet

    prompts = PromptSet.load(PACKAGE, defaults=world_prompts(world_of(pack_task_set(folder))))
    try:
        out.mkdir(parents=True, exist_ok=True)
        for name, text in prompts.templates.items():
            write_atomic(out / f"{name}.txt", text + "\n")
    except OSError as exc:
        raise BadInputError(f"{out}: cannot write ({exc.strerror or exc})") from None
    print(f"wrote {len(prompts.templates)} templates to {out} (run with --prompts {out})")
