"""The secret that candidate lists are drawn with, and where it lives.

A turn's candidate list is drawn from a generator keyed by a 32-byte key
(:func:`~todeval.benchmarks.bargain.data.candidates`). Two rules (issue 41, round 2):

* **Unpredictable**: the key comes from a secret no labeller can compute. It is derived
  (HMAC-SHA256) from the **installation secret**, 32 bytes from ``secrets.token_bytes`` created
  once in the user's todeval cache directory next to the response cache
  (``$TODEVAL_CACHE_DIR`` or ``~/.cache/todeval``: ``bargain-candidate-secret``, mode 0600).
* **Stable**: every run on an installation draws the same list for the same (track, dialogue,
  turn, K, candidate seed, distractors). A fresh key per run showed a new list holding the gold
  in every run, and an agent remembering lists across runs intersected them (F1 0.90-1.00 after
  six runs where the in-list prior scores 0.25-0.54).

So:

* ``TODEVAL_BARGAIN_CANDIDATE_KEY=<64 hex digits>`` pins the key (to redraw a run's lists on
  another installation, or to give remote Ray workers the driver's key; it is then known to
  whoever sets it, so use it only with a labeller you trust not to read the environment);
* else a resumed run reuses the key its directory recorded (``candidate-keys.json``);
* else the installation key. A resume whose records name another key than the one this
  session would use (the key file deleted, the directory copied from another installation) is
  refused: it would draw its remaining dialogues on other lists.

The key is never in the labeller's view, the manifest or the run directory while a labeller
plays: when the session ends (``finalize``, or the run's closer when it was refused or
interrupted) it is written to ``candidate-keys.json`` so the run can be reproduced afterwards;
a resumed run takes that file out of the directory while its episodes play. Every record names
its key by a one-way fingerprint (``details.candidate_key``). Ray workers rebuild the plan in
their own processes: on a local cluster they read the same installation secret (or inherit the
pinned key); a remote cluster must be given the key (``TODEVAL_BARGAIN_CANDIDATE_KEY`` in its
environment), and a run whose records name a key the driver does not hold says so loudly.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from todeval.benchmarks.bargain.data import CANDIDATE_SCHEME, KEY_BYTES, key_fingerprint
from todeval.core.files import write_output
from todeval.errors import BadInputError, RefusedError, UsageError

KEY_FILE = "candidate-keys.json"
KEY_ENV = "TODEVAL_BARGAIN_CANDIDATE_KEY"
SECRET_FILE = "bargain-candidate-secret"


def secret_path() -> Path:
    """Where the installation secret lives: next to the response cache
    (:func:`todeval.backends.cache.default_cache_path`, so ``$TODEVAL_CACHE_DIR`` applies)."""
    from todeval.backends.cache import default_cache_path

    return default_cache_path().parent / SECRET_FILE


def _read_secret(path: Path) -> bytes:
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        raise BadInputError(f"{path}: cannot read the candidate secret") from None
    try:
        return _parse(text, str(path))
    except UsageError:
        raise BadInputError(
            f"{path}: not a candidate secret ({2 * KEY_BYTES} hex digits); delete it to draw a "
            "new one (every later run then shows other lists)"
        ) from None


def installation_secret() -> bytes:
    """The installation's secret, created once (``secrets.token_bytes``, mode 0600; two
    processes creating it at once agree: the file is linked into place only if absent)."""
    path = secret_path()
    if path.exists():
        return _read_secret(path)
    tmp = path.with_name(f".{SECRET_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise BadInputError(
            f"{path}: cannot create the candidate secret ({exc.strerror}); set "
            f"TODEVAL_CACHE_DIR to a writable directory or pin {KEY_ENV}"
        ) from None
    try:
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(secrets.token_bytes(KEY_BYTES).hex() + "\n")
            f.flush()
            os.fsync(f.fileno())
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)  # never replaces a secret another process made first
    finally:
        tmp.unlink(missing_ok=True)
    return _read_secret(path)


def installation_key() -> bytes:
    """The installation's list key: derived from its secret (the secret itself is never
    written anywhere else)."""
    message = f"bargain-candidate-key|{CANDIDATE_SCHEME}".encode()
    return hmac.new(installation_secret(), message, hashlib.sha256).digest()


def list_key() -> bytes:
    """The key lists are drawn with outside a run directory (Ray workers, the annotation
    export): the pinned key, else the installation's."""
    pinned = os.environ.get(KEY_ENV)
    return _parse(pinned, KEY_ENV) if pinned else installation_key()


@dataclass
class SessionKey:
    """The key this process draws lists with, and the keys the run directory recorded."""

    key: bytes
    source: str  # installation, resumed or pinned
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


def recorded_fingerprints(run_dir: Path) -> set[str]:
    """The key fingerprints the run directory's episode records name (read through the run
    directory's own reader: safe reading, a torn last line skipped, superseded lines too)."""
    from todeval.runner.store import RunDirectory

    found: set[str] = set()
    for record in RunDirectory(run_dir).iter_episodes():
        value = record.details.get("candidate_key")
        if isinstance(value, str) and value:
            found.add(value)
    return found


def session_key(run_dir: Path | None) -> SessionKey:
    """This session's key: pinned by the environment, else the run directory's recorded key (a
    resumed run), else the installation's. A resume whose records name a key this session
    would not use is refused (it would draw the remaining dialogues on other lists). The key
    file is taken out of the directory at once."""
    if run_dir is None:
        pinned = os.environ.get(KEY_ENV)
        return SessionKey(list_key(), "pinned" if pinned else "installation")
    run_dir = run_dir.resolve()
    current, known = read_keys(run_dir)
    pinned = os.environ.get(KEY_ENV)
    if pinned:
        found = SessionKey(_parse(pinned, KEY_ENV), "pinned", run_dir, known)
    elif current is not None:
        found = SessionKey(bytes.fromhex(known[current]), "resumed", run_dir, known)
    else:
        found = SessionKey(installation_key(), "installation", run_dir, known)
    recorded = recorded_fingerprints(run_dir) - {found.fingerprint}
    other = sorted(recorded - set(known))
    if recorded and not other:  # redrawable, but the dialogues played again get other lists
        print(
            f"WARNING: {run_dir}: some episodes were drawn with candidate key "
            f"{', '.join(sorted(recorded))}, this session draws with {found.fingerprint}",
            file=sys.stderr,
            flush=True,
        )
    if other:
        where = (
            f"{KEY_ENV}"
            if pinned
            else (
                f"{KEY_FILE}'s current key" if current else f"this installation's ({secret_path()})"
            )
        )
        raise RefusedError(
            f"{run_dir}: its episodes were drawn with candidate key {', '.join(other)}, not "
            f"{found.fingerprint} ({where}); a resume would show its remaining dialogues other "
            f"lists -- restore {KEY_FILE}, pin the recorded key with {KEY_ENV}, or use a new "
            "run directory"
        )
    if known:
        found.hide()
    return found


def warn_foreign(key: SessionKey, used: set[str]) -> str | None:
    """A loud line when some episodes were drawn with a key this process does not hold (Ray
    workers on a remote cluster without the installation secret or the pinned key)."""
    foreign = sorted(used - {key.fingerprint} - set(key.known))
    if not foreign:
        return None
    line = (
        f"WARNING: {len(foreign)} candidate key(s) drew lists in this run that the driver "
        f"does not hold ({', '.join(foreign)}; the driver's: {key.fingerprint}): remote Ray "
        f"workers need the driver's key -- set {KEY_ENV} in the cluster's environment, or "
        f"give them the same {SECRET_FILE}"
    )
    print(line, file=sys.stderr, flush=True)
    return line


__all__ = [
    "KEY_ENV",
    "KEY_FILE",
    "SECRET_FILE",
    "SessionKey",
    "installation_key",
    "installation_secret",
    "key_of",
    "list_key",
    "read_keys",
    "recorded_fingerprints",
    "secret_path",
    "session_key",
    "warn_foreign",
]
