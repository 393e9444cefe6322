"""The fenced code blocks of README.md and docs/*.md, with what each one promises.

A block's info string is ``<language> [tag] [key=value]``; GitHub renders the language and
ignores the rest. What the tests do with each kind:

=====================  ===========================================================================
``bash`` / ``sh``      runs as written, offline, in the document's own temporary directory
                       (``pip install`` lines are skipped: the test runs in the installed package);
                       a command ending in ``&`` is a server: the block goes on once it printed a
                       line (its port, its ``ready`` line), and it is stopped when the block ends
``bash model``         needs something the test cannot bring (a model endpoint, a live server, a
                       person, files of yours): every ``todeval`` command in it must parse
``bash ci``            the project's own test and lint commands: run by ``.ci/run``, not here
``python``             runs as written (top-level ``await`` allowed)
``python file=PATH``   written to PATH in the document's directory before its shell blocks run
``python fragment``    names defined elsewhere: compiles, and its imports run
``python excerpt``     ``# <path>`` comments name files: every code line is in its file, in
                       order (``...`` elides)
``json`` / ``toml``    parses
``text`` / ``console`` output or a usage synopsis: not code
=====================  ===========================================================================
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```[ \t]*$", re.S | re.M)
LANGUAGES = {"bash", "sh", "python", "json", "toml", "text", "console"}
TAGS = {"model", "ci", "fragment", "excerpt"}


@dataclass(frozen=True)
class Block:
    document: Path
    line: int
    language: str
    tags: frozenset[str]
    options: dict[str, str] = field(hash=False)
    code: str

    @property
    def id(self) -> str:
        return f"{self.document.relative_to(ROOT)}:{self.line}"


def blocks(document: Path) -> list[Block]:
    text = document.read_text(encoding="utf-8")
    out = []
    for match in _FENCE.finditer(text):
        words = match.group(1).split()
        language = words[0] if words else ""
        tags = frozenset(w for w in words[1:] if "=" not in w)
        options = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        line = text.count("\n", 0, match.start()) + 1
        out.append(Block(document, line, language, tags, options, match.group(2)))
    return out


def all_blocks() -> list[Block]:
    return [b for d in DOCUMENTS for b in blocks(d)]


def commands(code: str) -> list[str]:
    """The shell commands of a block: continuation lines joined, comments and blanks dropped."""
    joined = re.sub(r"\\\n\s*", " ", code)
    out = []
    for raw in joined.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        out.append(line)
    return out


_WAIT_FOR_LINE = """_first_line() {  # $1: a server's stdout file, $2: its pid
  for _ in $(seq 1800); do
    [ -s "$1" ] && return 0
    kill -0 "$2" 2>/dev/null || break
    sleep 0.1
  done
  echo "no line from: $3" >&2; cat "$1.err" >&2; return 1
}"""


def shell_script(lines: list[str]) -> str:
    """A block's commands as one script: each ``... &`` command (a pipeline too) started with
    its output in files (``.server-N``), then waited for until it printed a line (3 minutes at
    most)."""
    out = []
    for line in lines:
        if not (line.endswith("&") and not line.endswith("&&")):
            out.append(line)
            continue
        n = sum(1 for o in out if o.startswith("_first_line "))
        command = line[:-1].rstrip()
        files = f".server-{n}"
        # grouped, so the redirections apply to the whole command: a pipeline (``server | tee
        # FILE``) keeps its pipe, its first command reads /dev/null, its last writes the file
        out.append(f"{{ {command}; }} > {files} 2> {files}.err < /dev/null &")
        out.append(f"_first_line {files} $! {shlex.quote(command)}")
    if len(out) > len(lines):
        out.insert(0, _WAIT_FOR_LINE)
    return "\n".join(out)


_PATH_COMMENT = re.compile(r"^#\s*([\w./-]+\.py)\b")


def excerpt_sections(code: str) -> list[tuple[str, list[str]]]:
    """(file, code lines) for each ``# <path>`` comment of an excerpt, in order.

    Code lines are stripped, without comments; a line that is ``...`` is dropped, and a line
    containing ``...`` stands for any source line starting with the text before it.
    """
    sections: list[tuple[str, list[str]]] = []
    for raw in code.splitlines():
        stripped = raw.strip()
        found = _PATH_COMMENT.match(stripped)
        if found:
            sections.append((found.group(1), []))
            continue
        line = raw.split("  #")[0].strip()
        if line and not line.startswith("#") and line != "..." and sections:
            sections[-1][1].append(line)
    return sections


def matches(excerpt_line: str, source_line: str) -> bool:
    if "..." in excerpt_line:
        head = excerpt_line.split("...")[0]
        return bool(head) and source_line.startswith(head)
    return excerpt_line == source_line
