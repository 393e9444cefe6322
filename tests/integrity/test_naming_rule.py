"""One privacy rule for the whole package (issue 28.3): a module or name whose name starts
with one underscore is private -- a module to the package that holds it (and that package's
sub-packages), a name to the module that defines it. Everything else is public, and what a
package offers as a whole is listed in its ``__init__``'s ``__all__``. A benchmark author needs
only :mod:`todeval.author`."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"


def _is_private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def _module_of(path: Path, src: Path) -> tuple[str, str]:
    """(module name, its package)."""
    parts = path.relative_to(src).with_suffix("").parts
    if parts[-1] == "__init__":
        name = ".".join(parts[:-1])
        return name, name
    name = ".".join(parts)
    return name, name.rpartition(".")[0]


def violations(src: Path = SRC) -> list[str]:
    found: list[str] = []
    root = src / "todeval"
    modules = {_module_of(p, src)[0] for p in root.rglob("*.py")}
    for path in sorted(root.rglob("*.py")):
        name, package = _module_of(path, src)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module]
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    if full in modules:
                        targets.append(full)
                    elif _is_private(alias.name) and node.module != name:
                        found.append(f"{name}: imports the private name {full}")
            for target in targets:
                parts = target.split(".")
                for i, part in enumerate(parts):
                    if _is_private(part):
                        owner = ".".join(parts[:i])
                        if package != owner and not package.startswith(owner + "."):
                            found.append(f"{name}: imports {target}, private to {owner}")
                        break
    return found


def test_private_modules_and_names_stay_where_they_belong() -> None:
    assert violations() == []


def test_the_rule_catches_an_import_of_another_package_s_private_module(tmp_path: Path) -> None:
    pkg = tmp_path / "todeval"
    (pkg / "a").mkdir(parents=True)
    (pkg / "b").mkdir()
    for init in (pkg / "__init__.py", pkg / "a" / "__init__.py", pkg / "b" / "__init__.py"):
        init.write_text("", encoding="utf-8")
    (pkg / "a" / "_inner.py").write_text("def _helper() -> None: ...\nX = 1\n", encoding="utf-8")
    (pkg / "a" / "user.py").write_text("from todeval.a._inner import X\n", encoding="utf-8")
    (pkg / "b" / "thief.py").write_text(
        "from todeval.a._inner import X\nfrom todeval.a.user import _helper\n", encoding="utf-8"
    )
    assert violations(tmp_path) == [
        "todeval.b.thief: imports todeval.a._inner, private to todeval.a",
        "todeval.b.thief: imports the private name todeval.a.user._helper",
    ]
