"""The ``todeval`` command line.

Sub-commands are contributed by plug-ins (see :mod:`todeval.registry`): ``todeval run <benchmark>``,
``todeval score <scorer>``, ``todeval data <command>``. Expected errors print one line and exit
with a documented code: 0 ok, 1 internal error, 2 usage, 3 bad input file, 4 refused, 5 finished
with episodes to retry (run the same command), 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from todeval import __version__
from todeval.core.gcpause import collector_paused
from todeval.core.redact import redact
from todeval.errors import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_RETRY,
    EXIT_USAGE,
    InfrastructureError,
    InterruptedRunError,
    StoppedForRetryError,
    TodevalError,
)
from todeval.registry import TOP, discover

INTERRUPTED_LINE = "todeval: interrupted; finished episodes are kept: resume with the same command"
"""What a Ctrl-C or SIGTERM outside a run's event loop prints (start-up included; inside the
loop the runner's own line also counts the episodes kept)."""


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line (naming the valid choices) and exit code 2. No abbreviated
    options: ``--model`` is never taken for ``--models-file``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")

    def unknown(self, extras: Sequence[str]) -> NoReturn:
        """Unrecognized arguments, with the options of this command that share a word with an
        unknown flag (``--model``: ``--system-model``, ``--user-model``)."""
        hints: list[str] = []
        for extra in extras:
            word = extra.lstrip("-").partition("=")[0]
            if not extra.startswith("--") or not word:
                continue
            for option in self._option_string_actions:
                parts = option.lstrip("-").split("-")
                if option.startswith("--") and word in parts and option not in hints:
                    hints.append(option)
            import difflib  # only on this error path: start-up stays lean

            longs = [o for o in self._option_string_actions if o.startswith("--")]
            for option in difflib.get_close_matches(f"--{word}", longs, n=3, cutoff=0.75):
                if option not in hints:  # a typo: --sytem for --system
                    hints.append(option)
        hint = f"; did you mean {', '.join(sorted(hints))}?" if hints else ""
        self.error(f"unrecognized arguments: {' '.join(extras)}{hint}")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The full parser; with ``argv``, only the chosen command's options are built (the
    others' modules are never imported, which keeps start-up fast)."""
    registry = discover()
    for problem in registry.broken:
        print(f"todeval: warning: {problem}", file=sys.stderr)
    words = [a for a in (argv or []) if not a.startswith("-")]

    def wanted(*path: str) -> bool:
        return argv is None or words[: len(path)] == list(path)

    parser = _Parser(prog="todeval", description="Evaluate task-oriented dialogue agents.")
    parser.add_argument("--version", action="version", version=f"todeval {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for internal errors")
    verbs = parser.add_subparsers(dest="verb", metavar="COMMAND", parser_class=_Parser)
    verbs.required = True
    for name, command in sorted(registry.commands[TOP].items()):
        sub = verbs.add_parser(name, help=command.help, description=command.help)
        if wanted(name):
            command.add_arguments(sub)
        sub.set_defaults(_run=command.run, _parser=sub)
    for verb, verb_help in registry.groups.items():
        commands = registry.commands[verb]
        verb_parser = verbs.add_parser(verb, help=verb_help, description=verb_help)
        subs = verb_parser.add_subparsers(dest="command", metavar="NAME", parser_class=_Parser)
        subs.required = True
        for name, command in sorted(commands.items()):
            sub = subs.add_parser(name, help=command.help, description=command.help)
            if wanted(verb, name):
                command.add_arguments(sub)
            sub.set_defaults(_run=command.run, _parser=sub)
    return parser


def _split_debug(argv: list[str]) -> tuple[list[str], bool]:
    """``--debug`` anywhere before a ``--`` (the hint after an internal error says "rerun
    with --debug", so it must work after the sub-command too)."""
    end = argv.index("--") if "--" in argv else len(argv)
    debug = "--debug" in argv[:end]
    return [a for i, a in enumerate(argv) if i >= end or a != "--debug"], debug


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:  # Ctrl-C (or SIGTERM) before a run started or after it ended
        print(INTERRUPTED_LINE, file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # e.g. RuntimeError or SchemaError: see _interrupted
        if not _interrupted(exc):
            raise
        print(INTERRUPTED_LINE, file=sys.stderr)
        return EXIT_INTERRUPTED


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` wraps a Ctrl-C that landed during an import: while a class is being
    made it reaches us as ``RuntimeError: Error calling __set_name__`` caused by it; while
    pydantic builds a model's validator (in Rust) as a ``pydantic_core.SchemaError`` that keeps
    only its text ("KeyboardInterrupt: ")."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        kind = type(cause)
        if (
            kind.__name__ == "SchemaError"
            and kind.__module__.startswith("pydantic_core")
            and "KeyboardInterrupt" in str(cause)
        ):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _main(argv: list[str]) -> int:
    argv, debug = _split_debug(argv)
    with collector_paused():  # start-up only allocates what lives on: nothing to collect
        parser = build_parser(argv)
        args, extras = parser.parse_known_args(argv)
    if extras and not getattr(args, "_takes_extras", False):
        leaf = getattr(args, "_parser", parser)
        (leaf if isinstance(leaf, _Parser) else _Parser()).unknown(extras)
    args._extras = extras  # a command that takes them checks them itself (e.g. validate's)
    args._argv = argv  # the command as given, recorded in the run's manifest
    args._results = []  # every run's result (see todeval.runner.command)
    try:
        code = int(args._run(args))
    except (InterruptedRunError, StoppedForRetryError) as exc:
        print(f"todeval: {redact(exc.message)}", file=sys.stderr)
        return exc.exit_code
    except TodevalError as exc:  # server text in the message is redacted again here
        print(f"todeval: error: {redact(exc.message)}", file=sys.stderr)
        return exc.exit_code
    except InfrastructureError as exc:  # a model that never answered, outside a run
        first = f"{exc}".splitlines()[0] if str(exc) else type(exc).__name__
        print(
            f"todeval: error: {redact(first)}; check the URL and that the server is running",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except BrokenPipeError:  # output piped into e.g. `head`: not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(INTERRUPTED_LINE, file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        if debug or os.environ.get("TODEVAL_DEBUG"):
            raise
        print(
            redact(f"todeval: internal error: {type(exc).__name__}: {exc} (rerun with --debug)"),
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    if code == EXIT_OK and args._results:  # only runs record results (scoring records none)
        from todeval.runner.command import retry_exit

        retry = retry_exit(args)
        if retry is not None:
            print(f"todeval: {redact(retry)}", file=sys.stderr)
            return EXIT_RETRY
    return code


if __name__ == "__main__":
    sys.exit(main())
