"""Panels found among runs: runs that differ only in who played the varied role.

Runs form a **detected panel** when their benchmark's profile declares panel roles and they
have the same benchmark, selection of tasks, protocol and config once the config keys the
varied role's choice sets (``RoleIdentity.config_keys``) are removed -- and at least two
distinct varied players among them (told apart by ``RoleIdentity.label``, ``player (model)``).
Everything is read from the manifests' typed identity; no benchmark's config key is named.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from todeval.core.records import Manifest
from todeval.results.profile import PanelRoles, ProfileBook

T = TypeVar("T")


@dataclass(frozen=True)
class DetectedPanel(Generic[T]):
    benchmark: str
    roles: PanelRoles
    subject: str  # the subject role's label, e.g. rule or llm (qwen)
    members: list[tuple[str, T]]  # (varied role's label, run), by label


def panel_identity(manifest: Manifest, varied: str) -> str:
    """What must be equal for runs to be one panel over the role ``varied``."""
    identity = manifest.roles.get(varied)
    keys = set(identity.config_keys) if identity is not None else set()
    config = {k: v for k, v in manifest.config.items() if k not in keys}
    return json.dumps(
        [
            manifest.benchmark,
            manifest.selection.model_dump(mode="json"),
            manifest.protocol,
            config,
        ],
        sort_keys=True,
        default=str,
    )


def detect_panels(
    runs: Sequence[T], manifest_of: Callable[[T], Manifest], profiles: ProfileBook
) -> list[DetectedPanel[T]]:
    """The detected panels among ``runs``, in the order their first run is given."""
    groups: dict[str, list[T]] = {}
    roles_of: dict[str, PanelRoles] = {}
    for run in runs:
        manifest = manifest_of(run)
        if manifest.benchmark not in profiles:
            continue
        roles = profiles.get(manifest.benchmark).panel
        if roles is None or roles.varied not in manifest.roles:
            continue
        key = panel_identity(manifest, roles.varied)
        groups.setdefault(key, []).append(run)
        roles_of[key] = roles
    out: list[DetectedPanel[T]] = []
    for key, members in groups.items():
        roles = roles_of[key]
        labelled = [(manifest_of(m).roles[roles.varied].label, m) for m in members]
        if len({label for label, _ in labelled}) < 2:
            continue
        first = manifest_of(members[0])
        subject = first.roles.get(roles.subject)
        out.append(
            DetectedPanel(
                benchmark=first.benchmark,
                roles=roles,
                subject=subject.label if subject is not None else "–",
                members=sorted(labelled, key=lambda lm: lm[0]),
            )
        )
    return out
