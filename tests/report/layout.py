"""Layout measurements of a rendered report page, taken with JavaScript in the browser.

Each function returns the offenders it finds (empty when the layout is right), so a test can
print what is wrong instead of a bare ``False``.
"""

from __future__ import annotations

from typing import Any

# Elements sticking out of the viewport, unless a box that clips or scrolls horizontally
# (overflow-x other than visible) holds them: such a box is checked itself.
_OVERFLOW = """
const vw = document.documentElement.clientWidth;
const out = [];
const clipped = (e) => {
  for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
    if (getComputedStyle(p).overflowX !== 'visible') return true;
  }
  return false;
};
for (const e of document.body.querySelectorAll('*')) {
  const r = e.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) continue;
  if ((r.right > vw + 0.5 || r.left < -0.5) && !clipped(e)) {
    const cls = typeof e.className === 'string' ? e.className : e.className.baseVal;
    const where = `[${Math.round(r.left)}, ${Math.round(r.right)}]`;
    out.push(`${e.tagName.toLowerCase()}#${e.id}.${cls} ${where}`);
  }
}
const doc = document.documentElement;
if (doc.scrollWidth > doc.clientWidth) {
  out.push(`page scrolls: ${doc.scrollWidth} > ${doc.clientWidth}`);
}
return out;
"""

# Pairs of text elements in one SVG figure whose bounding boxes overlap (rotated text measured
# by its screen box).
_OVERLAPS = """
const out = [];
for (const svg of document.querySelectorAll('svg.fig')) {
  const boxes = [...svg.querySelectorAll('text')]
    .map((t) => [t.textContent, t.getBoundingClientRect()])
    .filter(([, r]) => r.width > 0 && r.height > 0);
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, ra] = boxes[i], [b, rb] = boxes[j];
      const dx = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
      const dy = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
      if (dx > 0.5 && dy > 0.5) out.push(`${svg.id}: '${a}' / '${b}'`);
    }
  }
}
return out;
"""

# Numbers in the open transcript's metric cells laid out over more than one line.
_WRAPPED = """
const out = [];
const cells = document.querySelectorAll('#ep-detail .metrics dd');
for (const dd of cells) {
  const text = dd.textContent.trim();
  if (!/^[-+]?[0-9][0-9.,e+-]*$/i.test(text)) continue;
  const style = getComputedStyle(dd);
  const line = parseFloat(style.lineHeight) || 1.2 * parseFloat(style.fontSize);
  const h = dd.getBoundingClientRect().height;
  if (h > 1.5 * line) out.push(`${text}: ${h.toFixed(1)} px tall, line ${line.toFixed(1)} px`);
  const box = dd.closest('.box').getBoundingClientRect();
  if (dd.getBoundingClientRect().right > box.right + 0.5) out.push(`${text}: out of its box`);
}
return [cells.length, out];
"""


def overflowing(driver: Any) -> list[str]:
    """Elements wider than the viewport outside a horizontal-scroll box."""
    return list(driver.execute_script(_OVERFLOW))


def overlapping_labels(driver: Any) -> list[str]:
    """Overlapping text boxes in any SVG figure."""
    return list(driver.execute_script(_OVERLAPS))


def wrapped_numbers(driver: Any) -> tuple[int, list[str]]:
    """(number of metric cells in the open transcript, the numbers among them that wrap)."""
    n, bad = driver.execute_script(_WRAPPED)
    return int(n), list(bad)


# Tables whose caption carries the Wilson note, against tables with a cell marked W.
_WILSON = """
const out = [];
let marked = 0, plain = 0;
for (const t of document.querySelectorAll('table.lb')) {
  const w = [...t.querySelectorAll('.ci')].some((c) => /\\]W$/.test(c.textContent.trim()));
  const note = !!t.caption && t.caption.textContent.includes('Wilson score interval');
  if (w) marked++; else plain++;
  const name = t.id || t.caption.textContent.slice(0, 40);
  if (w !== note) out.push(`${name}: W cell ${w}, note ${note}`);
}
return [marked, plain, out];
"""


def wilson_mismatches(driver: Any) -> tuple[int, int, list[str]]:
    """(tables with a W cell, tables without, tables whose Wilson note does not match)."""
    marked, plain, bad = driver.execute_script(_WILSON)
    return int(marked), int(plain), list(bad)


# Tables that scroll sideways: a table (or a box holding one) whose content is wider than the
# box (overflow-x auto or scroll). Hidden tables (a closed event, another section on the
# episode page) are not laid out and not counted.
_SIDEWAYS = """
const out = [];
for (const t of document.querySelectorAll('table')) {
  const r = t.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) continue;
  for (let e = t; e && e !== document.body; e = e.parentElement) {
    const o = getComputedStyle(e).overflowX;
    if ((o === 'auto' || o === 'scroll') && e.scrollWidth > e.clientWidth + 1) {
      const cls = typeof e.className === 'string' ? e.className : '';
      out.push(`${t.id || t.className || 'table'} in ${e.tagName.toLowerCase()}.${cls}: ` +
               `${e.scrollWidth} > ${e.clientWidth}`);
      break;
    }
  }
}
return out;
"""


def sideways_tables(driver: Any) -> list[str]:
    """Tables that scroll sideways in their box (what a reader has to scroll to read)."""
    return list(driver.execute_script(_SIDEWAYS))
