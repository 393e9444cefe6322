"""The submission archive: a run directory's files and an index of them, in one ``.tar.gz``.

Layout::

    submission.json          the index (:class:`SubmissionIndex`): format, todeval version,
                             benchmark, the system's declared description and model, the run's
                             config and task-set hashes, every file's SHA-256 and size
    run/manifest.json        the run directory's files, as the run wrote them
    run/episodes.jsonl
    run/summary.json
    run/<other files>        a per-run key file, a prediction file, ...

The archive is deterministic: members in name order, no timestamps, owners or modes of the
machine that wrote it (gzip's header time 0), so preparing the same run twice gives the same
bytes. Reading it extracts only regular files with plain names (no links, no paths out of the
folder), hashing each as it is written.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from todeval.errors import BadInputError

FORMAT: Literal["todeval-submission"] = "todeval-submission"
FORMAT_VERSION: Literal[1] = 1
INDEX = "submission.json"
RUN_FOLDER = "run"
SUFFIX = ".tar.gz"
CHUNK = 1 << 20
MAX_MEMBERS = 64
"""More members than a run directory holds: the archive is not a submission."""
MAX_BYTES = 16 << 30
"""At most this much is extracted (a compressed archive cannot fill the disk)."""


class SubmittedFile(BaseModel):
    """One file of the run, as prepared."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="the file's name in the run directory")
    sha256: str = Field(description="SHA-256 of its bytes, hex")
    size: int = Field(ge=0, description="bytes")


class SystemDeclaration(BaseModel):
    """What the submitter says the system under test is."""

    model_config = ConfigDict(extra="forbid")

    description: str = Field(description="the submitter's description of the system")
    model: str | None = Field(None, description="the model it runs on, as the submitter names it")


class SubmissionIndex(BaseModel):
    """``submission.json``: what the archive holds."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["todeval-submission"] = FORMAT
    format_version: Literal[1] = FORMAT_VERSION
    todeval_version: str = Field(description="the todeval that prepared the archive")
    benchmark: str
    system: SystemDeclaration
    config_hash: str = Field(description="the run manifest's config hash")
    task_set_hash: str = Field(description="the run manifest's task-set hash")
    scorer_version: str | None = Field(
        None, description="the benchmark's scorer version the records were scored by"
    )
    n_episodes: int = Field(ge=0)
    files: list[SubmittedFile] = Field(description="the run's files, by name")


def sha256_of(path: Path) -> tuple[str, int]:
    """(hex digest, size) of a file, read in chunks."""
    h = hashlib.sha256()
    size = 0
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
            size += len(chunk)
    return h.hexdigest(), size


def _member(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mtime = 0
    info.mode = 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def write_archive(out: Path, index: SubmissionIndex, run_dir: Path) -> None:
    """Write ``index`` and the run's files it lists to ``out`` (atomically: a temporary file
    renamed into place)."""
    body = (index.model_dump_json(indent=2) + "\n").encode()
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with (
            tmp.open("wb") as raw,
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz,
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
        ):
            tar.addfile(_member(INDEX, len(body)), io.BytesIO(body))
            for entry in sorted(index.files, key=lambda f: f.name):
                with (run_dir / entry.name).open("rb") as f:
                    tar.addfile(_member(f"{RUN_FOLDER}/{entry.name}", entry.size), f)
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise BadInputError(f"{out}: cannot write the archive ({exc.strerror or exc})") from None


@dataclass
class OpenedArchive:
    """An archive read into a folder: its index, the run folder and what does not add up."""

    index: SubmissionIndex
    run_dir: Path
    integrity: list[str]
    """files missing, added or changed since the archive was prepared (one line each)"""


def _members(tar: tarfile.TarFile, path: Path) -> Iterator[tarfile.TarInfo]:
    for count, member in enumerate(tar, 1):
        if count > MAX_MEMBERS:
            raise BadInputError(f"{path}: more than {MAX_MEMBERS} files: not a submission")
        if member.isdir():
            continue
        if not member.isfile():
            raise BadInputError(f"{path}: {member.name!r} is not a regular file")
        yield member


def _copy(source: IO[bytes], target: Path, budget: int) -> tuple[str, int]:
    h = hashlib.sha256()
    size = 0
    with target.open("wb") as out:
        while chunk := source.read(CHUNK):
            h.update(chunk)
            size += len(chunk)
            if size > budget:
                raise BadInputError(f"more than {MAX_BYTES >> 30} GiB inside: not a submission")
            out.write(chunk)
    return h.hexdigest(), size


def open_archive(path: Path, folder: Path) -> OpenedArchive:
    """Read the archive at ``path`` into ``folder`` (a fresh, empty folder).

    A file that is not a gzip-compressed tar, holds links or odd names, or has no valid
    ``submission.json`` is a :class:`BadInputError`; files changed, missing or added since it
    was prepared are listed in ``integrity`` (the verdict refuses them)."""
    if not path.is_file():
        why = "not a regular file" if path.exists() else "no such file"
        raise BadInputError(f"{path}: {why}")
    run_dir = folder / RUN_FOLDER
    run_dir.mkdir(parents=True, exist_ok=True)
    index_bytes: bytes | None = None
    found: dict[str, tuple[str, int]] = {}
    try:
        with tarfile.open(path, mode="r:gz") as tar:
            for member in _members(tar, path):
                name = member.name.removeprefix("./")
                source = tar.extractfile(member)
                if source is None:  # pragma: no cover - isfile() members always have data
                    raise BadInputError(f"{path}: cannot read {name!r}")
                if name == INDEX:
                    if index_bytes is not None:
                        raise BadInputError(f"{path}: two {INDEX} files")
                    index_bytes = source.read(1 << 20)
                    continue
                folder_name, _, file_name = name.partition("/")
                plain = file_name and "/" not in file_name and file_name not in (".", "..")
                if folder_name != RUN_FOLDER or not plain or file_name.startswith("."):
                    raise BadInputError(f"{path}: unexpected member {name!r}")
                if file_name in found:
                    raise BadInputError(f"{path}: two files named {name!r}")
                budget = MAX_BYTES - sum(size for _, size in found.values())
                found[file_name] = _copy(source, run_dir / file_name, budget)
    except (tarfile.TarError, EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise BadInputError(f"{path}: not a submission archive ({exc})") from None
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read the archive ({exc.strerror or exc})") from None
    if index_bytes is None:
        raise BadInputError(f"{path}: no {INDEX}: not a submission archive")
    try:
        index = SubmissionIndex.model_validate_json(index_bytes)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the file"
        raise BadInputError(f"{path}: {INDEX}: {where}: {first['msg']}") from None
    integrity: list[str] = []
    listed = {f.name: f for f in index.files}
    for name, entry in sorted(listed.items()):
        if name not in found:
            integrity.append(f"{name}: listed in {INDEX} but missing from the archive")
        elif found[name] != (entry.sha256, entry.size):
            integrity.append(
                f"{name}: changed since the archive was prepared (SHA-256 "
                f"{entry.sha256[:12]} listed, {found[name][0][:12]} found)"
            )
    for name in sorted(set(found) - set(listed)):
        integrity.append(f"{name}: in the archive but not listed in {INDEX}")
    return OpenedArchive(index=index, run_dir=run_dir, integrity=integrity)


__all__ = [
    "FORMAT",
    "INDEX",
    "SUFFIX",
    "OpenedArchive",
    "SubmissionIndex",
    "SubmittedFile",
    "SystemDeclaration",
    "open_archive",
    "sha256_of",
    "write_archive",
]
