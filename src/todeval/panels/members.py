"""Panel members: who plays each role, from ``--<role>s LIST`` or a TOML panel file.

A member is a name (used in ``panel.json`` and, slugged, in run-directory names), a player (a
built-in name or ``package.module:Class``) and optionally a model spec::

    --hosts rule,vague                      # names = players
    --users agenda,llm=openai:qwen@http://...  # llm -> name llm-openai_qwen

A panel file has one array of tables per role, named after the role (the plural is accepted as
an alias, ``[[users]]`` for ``[[user]]``)::

    [[host]]
    name = "rule"
    player = "rule"

    [[guesser]]
    name = "small-llm"
    player = "llm"
    model = "openai:qwen2.5:1.5b@http://localhost:11434/v1"

The whole file is checked before anything runs: unknown tables, unknown keys, duplicate
names, names that collide once slugged into directory names (letter case aside, as on a
case-insensitive file system), empty roles -- each a one-line error.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from todeval.core.userfiles import read_user_text
from todeval.errors import BadInputError, TodevalError, UsageError
from todeval.panels.model import PAIR_SEPARATOR
from todeval.runner.naming import slug

MAX_NAME = 100
"""Longest member name: a pair's run directory joins two slugged names, and file systems
refuse names over 255 bytes."""


class Member(BaseModel):
    """One panel member: a name, a player, and optionally its model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=MAX_NAME)
    player: str = Field(min_length=1)
    model: str | None = None

    @classmethod
    def of(cls, player: str, model: str | None = None) -> Member:
        """A member named after its player (and model): ``llm-openai_qwen``."""
        name = player if not model else f"{player}-{slug(model)}"
        return cls(name=name[:MAX_NAME], player=player, model=model)

    @property
    def dirname(self) -> str:
        return slug(self.name)


ConfigT = TypeVar("ConfigT", bound=BaseModel)


def assign_by_field(config: ConfigT, role: str, member: Member) -> ConfigT:
    """The config with ``role`` played by ``member``, for configs that name a role's player in a
    field ``<role>`` and its model in ``<role>_model`` (a role without that field takes no
    model: a member with one is a usage error)."""
    fields = type(config).model_fields
    if role not in fields:
        raise UsageError(f"this benchmark has no panel role {role!r}")
    update: dict[str, Any] = {role: member.player}
    if f"{role}_model" in fields:
        update[f"{role}_model"] = member.model
    elif member.model is not None:
        raise UsageError(f"{role} {member.name!r}: the {role} takes no model")
    return config.model_copy(update=update)


def member_by_field(config: BaseModel, role: str) -> Member:
    """The member the config's ``<role>`` / ``<role>_model`` fields name (the ordinary
    options, used for a role the panel leaves alone)."""
    model = getattr(config, f"{role}_model", None)
    return Member.of(str(getattr(config, role)), str(model) if model else None)


def check_members(
    role: str, members: Sequence[Member], error: type[TodevalError] = UsageError, where: str = ""
) -> None:
    """Refuse an empty role, duplicate names, names colliding once slugged, and names holding
    the pair separator ``|``."""
    prefix = f"{where}: " if where else ""
    if not members:
        raise error(f"{prefix}no {role} in the panel")
    seen: dict[str, str] = {}
    for m in members:
        if PAIR_SEPARATOR in m.name:
            raise error(f"{prefix}{role} name {m.name!r} may not contain '{PAIR_SEPARATOR}'")
        key = m.dirname.casefold()  # one directory on a case-insensitive file system
        if key in seen:
            other = seen[key]
            what = "twice" if other == m.name else f"and {other!r} (both {m.dirname!r} on disk)"
            raise error(f"{prefix}{role} names must be distinct: {m.name!r} {what}")
        seen[key] = m.name


def parse_members(text: str, role: str = "member") -> list[Member]:
    """``agenda,corpus,llm=<spec>`` -> members (a model spec may itself contain ``:``)."""
    members: list[Member] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        player, _, model = item.partition("=")
        if not player:
            raise UsageError(f"{role} {item!r} names no player (write player or player=model)")
        members.append(Member.of(player, model or None))
    check_members(role, members)
    return members


def _alias(role: str) -> str:
    return f"{role}s"


def load_panel_file(path: str | Path, roles: Sequence[str]) -> dict[str, list[Member]]:
    """The members per role of a TOML panel file (roles it does not list are absent)."""
    try:
        data = tomllib.loads(read_user_text(path, what="panel file"))
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read the panel file ({exc.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{path}: not valid TOML ({exc})") from None
    except RecursionError:
        raise BadInputError(
            f"{path}: not a panel file (arrays or tables nested too deep)"
        ) from None
    tables = {name: role for role in roles for name in (role, _alias(role))}
    unknown = sorted(set(data) - set(tables))
    if unknown:
        valid = ", ".join(f"[[{r}]]" for r in roles)
        raise BadInputError(f"{path}: unknown table [[{unknown[0]}]]; a panel file has {valid}")
    out: dict[str, list[Member]] = {}
    for key, value in data.items():
        role = tables[key]
        if role in out:
            raise BadInputError(f"{path}: both [[{role}]] and [[{_alias(role)}]]; use one")
        out[role] = _members(path, key, value)
        check_members(role, out[role], BadInputError, str(path))
    return out


def _members(path: str | Path, key: str, value: Any) -> list[Member]:
    if not isinstance(value, list):
        raise BadInputError(f"{path}: {key} must be an array of tables ([[{key}]])")
    members = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise BadInputError(f"{path}: {key}[{i}] must be a table")
        player, model = item.get("player"), item.get("model")
        if "name" not in item and isinstance(player, str) and isinstance(model, str | None):
            item = {**item, "name": Member.of(player, model).name}
        try:
            members.append(Member.model_validate(item))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in (key, i, *err["loc"]))
            raise BadInputError(f"{path}: invalid panel file at {where}: {err['msg']}") from None
    return members
