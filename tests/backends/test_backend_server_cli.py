"""``python -m todeval.testing.openai_server`` as a command."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

from openai import OpenAI


def test_server_prints_its_port_and_serves_a_script(tmp_path: Path) -> None:
    script = tmp_path / "replies.jsonl"
    script.write_text('"first"\n{"text": "second"}\n')
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "todeval.testing.openai_server",
            "--port",
            "0",
            "--script",
            str(script),
            "--models",
            "m1,m2",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        client = OpenAI(api_key="unused", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
        assert [m.id for m in client.models.list()] == ["m1", "m2"]
        reply = client.chat.completions.create(
            model="m1", messages=[{"role": "user", "content": "hi"}]
        )
        assert reply.choices[0].message.content == "first"
        assert reply.usage is not None and reply.usage.prompt_tokens > 0
        client.close()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stats") as response:
            assert json.loads(response.read())["requests"] == 1
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


def test_bad_script_is_a_one_line_error(tmp_path: Path) -> None:
    script = tmp_path / "bad.json"
    script.write_text("{")
    done = subprocess.run(
        [sys.executable, "-m", "todeval.testing.openai_server", "--script", str(script)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 3
    assert done.stderr.strip().count("\n") == 0
    assert "not valid JSON" in done.stderr
