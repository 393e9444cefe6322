"""Panel options for a benchmark's ``todeval run`` command, in one call.

``add_panel_arguments(parser, roles)`` adds, for a profile's :class:`PanelRoles`:

* ``--<varied role>s LIST`` (``--hosts rule,vague``, ``--users agenda,corpus,llm=<spec>``);
* ``--<subject role>s LIST`` (``--guessers bisect,random``, ``--systems rule,monolithic=<spec>``);
* ``--panel FILE``: a TOML panel file with ``[[<role>]]`` tables (see
  :mod:`todeval.panels.members`), with any ``aliases`` the benchmark keeps.

:func:`members_from_args` reads them back: ``None`` when no panel option was given (an
ordinary run), else the members of both roles, the role given neither way taking the one
member of the base config.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from todeval.panels.members import Member, load_panel_file, parse_members
from todeval.panels.run import PanelMembers
from todeval.results.profile import PanelRoles

FILE_DEST = "panel_file"


def role_flag(role: str) -> str:
    return f"--{role.replace('_', '-')}s"


def _dest(role: str) -> str:
    return f"panel_{role}"


def add_panel_arguments(
    parser: argparse.ArgumentParser,
    roles: PanelRoles,
    *,
    varied_example: str,
    subject_example: str,
    file_aliases: Sequence[str] = (),
    title: str = "panels",
) -> None:
    """``--<varied>s``, ``--<subject>s`` and ``--panel FILE`` (plus ``file_aliases``)."""
    group = parser.add_argument_group(title)
    varied_noun = roles.varied_noun or roles.varied.replace("_", " ")
    subject_noun = roles.subject_noun or roles.subject.replace("_", " ")
    group.add_argument(
        role_flag(roles.varied),
        dest=_dest(roles.varied),
        default=None,
        metavar="LIST",
        help=f"run against several {roles.varied_plural or varied_noun + 's'}: {varied_example}",
    )
    group.add_argument(
        role_flag(roles.subject),
        dest=_dest(roles.subject),
        default=None,
        metavar="LIST",
        help=f"several {roles.subject_plural or subject_noun + 's'} for rank stability: "
        f"{subject_example}",
    )
    group.add_argument(
        "--panel",
        *file_aliases,
        dest=FILE_DEST,
        default=None,
        metavar="FILE",
        help=f"TOML panel file: [[{roles.varied}]] and [[{roles.subject}]] tables with name, "
        "player and optionally model",
    )


def members_from_args(
    args: argparse.Namespace, roles: PanelRoles, default: Callable[[str], Member]
) -> PanelMembers | None:
    """The panel's members, or ``None`` when no panel option was given.

    A ``--<role>s`` list wins over the file's table of that role; a role given neither way
    has the one member ``default(role)`` (the base config's player)."""
    lists = {r: getattr(args, _dest(r), None) for r in (roles.subject, roles.varied)}
    path = getattr(args, FILE_DEST, None)
    if path is None and not any(lists.values()):
        return None
    from_file = load_panel_file(path, [roles.subject, roles.varied]) if path else {}

    def members(role: str) -> list[Member]:
        text = lists[role]
        if text:
            return parse_members(text, role)
        return from_file.get(role) or [default(role)]

    return PanelMembers(
        subjects=members(roles.subject),
        varied=members(roles.varied),
        file=str(path) if path and from_file else None,
    )
