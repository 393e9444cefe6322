"""One rule for run-directory names and the slugs inside them."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slug(text: str, *, default: str = "run") -> str:
    """A directory- and URL-safe form of a name or model spec: URLs dropped (``...@<url>``), a
    file path reduced to its stem (``scripted:/tmp/replies.json`` -> ``scripted_replies``), each
    run of other characters one ``_``; ``default`` when nothing is left."""
    text = text.split("@", 1)[0]
    if "/" in text:
        prefix, sep, path = text.partition(":")
        text = f"{prefix}_{Path(path).stem}" if sep and path else Path(text).stem
    return _UNSAFE.sub("_", text).strip("_") or default


def selection_suffix(
    *,
    limit: int | None = None,
    limit_mode: str = "stratified",
    ids: Sequence[str] | None = None,
    trials: int = 1,
) -> str:
    """``[-n<limit>[-first]][-ids<hash>][-k<trials>]``: what a directory name says of the
    selection (runs and panels alike)."""
    suffix = ""
    if limit is not None:
        suffix += f"-n{limit}" + ("-first" if limit_mode == "first" else "")
    if ids:
        digest = hashlib.sha256(",".join(sorted(ids)).encode()).hexdigest()[:8]
        suffix += f"-ids{digest}"
    if trials > 1:
        suffix += f"-k{trials}"
    return suffix


def run_dir_name(
    benchmark: str,
    parts: Sequence[str],
    *,
    seed: int,
    constrained: bool = False,
    limit: int | None = None,
    limit_mode: str = "stratified",
    ids: Sequence[str] | None = None,
    trials: int = 1,
    protocol: str | None = None,
) -> str:
    """``runs/<benchmark>-<parts>-s<seed>[-constrained][-n<limit>[-first]][-ids<hash>][-k<trials>]``.

    ``-n<limit>`` is a stratified limit, ``-n<limit>-first`` the first ``limit`` tasks.

    ``parts`` are slugged; ``protocol`` is appended as ``-p<protocol>`` (callers pass it only
    when it is not their benchmark's default, so default runs keep their names).
    """
    name = "-".join([f"runs/{benchmark}", *(slug(p) for p in parts), f"s{seed}"])
    if constrained:
        name += "-constrained"
    name += selection_suffix(limit=limit, limit_mode=limit_mode, ids=ids, trials=trials)
    if protocol:
        name += f"-p{protocol}"
    return name
