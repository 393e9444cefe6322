"""API keys out of everything todeval writes or prints.

A server or a proxy may echo the request's ``Authorization`` header in an error body or even in
a reply; that text would otherwise go verbatim into ``episodes.jsonl``, the response cache, the
report, ``view`` and the terminal. :func:`redact` replaces

* every configured key value: the variables a models file names (``api_key_env``), the keys
  the model layer actually sent (:func:`add_secret`) and ``OPENAI_API_KEY``, read from the
  environment when redacting (values shorter than :data:`MIN_SECRET_LENGTH` characters are
  not secrets worth the name and are left alone: replacing ``"x"`` everywhere would wreck
  every text);
* any ``Bearer <token>`` and any ``sk-...`` key, configured or not (a token of at least 8
  characters holding a digit, so "the bearer of the card" stays as it is), and any
  ``Basic <base64>`` (at least 12 characters of base64 holding a digit);
* credentials in URLs: the userinfo of ``scheme://user:password@host`` and the value of every
  query parameter whose name says it holds one (``key``, ``api_key``, ``token``,
  ``access_token``, ``secret``, ``sig``, ``signature``, ``password``, ``auth``, ... and names
  ending in them, such as ``subscription-key``), whatever its shape,

with ``[redacted]``. It is applied where server text enters our records (the model backends'
error messages and replies) and again by the writers (episode lines, every output file, the
one-line errors), so nothing depends on one place remembering. A text without any of them is
returned as it is after a few substring tests.
"""

from __future__ import annotations

import base64
import json
import os
import re
import threading
from collections.abc import Iterable, Mapping
from urllib.parse import unquote

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 8
DEFAULT_KEY_VARIABLES = ("OPENAI_API_KEY",)

# ``Bearer <token>`` and OpenAI-style keys. Each pattern starts with a literal, so the regex
# engine skips to its occurrences (a leading ``\b`` or case-insensitive group would make it
# test every position: 50 times slower on a large report). The token alphabet holds no JSON or
# HTML metacharacter, so a replacement inside serialised text never breaks it.
_TOKEN = r"[A-Za-z0-9._~+/=-]"
_KEYED = rf"(?={_TOKEN}*\d){_TOKEN}{{8,}}"
_BEARERS = (
    *((word, re.compile(rf"({word}\s+){_KEYED}")) for word in ("Bearer", "bearer", "BEARER")),
    # HTTP Basic credentials (base64 of user:password): base64's alphabet only, so "Basic
    # 2-bedroom flat" is text
    ("Basic", re.compile(r"(Basic\s+)(?=[A-Za-z0-9+/]*\d)[A-Za-z0-9+/]{12,}={0,2}")),
)
"""Each pattern with the word it starts with: a text without the word is not searched (the
search of a pattern opening with a group costs more than the whole rest of :func:`redact`)."""
_SK_KEY = re.compile(rf"sk-{_KEYED}")
# A query parameter named like a credential (``&amp;`` too: the report's HTML escapes ``&``),
# and the userinfo of a URL. Values stop at the characters that end a URL in text or JSON.
CREDENTIAL_PARAMS = (
    "api[_-]?key|apikey|key|keys|token|access[_-]?token|id[_-]?token|auth|authorization|"
    "secret|client[_-]?secret|sig|signature|password|passwd|pwd|pass|credential|credentials"
)
_URL_PARAM = re.compile(
    rf"([?&;](?:amp;)?(?:[A-Za-z0-9_.-]*[_.-])?(?:{CREDENTIAL_PARAMS})=)([^&#\s\"'<>\\]+)",
    re.IGNORECASE,
)
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)([^/?#\s@\"'<>\\]+)@")
_AUTHORITY = re.compile(r"[^/?#\s@\"'<>\\]+@")


def _sk_key(match: re.Match[str]) -> str:
    start = match.start()
    inside_word = start > 0 and (
        match.string[start - 1].isalnum() or match.string[start - 1] == "_"
    )
    return match.group(0) if inside_word else REDACTED


_lock = threading.Lock()
_values: set[str] = set()
_variables: set[str] = set(DEFAULT_KEY_VARIABLES)


def add_secret(value: str | None) -> None:
    """Redact ``value`` (an API key this process sends) from now on."""
    if value and len(value) >= MIN_SECRET_LENGTH:
        with _lock:
            _values.add(value)


def add_secret_variables(names: Iterable[str | None]) -> None:
    """Redact the values of these environment variables (read when redacting)."""
    with _lock:
        _variables.update(n for n in names if n)


def secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """The values redacted now, longest first (a key containing another is replaced whole)."""
    env = os.environ if environ is None else environ
    with _lock:
        found = set(_values)
        names = list(_variables)
    for name in names:
        value = env.get(name)
        if value and len(value) >= MIN_SECRET_LENGTH:
            found.add(value)
    # a key with a quote, a backslash or a non-ASCII character appears escaped in JSON text
    found.update(json.dumps(v)[1:-1] for v in list(found))
    return sorted(found, key=len, reverse=True)


def redact(text: str) -> str:
    """``text`` with every secret (see the module docstring) replaced by ``[redacted]``."""
    for value in secrets():
        if value in text:
            text = text.replace(value, REDACTED)
    if "sk-" in text:
        text = _SK_KEY.sub(_sk_key, text)
    for word, bearer in _BEARERS:
        if word in text:
            text = bearer.sub(rf"\1{REDACTED}", text)
    if "=" in text:
        text = _URL_PARAM.sub(rf"\1{REDACTED}", text)
    if "://" in text and "@" in text:
        text = _without_userinfo(text)
    return text


def _without_userinfo(text: str) -> str:
    """``scheme://user:password@host`` -> ``scheme://[redacted]@host``, found from each
    ``://`` (a regex starting with the scheme's letters would test every position)."""
    parts: list[str] = []
    done = 0
    at = text.find("://")
    while at >= 0:
        start = at + 3
        found = _AUTHORITY.match(text, start)
        if found is not None and text[start : found.end() - 1] != REDACTED:
            parts += [text[done:start], REDACTED, "@"]
            done = found.end()
        at = text.find("://", start)
    return "".join([*parts, text[done:]]) if parts else text


def url_credentials(url: str) -> list[str]:
    """The credentials a URL carries: its userinfo and every credential-named query value
    (what :func:`redact` replaces in it)."""
    found = [m.group(2) for m in _URL_PARAM.finditer(url)]
    found += [m.group(2) for m in _USERINFO.finditer(url)]
    return [v for v in found if v != REDACTED]


def add_url_secrets(url: str) -> None:
    """Redact from now on the credentials ``url`` carries (:func:`url_credentials`), the
    password of its userinfo alone, and the ``Authorization: Basic`` token an HTTP client
    makes of that userinfo (which a server may echo)."""
    for value in url_credentials(url):
        add_secret(value)
    for found in _USERINFO.finditer(url):
        if found.group(2) == REDACTED:
            continue
        user, _, password = found.group(2).partition(":")
        add_secret(unquote(password))
        add_secret(base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode())


def redact_bytes(data: bytes) -> bytes:
    """:func:`redact` for UTF-8 ``data`` (other bytes are returned unchanged)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    cleaned = redact(text)
    return data if cleaned == text else cleaned.encode("utf-8")
