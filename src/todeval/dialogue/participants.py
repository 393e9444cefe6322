"""Participants: the players of a dialogue, typed by what they observe and return.

Every player of every benchmark -- a system under test and its user simulator, a clarification
seeker and its provider, a seller labelling intents -- is a :class:`Participant`: it is started
once per episode with a context, then answers each observation with one output. A benchmark
names its roles with :class:`Role` (the role's name, the Protocol its players satisfy, its
built-in players), and a player is found by name or as ``package.module:Class``. Either may
carry parameters as a query, ``NAME?key=value&key=value``: the player is handed them as
``PlayerOptions.params`` (strings), and since they are part of the player's name they are part
of the run's identity (config hash, manifest). Adversary families (``todeval validate``) name
their agents this way.

Optional hooks are small Protocols of their own, checked with ``isinstance``:

* :class:`ConfiguredByOptions` -- ``from_options(options)`` builds the player from the run's
  :class:`PlayerOptions` (otherwise the class is called with no arguments);
* :class:`ChecksSelection` -- ``check_selection(selection)`` refuses a task set the player
  cannot play (a usage error before any episode runs);
* :class:`ReportsEndReason` -- ``end_reason`` says, after the episode, why the player ended it;
* :class:`Finishes` -- ``finish()`` releases what the player holds for its episode (a
  connection, a token), awaited once the episode has ended, however it ended
  (:func:`finish_players`).

Every role declares the *view* its players are handed (:mod:`todeval.dialogue.views`): the game
master starts a player with :meth:`Role.start` and the full context, and a player sees the
role's view of it unless its class declares itself ``privileged`` (a control).
"""

from __future__ import annotations

import contextlib
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, runtime_checkable

from todeval.core.imports import is_reference, load_reference
from todeval.dialogue.views import is_privileged
from todeval.errors import UsageError, choice_error

if TYPE_CHECKING:
    from todeval.backends.types import Backend
    from todeval.dialogue.prompts import PromptSet

C_contra = TypeVar("C_contra", contravariant=True)
O_contra = TypeVar("O_contra", contravariant=True)
R_co = TypeVar("R_co", covariant=True)
P = TypeVar("P")


@runtime_checkable
class Participant(Protocol[C_contra, O_contra, R_co]):
    """One player of one episode: ``start(context)`` once, then ``respond(observation)``."""

    async def start(self, context: C_contra) -> None: ...

    async def respond(self, observation: O_contra) -> R_co: ...


@dataclass(frozen=True)
class PlayerOptions:
    """How a player is configured for a run (shared by all its episodes).

    Backends are shared across episodes (they hold connection limits and the cache).
    ``prompts`` holds the run's prompt templates (package defaults, overridden by
    ``--prompts DIR``); ``extra`` carries a benchmark's own settings (a URL, a mode).
    ``privileged`` carries what only a privileged player (a control) may be handed, such as an
    answer key: :meth:`PlayerFactory.build` empties it for every other player.
    """

    role: str
    model: Backend | None = None
    module_model: Backend | None = None  # sub-modules of modular players (default: model)
    constrained: bool = False  # ask the backend for schema-constrained decoding
    temperature: float = 0.0
    max_tokens: int | None = None
    prompts: PromptSet | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    privileged: Mapping[str, Any] = field(default_factory=dict)
    params: Mapping[str, str] = field(default_factory=dict)
    """The parameters the player's name carried (``NAME?key=value&...``)."""

    def require_model(self, player: str, flag: str) -> Backend:
        """The main model; a one-line usage error naming ``flag`` when none was configured."""
        if self.model is None:
            raise UsageError(f"{player} needs a model: pass {flag} SPEC")
        return self.model

    def require_prompts(self) -> PromptSet:
        if self.prompts is None:
            raise UsageError(f"the {self.role} player needs prompt templates, but none were given")
        return self.prompts


def _takes_options(cls: type) -> bool:
    """Whether ``cls()`` needs one argument (the player's options)."""
    try:
        params = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        return False
    required = [
        p
        for p in params
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return len(required) == 1


@runtime_checkable
class ConfiguredByOptions(Protocol):
    """A player class built from the run's options."""

    @classmethod
    def from_options(cls, options: PlayerOptions) -> object: ...


@runtime_checkable
class ChecksSelection(Protocol):
    """A player class that can refuse a selection (task set) it cannot play."""

    @classmethod
    def check_selection(cls, selection: str) -> None: ...


@runtime_checkable
class ReportsEndReason(Protocol):
    """A player that says why it ended the dialogue (shown beside the episode's reason)."""

    @property
    def end_reason(self) -> str | None: ...


@runtime_checkable
class Finishes(Protocol):
    """A player that holds resources for its episode."""

    async def finish(self) -> None: ...


async def finish_players(*players: object) -> None:
    """Await ``finish()`` of every player that has one; a failure there changes no result."""
    for player in players:
        if isinstance(player, Finishes):
            with contextlib.suppress(Exception):
                await player.finish()


def is_interactive(player: object) -> bool:
    """Whether a person plays ``player`` at the terminal (its class sets ``interactive = True``):
    such a run plays one episode at a time and prints no progress line."""
    return getattr(player, "interactive", False) is True


@dataclass(frozen=True)
class PlayerFactory(Generic[P]):
    """A resolved player class for one role; :meth:`build` makes one instance per episode."""

    role: Role[P]
    name: str
    cls: type
    params: Mapping[str, str] = field(default_factory=dict)

    @property
    def privileged(self) -> bool:
        """Whether the class declares itself privileged: a control, handed the full context."""
        return is_privileged(self.cls)

    def build(self, options: PlayerOptions) -> P:
        if options.privileged and not self.privileged:
            options = replace(options, privileged={})
        if self.params:
            options = replace(options, params=dict(self.params))
        if isinstance(self.cls, ConfiguredByOptions):
            obj = self.cls.from_options(options)
        elif _takes_options(self.cls):
            obj = self.cls(options)  # ``__init__(self, options: PlayerOptions)``
        elif self.params:
            raise UsageError(
                f"{self.role.noun} player {self.name!r} takes no parameters "
                "(its class is built without the run's options)"
            )
        else:
            obj = self.cls()
        return self.role.check(obj, self.name)

    def check_selection(self, selection: str) -> None:
        if isinstance(self.cls, ChecksSelection):
            self.cls.check_selection(selection)


@dataclass(frozen=True)
class Role(Generic[P]):
    """A role of a benchmark: its name, its noun in messages, the Protocol its players satisfy
    (a ``runtime_checkable`` Protocol, checked when a player is built), its built-ins
    (name -> ``package.module:Class``) and its ``view``: the function from the full start
    context the game master holds to what the role's players are handed
    (:mod:`todeval.dialogue.views`)."""

    name: str
    noun: str
    protocol: type
    builtins: Mapping[str, str] = field(default_factory=dict)
    view: Callable[[Any], Any] = field(kw_only=True)
    action: Callable[[str], Any] | None = field(default=None, kw_only=True)
    """How a policy's text becomes this role's output (:mod:`todeval.gym`); default: the JSON
    of the output model the role's protocol names, or the text itself."""
    public_data: tuple[str, ...] = field(default=(), kw_only=True)
    """Glob patterns, relative to the package's data folder, of what a player of this role may
    read when it is isolated (``--isolate``): its own back-end, as a deployed player has it (a
    system's database and schema, never a task's answer). The rest of the data is hidden."""

    def context_for(self, player: object, context: Any) -> Any:
        """What ``player`` is handed at the start: the full ``context`` for a privileged
        player (a control), the role's view of it for every other."""
        return context if is_privileged(player) else self.view(context)

    async def start(self, player: Any, context: Any) -> None:
        """Start ``player`` with what it may see of ``context``."""
        await player.start(self.context_for(player, context))

    def resolve(self, name: str) -> PlayerFactory[P]:
        """The player class for a built-in name or a ``package.module:Class`` reference, either
        with parameters (``NAME?key=value&...``). A built-in may itself name a class with
        parameters (``"repeat": "pkg.mod:Blind?step=0"``); the name's own parameters win."""
        base, params = split_params(name, what=f"{self.noun} player")
        if base in self.builtins:
            reference, fixed = split_params(self.builtins[base], what=f"{self.noun} player")
            params = {**fixed, **params}
        elif is_reference(base):
            reference = base
        else:
            raise choice_error(self.noun, base, [*self.builtins, "package.module:Class"])
        cls = load_reference(reference, what=f"{self.noun} player")
        if not isinstance(cls, type):
            raise UsageError(f"{self.noun} player {name!r} is not a class")
        return PlayerFactory(self, name, cls, params)

    def check(self, obj: object, name: str) -> P:
        """``obj`` as a player of this role; a usage error when it lacks the Protocol's methods."""
        if not isinstance(obj, self.protocol):
            wanted = ", ".join(_protocol_methods(self.protocol))
            raise UsageError(f"{self.noun} player {name!r} does not implement {wanted}")
        return obj  # type: ignore[return-value]


def output_type(protocol: type[Any]) -> type[Any] | None:
    """The return type of a role protocol's ``respond``, or the third argument of the
    ``Participant[Context, Observation, Output]`` it derives from (None when neither reads)."""
    try:
        found = typing.get_type_hints(protocol.respond).get("return")
    except Exception:
        found = None
    if isinstance(found, type):
        return found
    for base in getattr(protocol, "__orig_bases__", ()):
        args = typing.get_args(base)
        if typing.get_origin(base) is Participant and len(args) == 3:
            output = args[2]
            return output if isinstance(output, type) else None
    return None


def reply_annotation(protocol: type[Any]) -> Any:
    """What a role protocol's ``respond`` returns, unions included (``int | JsonReply``), for
    validating a reply that crossed a process boundary; None when it does not read."""
    try:
        found = typing.get_type_hints(protocol.respond).get("return")
    except Exception:
        found = None
    if isinstance(found, type) or typing.get_origin(found) in (typing.Union, types.UnionType):
        return found
    return output_type(protocol)


def split_params(name: str, *, what: str = "player") -> tuple[str, dict[str, str]]:
    """``NAME?key=value&key=value`` -> ``("NAME", {"key": "value", ...})``; a name without a
    query has no parameters. A malformed query is a one-line usage error."""
    from urllib.parse import parse_qsl

    base, sep, query = name.partition("?")
    if not sep:
        return name, {}
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise UsageError(f"{what} {name!r}: parameters must read key=value&key=value") from None
    keys = [k for k, _ in pairs]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise UsageError(f"{what} {name!r}: parameter {twice[0]!r} given twice")
    return base, dict(pairs)


def with_params(name: str, params: Mapping[str, object]) -> str:
    """``name`` carrying ``params`` (``NAME?key=value&...``, keys in the given order)."""
    from urllib.parse import urlencode

    if not params:
        return name
    return f"{name}?{urlencode({k: str(v) for k, v in params.items()})}"


def _protocol_methods(protocol: type) -> list[str]:
    names = getattr(protocol, "__protocol_attrs__", None) or [
        n for n in vars(protocol) if not n.startswith("_")
    ]
    return sorted(str(n) for n in names)
