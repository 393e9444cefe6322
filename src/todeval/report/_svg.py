"""Static SVG figures (generated in Python, inlined in the page, no JavaScript needed).

Every figure has labelled axes and a legend; every mark carries a ``<title>`` tooltip and, where
it stands for a run, ``data-run``/``data-href`` so the page can link it to the transcripts.
Colours are the Okabe-Ito palette (readable with colour-vision deficiencies); architectures
also differ by marker shape, so figures survive greyscale printing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

from todeval.core.records import Estimate
from todeval.report.markup import AttrValue, Markup, anchor, el, join

PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#999999",
    "#000000",
    "#F0E442",
)
SHAPES = ("circle", "square", "triangle", "diamond", "triangle-down", "plus")
FONT = 12


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def shape(i: int) -> str:
    return SHAPES[i % len(SHAPES)]


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round tick values from at or below ``lo`` to at or above ``hi``."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step + 1e-9) * step
    ticks = []
    k = 0
    while True:
        v = round(start + k * step, 12)
        ticks.append(v)
        if v >= hi - step * 1e-6:
            return ticks
        k += 1


def ticks_within(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round ticks inside [lo, hi] (for an axis whose range is already fixed)."""
    eps = (hi - lo) * 1e-9
    return [t for t in nice_ticks(lo, hi, n) if lo - eps <= t <= hi + eps]


def clip(text: str, limit: int = 28) -> str:
    """Shorten a label for a figure (the full text stays in the mark's tooltip)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Scale:
    lo: float
    hi: float
    a: float
    b: float

    def __call__(self, v: float) -> float:
        if self.hi == self.lo:
            return self.a
        return self.a + (v - self.lo) / (self.hi - self.lo) * (self.b - self.a)


def marker(kind: str, x: float, y: float, r: float, fill: str) -> Markup:
    """A point marker of the given shape centred on (x, y)."""
    attrs: dict[str, AttrValue] = {"fill": fill, "stroke": "#fff", "stroke-width": 1.0}
    if kind == "square":
        return el("rect", {"x": x - r, "y": y - r, "width": 2 * r, "height": 2 * r, **attrs})
    if kind in ("triangle", "triangle-down", "diamond", "plus"):
        pts = {
            "triangle": [(0, -1.25), (1.15, 0.85), (-1.15, 0.85)],
            "triangle-down": [(0, 1.25), (1.15, -0.85), (-1.15, -0.85)],
            "diamond": [(0, -1.35), (1.2, 0), (0, 1.35), (-1.2, 0)],
            "plus": [
                (-0.4, -1.2),
                (0.4, -1.2),
                (0.4, -0.4),
                (1.2, -0.4),
                (1.2, 0.4),
                (0.4, 0.4),
                (0.4, 1.2),
                (-0.4, 1.2),
                (-0.4, 0.4),
                (-1.2, 0.4),
                (-1.2, -0.4),
                (-0.4, -0.4),
            ],
        }[kind]
        text = " ".join(f"{x + dx * r:.1f},{y + dy * r:.1f}" for dx, dy in pts)
        return el("polygon", {"points": text, **attrs})
    return el("circle", {"cx": x, "cy": y, "r": r, **attrs})


def _text(x: float, y: float, text: str, **attrs: AttrValue) -> Markup:
    return el("text", {"x": x, "y": y, **attrs}, text)


def _line(x1: float, y1: float, x2: float, y2: float, cls: str) -> Markup:
    return el("line", {"x1": x1, "y1": y1, "x2": x2, "y2": y2, "class": cls})


def _svg(fig_id: str, width: float, height: float, title: str, *body: Markup) -> Markup:
    return el(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "id": fig_id,
            "class": "fig",
            "viewBox": f"0 0 {width:.0f} {height:.0f}",
            "width": f"{width:.0f}",
            "height": f"{height:.0f}",
            "role": "img",
            "aria-label": title,
        },
        el("title", None, title),
        *body,
    )


def _y_title(text: str, top: float, bottom: float) -> Markup:
    """A y-axis title, rotated, centred between ``top`` and ``bottom``."""
    mid = (top + bottom) / 2
    attrs: dict[str, AttrValue] = {
        "class": "axis-title",
        "transform": f"rotate(-90 14 {mid:.0f})",
        "text-anchor": "middle",
    }
    return _text(14, mid, text, **attrs)


def _ci_bar(a: float, b: float, y: float, cls: str) -> list[Markup]:
    """A horizontal CI from ``a`` to ``b`` at height ``y``, with end ticks 8 units tall."""
    return [_line(a, y, b, y, cls), _line(a, y - 4, a, y + 4, cls), _line(b, y - 4, b, y + 4, cls)]


def _y_axis(
    scale: Scale, ticks: Sequence[float], x0: float, x1: float, fmt: Callable[[float], str]
) -> Markup:
    parts = []
    for t in ticks:
        y = scale(t)
        parts.append(_line(x0, y, x1, y, "grid"))
        parts.append(_text(x0 - 6, y + 4, fmt(t), **{"text-anchor": "end", "class": "tick"}))
    parts.append(_line(x0, scale.a, x0, scale.b, "axis"))
    return join(parts)


def _x_axis(
    scale: Scale, ticks: Sequence[float], y0: float, y1: float, fmt: Callable[[float], str]
) -> Markup:
    parts = []
    for t in ticks:
        x = scale(t)
        parts.append(_line(x, y0, x, y1, "grid"))
        parts.append(_text(x, y0 + 16, fmt(t), **{"text-anchor": "middle", "class": "tick"}))
    parts.append(_line(scale.a, y0, scale.b, y0, "axis"))
    return join(parts)


def _rate_fmt(v: float) -> str:
    return f"{v:.1f}" if abs(v * 10 - round(v * 10)) < 1e-9 else f"{v:.2f}"


def _num_fmt(v: float) -> str:
    return f"{v:g}"


def y_scale(ests: Sequence[Estimate | None], rate: bool, a: float, b: float) -> Scale:
    if rate:
        return Scale(0.0, 1.0, a, b)
    vals = [
        v for e in ests if e is not None for v in (e.value, *(interval(e) or ())) if v is not None
    ]
    lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
    pad = (hi - lo) * 0.1 or 1.0
    ticks = nice_ticks(lo - pad, hi + pad)
    return Scale(ticks[0], ticks[-1], a, b)


def _est_title(est: Estimate | None) -> str:
    if est is None or est.value is None:
        return "no value"
    ci = ""
    low, high, wilson = est.shown_interval()
    if low is not None and high is not None:
        ci = f" [{low:.3f}, {high:.3f}]" + (" (Wilson)" if wilson else "")
    return f"{est.value:.3f}{ci}, n = {est.n}"


def interval(est: Estimate) -> tuple[float, float] | None:
    """The interval a figure draws: the bootstrap CI, or Wilson where the bootstrap collapsed."""
    low, high, _ = est.shown_interval()
    return None if low is None or high is None else (low, high)


def _whisker(x: float, scale: Scale, est: Estimate, cap: float = 4.0) -> Markup:
    shown = interval(est)
    if shown is None:
        return Markup("")
    lo, hi = scale(shown[0]), scale(shown[1])
    return join(
        [
            _line(x, lo, x, hi, "whisker"),
            _line(x - cap, lo, x + cap, lo, "whisker"),
            _line(x - cap, hi, x + cap, hi, "whisker"),
        ]
    )


# --- leaderboard error bar -------------------------------------------------------------------


def error_bar_cell(est: Estimate | None, lo: float, hi: float, width: int = 104) -> Markup:
    """A one-row forest plot: the estimate and its CI on a shared [lo, hi] axis."""
    h = 16
    sx = Scale(lo, hi, 4, width - 4)
    parts = [_line(sx(lo), h / 2, sx(hi), h / 2, "eb-axis")]
    if est is not None and est.value is not None:
        if (shown := interval(est)) is not None:
            parts += _ci_bar(sx(shown[0]), sx(shown[1]), h / 2, "eb-ci")
        parts.append(el("circle", {"cx": sx(est.value), "cy": h / 2, "r": 3.5, "class": "eb-pt"}))
    return el(
        "svg",
        {
            "class": "eb",
            "viewBox": f"0 0 {width} {h}",
            "width": width,
            "height": h,
            "role": "img",
            "aria-label": _est_title(est),
        },
        el("title", None, _est_title(est)),
        *parts,
    )


# --- cost vs accuracy scatter ----------------------------------------------------------------


@dataclass(frozen=True)
class ScatterPoint:
    run: str
    system: str
    label: str
    cost: float | None
    est: Estimate | None


def tick_formatter(ticks: Sequence[float]) -> Callable[[float], str]:
    """Fixed decimals, just enough to tell the ticks apart (``0``, ``0.0005``, ``0.0010``)."""
    step = min((b - a for a, b in pairwise(ticks)), default=1.0) or 1.0
    decimals = 0
    while decimals < 8 and abs(round(step, decimals) - step) > step * 1e-6:
        decimals += 1

    def fmt(v: float) -> str:
        return "0" if v == 0 else f"{v:.{decimals}f}"

    return fmt


def _place_labels(
    items: list[tuple[float, float, str]], font: float = 11.0
) -> list[tuple[float, float]]:
    """Greedy label placement to the right of each point, nudged vertically to avoid overlap."""
    placed: list[tuple[float, float, float, float]] = []
    out = []
    for x, y, text in items:
        w = 0.6 * font * len(text)
        for dy in (0, 13, -13, 26, -26, 39, -39, 52, -52):
            box = (x + 9, y + dy - font * 0.8, x + 9 + w, y + dy + font * 0.3)
            if not any(
                box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed
            ):
                break
        placed.append(box)
        out.append((x + 9, y + dy + 4))
    return out


def cost_scatter(fig_id: str, points: Sequence[ScatterPoint], y_title: str, rate: bool) -> Markup:
    """Cost per dialogue (x) against a score with its CI (y), by architecture and model."""
    pts = [p for p in points if p.est is not None and p.est.value is not None]
    systems = list(dict.fromkeys(p.system for p in pts))
    legend_w = 170
    w, h, ml, mr, mt, mb = 700.0, 400.0, 62.0, 24.0 + legend_w, 22.0, 50.0
    costs = [p.cost or 0.0 for p in pts]
    xmax = max(costs, default=0.0)
    xticks = nice_ticks(0.0, xmax if xmax > 0 else 0.01, 5)
    # a little room left of zero, so points at no cost do not sit on the axis
    sx = Scale(-0.04 * xticks[-1], xticks[-1], ml, w - mr)
    sy = y_scale([p.est for p in pts], rate, h - mb, mt)
    yticks = ticks_within(sy.lo, sy.hi, 5)
    pad = (sy.hi - sy.lo) * 0.04  # room so that points at 0 or 1 do not sit on the frame
    sy = Scale(sy.lo - pad, sy.hi + pad, h - mb, mt)
    body: list[Markup] = [
        _y_axis(sy, yticks, ml, w - mr, _rate_fmt if rate else _num_fmt),
        _x_axis(sx, xticks, h - mb, mt, tick_formatter(xticks)),
        _text((ml + w - mr) / 2, h - 10, "Cost per dialogue (USD)", **{"class": "axis-title"}),
        _y_title(f"{y_title} (micro, 95% CI)", mt, h - mb),
    ]
    order = sorted(range(len(pts)), key=lambda i: sy(pts[i].est.value or 0.0))  # type: ignore[union-attr]
    coords = {i: (sx(pts[i].cost or 0.0), sy(pts[i].est.value or 0.0)) for i in order}  # type: ignore[union-attr]
    labels = _place_labels([(coords[i][0], coords[i][1], clip(pts[i].label)) for i in order])
    for (lx, ly), i in zip(labels, order, strict=True):
        p = pts[i]
        assert p.est is not None
        x, y = coords[i]
        k = systems.index(p.system)
        tip = f"{p.run}: {p.system}, {p.label}; cost/dialogue ${p.cost or 0:.5f}; "
        body.append(
            el(
                "g",
                {
                    "class": "pt",
                    "data-run": p.run,
                    "data-href": anchor(run=p.run),
                    "tabindex": "0",
                },
                el("title", None, tip + _est_title(p.est)),
                _whisker(x, sy, p.est),
                marker(shape(k), x, y, 6.0, color(k)),
            )
        )
        body.append(_text(lx, ly, clip(p.label), **{"class": "pt-label"}))
    lx0 = w - legend_w + 6
    body.append(_text(lx0, mt + 4, "Architecture (system)", **{"class": "legend-title"}))
    for k, system in enumerate(systems):
        y = mt + 24 + k * 20
        body.append(marker(shape(k), lx0 + 7, y - 4, 6.0, color(k)))
        body.append(_text(lx0 + 20, y, clip(system, 24), **{"class": "legend"}))
    title = f"Cost per dialogue vs {y_title}"
    return _svg(fig_id, w, h, title, *body)


# --- grouped bars ----------------------------------------------------------------------------


@dataclass(frozen=True)
class BarSeries:
    run: str
    label: str
    values: dict[str, Estimate]


TICK_CHAR_W = 0.62 * 11
"""A generous width of one character of a tick label (11 px sans) for layout estimates."""


def _label_lines(group: str) -> list[str]:
    """A group's label over lines, broken after each ``+`` (``hotel+`` / ``train``)."""
    parts = group.split("+")
    return [p + ("+" if i < len(parts) - 1 else "") for i, p in enumerate(parts)]


def _label_width(text: str) -> float:
    return TICK_CHAR_W * len(text)


def _group_label(x: float, y: float, group: str) -> Markup:
    lines = _label_lines(group)
    spans = [el("tspan", {"x": x, "dy": 0 if i == 0 else 13}, line) for i, line in enumerate(lines)]
    return el("text", {"x": x, "y": y, "class": "tick", "text-anchor": "middle"}, *spans)


def _group_label_rotated(x: float, y: float, group: str) -> Markup:
    """A label read bottom-up, its end just below the axis (for groups too many to label flat)."""
    attrs: dict[str, AttrValue] = {
        "class": "tick",
        "text-anchor": "end",
        "transform": f"rotate(-90 {x:.1f} {y:.1f})",
    }
    return el("text", {"x": x, "y": y, **attrs}, el("title", None, group), clip(group))


def group_bars(
    fig_id: str,
    groups: Sequence[str],
    series: Sequence[BarSeries],
    y_title: str,
    rate: bool,
    noun: str = "group",
) -> Markup:
    """One cluster of bars per group, one bar per run, with CI whiskers."""
    n = max(len(series), 1)
    bar = max(6.0, min(26.0, 90.0 / n))
    cluster = bar * n + 18
    ml, mr, mt, plot_h = 62.0, 16.0, 16.0, 262.0
    w = max(480.0, ml + mr + cluster * len(groups))
    span = (w - ml - mr) / max(len(groups), 1)
    # flat labels (broken after '+') when each fits its cluster, else rotated a quarter turn
    widest = max((_label_width(line) for g in groups for line in _label_lines(g)), default=0.0)
    flat = widest <= span - 6
    tallest = max((_label_width(clip(g)) for g in groups), default=0.0)
    mb = 62.0 if flat else 36.0 + tallest
    h = mt + plot_h + mb
    ests = [s.values.get(g) for s in series for g in groups]
    sy = y_scale(ests, rate, h - mb, mt)
    yticks = ticks_within(sy.lo, sy.hi, 5)
    body: list[Markup] = [
        _y_axis(sy, yticks, ml, w - mr, _rate_fmt if rate else _num_fmt),
        _line(ml, h - mb, w - mr, h - mb, "axis"),
        _y_title(f"{y_title} (95% CI)", mt, h - mb),
        _text((ml + w - mr) / 2, h - 8, noun[:1].upper() + noun[1:], **{"class": "axis-title"}),
    ]
    for gi, group in enumerate(groups):
        cx = ml + span * (gi + 0.5)
        if flat:
            body.append(_group_label(cx, h - mb + 16, group))
        else:
            body.append(_group_label_rotated(cx + 4, h - mb + 8, group))
        x0 = cx - bar * n / 2
        for si, s in enumerate(series):
            est = s.values.get(group)
            if est is None or est.value is None:
                continue
            x = x0 + si * bar
            top = sy(est.value)
            base = sy(max(sy.lo, 0.0))
            body.append(
                el(
                    "g",
                    {
                        "class": "bar",
                        "data-run": s.run,
                        "data-group": group,
                        "data-href": anchor(run=s.run, group=group),
                    },
                    el("title", None, f"{s.label}, {group}: {_est_title(est)}"),
                    el(
                        "rect",
                        {
                            "x": x + 1,
                            "y": min(top, base),
                            "width": bar - 2,
                            "height": max(abs(base - top), 0.5),
                            "fill": color(si),
                        },
                    ),
                    _whisker(x + bar / 2, sy, est, cap=min(4.0, bar / 3)),
                )
            )
    return _svg(fig_id, w, h, f"{y_title} by {noun}", *body)


def _legend(entries: Sequence[tuple[str, str]]) -> Markup:
    """An HTML legend: a colour swatch and a label per ``(label, colour)``."""
    items = [
        el(
            "span",
            {"class": "legend-item"},
            el("span", {"class": "swatch", "style": f"background:{colour}"}),
            label,
        )
        for label, colour in entries
    ]
    return el("div", {"class": "legend-row"}, *items)


def legend_row(labels: Sequence[str]) -> Markup:
    """An HTML legend matching the series colours of :func:`group_bars`."""
    return _legend([(label, color(i)) for i, label in enumerate(labels)])


# --- stacked bars (failure taxonomy) ---------------------------------------------------------

_FALLBACK = ("#666666", "#888888", "#AAAAAA", "#444444")


def shade(colour: str, k: int) -> str:
    """The ``k``-th variant of a ``#rrggbb`` colour: itself, then alternately darker and
    lighter (several values sharing one declared colour stay apart)."""
    if k == 0 or not (colour.startswith("#") and len(colour) == 7):
        return colour
    rgb = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    step = 0.22 * ((k + 1) // 2)
    target = 0 if k % 2 else 255
    mixed = [round(c + (target - c) * min(step, 0.8)) for c in rgb]
    return "#" + "".join(f"{c:02X}" for c in mixed)


def class_colours(
    classes: Sequence[str], declared: Callable[[str], tuple[str, str] | None]
) -> dict[str, str]:
    """A colour per class: ``declared(name)`` gives (colour, group) for known values (values
    of one group get shades of its colour); the others get greys."""
    out: dict[str, str] = {}
    used: dict[str, int] = {}
    unknown = 0
    for name in classes:
        found = declared(name)
        if found is None:
            out[name] = _FALLBACK[unknown % len(_FALLBACK)]
            unknown += 1
            continue
        colour, group = found
        out[name] = shade(colour, used.get(group, 0))
        used[group] = used.get(group, 0) + 1
    return out


@dataclass(frozen=True)
class StackRow:
    run: str
    counts: dict[str, int]


def stacked_bars(
    fig_id: str,
    label: str,
    classes: Sequence[str],
    rows: Sequence[StackRow],
    colours: Mapping[str, str],
) -> Markup:
    """One horizontal 100% bar per run, one segment per class (share of episodes)."""
    ml, mr, mt, mb = 150.0, 20.0, 10.0, 44.0
    w = 720.0
    bar_h = 20.0
    h = mt + mb + len(rows) * (bar_h + 10)
    sx = Scale(0.0, 1.0, ml, w - mr)
    body: list[Markup] = [
        _x_axis(sx, nice_ticks(0, 1, 5), h - mb, mt, lambda v: f"{v:.0%}"),
        _text((ml + w - mr) / 2, h - 8, "Share of episodes", **{"class": "axis-title"}),
    ]
    for ri, row in enumerate(rows):
        y = mt + ri * (bar_h + 10) + 4
        total = sum(row.counts.values()) or 1
        body.append(
            _text(
                ml - 8,
                y + bar_h * 0.7,
                clip(row.run, 22),
                **{"class": "tick", "text-anchor": "end"},
            )
        )
        x = 0.0
        for cls in classes:
            count = row.counts.get(cls, 0)
            if not count:
                continue
            share = count / total
            body.append(
                el(
                    "g",
                    {
                        "class": "seg",
                        "data-run": row.run,
                        "data-class": cls,
                        "data-href": anchor(run=row.run, label=f"{label}:{cls}"),
                    },
                    el("title", None, f"{row.run}: {cls} {count} of {total} ({share:.1%})"),
                    el(
                        "rect",
                        {
                            "x": sx(x),
                            "y": y,
                            "width": max(sx(x + share) - sx(x), 0.5),
                            "height": bar_h,
                            "fill": colours.get(cls, _FALLBACK[0]),
                        },
                    ),
                )
            )
            x += share
    return _svg(fig_id, w, h, f"{label} per run", *body)


def class_legend(
    classes: Sequence[str], colours: Mapping[str, str], titles: Mapping[str, str] | None = None
) -> Markup:
    """An HTML legend matching the class colours of :func:`stacked_bars`."""
    names = titles or {}
    return _legend([(names.get(c, c), colours.get(c, _FALLBACK[0])) for c in classes])


# --- forest plot (panels) -------------------------------------------------------------------


@dataclass(frozen=True)
class ForestRow:
    label: str
    est: Estimate | None
    run: str | None = None


def forest(fig_id: str, rows: Sequence[ForestRow], x_title: str, rate: bool) -> Markup:
    """One row per item: point estimate and 95% CI on a shared horizontal axis."""
    ml, mr, mt, mb = 190.0, 24.0, 10.0, 44.0
    w, row_h = 640.0, 24.0
    h = mt + mb + len(rows) * row_h
    ests = [r.est for r in rows]
    if rate:
        sx = Scale(0.0, 1.0, ml, w - mr)
    else:
        tmp = y_scale(ests, False, ml, w - mr)
        sx = Scale(tmp.lo, tmp.hi, ml, w - mr)
    xticks = ticks_within(sx.lo, sx.hi, 5)
    body: list[Markup] = [
        _x_axis(sx, xticks, h - mb, mt, _rate_fmt if rate else _num_fmt),
        _text((ml + w - mr) / 2, h - 8, f"{x_title} (95% CI)", **{"class": "axis-title"}),
    ]
    for i, row in enumerate(rows):
        y = mt + i * row_h + row_h / 2
        body.append(
            _text(ml - 8, y + 4, clip(row.label), **{"class": "tick", "text-anchor": "end"})
        )
        est = row.est
        if est is None or est.value is None:
            continue
        parts: list[Markup] = [el("title", None, f"{row.label}: {_est_title(est)}")]
        if (shown := interval(est)) is not None:
            parts += _ci_bar(sx(shown[0]), sx(shown[1]), y, "whisker")
        parts.append(marker("circle", sx(est.value), y, 5.0, color(0)))
        attrs: dict[str, AttrValue] = {"class": "fpt"}
        if row.run:
            attrs.update({"data-run": row.run, "data-href": anchor(run=row.run)})
        body.append(el("g", attrs, *parts))
    return _svg(fig_id, w, h, x_title, *body)
