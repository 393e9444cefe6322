"""The page is self-contained and inert: no external fetches, data only as escaped JSON."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.report.helpers import PAYLOADS
from todeval.report import build_html, load_inputs, script_safe_json
from todeval.report._svg import nice_ticks
from todeval.report.markup import anchor, el, esc


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._in_script: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = dict(attrs)
            self.scripts.append((self._in_script, ""))

    def handle_data(self, data: str) -> None:
        if self._in_script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = None


@pytest.fixture(scope="module")
def xss_html(xss: Path, runs: dict[str, Path]) -> str:
    return build_html(load_inputs([xss, runs["rule"]]))


def _parse(html: str) -> _Collect:
    parser = _Collect()
    parser.feed(html)
    return parser


def test_no_external_resources(xss_html: str) -> None:
    parsed = _parse(xss_html)
    for tag, attrs in parsed.tags:
        for name in ("src", "href", "action", "srcset", "poster", "data"):
            value = attrs.get(name)
            if value is not None:
                assert value.startswith("#") or value == "data:,", (tag, name, value)
        assert not (tag == "link" and attrs.get("rel") == "stylesheet")
    outside_data = re.sub(r'<script type="application/json".*?</script>', "", xss_html, flags=re.S)
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", outside_data))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls  # the SVG namespace is not a fetch
    assert "@import" not in xss_html and "url(" not in outside_data


def test_exactly_two_scripts_and_csp_allows_only_ours(xss_html: str) -> None:
    parsed = _parse(xss_html)
    assert [a.get("type") for a, _ in parsed.scripts] == ["application/json", None]
    code = parsed.scripts[1][1]
    digest = base64.b64encode(hashlib.sha256(code.encode()).digest()).decode()
    [csp] = [
        a["content"] for t, a in parsed.tags if a.get("http-equiv") == "Content-Security-Policy"
    ]
    assert csp is not None
    assert f"script-src 'sha256-{digest}'" in csp and "default-src 'none'" in csp
    assert "unsafe-inline" not in csp.split("script-src", 1)[1].split(";", 1)[0]
    # no inline event handlers anywhere
    for _, attrs in parsed.tags:
        assert not any(name.startswith("on") for name in attrs)


def test_payloads_never_appear_as_markup(xss_html: str) -> None:
    for payload in PAYLOADS:
        if "<" in payload:
            assert payload not in xss_html
    assert (
        "<script>window" not in xss_html
        and "<img" not in xss_html
        and "<svg onload" not in xss_html
    )
    data = _parse(xss_html).scripts[0][1]
    assert "\u2028" not in data and "\u2029" not in data and "<" not in data
    # escaped text is still there for the reader
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in xss_html


def test_embedded_json_round_trips(xss_html: str) -> None:
    parsed = _parse(xss_html)
    data = json.loads(parsed.scripts[0][1])
    texts = [
        ev["data"]["text"]
        for ep in data["episodes"]
        for ev in ep["events"]
        if ev["kind"] == "user_message"
    ]
    assert PAYLOADS[2] in texts and PAYLOADS[6] in texts
    ids = {ep["id"] for ep in data["episodes"]}
    assert f"test/000-{PAYLOADS[0]}#0" in ids
    assert all(isinstance(ep["seed"], str) for ep in data["episodes"])


def test_script_safe_json_escapes() -> None:
    raw = json.dumps({"a": "</script><!-- & \u2028\u2029"}, ensure_ascii=False)
    safe = script_safe_json(raw)
    assert not set("<>&\u2028\u2029") & set(safe)
    assert json.loads(safe) == json.loads(raw)


def test_markup_builder_escapes_and_refuses() -> None:
    assert el("td", {"title": '"><x'}, "<b>") == '<td title="&quot;&gt;&lt;x">&lt;b&gt;</td>'
    assert esc("<&>") == "&lt;&amp;&gt;"
    with pytest.raises(ValueError):
        el("a", {"href": "javascript:alert(1)"})
    with pytest.raises(ValueError):
        el("div", {"onclick": "x"})
    with pytest.raises(ValueError):
        el("div", {'x" onload="y': "1"})
    with pytest.raises(ValueError):
        el("script><img", None)
    assert anchor(run="r 1", group="hotel+train") == "#run=r%201&group=hotel%2Btrain"


def test_nice_ticks_cover_the_range() -> None:
    for lo, hi in ((0.0, 0.00252), (0.0, 1.0), (3.2, 7.9), (0.0, 117.0), (-2.0, 5.5)):
        ticks = nice_ticks(lo, hi)
        assert ticks[0] <= lo + 1e-12 and ticks[-1] >= hi - 1e-12, (lo, hi, ticks)
        assert 2 <= len(ticks) <= 12


def test_figures_have_one_mark_per_run_and_group(runs: dict[str, Path]) -> None:
    html = build_html(load_inputs([runs["rule"], runs["corpus"], runs["llm"]]))
    scatter = html.split('id="fig-scatter-booking"', 1)[1].split("</svg>", 1)[0]
    assert scatter.count('<g class="pt"') == 3
    assert "Cost per dialogue (USD)" in scatter and "Booking accuracy (micro, 95% CI)" in scatter
    bars = html.split('id="fig-groups-booking"', 1)[1].split("</svg>", 1)[0]
    assert bars.count('<g class="bar"') == 3 * 6
    assert html.count('class="eb"') == 3  # one error bar per leaderboard row


def test_who_failed_splits_each_run_s_failures(runs: dict[str, Path]) -> None:
    """A run of a benchmark with a reviewer gets a row: the verdicts of its failed episodes,
    the simulator fault rate and the conditional success, labelled as such (issue 30)."""
    html = build_html(load_inputs([runs["rule"], runs["corpus"]]))
    section = html.split('<section id="who-failed">', 1)[1].split("</section>", 1)[0]
    assert 'href="#who-failed"' in html
    assert section.count('<tr id="who-') == 2
    assert "user simulator failed" in section and "(conditional)" in section
    assert "not a score to rank by" in section
