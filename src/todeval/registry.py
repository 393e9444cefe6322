"""Plug-in discovery: benchmarks and scorers add CLI commands without edits elsewhere.

A plug-in is any module that defines ``register(registry: Registry) -> None``. Built-in plug-ins
are the sub-modules of :mod:`todeval.benchmarks`, :mod:`todeval.scoring` and
:mod:`todeval.commands` (found by walking the packages; names starting with ``_`` are private
helpers, never imported by discovery); third-party plug-ins declare an entry point in the
``todeval.plugins`` group::

    [project.entry-points."todeval.plugins"]
    mybench = "mypackage.todeval_plugin"

A benchmark that is its spec alone needs no plug-in module: an entry point in the
``todeval.benchmarks`` group names the spec, and the distribution's summary is its help line
(nothing of it is imported until one of its commands runs)::

    [project.entry-points."todeval.benchmarks"]
    mybench = "mypackage.game:SPEC"

A plug-in registers

* commands under a group: ``run`` (``todeval run <benchmark>``), ``score``, ``data``, a group
  of its own (``registry.group("toy", ...)`` then ``todeval toy <command>``), or ``top`` for a
  command directly under ``todeval`` (``todeval compare``);
* benchmarks (:meth:`Registry.benchmark`): the ``run`` command plus the plan factory the Python
  API and Ray workers rebuild runs from;
* profiles (:meth:`Registry.profile`): how the benchmark's results are shown, best as a
  ``module:attribute`` reference imported only when results are shown;
* annotation sources (:meth:`Registry.annotation_source`): the items ``todeval annotate
  export`` samples for people to label (``module:function``, imported only on export).
* tool surfaces (:meth:`Registry.tool_surface`): the tools a benchmark declares, served on
  their own by ``todeval serve tools NAME`` against a sandbox episode (``module:function``,
  imported only when serving).
* controls (:meth:`Registry.controls`): the floor and ceiling controls ``todeval validate NAME``
  plays (a ``module:attribute`` reference to a :class:`~todeval.validation.ControlSuite`,
  imported only when validating).

:meth:`Registry.lazy` registers a command whose module is imported only when it runs, so
``todeval --help`` imports no plug-in's heavy parts. Each call to :func:`discover` builds a
fresh registry (no global state).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # profiles are pydantic models: imported when results are shown
    from todeval.results.profile import BenchmarkProfile

TOP = "top"  # the group of commands directly under ``todeval``
GROUP_HELP = {
    "run": "run a benchmark and write a run directory",
    "score": "score a prediction file with a corpus evaluator",
    "data": "inspect and audit the shipped data",
}


@dataclass(frozen=True)
class Command:
    """One CLI sub-command, e.g. ``todeval run booking`` or ``todeval score multiwoz``."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class BenchmarkEntry:
    """A registered benchmark: its name and the ``module:NAME`` of its
    :class:`~todeval.spec.BenchmarkSpec` (whose ``plan(config, runtime=None)`` builds a run)."""

    name: str
    help: str
    spec: str


def lazy_command(
    name: str, help: str, module: str, *, add: str = "add_arguments", run: str = "run_command"
) -> Command:
    """A command whose ``module`` (with functions ``add`` and ``run``) is imported on use."""

    def target(attr: str) -> Any:
        return getattr(importlib.import_module(module), attr)

    return Command(
        name,
        help,
        lambda parser: target(add)(parser),
        lambda args: int(target(run)(args)),
    )


@dataclass(frozen=True)
class AnnotationSource:
    """Items a benchmark offers for human annotation: ``items`` is ``module:function`` with
    ``function(spec: str, config: Mapping[str, Any]) -> list[GoldItem]`` (``spec`` follows the
    source name in ``--from NAME:SPEC``; ``config`` is a run's config when ``--from`` is a run
    directory); ``kinds`` are the item kinds it returns."""

    name: str
    help: str
    items: str
    kinds: tuple[str, ...]


@dataclass(frozen=True)
class ToolSurface:
    """The tools a benchmark declares, served on their own (``todeval serve tools NAME``):
    ``factory`` is ``module:function`` with ``function(options: SandboxOptions) -> ToolSandbox``
    (:mod:`todeval.agents.sandbox`), which validates the options (task set, task, protocol)
    with one-line usage errors."""

    name: str
    help: str
    factory: str

    def load(self) -> Callable[..., Any]:
        """The factory, imported now."""
        module, _, attr = self.factory.partition(":")
        return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]


@dataclass
class Registry:
    groups: dict[str, str] = field(default_factory=lambda: dict(GROUP_HELP))
    commands: dict[str, dict[str, Command]] = field(
        default_factory=lambda: {name: {} for name in (*GROUP_HELP, TOP)}
    )
    benchmarks: dict[str, BenchmarkEntry] = field(default_factory=dict)
    # benchmark -> its profile, or a 'module:attribute' reference to it (see profile())
    profile_refs: dict[str, BenchmarkProfile | str] = field(default_factory=dict)
    annotation_sources: dict[str, AnnotationSource] = field(default_factory=dict)
    tool_surfaces: dict[str, ToolSurface] = field(default_factory=dict)
    control_suites: dict[str, str] = field(default_factory=dict)  # name -> 'module:attr'
    broken: list[str] = field(default_factory=list)  # installed plug-ins that failed to load

    def group(self, name: str, help: str) -> None:
        """Declare a command group of a plug-in's own (``todeval <name> <command>``)."""
        if name in self.groups or name in self.commands.get(TOP, {}):
            raise ValueError(f"two plug-ins define 'todeval {name}'")
        self.groups[name] = help
        self.commands[name] = {}

    def add(self, group: str, command: Command) -> None:
        if group not in self.commands:
            raise ValueError(f"unknown command group {group!r}: declare it with group()")
        existing = self.commands[group]
        if command.name in existing or (group == TOP and command.name in self.groups):
            where = command.name if group == TOP else f"{group} {command.name}"
            raise ValueError(f"two plug-ins define 'todeval {where}'")
        existing[command.name] = command

    def lazy(
        self,
        group: str,
        name: str,
        help: str,
        module: str,
        *,
        add: str = "add_arguments",
        run: str = "run_command",
    ) -> None:
        """Add a command whose module is imported only when the command is used."""
        self.add(group, lazy_command(name, help, module, add=add, run=run))

    def benchmark(
        self,
        name: str,
        help: str,
        *,
        spec: str,
        cli: str | None = None,
        profile: str | None = None,
        controls: str | None = None,
    ) -> None:
        """Register a benchmark by its spec (``module:NAME``, imported when it runs).

        ``todeval run <name>`` comes from module ``cli`` (functions ``add_arguments`` and
        ``run_command``); without one, from the spec alone (:mod:`todeval.spec.cli`), and the
        spec's own profile and controls are registered too. ``profile`` and ``controls`` are
        references as for :meth:`profile` and :meth:`controls` (for benchmarks that keep them
        apart from the spec, so that showing results imports no rules)."""
        if name in self.benchmarks:
            raise ValueError(f"two plug-ins define the benchmark {name!r}")
        if ":" not in spec:
            raise ValueError(f"benchmark spec {spec!r} needs 'module:attr'")
        if cli is not None:
            self.lazy("run", name, help, cli)
        else:
            self.add("run", _spec_command(name, help, spec))
            profile = profile or f"{spec}.profile"
            controls = controls or spec  # the spec's controls and adversary families
        self.benchmarks[name] = BenchmarkEntry(name, help, spec)
        if profile is not None:
            self.profile(profile, benchmark=name)
        if controls is not None:
            self.controls(name, controls)

    def profile(self, profile: BenchmarkProfile | str, *, benchmark: str | None = None) -> None:
        """Register how a benchmark's results are shown (report, compare, exports, view).

        ``profile`` is a :class:`~todeval.results.profile.BenchmarkProfile` or, so that
        registration imports no pydantic model, a ``"module:attribute"`` reference to one with
        ``benchmark=`` its name (imported when :attr:`profiles` is read). Corpus scorers
        register one for the ``benchmark`` of the summaries they write."""
        if isinstance(profile, str):
            if benchmark is None or ":" not in profile:
                raise ValueError(
                    f"profile reference {profile!r} needs 'module:attr' and benchmark="
                )
            name = benchmark
        else:
            name = profile.benchmark
        if name in self.profile_refs:
            raise ValueError(f"two plug-ins define a profile for {name!r}")
        self.profile_refs[name] = profile

    @property
    def profiles(self) -> dict[str, BenchmarkProfile]:
        """Every registered profile by benchmark (references imported now)."""
        resolved: dict[str, BenchmarkProfile] = {}
        for name, ref in self.profile_refs.items():
            if isinstance(ref, str):
                from todeval.core.imports import load_reference

                loaded = load_reference(ref, what="profile")
                if getattr(loaded, "benchmark", None) != name:
                    raise ValueError(f"profile {ref} is not the profile of {name!r}")
                resolved[name] = loaded  # type: ignore[assignment]
            else:
                resolved[name] = ref
        return resolved

    def annotation_source(
        self, name: str, help: str, *, items: str, kinds: tuple[str, ...] = ("multi-choice",)
    ) -> None:
        """Register items for ``todeval annotate export --from NAME[:SPEC]`` (lazy: the
        ``module:function`` in ``items`` is imported only when exporting)."""
        if name in self.annotation_sources:
            raise ValueError(f"two plug-ins define the annotation source {name!r}")
        self.annotation_sources[name] = AnnotationSource(name, help, items, kinds)

    def tool_surface(self, name: str, help: str, *, factory: str) -> None:
        """Register the tools ``todeval serve tools NAME`` serves (lazy: the ``module:function``
        in ``factory`` is imported only when serving)."""
        if name in self.tool_surfaces:
            raise ValueError(f"two plug-ins define the tool surface {name!r}")
        if ":" not in factory:
            raise ValueError(f"tool surface factory {factory!r} needs 'module:function'")
        self.tool_surfaces[name] = ToolSurface(name, help, factory)

    def controls(self, name: str, suite: str) -> None:
        """Register the controls ``todeval validate NAME`` plays: ``suite`` is a
        ``"module:attribute"`` reference to a :class:`~todeval.validation.ControlSuite` named
        ``name`` (imported only when validating)."""
        if name in self.control_suites:
            raise ValueError(f"two plug-ins define the controls of {name!r}")
        if ":" not in suite:
            raise ValueError(f"control suite {suite!r} needs 'module:attr'")
        self.control_suites[name] = suite


def _spec_command(name: str, help: str, spec: str) -> Command:
    """``todeval run <name>`` from the spec at ``spec`` alone (imported when the command runs)."""

    def load() -> Any:
        from todeval.core.imports import load_reference

        return load_reference(spec, what="benchmark spec")

    def add_arguments(parser: argparse.ArgumentParser) -> None:
        from todeval.spec.cli import add_arguments as add

        add(load(), parser)

    def run(args: argparse.Namespace) -> int:
        from todeval.spec.cli import run_command

        return run_command(load(), args)

    return Command(name, help, add_arguments, run)


_BUILTIN_PACKAGES = ("todeval.benchmarks", "todeval.scoring", "todeval.commands")


def discover() -> Registry:
    """Import every built-in and installed plug-in and let it register its commands."""
    registry = Registry()
    for package_name in _BUILTIN_PACKAGES:
        package = importlib.import_module(package_name)
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            if info.name.startswith("_"):
                continue  # a private helper, not a plug-in
            module = importlib.import_module(f"{package_name}.{info.name}")
            register = getattr(module, "register", None)
            if callable(register):
                register(registry)
    for ep in entry_points(group="todeval.plugins"):
        try:
            module = ep.load()
            register = getattr(module, "register", None)
            if callable(register):
                register(registry)
        except Exception as exc:  # a third party's bug must not take todeval down with it
            registry.broken.append(_broken(ep.name, ep.value, exc))
    for ep in entry_points(group="todeval.benchmarks"):
        try:
            registry.benchmark(ep.name, _summary(ep) or f"the {ep.name} benchmark", spec=ep.value)
        except Exception as exc:
            registry.broken.append(_broken(ep.name, ep.value, exc))
    return registry


def _broken(name: str, value: str, exc: Exception) -> str:
    first = f"plug-in {name!r} ({value}) failed to load and is left out: "
    return f"{first}{type(exc).__name__}: {exc}".splitlines()[0]


def _summary(ep: EntryPoint) -> str:
    """The one-line summary of the distribution that declares ``ep`` (its help line).

    Read from the metadata file's header lines: ``dist.metadata`` would parse the whole file
    with the email package, which costs more than the rest of discovery."""
    dist = getattr(ep, "dist", None)
    if dist is None:
        return ""
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    for line in text.splitlines():
        if not line.strip():
            break  # the end of the headers: the description follows
        name, sep, value = line.partition(":")
        if sep and name.strip().lower() == "summary":
            return value.strip()
    return ""
