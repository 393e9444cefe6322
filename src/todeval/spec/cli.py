"""``todeval run NAME`` for a benchmark that declares only its spec.

Every role with a player field gets ``--<role>`` (and ``--<role>-model`` when it takes a
model); the shared run options, the generation options when the config has them, ``--protocol``
when the spec lists protocols, ``--prompts`` when it has templates, and the panel options when
its profile declares panel roles. A benchmark with arguments of its own writes its CLI module
and hands :func:`todeval.driver.drive` a :class:`~todeval.driver.RunCommand` as usual.
"""

from __future__ import annotations

import argparse
from typing import Any

from todeval.driver import RunCommand, drive, run_settings
from todeval.results.profile import BenchmarkProfile
from todeval.runner.naming import run_dir_name
from todeval.runner.options import (
    RunSettings,
    add_generation_arguments,
    add_run_arguments,
    generation_settings,
)
from todeval.runner.plan import RunPlan
from todeval.spec.build import BenchmarkSpec
from todeval.spec.declare import RoleSpec


def _flag(key: str) -> str:
    return "--" + key.replace("_", "-")


def _chosen(spec: BenchmarkSpec[Any, Any]) -> list[RoleSpec[Any]]:
    return [r for r in spec.roles if r.role is not None and r.player_key is not None]


def _has_generation(spec: BenchmarkSpec[Any, Any]) -> bool:
    return "constrained" in spec.config.model_fields


def add_arguments(spec: BenchmarkSpec[Any, Any], parser: argparse.ArgumentParser) -> None:
    fields = spec.config.model_fields
    for role in _chosen(spec):
        assert role.role is not None and role.player_key is not None
        names = ", ".join(role.role.builtins)
        default = fields[role.player_key].default
        parser.add_argument(
            _flag(role.player_key), default=default, help=f"{names} or package.module:Class"
        )
        if role.model_key:
            parser.add_argument(
                _flag(role.model_key), metavar="SPEC", help=f"the model of --{role.name} llm"
            )
    if _has_generation(spec):
        add_generation_arguments(parser, constrained_help="have the backend enforce the reply")
    add_run_arguments(
        parser,
        default_out=f"runs/{spec.name}-<{spec.roles[0].name}>-s<seed>",
        protocols=spec.protocols,
        prompts=spec.prompts is not None,
    )
    profile = spec.profile
    if isinstance(profile, BenchmarkProfile) and profile.panel is not None:
        from todeval.panels.cli import add_panel_arguments
        from todeval.panels.run import panel_roles

        by_name = {r.name: r for r in spec.roles}
        examples = [
            ",".join(getattr(by_name[n].role, "builtins", ()))
            for n in (profile.panel.varied, profile.panel.subject)
        ]
        add_panel_arguments(
            parser,
            panel_roles(profile),
            varied_example=examples[0],
            subject_example=examples[1],
        )


def default_out(spec: BenchmarkSpec[Any, Any], config: RunSettings) -> str:
    """``runs/<name>-<first role's player>[-<model>]-<other players not at their default>-s<seed>
    ...`` (:func:`~todeval.runner.naming.run_dir_name`)."""
    fields = spec.config.model_fields
    parts: list[str] = []
    for i, role in enumerate(_chosen(spec)):
        assert role.player_key is not None
        player = role.chosen(config)
        if i == 0 or player != fields[role.player_key].default:
            parts.append(player)
        model = role.model_of(config)
        if model:
            parts.append(model)
    protocol = getattr(config, "protocol", None)
    return run_dir_name(
        spec.name,
        parts,
        seed=config.seed,
        constrained=bool(getattr(config, "constrained", False)),
        limit=config.limit,
        limit_mode=config.limit_mode,
        ids=getattr(config, "ids", None),
        trials=config.trials,
        protocol=protocol if spec.protocols and protocol != spec.protocols[0] else None,
    )


def start_line(spec: BenchmarkSpec[Any, Any], config: RunSettings, plan: RunPlan) -> str:
    players = ", ".join(f"{r.name} {r.chosen(config)}" for r in _chosen(spec))
    return f"{spec.name}: {plan.n_tasks} tasks x {config.trials}, {players}"


def run_command(spec: BenchmarkSpec[Any, Any], args: argparse.Namespace) -> int:
    fields: dict[str, Any] = {}
    for role in _chosen(spec):
        for key in (role.player_key, role.model_key):
            if key:
                fields[key] = getattr(args, key)
    if _has_generation(spec):
        fields.update(generation_settings(args))
    config = spec.config(**fields, **run_settings(args))
    if not isinstance(spec.profile, BenchmarkProfile):
        raise TypeError(f"the {spec.name} spec declares no profile")
    command: RunCommand[Any] = RunCommand(
        profile=spec.profile,
        build=spec.plan,
        start_line=lambda c, plan: start_line(spec, c, plan),
        panel_parts=lambda c: (spec.name,),
        panel_ids=lambda c: getattr(c, "ids", None),
        default_out=lambda c: default_out(spec, c),
    )
    return drive(args, config, command)
