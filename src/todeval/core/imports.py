"""Loading ``package.module:attribute`` references (plug-ins, players, plan factories)."""

from __future__ import annotations

import importlib

from todeval.errors import UsageError


def is_reference(text: str) -> bool:
    """Whether ``text`` looks like ``package.module:attribute``."""
    module, sep, attr = text.partition(":")
    return bool(sep and module and attr)


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
        raise UsageError(f"cannot load {what} {reference!r}: {exc}") from None
    found: object = module
    try:
        for part in attr.split("."):  # "SPEC.profile": an attribute of an attribute
            found = getattr(found, part)
        return found
    except AttributeError:
        raise UsageError(
            f"cannot load {what} {reference!r}: {module_name} has no attribute {attr!r}"
        ) from None
