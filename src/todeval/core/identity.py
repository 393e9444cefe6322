"""What a run is, typed: its roles, its selection of tasks, its protocol.

Written into every manifest (schema version 2) and read by the report, ``compare`` and panels,
which never look into a benchmark's config keys:

* ``roles``: role name -> :class:`RoleIdentity` (which player, which model, which prompts).
  Roles are data: one benchmark has ``system`` and ``user``, another ``seeker`` and
  ``provider`` or ``seller``;
* ``selection``: :class:`Selection` (task set, explicit ids, limit and how it was drawn);
* ``protocol``: the rule set the episodes were played under.

Run directories written by 0.1.0 (schema version 1) carry none of these; :func:`legacy_roles`
and :func:`legacy_selection` derive them from what those manifests hold, by convention only
(``players`` named the roles, ``<role>_model`` their models, ``*_ids`` and ``limit`` the
selection), so no benchmark is named here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SelectionMode = Literal["all", "ids", "first", "stratified"]


CONTROL_MARK = "[control]"
"""After a privileged player's name wherever runs are listed (console, report, exports)."""


class RoleIdentity(BaseModel):
    """Who played one role of a run."""

    model_config = ConfigDict(extra="forbid")

    player: str = Field(description="the player's name: a built-in or package.module:Class")
    model: str | None = Field(None, description="the model spec or models-file name, if any")
    model_name: str | None = Field(None, description="the model's display name, if known")
    prompts_sha256: str | None = Field(None, description="digest of the role's prompt templates")
    config_keys: list[str] = Field(
        default_factory=list,
        description="the config keys this role's choice sets (what else is equal across a "
        "panel of this role)",
    )
    privileged: bool = Field(
        False,
        description="the player was handed more than the role's view (the answer key): a "
        "control, never ranked beside agents under test",
    )
    channel: str | None = Field(
        None,
        description="how the player ran: built-in (shipped code), in-process (a "
        "package.module:Class in the evaluator's process: trusted code), endpoint (the "
        "user's own service: self-run) or isolated (a class in the OS sandbox, --isolate)",
    )

    @property
    def label(self) -> str:
        """``player (model)``, or the player alone; ``[control]`` after a privileged player."""
        model = self.model_name or self.model
        name = f"{self.player} ({model})" if model and model != self.player else self.player
        return f"{name} {CONTROL_MARK}" if self.privileged else name


class Selection(BaseModel):
    """Which tasks a run is over, and how they were chosen."""

    model_config = ConfigDict(extra="forbid")

    task_set: str | None = Field(None, description="the task set, split or corpus drawn from")
    ids: list[str] | None = Field(None, description="explicit task ids asked for")
    limit: int | None = Field(None, description="at most this many tasks")
    mode: SelectionMode = Field(
        "all",
        description="all tasks; explicit ids; the first `limit` in the set's order; or "
        "`limit` stratified over the task groups (seeded)",
    )
    seed: int | None = Field(
        None,
        description="the run seed a stratified draw was seeded from (the draw's own seed is "
        "derived from it)",
    )
    n_tasks: int | None = Field(None, description="tasks selected")

    def differences(self, other: Selection) -> list[str]:
        """The fields that differ, as ``field: mine vs other`` (``n_tasks`` follows the rest)."""
        out = []
        for name in ("task_set", "mode", "ids", "limit", "seed"):
            a, b = getattr(self, name), getattr(other, name)
            if a != b:
                out.append(f"selection.{name}: {_short(a)} vs {_short(b)}")
        return out

    @property
    def label(self) -> str:
        """A few words: ``test``, ``test, 20 stratified``, ``test, 3 ids``."""
        name = self.task_set or "–"
        if self.mode == "ids" and self.ids is not None:
            return f"{name}, {len(self.ids)} id(s)"
        if self.mode in ("first", "stratified") and self.limit is not None:
            return f"{name}, {self.limit} {self.mode}"
        return name


def _short(value: Any) -> str:
    if isinstance(value, list) and len(value) > 4:
        return "[" + ", ".join(repr(v) for v in value[:4]) + f", ... ({len(value)} ids)]"
    return repr(value)


def legacy_roles(players: dict[str, Any], config: dict[str, Any]) -> dict[str, RoleIdentity]:
    """Roles of a 0.1.0 manifest: each key of ``players`` (but ``models``) is a role; its
    model is the config's ``<role>_model``."""
    models = players.get("models") if isinstance(players.get("models"), dict) else {}
    out: dict[str, RoleIdentity] = {}
    for role, player in players.items():
        if role == "models" or player is None or isinstance(player, dict | list):
            continue
        spec = config.get(f"{role}_model")
        info = models.get(spec) if isinstance(spec, str) and isinstance(models, dict) else None
        name = info.get("name") if isinstance(info, dict) else None
        keys = [k for k in (role, f"{role}_model") if k in config]
        out[role] = RoleIdentity(
            player=str(player),
            model=str(spec) if spec else None,
            model_name=str(name) if name else None,
            config_keys=keys,
        )
    return out


_SET_KEYS = ("task_set", "split", "corpus")


def legacy_selection(config: dict[str, Any], n_tasks: int | None) -> Selection:
    """The selection of a 0.1.0 manifest: the set from ``task_set``/``split``, ids from the one
    ``*_ids`` key, ``limit`` (0.1.0 took the first ``limit`` tasks)."""
    task_set = next((str(config[k]) for k in _SET_KEYS if config.get(k) is not None), None)
    ids = next(
        (v for k, v in sorted(config.items()) if k.endswith("ids") and isinstance(v, list)), None
    )
    limit = config.get("limit") if isinstance(config.get("limit"), int) else None
    mode: SelectionMode = "first" if limit is not None else ("ids" if ids else "all")
    return Selection(
        task_set=task_set,
        ids=[str(i) for i in ids] if ids else None,
        limit=limit,
        mode=mode,
        n_tasks=n_tasks,
    )


def model_name(model: str | None, infos: Mapping[str, Any]) -> str | None:
    """The display name of ``model`` in ``infos`` (the models-file name, else the spec)."""
    info = infos.get(model) if model else None
    name = info.get("name") if isinstance(info, Mapping) else None
    return str(name) if name else None


def role_identity(
    player: str,
    *,
    model: str | None = None,
    infos: Mapping[str, Any] | None = None,
    prompts_sha256: str | None = None,
    config_keys: Sequence[str] = (),
    privileged: bool = False,
    channel: str | None = None,
) -> RoleIdentity:
    """One role: its player, its model (as the config names it) with the display name from
    ``infos``, the digest of the templates it reads, the config keys its choice sets, and
    whether the player is privileged (a control: ``PlayerFactory.privileged``)."""
    return RoleIdentity(
        player=player,
        model=model,
        model_name=model_name(model, infos or {}),
        prompts_sha256=prompts_sha256,
        config_keys=list(config_keys),
        privileged=privileged,
        channel=channel,
    )
