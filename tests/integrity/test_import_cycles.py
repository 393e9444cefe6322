"""No import cycle between modules of the package (issue 28): every import counts, at module
level, inside functions (lazy) and under ``TYPE_CHECKING``. ``from pkg import sub`` of a
submodule is an edge to ``pkg.sub``; a package reached only as a parent is no edge."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted((SRC / "todeval").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _edges(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.add(sub if sub in modules else base)
    return {m for m in out if m in modules and m != name}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_detector_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_the_package() -> None:
    modules = _modules()
    assert len(modules) > 200
    graph = {name: _edges(name, path, modules) for name, path in modules.items()}
    assert sum(len(e) for e in graph.values()) > 500
    found = cycles(graph)
    if found:
        pytest.fail("import cycles: " + "; ".join(" <-> ".join(c) for c in found))


def _reach(start: str, graph: dict[str, set[str]]) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for child in graph[todo.pop()]:
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


@pytest.mark.parametrize(
    ("start", "forbidden"),
    [
        # the runner executes plans: it never reads prompt files or knows a participant
        ("todeval.runner.execute", ("todeval.dialogue", "todeval.benchmarks")),
        ("todeval.runner.options", ("todeval.dialogue", "todeval.benchmarks")),
        # the run-directory format is readable without the engine (issue 28.5)
        ("todeval.core.records", ("todeval.runner", "todeval.dialogue", "todeval.backends")),
        ("todeval.core.events", ("todeval.runner", "todeval.dialogue", "todeval.backends")),
    ],
)
def test_layers_import_only_what_is_below_them(start: str, forbidden: tuple[str, ...]) -> None:
    modules = _modules()
    graph = {name: _edges(name, path, modules) for name, path in modules.items()}
    reached = sorted(m for m in _reach(start, graph) if m.startswith(forbidden))
    assert reached == [], f"{start} reaches {reached}"
