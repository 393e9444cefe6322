"""Reading what a report shows: run directories, panels and corpus-score summaries.

Inputs are given explicitly (``todeval report A B panel/ scores.json``) or found under a
directory (``todeval view RUNS_DIR``):

* a **run directory** holds ``manifest.json`` (and ``episodes.jsonl``, ``summary.json``);
* a **panel directory** holds ``panel.json``; its runs are expanded (paths relative to it);
* a **JSON file** is a corpus-scoring summary (``todeval score ... -o X.json``) or a
  ``panel.json``.

A run that is still in progress (its last session has not ended) or has no summary yet gets a
summary computed here from its finished episodes, marked provisional.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic_core import from_json

from todeval.core import safejson
from todeval.core.identity import RoleIdentity
from todeval.core.records import EpisodeRecord, Manifest, Summary
from todeval.core.userfiles import read_user_text
from todeval.errors import BadInputError, TodevalError
from todeval.panels.model import PANEL_FILE, PanelSummary, is_panel_data, read_panel
from todeval.registry import discover
from todeval.report._transcripts import (
    DEFAULT_TRANSCRIPTS,
    TranscriptCap,
    TranscriptPicker,
    Transcripts,
    cap_value,
)
from todeval.report.explain import load_explainer
from todeval.results.profile import ProfileBook
from todeval.runner.naming import slug
from todeval.runner.store import MANIFEST, RunDirectory, line_key
from todeval.runner.summary import summarize

if TYPE_CHECKING:
    from todeval.review.live import RunReviews


@dataclass
class RunInput:
    key: str
    path: Path
    manifest: Manifest
    summary: Summary
    n_episodes: int
    """Episodes on disk (complete ones, the last line per task and trial)."""
    transcripts: Sequence[EpisodeRecord] = field(default_factory=list)
    """The episodes a static report embeds (a bounded set, see ``_transcripts``; read from
    disk, a :class:`Transcripts`: their page views are ready to embed)."""
    provisional: bool = False
    panel: str | None = None
    task_values: Mapping[str, float] = field(default_factory=dict)
    """Each task's mean of the benchmark's primary metric (for rank intervals); empty when the
    episodes were not read (``todeval view``)."""
    reviews: RunReviews | str | None = None
    """Who failed, gathered while the episodes were read (the stored verdicts, the reviewer's
    for episodes without one): ``None`` when not gathered (no reviewer, or not asked for), the
    one-line error when the benchmark's reviewer could not be loaded."""

    @property
    def config(self) -> dict[str, Any]:
        return self.manifest.config

    @property
    def roles(self) -> dict[str, RoleIdentity]:
        """Who played each role (the manifest's typed identity)."""
        return self.manifest.roles

    def role_label(self, role: str) -> str:
        """``player (model)`` of a role, or ``–``."""
        identity = self.manifest.roles.get(role)
        return identity.label if identity is not None else "–"

    def model_name(self, role: str) -> str | None:
        """The display name of a role's model (models-file name or spec), if it has one."""
        identity = self.manifest.roles.get(role)
        if identity is None:
            return None
        return identity.model_name or identity.model

    @property
    def task_set(self) -> str:
        return self.manifest.selection.task_set or "–"

    @property
    def selection_label(self) -> str:
        return self.manifest.selection.label

    @property
    def protocol(self) -> str | None:
        return self.manifest.protocol

    @property
    def description(self) -> str:
        """Every role in one line: ``system: rule · user: llm (qwen)``."""
        return " · ".join(f"{r}: {i.label}" for r, i in self.manifest.roles.items()) or "–"


@dataclass
class ScoreInput:
    """A corpus-scoring summary file (``todeval score <scorer> ... -o X.json``)."""

    key: str
    path: Path
    summary: Summary
    source: str = ""
    scheme: str = ""
    warnings: list[str] = field(default_factory=list)


@dataclass
class PanelInput:
    key: str
    path: Path
    panel: PanelSummary
    run_keys: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)


@dataclass
class ReportInputs:
    runs: list[RunInput] = field(default_factory=list)
    panels: list[PanelInput] = field(default_factory=list)
    scores: list[ScoreInput] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    profiles: ProfileBook = field(default_factory=ProfileBook)
    transcripts: TranscriptCap = DEFAULT_TRANSCRIPTS
    """The per-run cap the runs' transcripts were picked with."""


class _Keys:
    """Assigns short, unique, URL-safe keys (the directory name, qualified on a clash)."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def take(self, path: Path) -> str:
        candidates = [slug(path.stem if path.is_file() else path.name)]
        if path.parent.name:
            candidates.append(slug(f"{path.parent.name}--{candidates[0]}"))
        for key in candidates:
            if key not in self.used:
                self.used.add(key)
                return key
        n = 2
        while f"{candidates[-1]}-{n}" in self.used:
            n += 1
        key = f"{candidates[-1]}-{n}"
        self.used.add(key)
        return key


_HEAD_SKIPS = ("events", "details")
_HEAD_FIELDS: dict[str, Any] = {
    k: (f.annotation, f) for k, f in EpisodeRecord.model_fields.items() if k not in _HEAD_SKIPS
}
_FIELD_ORDER = tuple(EpisodeRecord.model_fields)  # (a record serialises in its dict's order)
_Head: type[BaseModel] = create_model(  # an episode line without its events and details
    "EpisodeHead", __config__=ConfigDict(extra="ignore"), **_HEAD_FIELDS
)


def head_record(line: bytes) -> EpisodeRecord:
    """An episode line validated without its events and details (a :class:`ValidationError`
    or :class:`ValueError` if the rest is not a record): pydantic-core parses the line and
    leaves those two unbuilt, ~2.5x faster than :func:`full_record` on lines with many events.
    What the report counts (outcome, metrics, labels, verdict, usage) is all here."""
    head = _Head.model_validate_json(line)
    # the validated fields become the record's, as model_construct would set them (without
    # its per-field loop, which costs as much as the validation here)
    got = head.__dict__
    fields = {k: got.get(k) for k in _FIELD_ORDER}
    fields["events"] = []
    fields["details"] = {}
    record = EpisodeRecord.__new__(EpisodeRecord)
    object.__setattr__(record, "__dict__", fields)
    object.__setattr__(record, "__pydantic_fields_set__", head.__pydantic_fields_set__)
    object.__setattr__(record, "__pydantic_extra__", None)
    object.__setattr__(record, "__pydantic_private__", None)
    return record


def full_record(line: bytes) -> EpisodeRecord:
    """An episode line validated whole (for a transcript the page shows, or an episode the
    reviewer reviews)."""
    return EpisodeRecord.model_validate(from_json(line))


def share_fields_sets(model: BaseModel) -> None:
    """Let the models nested in ``model`` that were given the same fields share one
    ``model_fields_set`` (pydantic gives each its own set, ~730 bytes for an estimate's eight
    fields: more than half of a summary's memory, ~60 MB over 1,000 runs' summaries). Only for
    models read and never assigned to afterwards (an assignment adds to the shared set)."""
    shared: dict[frozenset[str], set[str]] = {}
    stack: list[Any] = [model]
    while stack:
        obj = stack.pop()
        if isinstance(obj, BaseModel):
            fields = obj.__pydantic_fields_set__
            object.__setattr__(
                obj, "__pydantic_fields_set__", shared.setdefault(frozenset(fields), fields)
            )
            stack.extend(obj.__dict__.values())
        elif isinstance(obj, dict):
            stack.extend(obj.values())
        elif isinstance(obj, list | tuple):
            stack.extend(obj)


def _why(exc: Exception) -> str:
    if not isinstance(exc, ValidationError):
        return ""
    first = exc.errors(include_url=False)[0]
    if first["type"] in ("json_invalid", "json_type"):
        return ""
    return f" ({'.'.join(str(p) for p in first['loc']) or 'record'}: {first['msg']})"


def _bad_line(store: RunDirectory, number: int | str, exc: Exception) -> BadInputError:
    return BadInputError(
        f"{store.episodes_path}: line {number} is not a valid episode record{_why(exc)}"
    )


def _unreviewed(line: bytes) -> bool:
    """Whether a line surely has no stored verdict (the writer leaves an empty one out)."""
    return b'"review":' not in line


def episode_heads(
    store: RunDirectory, whole: Callable[[bytes], bool] | None = None
) -> Iterator[tuple[bytes, EpisodeRecord, bool]]:
    """(line, record, validated whole) of each episode's last complete line, the rule of
    :meth:`RunDirectory.iter_episode_lines`; each line is validated once: by
    :func:`head_record` (without events and details), or by :func:`full_record` when
    ``whole(line)`` says so (the first pass reads only each line's key)."""
    if not store.episodes_path.exists():
        return
    last: dict[tuple[str, int], int] = {}
    read: dict[int, tuple[str, int]] = {}
    with store.episodes_path.open("rb") as fh:
        for number, line in enumerate(fh, start=1):
            if not line or line.isspace():
                continue
            key = line_key(line) if line.endswith(b"\n") else None
            if key is None and not line.endswith(b"\n"):
                try:  # an unterminated last line: torn, unless it is a whole record
                    key = head_record(line).key
                except (ValidationError, ValueError):
                    continue
            if key is not None:
                read[number] = key
            last[key or ("", -number)] = number
    keep = set(last.values())
    with store.episodes_path.open("rb") as fh:
        for number, line in enumerate(fh, start=1):
            if not line or line.isspace():
                continue
            is_whole = whole is not None and whole(line)
            try:
                record = full_record(line) if is_whole else head_record(line)
            except (ValidationError, ValueError) as exc:
                if not line.endswith(b"\n"):
                    continue
                raise _bad_line(store, number, exc) from None
            if read.get(number, record.key) != record.key:
                raise BadInputError(
                    f"{store.episodes_path}: line {number} names its task_id or trial twice"
                )
            if number in keep:
                yield line, record, is_whole


def load_run(
    path: Path,
    key: str,
    profiles: ProfileBook | None = None,
    transcripts: TranscriptCap = DEFAULT_TRANSCRIPTS,
    *,
    ranks: bool = True,
    reviews: bool = False,
) -> RunInput:
    """One run directory, read in one streaming pass (each episode line validated once):
    counts, a bounded set of transcripts (failures first, ``transcripts`` per run, ``"all"``
    for every one), the primary metric's task values behind rank intervals (``ranks``) and,
    with ``reviews``, who failed in each episode (:attr:`RunInput.reviews`).

    The summary is ``summary.json`` unless the run is in progress or has none (or its count
    disagrees with the episodes read); then it is computed in the same pass (a count that
    disagrees costs a second, light read). With ``transcripts=0``, no ``reviews`` and no
    ``ranks`` a finished run's episodes are not read at all (``todeval view``)."""
    store = RunDirectory(path)
    if not store.exists():
        raise BadInputError(f"{path}: not a run directory (no {MANIFEST})")
    manifest = store.read_manifest()
    summary = store.read_summary()
    if summary is not None:
        share_fields_sets(summary)
    profile = (profiles or ProfileBook()).get(manifest.benchmark)
    in_progress = bool(manifest.sessions) and manifest.sessions[-1].ended_at is None
    cap = cap_value(transcripts)
    values = _TaskValues(profile.primary)
    who = _run_reviews(profile.reviewer, manifest) if reviews else None
    gather = None if who is None or isinstance(who, str) else who
    light = cap == 0 and gather is None
    if summary is not None and not in_progress and light:
        if ranks:
            for record in store.iter_episodes(light=True):
                values.offer(record)
        n = summary.n_episodes
        return RunInput(key, path, manifest, summary, n_episodes=n, task_values=values.means())
    picker = TranscriptPicker(cap, profile.failure_label())

    def read() -> Iterator[EpisodeRecord]:
        # each line validated once: without its events and details, unless the reviewer
        # must review it (no stored verdict); a transcript shown is validated whole below
        # a line with no verdict at all is validated whole at once, for the reviewer
        for line, head, is_whole in episode_heads(store, None if gather is None else _unreviewed):
            record = head
            if is_whole:
                if gather is not None:
                    gather.offer(record)
            elif gather is not None and head.review is None:
                try:
                    record = full_record(line)
                except (ValidationError, ValueError) as exc:
                    raise _bad_line(store, f"of {head.episode_id}", exc) from None
                gather.offer(record)
            elif gather is not None:
                gather.offer(head)
            picker.offer(record, line)
            values.offer(record)
            yield record

    def recompute(records: Iterable[EpisodeRecord]) -> Summary:
        return summarize(
            manifest.benchmark, records, seed=manifest.seed, success_metric=profile.success_metric
        )

    if summary is None or in_progress:
        summary = recompute(read())
        provisional = True
    else:
        for _ in read():
            pass
        provisional = summary.n_episodes != picker.n_episodes
        if provisional:
            summary = recompute(store.iter_episodes(light=True))
    return RunInput(
        key,
        path,
        manifest,
        summary,
        n_episodes=picker.n_episodes,
        transcripts=Transcripts(
            key, _whole(store, picker.picked()), load_explainer(profile.explainer)
        ),
        provisional=provisional,
        task_values=values.means(),
        reviews=who,
    )


def _whole(
    store: RunDirectory, picked: list[tuple[EpisodeRecord, bytes]]
) -> list[tuple[EpisodeRecord, bytes]]:
    """The picked transcripts validated whole (those read without their events)."""
    out = []
    for record, line in picked:
        if record.events or not line:
            out.append((record, line))
            continue
        try:
            out.append((full_record(line), line))
        except (ValidationError, ValueError) as exc:
            raise _bad_line(store, f"of {record.episode_id}", exc) from None
    return out


def _run_reviews(reference: str | None, manifest: Manifest) -> RunReviews | str | None:
    """Who failed, gathered as the run is read: ``None`` when the benchmark names no
    reviewer, the one-line error when its reviewer cannot be loaded."""
    if reference is None:
        return None
    from todeval.review.live import RunReviews
    from todeval.review.reading import load_reviewer

    try:
        return RunReviews(load_reviewer(reference), manifest)
    except TodevalError as exc:
        return exc.message


@dataclass
class _TaskValues:
    """One metric's values per task, from the episodes that count in metrics."""

    metric: str
    found: dict[str, list[float]] = field(default_factory=dict)

    def offer(self, record: EpisodeRecord) -> None:
        value = record.metrics.get(self.metric)
        if value is not None and record.outcome.counts_in_metrics:
            self.found.setdefault(record.task_id, []).append(value)

    def tap(self, records: Iterable[EpisodeRecord]) -> Iterator[EpisodeRecord]:
        for record in records:
            self.offer(record)
            yield record

    def means(self) -> dict[str, float]:
        return {task: sum(v) / len(v) for task, v in sorted(self.found.items())}


def _parent_hint(path: Path) -> str:
    """For a folder of run directories: how to report them all, or browse them."""
    try:
        runs = sum(1 for p in path.iterdir() if (p / MANIFEST).is_file())
    except OSError:
        return ""
    if not runs:
        return ""
    return (
        f"; it holds {runs} run director{'y' if runs == 1 else 'ies'}: todeval report "
        f"{path}/* (or todeval view {path} to browse them)"
    )


def _read_json(path: Path) -> Any:
    try:
        return safejson.loads(read_user_text(path, what="JSON file"))
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read ({exc.strerror})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{path}: not valid JSON ({exc})") from None


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "top level"
    return f"{where}: {err['msg']}"


def load_score(path: Path, key: str) -> ScoreInput:
    data = _read_json(path)
    try:
        summary = Summary.model_validate(data)
    except ValidationError as exc:
        raise BadInputError(
            f"{path}: neither a score summary nor a panel file ({_first_error(exc)})"
        ) from None
    warnings = data.get("warnings") if isinstance(data.get("warnings"), list) else []
    return ScoreInput(
        key=key,
        path=path,
        summary=summary,
        source=str(data.get("source") or ""),
        scheme=str(data.get("scheme") or summary.ci.method),
        warnings=[str(w) for w in warnings],
    )


class _Loader:
    """Collects inputs, loading each run directory once however it was named."""

    def __init__(
        self,
        strict: bool,
        profiles: ProfileBook | None,
        transcripts: TranscriptCap = DEFAULT_TRANSCRIPTS,
        ranks: bool = True,
        reviews: bool = False,
    ) -> None:
        self.strict = strict
        self.transcripts = transcripts
        self.ranks = ranks
        self.reviews = reviews
        self.keys = _Keys()
        self.out = ReportInputs(
            profiles=profiles or ProfileBook(discover().profiles), transcripts=transcripts
        )
        self.by_path: dict[Path, RunInput] = {}

    def _problem(self, exc: BadInputError) -> None:
        if self.strict:
            raise exc
        self.out.problems.append(exc.message)

    def run(self, path: Path) -> RunInput | None:
        real = path.resolve()
        if real in self.by_path:
            return self.by_path[real]
        try:
            key = self.keys.take(path)
            run = load_run(
                path,
                key,
                self.out.profiles,
                self.transcripts,
                ranks=self.ranks,
                reviews=self.reviews,
            )
        except BadInputError as exc:
            self._problem(exc)
            return None
        self.by_path[real] = run
        self.out.runs.append(run)
        return run

    def panel(self, file: Path) -> None:
        try:
            panel = read_panel(file)
        except BadInputError as exc:
            self._problem(exc)
            return
        base = file.parent
        item = PanelInput(self.keys.take(base), base, panel)
        for pair, rel in panel.runs.items():
            run_path = base / rel
            if not (run_path / MANIFEST).exists():
                item.missing.append(pair)
                continue
            run = self.run(run_path)
            if run is not None:
                run.panel = run.panel or item.key
                item.run_keys[pair] = run.key
        self.out.panels.append(item)

    def path(self, path: Path) -> None:
        if path.is_dir():
            if (path / PANEL_FILE).exists():
                self.panel(path / PANEL_FILE)
            elif (path / MANIFEST).exists():
                self.run(path)
            else:
                self._problem(
                    BadInputError(
                        f"{path}: not a run directory (no {MANIFEST}) or panel (no {PANEL_FILE})"
                        f"{_parent_hint(path)}"
                    )
                )
        elif path.is_file():
            try:
                data = _read_json(path)
                if is_panel_data(data):
                    self.panel(path)
                else:
                    self.out.scores.append(load_score(path, self.keys.take(path)))
            except BadInputError as exc:
                self._problem(exc)
        else:
            self._problem(BadInputError(f"{path}: no such file or directory"))


def load_inputs(
    paths: Sequence[Path],
    profiles: ProfileBook | None = None,
    *,
    transcripts: TranscriptCap = DEFAULT_TRANSCRIPTS,
    reviews: bool = True,
) -> ReportInputs:
    """Load the given inputs; any unreadable one is a :class:`BadInputError`.

    ``profiles`` (default: those of every installed plug-in) say how each benchmark is shown;
    ``transcripts`` how many transcripts to keep per run (failures first; ``"all"``);
    ``reviews`` whether to gather who failed (the report's section) in the same read."""
    loader = _Loader(strict=True, profiles=profiles, transcripts=transcripts, reviews=reviews)
    for path in paths:
        loader.path(path)
    return loader.out


def _walk(root: Path) -> Iterable[Path]:
    """Directories under ``root`` holding a panel or a run (not descending into runs)."""
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if PANEL_FILE in files:
            yield Path(here)
        elif MANIFEST in files:
            dirs[:] = []
            yield Path(here)


def discover_inputs(
    root: Path,
    profiles: ProfileBook | None = None,
    *,
    transcripts: TranscriptCap = DEFAULT_TRANSCRIPTS,
) -> ReportInputs:
    """Every panel and run under ``root``; unreadable ones are listed in ``problems``.

    ``todeval view`` passes ``transcripts=0``: it reads summaries, and episodes from its index
    (so its leaderboards have no rank intervals: they would read every episode)."""
    loader = _Loader(strict=False, profiles=profiles, transcripts=transcripts, ranks=False)
    found = list(_walk(root))
    panels = [p for p in found if (p / PANEL_FILE).exists()]
    for path in panels:  # panels first, so their runs are attributed to them
        loader.path(path)
    for path in found:
        if path not in panels:
            loader.path(path)
    return loader.out


def watch_files(root: Path) -> list[Path]:
    """The files whose change means the report of ``root`` is out of date."""
    names = {MANIFEST, PANEL_FILE, "episodes.jsonl", "summary.json"}
    out: list[Path] = []
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        out.extend(Path(here) / f for f in sorted(files) if f in names)
    return out
