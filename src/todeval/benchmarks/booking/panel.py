"""Booking's part of simulator panels: which config fields a panel member sets.

``todeval run booking --users agenda,corpus,llm=<spec> [--systems rule,monolithic=<spec>]``
(or ``--panel FILE``, alias ``--users-file``) is the benchmark-neutral panel of
:mod:`todeval.panels`; booking only says how a member of the role ``system`` or ``user`` goes
into its config, and which member the base config has.
"""

from __future__ import annotations

from todeval.benchmarks.booking.run import BookingConfig
from todeval.panels.members import Member


def with_member(config: BookingConfig, role: str, member: Member) -> BookingConfig:
    """The config with ``role`` (``system`` or ``user``) played by ``member``."""
    if role == "system":
        return config.model_copy(update={"system": member.player, "system_model": member.model})
    if role == "user":
        return config.model_copy(update={"user": member.player, "user_model": member.model})
    raise ValueError(f"booking has no panel role {role!r}")


def base_member(config: BookingConfig, role: str) -> Member:
    """The member of ``role`` in the base config (``--system``/``--user`` and their models)."""
    if role == "system":
        return Member.of(config.system, config.system_model)
    return Member.of(config.user, config.user_model)
