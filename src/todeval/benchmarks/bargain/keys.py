"""The per-run secret that candidate lists are drawn with, and where it lives.

A turn's candidate list is drawn from a generator keyed by a 32-byte secret
(:func:`~todeval.benchmarks.bargain.data.candidates`). The secret must never be where a
labeller can reach it while it labels: not in its view, not in the manifest, not in any file of
the run directory (a player runs in the runner's process and can open files). So:

* a run's process draws the key (``secrets.token_bytes``) when its plan is built and keeps it
  in memory only;
* when the run's session ends (``finalize``, which the runner calls after every session,
  finished or interrupted), the key is written to ``candidate-keys.json`` in the run
  directory, so the run can be reproduced from its directory afterwards;
* a resumed run reads the key back and reuses it (the same dialogue keeps its lists), but
  first removes the file from the directory while its episodes play (when the first episode
  starts, after the resume was accepted), and writes it again when the session ends. The
  trade-off: a process killed outright (``kill -9``) during a session loses the key of that
  session from the directory; every list stays in its episode's record
  (``details.turns[].candidates``), and each record names the key it was drawn with by a
  one-way fingerprint (``details.candidate_key``), so scores are never affected -- only the
  regeneration of those lists;
* ``TODEVAL_BARGAIN_CANDIDATE_KEY=<64 hex digits>`` pins the key (to redraw a run's lists, or to
  give two runs the same lists; it is then known before the run, so use it only with a
  labeller you trust not to read the environment). Ray workers rebuild the plan in their own
  processes: they inherit a pinned key, and otherwise each draws its own (recorded only by
  fingerprint).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from todeval.benchmarks.bargain.data import CANDIDATE_SCHEME, KEY_BYTES, key_fingerprint, new_key
from todeval.core.files import write_output
from todeval.errors import BadInputError, UsageError

KEY_FILE = "candidate-keys.json"
KEY_ENV = "TODEVAL_BARGAIN_CANDIDATE_KEY"


@dataclass
class SessionKey:
    """The key this process draws lists with, and the keys the run directory recorded."""

    key: bytes
    source: str  # drawn, resumed or pinned
    run_dir: Path | None = None
    known: dict[str, str] = field(default_factory=dict)  # fingerprint -> hex, from the file
    hidden: bool = False
    used: bool = False  # an episode of this process drew lists with it
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def fingerprint(self) -> str:
        return key_fingerprint(self.key)

    def hide(self) -> None:
        """Take the key file out of the run directory while this session plays (the keys are
        in this object; :meth:`restore` and :meth:`record` write them back)."""
        if self.hidden or self.run_dir is None:
            return
        with self._lock:
            if not self.hidden:
                self.hidden = True
                with contextlib.suppress(OSError):  # a read-only directory: nothing to hide
                    (self.run_dir / KEY_FILE).unlink(missing_ok=True)

    async def restore(self) -> None:
        """The run's closer: put the keys back when the session ends, even when it was refused
        or interrupted before ``finalize``."""
        if self.hidden or self.used:
            self.record({self.fingerprint} if self.used else set())

    def record(self, used: set[str]) -> None:
        """Write every key the run's lists were drawn with (the recorded ones and this
        session's, when an episode used it) to the run directory."""
        if self.run_dir is None or not self.run_dir.is_dir():
            return
        keys = dict(self.known)
        if self.fingerprint in used or self.used:
            keys[self.fingerprint] = self.key.hex()
        if not keys:
            return
        unknown = sorted(used - set(keys))
        body = {
            "scheme": CANDIDATE_SCHEME,
            "current": self.fingerprint if self.fingerprint in keys else None,
            "keys": keys,
            "unrecorded": unknown,
            "note": "the secret keys the candidate lists were drawn with, by fingerprint "
            "(details.candidate_key of each episode); written when a session ends, never "
            "while a labeller plays. Redraw: TODEVAL_BARGAIN_CANDIDATE_KEY=<key> todeval run "
            "bargain ... with the run's config.",
        }
        write_output(self.run_dir / KEY_FILE, json.dumps(body, indent=2) + "\n")
        self.hidden = False


def _parse(text: str, where: str) -> bytes:
    try:
        key = bytes.fromhex(text.strip())
    except ValueError:
        key = b""
    if len(key) != KEY_BYTES:
        raise UsageError(f"{where}: a candidate key is {2 * KEY_BYTES} hex digits")
    return key


def read_keys(run_dir: Path) -> tuple[str | None, dict[str, str]]:
    """The current fingerprint and every key (fingerprint -> hex) ``run_dir`` recorded."""
    path = run_dir / KEY_FILE
    if not path.is_file():
        return None, {}
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
        keys = {str(k): str(v) for k, v in dict(body.get("keys", {})).items()}
        current = body.get("current")
    except (OSError, ValueError, TypeError, AttributeError):
        raise BadInputError(f"{path}: not a candidate key file") from None
    for fp, hex_key in keys.items():
        if key_fingerprint(_parse(hex_key, str(path))) != fp:
            raise BadInputError(f"{path}: key {fp} does not match its fingerprint")
    return (str(current) if current in keys else None), keys


def key_of(run_dir: Path, fingerprint: str) -> bytes:
    """The recorded key with ``fingerprint`` (to redraw a finished run's lists)."""
    _, keys = read_keys(run_dir)
    if fingerprint not in keys:
        raise BadInputError(f"{run_dir}: no recorded candidate key {fingerprint}")
    return bytes.fromhex(keys[fingerprint])


_SESSIONS: dict[Path, SessionKey] = {}
"""This process's key of each run directory: a plan built twice for one directory (before the
key file is written back) keeps the key and the recorded ones."""


def session_key(run_dir: Path | None) -> SessionKey:
    """This process's key: pinned by the environment, else the run directory's recorded key (a
    resumed run), else a fresh one. The key file is taken out of the directory at once."""
    if run_dir is None:
        pinned = os.environ.get(KEY_ENV)
        return SessionKey(_parse(pinned, KEY_ENV) if pinned else new_key(), "drawn")
    run_dir = run_dir.resolve()
    current, known = read_keys(run_dir)
    earlier = _SESSIONS.get(run_dir)
    if not known and earlier is not None:  # hidden by it, or not written yet
        return earlier
    pinned = os.environ.get(KEY_ENV)
    if pinned:
        found = SessionKey(_parse(pinned, KEY_ENV), "pinned", run_dir, known)
    elif current is not None:
        found = SessionKey(bytes.fromhex(known[current]), "resumed", run_dir, known)
    else:
        found = SessionKey(new_key(), "drawn", run_dir, known)
    if known:
        found.hide()
    _SESSIONS[run_dir] = found
    return found


__all__ = ["KEY_ENV", "KEY_FILE", "SessionKey", "key_of", "read_keys", "session_key"]
