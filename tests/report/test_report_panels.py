"""Panel sections of the report for a benchmark other than booking: the toy's panel.json and
its detected panels, titled from the toy's profile (Guesser, Host, Found)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.report.toy_panel import toy_panel
from todeval.report import build_html, load_inputs


@pytest.fixture(scope="module")
def panel_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return toy_panel(tmp_path_factory.mktemp("toy") / "toy-panel")


def _section(html: str) -> str:
    """The panels section's body (after its heading, which the page names)."""
    start = html.index("</h2>", html.index('<section id="panels">'))
    return html[start : html.index("</section>", start)]


def test_toy_panel_json_is_shown_with_toy_titles(panel_dir: Path) -> None:
    inputs = load_inputs([panel_dir])
    [item] = inputs.panels
    assert item.missing == [] and len(inputs.runs) == 4
    assert item.run_keys["random|vague"] == "random__vague"
    panels = _section(build_html(inputs))
    assert "Panel toy-panel (panel.json): 2 guesser(s) × 2 hosts" in panels
    assert "The same guesser against several hosts." in panels
    assert 'id="panel-toy-panel-spread"' in panels and 'id="panel-toy-panel-tau"' in panels
    assert '<th class="txt">Guesser</th>' in panels and "best / worst host" in panels
    assert "Found (toy.success) per guesser and host" in panels
    assert '<a href="#run=random__vague" class="cell-link">' in panels
    assert "<td>" not in panels  # every cell is classed
    assert "random &gt; bisect" in panels  # the vague host's ranking
    assert "Top guesser changes across hosts: </b>yes" in panels
    assert "simulator" not in panels.lower() and "system" not in panels.lower()


def test_toy_runs_differing_only_in_host_are_detected(panel_dir: Path, tmp_path: Path) -> None:
    for name in ("bisect__rule", "bisect__vague", "random__rule"):
        shutil.copytree(panel_dir / name, tmp_path / name)  # loose runs, no panel.json
    panels = _section(build_html(load_inputs(sorted(tmp_path.iterdir()))))
    assert 'id="panel-auto-0"' in panels and 'id="panel-auto-1"' not in panels
    assert "Guesser bisect: 2 hosts" in panels
    assert '<th class="txt">Host</th>' in panels and "Found (micro)" in panels
    assert "Spread across hosts: </b>max − min = 1.000" in panels
