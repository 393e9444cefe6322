"""A toy panel directory for report tests: guessers bisect and random against hosts rule and
vague (``todeval run toy --hosts ... --guessers ...``), 12 tasks each."""

from __future__ import annotations

from pathlib import Path

from todeval.cli import main

GUESSERS = ("bisect", "random")
HOSTS = ("rule", "vague")


def toy_panel(out: Path) -> Path:
    args = ["run", "toy", "--quiet", "--limit", "12", "--out", str(out)]
    code = main([*args, "--hosts", ",".join(HOSTS), "--guessers", ",".join(GUESSERS)])
    assert code == 0
    return out
