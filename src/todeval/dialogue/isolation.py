"""Players under test in an OS sandbox (``todeval run ... --isolate``).

A ``package.module:Class`` player normally runs inside the evaluator's process: it is trusted
code and can read everything the evaluator can (the package's data, run directories, the
evaluator's environment). With ``--isolate`` the class is never imported by the evaluator. A
small runner process (:mod:`todeval.dialogue.isolated_runner`) imports and plays it inside a
bubblewrap sandbox (user namespaces) that sees, read-only, only the system and Python
installation, the ``todeval`` code *without its data folder*, and the player's own top-level
package; the run directory, the response cache and the installation's secrets are not
mounted, the package data folder is an empty tmpfs, the environment is cleared but for
``PATH``, ``HOME`` (an empty tmpfs), ``PYTHONPATH`` and the variables the user names with
``--isolate-env``. The network is shared, so the player reaches its own model endpoint.

The evaluator talks to the runner over its standard input and output, one JSON line a
request (see the runner module): a start view and each observation go in as the same objects
the player would be handed in-process (serialized by pydantic, rebuilt inside), its output comes
back as JSON and is validated against the output type of the role's protocol -- so nothing the
player returns is unpickled or executed by the evaluator. One runner serves a run; each
dialogue is one instance in it.

Benchmark-neutral: nothing here names a benchmark.
"""

from __future__ import annotations

import asyncio
import importlib.machinery
import json
import os
import shutil
import sys
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from todeval.core.imports import load_reference
from todeval.dialogue.participants import PlayerOptions, Role, reply_annotation, split_params
from todeval.dialogue.wire import encode
from todeval.errors import InfrastructureError, UsageError

BWRAP = "bwrap"
CHANNEL_BUILTIN = "built-in"
CHANNEL_IN_PROCESS = "in-process"
CHANNEL_ENDPOINT = "endpoint"
CHANNEL_ISOLATED = "isolated"
CHANNELS = (CHANNEL_BUILTIN, CHANNEL_IN_PROCESS, CHANNEL_ENDPOINT, CHANNEL_ISOLATED)
"""How a role's player ran: shipped code, a user's class in the evaluator's process (trusted
code), the user's own endpoint (self-run), or a user's class in the sandbox."""

_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/etc")


@dataclass(frozen=True)
class IsolationOptions:
    """What ``--isolate`` was given: more variables to pass into the sandbox by name."""

    env: tuple[str, ...] = ()


def bubblewrap() -> str:
    """The bubblewrap binary; a one-line usage error when it is missing."""
    found = shutil.which(BWRAP)
    if found is None:
        raise UsageError(
            "--isolate needs bubblewrap (bwrap) on PATH (Debian/Ubuntu: apt install bubblewrap)"
        )
    return found


def module_roots(reference: str) -> list[Path]:
    """Where the top-level package (or module) of ``reference`` lives, found without importing
    anything of it; a usage error when it cannot be found."""
    base, _ = split_params(reference)
    top = base.partition(":")[0].split(".")[0]
    path = [p or os.getcwd() for p in sys.path]
    spec = importlib.machinery.PathFinder.find_spec(top, path)
    if spec is None:
        raise UsageError(f"--isolate: cannot find the player's package {top!r} on the path")
    if spec.submodule_search_locations:
        return [Path(p).resolve() for p in spec.submodule_search_locations]
    if spec.origin:
        return [Path(spec.origin).resolve()]
    raise UsageError(f"--isolate: cannot find the player's package {top!r} on the path")


def package_data_dirs() -> list[Path]:
    """The package's data folders, hidden from the sandbox."""
    import todeval

    root = Path(todeval.__file__).resolve().parent
    return [p for p in (root / "data",) if p.is_dir()]


def _site_dirs() -> list[str]:
    """The installed-packages folders on this interpreter's path (bound into the sandbox and put
    on its PYTHONPATH)."""
    return [e for e in sys.path if e and ("site-packages" in e or "dist-packages" in e)]


def public_paths(patterns: Sequence[str]) -> list[Path]:
    """The files and folders of the package's data that ``patterns`` (a role's
    ``public_data``) name."""
    found: list[Path] = []
    for root in package_data_dirs():
        for pattern in patterns:
            found.extend(sorted(p.resolve() for p in root.glob(pattern)))
    return list(dict.fromkeys(found))


def sandbox_argv(
    player_roots: Sequence[Path],
    hidden: Sequence[Path],
    env: Mapping[str, str],
    readable: Sequence[Path] = (),
) -> list[str]:
    """The bubblewrap command line that runs the player runner."""
    import todeval

    argv = [bubblewrap(), "--unshare-all", "--share-net", "--die-with-parent", "--new-session"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    mounted: list[Path] = []

    def bind(path: Path) -> None:
        if path.exists() and not any(path.is_relative_to(m) for m in mounted):
            mounted.append(path)
            argv.extend(["--ro-bind", str(path), str(path)])

    for d in _SYSTEM_DIRS:
        bind(Path(d))
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(sys.executable)):
        bind(Path(p).resolve())
    bind(Path(os.path.realpath(sys.executable)).parent)
    for entry in _site_dirs():
        bind(Path(entry).resolve())
    bind(Path(todeval.__file__).resolve().parent)
    for root in player_roots:
        bind(root)
    for path in hidden:  # mounted over what the binds above exposed
        if any(path.resolve().is_relative_to(m) for m in mounted):
            argv.extend(["--tmpfs", str(path.resolve())])
    for path in readable:  # back over the tmpfs: what the role may read of the data
        argv.extend(["--ro-bind", str(path), str(path)])
    argv += ["--clearenv", "--chdir", "/tmp"]
    for name, value in env.items():
        argv.extend(["--setenv", name, value])
    argv += [os.path.realpath(sys.executable), "-m", "todeval.dialogue.isolated_runner"]
    return argv


def sandbox_env(
    player_roots: Sequence[Path], options: IsolationOptions, environ: Mapping[str, str]
) -> dict[str, str]:
    """The sandbox's whole environment: PATH, an empty HOME, the todeval code and the player's
    package on PYTHONPATH, a cache folder in the tmpfs, and the variables named to pass."""
    import todeval

    paths = [str(Path(todeval.__file__).resolve().parent.parent)]
    paths += [str(r.parent) for r in player_roots]
    paths += _site_dirs()
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths)),
        "PYTHONDONTWRITEBYTECODE": "1",
        "TODEVAL_CACHE_DIR": "/tmp/todeval-cache",
        "TODEVAL_ISOLATED": "1",
    }
    for name in options.env:
        if name in environ:
            env[name] = environ[name]
    return env


class IsolatedHost:
    """The sandboxed runner of one run's player: started on first use, one request at a time
    per dialogue, many dialogues at once."""

    def __init__(self, setup: dict[str, Any], argv: list[str]) -> None:
        self.setup = setup
        self.argv = argv
        self._process: asyncio.subprocess.Process | None = None
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._next_id = 1
        self._next_instance = 1
        self._reader: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self.calls = 0

    def new_instance(self) -> int:
        instance = self._next_instance
        self._next_instance += 1
        return instance

    async def _ensure(self) -> asyncio.subprocess.Process:
        async with self._lock:
            if self._process is None:
                self._process = await asyncio.create_subprocess_exec(
                    *self.argv,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=None,
                    limit=64 * 1024 * 1024,
                )
                loop = asyncio.get_running_loop()
                ready: asyncio.Future[dict[str, Any]] = loop.create_future()
                self._waiting[0] = ready
                self._reader = asyncio.create_task(self._read(self._process))
                self._write(self._process, self.setup)
                answer = await ready
                if not answer.get("ok"):
                    raise UsageError(f"isolated player: {answer.get('error')}")
        return self._process

    def _write(self, process: asyncio.subprocess.Process, body: dict[str, Any]) -> None:
        assert process.stdin is not None
        process.stdin.write((json.dumps(body, ensure_ascii=False) + "\n").encode())

    async def _read(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        while True:
            line = await process.stdout.readline()
            if not line:
                break
            try:
                body = json.loads(line)
                waiting = self._waiting.pop(int(body["id"]), None)
            except (ValueError, KeyError, TypeError):
                continue  # not the protocol: ignored
            if waiting is not None and not waiting.done():
                waiting.set_result(body)
        code = await process.wait()
        for waiting in self._waiting.values():
            if not waiting.done():
                waiting.set_exception(
                    InfrastructureError(f"the isolated player's sandbox ended (exit {code})")
                )
        self._waiting.clear()

    async def call(
        self, instance: int, method: str, arg: Any, before: list[list[Any]] | None = None
    ) -> dict[str, Any]:
        process = await self._ensure()
        if process.returncode is not None:
            raise InfrastructureError(f"the isolated player's sandbox ended ({process.returncode})")
        request_id = self._next_id
        self._next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        future.add_done_callback(_retrieved)  # an episode cancelled meanwhile: no warning
        self._waiting[request_id] = future
        body = {
            "id": request_id,
            "instance": instance,
            "method": method,
            "arg": encode(arg),
            "before": before or [],
        }
        self._write(process, body)
        self.calls += 1
        answer = await future
        if not answer.get("ok"):
            error = str(answer.get("error") or "failed")
            if answer.get("infrastructure"):
                raise InfrastructureError(f"isolated player: {error}")
            raise RuntimeError(f"isolated player: {error}")
        return answer

    async def aclose(self) -> None:
        process = self._process
        if process is None:
            return
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 5)
        except TimeoutError:
            process.kill()
            await process.wait()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


class IsolatedPlayer:
    """The evaluator's side of one dialogue's isolated player: it has the role protocol's
    methods and forwards each call to the sandbox."""

    privileged = False

    def __init__(self, host: IsolatedHost, output: Any) -> None:
        self.host = host
        self.output = output
        self.instance = host.new_instance()
        self.view: Any = None
        self._buffered: list[list[Any]] = []

    async def start(self, context: Any) -> None:
        self.view = context
        await self._call("start", context)

    async def respond(self, observation: Any) -> Any:
        value, model = await self._call_with_model("respond", observation)
        if self.output is None and model:
            return _framework_model(model, value)
        return self._checked(value, self.output)

    async def _call(self, method: str, arg: Any) -> Any:
        return (await self._call_with_model(method, arg))[0]

    async def _call_with_model(self, method: str, arg: Any) -> tuple[Any, str | None]:
        before, self._buffered = self._buffered, []
        answer = await self.host.call(self.instance, method, arg, before)
        self._grow(answer)
        model = answer.get("model")
        return answer.get("value"), model if isinstance(model, str) else None

    def _buffer(self, method: str, arg: Any) -> None:
        self._buffered.append([method, encode(arg)])

    @staticmethod
    def _checked(value: Any, output: Any) -> Any:
        if output is None:
            return value
        try:
            return TypeAdapter(output).validate_python(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "reply"
            raise RuntimeError(f"isolated player's reply: {where}: {first.get('msg')}") from None

    def _grow(self, answer: Mapping[str, Any]) -> None:
        """Append to the start view's lists what the player appended inside (model usage)."""
        grown = answer.get("grown") or {}
        for name, items in dict(grown).items():
            target = getattr(self.view, str(name), None)
            if not isinstance(target, list):
                continue
            hints = typing.get_type_hints(type(self.view))
            args = typing.get_args(hints.get(str(name)))
            kind = args[0] if args else Any
            target.extend(TypeAdapter(kind).validate_python(i) for i in items)


def _framework_model(name: str, value: Any) -> Any:
    """A reply the sandbox says is the pydantic model ``name``, for a role that declares no reply
    type: rebuilt (and validated) only when the class is todeval's own -- a reply type the
    framework hands players, such as a JSON-reply call's result -- never a class the player
    names from its own code; anything else stays the plain JSON it came as."""
    module = name.partition(":")[0]
    if module != "todeval" and not module.startswith("todeval."):
        return value
    try:
        kind = load_reference(name, what="reply model")
    except Exception:
        return value
    if not (isinstance(kind, type) and issubclass(kind, BaseModel)):
        return value
    try:
        return kind.model_validate(value)
    except ValidationError as exc:
        raise RuntimeError(f"isolated player's reply: not a valid {kind.__name__}") from exc


@dataclass
class IsolatedFactory:
    """Stands in for :class:`~todeval.dialogue.participants.PlayerFactory` for an isolated
    ``package.module:Class`` player: the class is never imported here."""

    role: Role[Any]
    name: str
    host: IsolatedHost
    params: Mapping[str, str] = field(default_factory=dict)

    @property
    def privileged(self) -> bool:
        return False  # never handed more than the role's view

    methods: Mapping[str, bool] = field(default_factory=dict)
    """The class's other public methods (name -> async), as the sandbox described them."""

    def build(self, options: PlayerOptions) -> Any:
        kind = _stand_in(tuple(sorted(self.methods.items())))
        player = kind(self.host, reply_annotation(self.role.protocol))
        return self.role.check(player, self.name)

    def check_selection(self, selection: str) -> None:
        return None


def _forward(name: str, is_async: bool) -> Any:
    """A stand-in's method ``name``: an async one is a call into the sandbox (its result as
    JSON); a synchronous one is buffered and replayed before the next call (returns None)."""
    if is_async:

        async def call(self: IsolatedPlayer, arg: Any) -> Any:
            return await self._call(name, arg)

        return call

    def buffered(self: IsolatedPlayer, arg: Any) -> None:
        self._buffer(name, arg)

    return buffered


def _stand_in(methods: tuple[tuple[str, bool], ...]) -> type[IsolatedPlayer]:
    """The stand-in class with the player class's other methods (so optional protocols, such
    as observing queued results, still match the stand-in as they match the class)."""
    if not methods:
        return IsolatedPlayer
    body = {name: _forward(name, is_async) for name, is_async in methods}
    return type("IsolatedPlayerWithMethods", (IsolatedPlayer,), body)


def describe(argv: Sequence[str], name: str) -> dict[str, bool]:
    """Load the class in the sandbox once (a usage error when it cannot be), and list its other
    public methods."""
    import subprocess

    try:
        done = subprocess.run(
            [*argv, "--describe", name], capture_output=True, text=True, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"--isolate: cannot start the sandbox ({exc})") from None
    try:
        body = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        why = " ".join(done.stderr.split())[-300:] or f"exit {done.returncode}"
        raise UsageError(f"--isolate: the sandbox did not start: {why}") from None
    if not body.get("ok"):
        raise UsageError(f"--isolate: {name}: {body.get('error')}")
    return {str(k): bool(v) for k, v in dict(body.get("methods") or {}).items()}


def isolated_factory(
    role: Role[Any],
    name: str,
    options: PlayerOptions,
    *,
    model: str | None,
    isolation: IsolationOptions,
    hidden: Sequence[Path],
) -> IsolatedFactory:
    """The factory of ``name`` (a ``package.module:Class`` reference) played in the sandbox,
    set up from the run's ``options`` for the role (its model by spec, its prompt templates,
    the JSON part of its ``extra``); ``hidden`` adds folders to hide (the run directory, the
    cache)."""
    roots = module_roots(name)
    env = sandbox_env(roots, isolation, os.environ)
    readable = public_paths(role.public_data)
    argv = sandbox_argv(roots, [*package_data_dirs(), *hidden], env, readable)
    prompts = options.prompts
    extra = {}
    for key, value in options.extra.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            continue
        extra[key] = value
    setup = {
        "player": name,
        "role": role.name,
        "model": model,
        "temperature": options.temperature,
        "max_tokens": options.max_tokens,
        "extra": extra,
        "prompts": (
            {"defaults": prompts.defaults, "overrides": prompts.overrides} if prompts else None
        ),
    }
    _, params = split_params(name)
    methods = describe(argv, name)
    return IsolatedFactory(role, name, IsolatedHost(setup, argv), params, methods)


__all__ = [
    "CHANNELS",
    "CHANNEL_BUILTIN",
    "CHANNEL_ENDPOINT",
    "CHANNEL_IN_PROCESS",
    "CHANNEL_ISOLATED",
    "IsolatedFactory",
    "IsolatedHost",
    "IsolatedPlayer",
    "IsolationOptions",
    "isolated_factory",
    "reply_annotation",
]
