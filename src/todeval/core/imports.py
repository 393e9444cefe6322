"""Loading ``package.module:attribute`` references (plug-ins, players, plan factories)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from todeval.errors import UsageError


def is_reference(text: str) -> bool:
    """Whether ``text`` looks like ``package.module:attribute``."""
    module, sep, attr = text.partition(":")
    return bool(sep and module and attr)


def _path_hint(module_name: str) -> str:
    """A hint when the module's package sits in the current folder but that folder is not on
    the import path (``todeval`` does not add it)."""
    import os
    import sys
    from pathlib import Path

    top = module_name.split(".")[0]
    here = Path.cwd()
    on_path = {str(Path(p or os.curdir).resolve()) for p in sys.path}
    if str(here.resolve()) in on_path:
        return ""
    if (here / top).is_dir() or (here / f"{top}.py").is_file():
        return f" ({top} is in this folder, which is not on the import path: run with PYTHONPATH=.)"
    return ""


def load_reference(reference: str, *, what: str = "object") -> object:
    """The attribute a ``package.module:attribute`` reference names (``attribute`` may be dotted).

    A reference that cannot be imported is a one-line usage error naming ``what`` it was for.
    """
    module_name, sep, attr = reference.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"cannot load {what} {reference!r}: expected package.module:attribute")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(
            f"cannot load {what} {reference!r}: {exc}{_path_hint(module_name)}"
        ) from None
    found: object = module
    try:
        for part in attr.split("."):  # "SPEC.profile": an attribute of an attribute
            found = getattr(found, part)
        return found
    except AttributeError:
        raise UsageError(
            f"cannot load {what} {reference!r}: {module_name} has no attribute {attr!r}"
        ) from None


def lazy_attributes(
    namespace: dict[str, Any], where: Mapping[str, str], *, relative: bool = False
) -> Callable[[str], Any]:
    """A module ``__getattr__`` importing each name of ``where`` from its module on first use.

    ``where`` maps a public name to the module holding it (with ``relative``, a module of the
    package owning ``namespace``; pass ``globals()``). The value found is kept in
    ``namespace``, so each name is imported once. Packages use this so that importing them pulls
    in only what a caller touches (the command line starts without the model layer).
    """
    package = str(namespace["__name__"])

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        target = f"{package}.{module}" if relative else module
        value = getattr(importlib.import_module(target), name)
        namespace[name] = value
        return value

    return __getattr__
