"""Finding 15 of issue 16: every plug-in registers without importing its heavy parts, so
``todeval --help`` stays fast. Checked in a fresh interpreter (other tests' imports would hide
a regression)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("numpy", "sacrebleu", "scipy", "pandas", "sacremoses", "rapidfuzz", "jsonschema")

_PROBE = """
import json, sys
{setup}
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


def _loaded_after(setup: str) -> list[str]:
    code = _PROBE.format(setup=setup, heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_discover_imports_no_heavy_library() -> None:
    assert _loaded_after("from todeval.registry import discover\nr = discover()") == []


def test_discover_builds_no_pydantic_model_until_profiles_are_read() -> None:
    setup = (
        "from todeval.registry import discover\nr = discover()\n"
        "assert 'pydantic' not in sys.modules, sorted(m for m in sys.modules if 'todeval' in m)\n"
        "assert {'booking', 'incar', 'multiwoz'} <= set(r.profiles)\n"
        "assert r.profiles['booking'].benchmark == 'booking'"
    )
    assert _loaded_after(setup) == []


def test_help_imports_no_heavy_library() -> None:
    setup = (
        "import contextlib, io\nfrom todeval.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n        main(['--help'])\n    except SystemExit:\n        pass"
    )
    assert _loaded_after(setup) == []


def test_help_builds_no_pydantic_model() -> None:
    setup = (
        "import contextlib, io\nfrom todeval.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n        main(['--help'])\n    except SystemExit:\n        pass\n"
        "assert 'pydantic' not in sys.modules, sorted(m for m in sys.modules if 'todeval' in m)"
    )
    assert _loaded_after(setup) == []


@pytest.mark.parametrize("command", [["score", "--help"], ["run", "--help"]])
def test_group_help_imports_no_heavy_library(command: list[str]) -> None:
    setup = (
        "import contextlib, io\nfrom todeval.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    try:\n        main({command!r})\n    except SystemExit:\n        pass"
    )
    assert _loaded_after(setup) == []


def test_public_scorer_api_still_imports_on_use() -> None:
    from todeval.scoring import incar, multiwoz

    assert callable(incar.evaluate) and callable(multiwoz.evaluate)
    assert incar.SPLITS and multiwoz.SCHEME
    with pytest.raises(AttributeError):
        _ = incar.no_such_name  # type: ignore[attr-defined]


def test_an_offline_run_does_not_import_the_openai_sdk(tmp_path: Path) -> None:
    """Issue 27.10: re-running a complete offline run cost 2.5-3.8 s CPU through the SDK."""
    code = (
        "import sys\n"
        "from todeval.cli import main\n"
        f"rc = main(['run', 'booking', '--limit', '2', '--quiet', '--out', {str(tmp_path)!r}])\n"
        "assert rc == 0, rc\n"
        "print('openai' in sys.modules, 'mcp' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1].split() == ["False", "False"]


def test_a_run_directory_reads_without_the_engine(tmp_path: Path) -> None:
    # issue 28: the run-directory format is readable without importing what writes it
    from todeval.cli import main

    run = tmp_path / "run"
    assert main(["run", "toy", "--limit", "2", "--out", str(run), "--quiet"]) == 0
    code = (
        "import json, sys\n"
        "from pathlib import Path\nfrom todeval.runner.store import RunDirectory\n"
        f"store = RunDirectory(Path({str(run)!r}))\n"
        "assert store.read_manifest().benchmark == 'toy'\n"
        "assert store.read_summary() is not None and len(list(store.iter_episodes())) == 2\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('todeval.'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    engine = [m for m in loaded if m.startswith(("todeval.runner.", "todeval.backends"))]
    assert engine == ["todeval.runner.store"], loaded
