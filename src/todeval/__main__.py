"""The ``todeval`` command (``python -m todeval``): the CLI of :mod:`todeval.cli`, quiet about a
Ctrl-C or SIGTERM that arrives while its modules are still being imported (exit 130, no
traceback). After that a SIGTERM is a Ctrl-C (``KeyboardInterrupt``) until a run installs its
own handlers, so a run stopped during its start-up (building players, loading tasks) also exits
130 with the line saying how to resume, instead of dying silently with the signal.

A Ctrl-C whose exception is raised inside a callback Python cannot propagate from (the import
system's module-lock callback, a ``__del__``) would be printed as "Exception ignored" and lost,
the command running on; :func:`deliver_again` signals it anew, to land outside the callback.

The process's garbage collector is tuned for a command (:func:`collect_less`), not for a
library: a program importing todeval keeps its own settings."""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
from types import FrameType


def _interrupted_during_start_up(signum: int, frame: FrameType | None) -> None:
    # the same line as todeval.cli.INTERRUPTED_LINE (not imported: it may be half imported)
    print(
        "todeval: interrupted; finished episodes are kept: resume with the same command",
        file=sys.stderr,
    )
    raise SystemExit(130)


def deliver_again(unraisable: sys.UnraisableHookArgs) -> None:
    """``sys.unraisablehook``: an interrupt raised where it could only be ignored is signalled
    again (quietly); anything else is reported as Python reports it."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt | SystemExit):
        # From another thread, a moment later: signalled here, the handler would run (and
        # raise) inside this hook, still within the callback.
        threading.Timer(0.01, os.kill, (os.getpid(), signal.SIGINT)).start()
        return
    sys.__unraisablehook__(unraisable)


YOUNG_OBJECTS = 10_000
"""Allocations that start a collection of the youngest generation (Python's default: 700)."""


def collect_less() -> None:
    """After the imports: their objects (they live as long as the process) are moved out of
    the collector's sight, and young objects are collected less often. A run creates many
    short-lived objects (messages, events, request bodies): with the defaults the collector
    took 13% of a run's CPU at 128 calls in flight (0.65 of 4.9 s, 256 booking episodes),
    with these 2-4% (docs/backends.md, "Throughput")."""
    gc.freeze()
    gc.set_threshold(YOUNG_OBJECTS, *gc.get_threshold()[1:])
    gc.enable()


def _ignore_interrupts() -> None:
    """Exiting now: a late signal (one delivered again by :func:`deliver_again`, a second
    SIGTERM) must not turn the chosen exit code into death by signal.

    CPython (3.11 to 3.13) also records a ``KeyboardInterrupt`` that ended code compiled from
    source text (``exec``/``eval`` of a string, as ``dataclasses`` and ``namedtuple`` do while
    building a class) as unhandled, even when a caller caught it; under ``python -m`` the
    process then dies by SIGINT after its clean exit (seen: exit 130 chosen, -2 reported, 7 of
    50 SIGTERMs landing in a run's first 0.1 s). Running source text once more clears that
    record; no signal can raise after this point."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    exec("None")  # clears the record above (see the docstring)


def run() -> None:
    """Import the CLI with SIGINT ending the process quietly (and no garbage collection: see
    :func:`collect_less`), then run it. Every way out (an exit during the imports, the
    command's own exit, an interrupt) ignores further signals first, so the exit code chosen
    is the one the process ends with."""
    sys.unraisablehook = deliver_again
    previous = signal.signal(signal.SIGINT, _interrupted_during_start_up)
    signal.signal(signal.SIGTERM, _interrupted_during_start_up)
    gc.disable()
    try:
        from todeval.cli import main

        collect_less()  # still under the start-up handlers: a signal now ends quietly too
        signal.signal(signal.SIGINT, previous)
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        code = main()
    except KeyboardInterrupt:  # between the handlers, or a second interrupt while the first
        # was being reported
        _ignore_interrupts()
        print(
            "todeval: interrupted; finished episodes are kept: resume with the same command",
            file=sys.stderr,
        )
        code = 130
    finally:
        _ignore_interrupts()
    sys.exit(code)


if __name__ == "__main__":
    run()
