"""Building the typed identity of a plan's roles (:class:`~todeval.core.identity.RoleIdentity`).

A benchmark's plan names each role's player, its model and the config keys the role's choice
sets; :func:`role_identity` fills in the model's display name from the run's model infos (what
``ModelPool.infos()`` gives, keyed by the spec or models-file name the config holds), by the
same rule :func:`~todeval.core.identity.legacy_roles` applies to 0.1.0 manifests, so a run's
recorded identity and a derived one agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from todeval.core.identity import RoleIdentity


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
    )


__all__ = ["model_name", "role_identity"]
