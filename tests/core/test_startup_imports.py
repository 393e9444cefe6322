"""Start-up stays light: an offline run never imports the OpenAI SDK (issue 27.10)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_an_offline_run_does_not_import_the_openai_sdk(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from todeval.cli import main\n"
        f"rc = main(['run', 'booking', '--limit', '2', '--quiet', '--out', {str(tmp_path)!r}])\n"
        "assert rc == 0, rc\n"
        "print('openai' in sys.modules, 'mcp' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1].split() == ["False", "False"]
