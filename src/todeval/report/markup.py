"""A tiny HTML/SVG builder that escapes everything it is not told is safe.

Every text and attribute value passes through :func:`esc` unless it is :class:`Markup` made by
these builders, so data (model outputs, file names, labels) can never become markup. URL
attributes only take in-page anchors (``#...``) and attribute names are checked; a link to another
page is made by :func:`relative_link`, which takes only relative paths.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from urllib.parse import quote, urlencode, urlsplit

_ATTR_NAME = re.compile(r"^[a-zA-Z_:][-a-zA-Z0-9_:.]*$")
_TAG = re.compile(r"^[a-zA-Z][a-zA-Z0-9]*$")
_RELATIVE = re.compile(r"^[A-Za-z0-9_.~%/#=&+-]+$")
_URL_ATTRS = frozenset({"href", "src", "xlink:href", "action", "formaction"})

AttrValue = str | int | float | bool | None


class Markup(str):
    """A string of safe markup, produced only by the builders in this module."""

    __slots__ = ()


def esc(value: object) -> Markup:
    """Escaped text (``Markup`` passes through unchanged)."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(str(value), quote=True))


def _attrs(attrs: Mapping[str, AttrValue] | None) -> str:
    out = []
    for name, value in (attrs or {}).items():
        if value is None or value is False:
            continue
        if not _ATTR_NAME.match(name) or name.lower().startswith("on"):
            raise ValueError(f"refusing attribute name {name!r}")
        if value is True:
            out.append(f" {name}")
            continue
        text = f"{value:.2f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)
        if name.lower() in _URL_ATTRS and not (text.startswith("#") or text == "data:,"):
            raise ValueError(f"refusing non-anchor URL in {name}: {text[:40]!r}")
        out.append(f' {name}="{html.escape(text, quote=True)}"')
    return "".join(out)


def el(tag: str, attrs: Mapping[str, AttrValue] | None = None, *children: object) -> Markup:
    """``<tag attrs>children</tag>``; children are escaped unless they are Markup."""
    if not _TAG.match(tag):
        raise ValueError(f"refusing tag {tag!r}")
    body = "".join(esc(c) for c in children if c is not None)
    return Markup(f"<{tag}{_attrs(attrs)}>{body}</{tag}>")


def void(tag: str, attrs: Mapping[str, AttrValue] | None = None) -> Markup:
    """An element without content (``<meta>``, ``<br>``)."""
    if not _TAG.match(tag):
        raise ValueError(f"refusing tag {tag!r}")
    return Markup(f"<{tag}{_attrs(attrs)}>")


def join(parts: Iterable[object], sep: str = "") -> Markup:
    return Markup(esc(sep).join(esc(p) for p in parts if p is not None))


def relative_link(
    href: str, *children: object, attrs: Mapping[str, AttrValue] | None = None
) -> Markup:
    """``<a href>`` to another page by a relative path (and anchor), e.g. ``../board.html``:
    plain characters, no scheme, no host, not absolute, so it is followed alike from disk
    (``file://``) and from any static host."""
    parts = urlsplit(href)
    if not _RELATIVE.match(href) or parts.scheme or parts.netloc or href.startswith("/"):
        raise ValueError(f"refusing link {href[:60]!r}")
    if attrs and any(name.lower() in _URL_ATTRS for name in attrs):
        raise ValueError("relative_link takes its URL as href")
    body = "".join(esc(c) for c in children if c is not None)
    return Markup(f'<a href="{html.escape(href, quote=True)}"{_attrs(attrs)}>{body}</a>')


def anchor(**params: str) -> str:
    """An in-page link to a transcript-browser state, e.g. ``#run=r1&label=ending%3Ax``.

    Values are percent-encoded (``+`` too), so the page's ``URLSearchParams`` reads them back
    exactly.
    """
    return "#" + urlencode({k: v for k, v in params.items() if v}, quote_via=quote)
