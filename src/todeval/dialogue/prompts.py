"""Prompt templates as files, overridable per run.

A benchmark keeps the templates of its LLM participants as ``<name>.txt`` files in a package
folder (``prompts/`` beside its code). Placeholders are written ``${name}`` (``$$`` is a
literal dollar sign); the placeholders a default template uses are the ones it documents and
the only ones its override may use, and an override must keep all of them.

A benchmark may replace some defaults for one configuration (its own wording of a template, with
the same placeholders); overrides are then checked against the replacement.

``--prompts DIR`` overrides templates by file name: ``DIR/monolithic.txt`` replaces the default
``monolithic`` template; files that name no template are an error (a typo would otherwise be
ignored silently). A file's final newline is not part of its template. The digest of the
effective set is part of the run's config hash, and the override texts are recorded in the
config, so a run can be rebuilt (on a Ray worker, or from its manifest) without the directory.
"""

from __future__ import annotations

import hashlib
import json
import string
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from pathlib import Path

from todeval.core.userfiles import read_user_text
from todeval.errors import BadInputError, UsageError

SUFFIX = ".txt"


def placeholders(text: str) -> set[str]:
    """The ``${name}`` / ``$name`` placeholders a template uses."""
    found: set[str] = set()
    for match in string.Template.pattern.finditer(text):
        name = match.group("named") or match.group("braced")
        if name:
            found.add(name)
        elif match.group("invalid") is not None:
            raise ValueError(f"a '$' not followed by a placeholder name at {match.start()}")
    return found


def _template_text(raw: str) -> str:
    return raw[:-1] if raw.endswith("\n") else raw


def _package_templates(package: str) -> dict[str, str]:
    root = resources.files(package).joinpath("prompts")
    out: dict[str, str] = {}
    for item in root.iterdir():
        if item.name.endswith(SUFFIX):
            out[item.name[: -len(SUFFIX)]] = _template_text(item.read_text(encoding="utf-8"))
    return dict(sorted(out.items()))


MAX_TEMPLATE_BYTES = 1024 * 1024
"""The largest template file read from ``--prompts DIR`` (1 MiB)."""


def read_overrides(directory: str | Path) -> dict[str, str]:
    """The ``*.txt`` files of an override directory, by template name.

    Every entry named like a template must be a regular UTF-8 file of at most
    :data:`MAX_TEMPLATE_BYTES` inside the directory (a symlink may point elsewhere in it):
    a directory, a dangling or escaping symlink, a device or an unreadable file is a one-line
    error (exit 3), never skipped and never read from outside."""
    path = Path(directory)
    if not path.is_dir():
        raise BadInputError(f"{path}: --prompts must name a directory of <template>.txt files")
    try:
        entries = sorted(f for f in path.iterdir() if f.name.endswith(SUFFIX))
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read the prompt templates ({exc})") from None
    return {
        f.name[: -len(SUFFIX)]: _template_text(
            read_user_text(f, what="prompt template", folder=path, max_bytes=MAX_TEMPLATE_BYTES)
        )
        for f in entries
    }


class PromptSet:
    """The effective templates of a run: package defaults with overrides applied."""

    def __init__(self, defaults: Mapping[str, str], overrides: Mapping[str, str] | None = None):
        self.defaults = dict(defaults)
        self.overrides = dict(overrides or {})
        self._allowed = {name: placeholders(text) for name, text in self.defaults.items()}
        unknown = sorted(set(self.overrides) - set(self.defaults))
        if unknown:
            raise BadInputError(
                f"prompt override {unknown[0]}{SUFFIX} names no template; "
                f"templates: {', '.join(self.defaults)}"
            )
        for name, text in self.overrides.items():
            try:
                used = placeholders(text)
            except ValueError as exc:
                raise BadInputError(f"prompt override {name}{SUFFIX}: {exc}") from None
            allowed = self._allowed[name]
            if used - allowed:
                raise BadInputError(
                    f"prompt override {name}{SUFFIX} uses unknown placeholder "
                    f"${{{sorted(used - allowed)[0]}}}; it may use: "
                    + (", ".join(f"${{{p}}}" for p in sorted(allowed)) or "none")
                )
            if allowed - used:
                raise BadInputError(
                    f"prompt override {name}{SUFFIX} lacks placeholder "
                    f"${{{sorted(allowed - used)[0]}}} (the default template uses it)"
                )
        self.templates = {**self.defaults, **self.overrides}

    @classmethod
    def load(
        cls,
        package: str,
        overrides: Mapping[str, str] | None = None,
        *,
        defaults: Mapping[str, str] | None = None,
    ) -> PromptSet:
        """The templates in ``<package>/prompts/`` with ``overrides`` applied; ``defaults``
        replace some of the package's first (the same names and placeholders: a benchmark's
        wording for one configuration, which overrides are checked against)."""
        templates = _package_templates(package)
        for name, text in (defaults or {}).items():
            if name not in templates:
                raise KeyError(f"no prompt template {name!r} to replace in {package}")
            if placeholders(text) != placeholders(templates[name]):
                raise ValueError(f"the replacement of {name!r} changes its placeholders")
            templates[name] = text
        return cls(templates, overrides)

    @property
    def digest(self) -> str:
        """A short hash of the effective templates (part of the config hash)."""
        return self.digest_of(self.templates)

    def digest_of(self, names: Iterable[str]) -> str:
        """A short hash of some effective templates (e.g. the ones one role reads)."""
        chosen = {self._known(name): self.templates[name] for name in names}
        blob = json.dumps(chosen, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def placeholders_of(self, name: str) -> set[str]:
        return set(self._allowed[self._known(name)])

    def render(self, name: str, **values: str) -> str:
        """Template ``name`` with its placeholders filled from ``values``."""
        template = self.templates[self._known(name)]
        missing = self._allowed[name] - set(values)
        if missing:
            raise UsageError(f"prompt {name!r} needs a value for ${{{sorted(missing)[0]}}}")
        return string.Template(template).substitute(values)

    def _known(self, name: str) -> str:
        if name not in self.templates:
            raise KeyError(f"no prompt template {name!r} (templates: {', '.join(self.templates)})")
        return name


@cache
def package_prompts(package: str) -> PromptSet:
    """A package's default templates, read once (a :class:`PromptSet` is never changed)."""
    return PromptSet.load(package)
