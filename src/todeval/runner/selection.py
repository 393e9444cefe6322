"""Choosing a run's tasks: explicit ids, then the first ``limit``, in the benchmark's order."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from todeval.errors import UsageError


def select_ids(
    available: Sequence[str],
    wanted: Sequence[str] | None,
    limit: int | None,
    canonical: Callable[[str], str] = str,
    *,
    noun: str = "task",
) -> list[str]:
    """The ids of a run, in ``available``'s order: ``wanted`` (if given), then the first
    ``limit``. ``canonical`` maps a user's spelling of an id to the stored one. Unknown ids are a
    usage error naming them (``unknown <noun> id(s): ...``)."""
    chosen = list(available)
    if wanted:
        known = set(available)
        asked = [canonical(w) for w in wanted]
        unknown = [w for w, a in zip(wanted, asked, strict=True) if a not in known]
        if unknown:
            listed = ", ".join(repr(u) for u in unknown[:5])
            more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            raise UsageError(f"unknown {noun} id(s): {listed}{more}")
        keep = set(asked)
        chosen = [d for d in chosen if d in keep]
    if limit is not None:
        if limit < 1:
            raise UsageError("--limit must be at least 1")
        chosen = chosen[:limit]
    if not chosen:
        raise UsageError(f"no {noun}s selected")
    return chosen
