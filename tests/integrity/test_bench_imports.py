"""Every ``bench/`` script names only what the package offers: a name a refactor removed
(``clarq.run.build_plan`` once) fails here, not when someone next runs the bench."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _missing(path: Path) -> list[str]:
    out = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if not (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("todeval")):
            continue
        module = importlib.import_module(node.module or "")
        for alias in node.names:
            if hasattr(module, alias.name):
                continue
            try:
                importlib.import_module(f"{node.module}.{alias.name}")
            except ImportError:
                out.append(f"{path.name}: {node.module}.{alias.name}")
    return out


def test_bench_scripts_import_what_exists() -> None:
    scripts = sorted(BENCH.glob("bench_*.py"))
    assert len(scripts) >= 10
    assert [m for path in scripts for m in _missing(path)] == []
