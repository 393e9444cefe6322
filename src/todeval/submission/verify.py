"""``todeval submit prepare`` and ``todeval submit verify``: a run as one archive, checked.

:func:`prepare` writes a run directory's files into a submission archive
(:mod:`.archive`). :func:`verify` reads one back and checks, in order:

* the archive: every file as prepared (SHA-256), the run's manifest, records and summary
  readable;
* the benchmark installed, its config valid, the task set the shipped one (its hash
  re-computed from the installed tasks), every selected task present the declared number of
  trials (no episode missing, none twice, none left to retry after an infrastructure error);
* no privileged player (a control handed the answer key), and every record naming the
  channels its players ran through as the manifest does;
* the scorer version the records carry is the installed scorer's;
* metrics and the summary re-computed from the stored events
  (:func:`todeval.results.rescore.recompute`) equal the stored ones;
* every episode replayed against the world it claims (the benchmark's
  :class:`~todeval.submission.replay.Replay`).

Options that differ from the benchmark's defaults (other than the choice of task set, track,
seed, trials and the agent's own settings), a protocol the benchmark does not declare, prompt
overrides or a selection smaller than the set make it *custom*. The verdict names the agent's
channel and what that means for trust: built-in, in-process (trusted code that could read
everything the package ships), endpoint (self-run) or isolated (the OS sandbox).
"""

from __future__ import annotations

import asyncio
import math
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from todeval.core.identity import RoleIdentity
from todeval.core.records import EpisodeRecord, Manifest, Summary
from todeval.errors import BadInputError, TodevalError, UsageError
from todeval.runner.store import RunDirectory
from todeval.submission.archive import (
    SUFFIX,
    OpenedArchive,
    SubmissionIndex,
    SubmittedFile,
    SystemDeclaration,
    open_archive,
    sha256_of,
    write_archive,
)
from todeval.submission.replay import Mismatch

RUN_FILES = ("manifest.json", "episodes.jsonl", "summary.json")
MAX_LINES = 20
"""Refusal lines of one kind shown before '... and N more'."""
TOLERANCE = 1e-9

RUN_KEYS = frozenset(
    {
        "seed",
        "trials",
        "limit",
        "limit_mode",
        "task_set",
        "protocol",
        "prompts_sha256",
        "prompt_overrides",
        "models_file",
        "models_file_sha256",
        "constrained",
        "temperature",
        "max_tokens",
        "resamples",
    }
)
"""Config fields that are never protocol options: the run's draw, the choice of task set and
protocol (each has its board), prompts (checked apart) and the agent's own generation
settings."""

TRUST = {
    "built-in": "built-in: todeval's own player",
    "in-process": "in-process: trusted code (it ran in the evaluator's process and could read "
    "everything the package ships)",
    "endpoint": "self-run: the submitter's own endpoint (its code is not seen; its replies are "
    "as recorded)",
    "isolated": "isolated: ran in the OS sandbox (could not read the package's data or the run)",
}


class Verdict(BaseModel):
    """What ``todeval submit verify`` concludes about one archive."""

    status: Literal["verified", "refused"]
    standard: bool = Field(description="verified under the benchmark's standard protocol")
    benchmark: str
    task_set: str | None = None
    protocol: str | None = None
    n_tasks: int = 0
    trials: int = 0
    scorer_version: str | None = None
    subject: str | None = Field(None, description="the role under test")
    player: str | None = Field(None, description="who played it, as the manifest records")
    channel: str | None = Field(None, description="how it ran: built-in, in-process, ...")
    model: str | None = Field(None, description="the model the role under test ran on, if any")
    system: SystemDeclaration
    todeval_version: str
    reasons: list[str] = Field(default_factory=list, description="why it is refused")
    custom: list[str] = Field(default_factory=list, description="why it is custom")
    checked: list[str] = Field(default_factory=list, description="what was checked")
    limits: list[str] = Field(default_factory=list, description="what could not be checked")

    @property
    def headline(self) -> str:
        if self.status == "refused":
            return f"refused: {self.benchmark} ({len(self.reasons)} reason(s))"
        kind = "standard" if self.standard else "custom"
        trust = self.channel or "channel not recorded"
        return (
            f"verified {kind} ({trust}): {self.benchmark} {self.task_set or ''}, protocol "
            f"{self.protocol or '-'}, {self.n_tasks} tasks x {self.trials} trial(s), scorer "
            f"{self.scorer_version or '-'}; {self.system.description}"
            + (f" ({self.system.model})" if self.system.model else "")
        )

    def lines(self) -> list[str]:
        """The verdict as printed: the headline, then one line per reason or note."""
        out = [self.headline]
        out += [f"refused: {r}" for r in self.reasons]
        out += [f"custom: {c}" for c in self.custom]
        if self.channel is not None:
            trust = TRUST.get(self.channel, self.channel)
            if self.model and self.channel == "built-in":
                trust = (
                    f"built-in player on the model {self.model}: the model's replies are as "
                    "recorded (whoever served it could have written them)"
                )
            out.append(f"trust: {trust}")
        out += [f"checked: {c}" for c in self.checked]
        out += [f"not checked: {c}" for c in self.limits]
        return out


# ---------------------------------------------------------------------------------------------
# prepare


def _subject(benchmark: str, roles: Mapping[str, RoleIdentity]) -> str | None:
    """The role under test: the profile's panel subject, else the one role not built-in."""
    from todeval.registry import discover

    try:
        profile = discover().profiles.get(benchmark)
    except (TodevalError, ImportError, ValueError):
        profile = None
    panel = getattr(profile, "panel", None)
    if panel is not None and panel.subject in roles:
        return str(panel.subject)
    played = [name for name, r in roles.items() if r.channel is not None]
    foreign = [name for name in played if roles[name].channel != "built-in"]
    if len(foreign) == 1:
        return foreign[0]
    return played[0] if played else None


def prepare(
    run_dir: Path, out: Path, *, description: str, model: str | None = None
) -> SubmissionIndex:
    """Write the submission archive of the finished run in ``run_dir`` to ``out``."""
    import todeval

    if not description.strip():
        raise UsageError("--description: say what the system is (one line)")
    store = RunDirectory(run_dir)
    if not run_dir.is_dir() or not store.exists():
        raise BadInputError(f"{run_dir}: not a run directory (no manifest.json)")
    manifest = store.read_manifest()
    if store.read_summary() is None:
        raise BadInputError(f"{run_dir}: no summary.json: finish the run before submitting it")
    versions: set[str | None] = set()
    n = 0
    for record in store.iter_episodes(light=True):
        versions.add(record.scorer_version)
        n += 1
    if n == 0:
        raise BadInputError(f"{store.episodes_path}: the run has no episodes")
    if not out.name.endswith(SUFFIX):
        raise UsageError(f"{out}: a submission archive's name ends in {SUFFIX}")
    files: list[SubmittedFile] = []
    for path in sorted(run_dir.iterdir()):
        if path.name.startswith(".") or path.is_symlink() or not path.is_file():
            continue
        digest, size = sha256_of(path)
        files.append(SubmittedFile(name=path.name, sha256=digest, size=size))
    if model is None:
        subject = _subject(manifest.benchmark, manifest.roles)
        role = manifest.roles.get(subject) if subject else None
        model = (role.model_name or role.model) if role is not None else None
    index = SubmissionIndex(
        todeval_version=todeval.__version__,
        benchmark=manifest.benchmark,
        system=SystemDeclaration(description=description.strip(), model=model),
        config_hash=manifest.config_hash,
        task_set_hash=manifest.task_set_hash,
        scorer_version=next(iter(versions)) if len(versions) == 1 else None,
        n_episodes=n,
        files=files,
    )
    write_archive(out, index, run_dir)
    return index


# ---------------------------------------------------------------------------------------------
# verify


def _capped(lines: Sequence[str], what: str) -> list[str]:
    if len(lines) <= MAX_LINES:
        return list(lines)
    return [*lines[:MAX_LINES], f"... and {len(lines) - MAX_LINES} more {what}"]


def _near(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


class _Check:
    """The verdict under construction."""

    def __init__(self, index: SubmissionIndex) -> None:
        self.verdict = Verdict(
            status="verified",
            standard=True,
            benchmark=index.benchmark,
            system=index.system,
            todeval_version=index.todeval_version,
        )

    def refuse(self, *lines: str) -> None:
        self.verdict.reasons.extend(lines)

    def custom(self, line: str) -> None:
        self.verdict.custom.append(line)

    def done(self) -> Verdict:
        v = self.verdict
        if v.reasons:
            v.status = "refused"
            v.standard = False
        else:
            v.standard = not v.custom
        return v


def _read_run(store: RunDirectory) -> tuple[Manifest, Summary | None, list[EpisodeRecord]]:
    manifest = store.read_manifest()
    summary = store.read_summary()
    records = list(store.iter_episodes())
    return manifest, summary, records


def _duplicates(store: RunDirectory) -> list[str]:
    """Episodes whose line appears more than once, unless every earlier one was an
    infrastructure error (re-run on resume)."""
    lines: dict[tuple[str, int], list[tuple[int, EpisodeRecord]]] = {}
    for number, record in store.scan_episodes():
        lines.setdefault(record.key, []).append((number, record))
    out = []
    for (task, trial), seen in lines.items():
        earlier = seen[:-1]
        if any(r.outcome.counts_in_metrics for _, r in earlier):
            numbers = ", ".join(str(n) for n, _ in seen)
            out.append(f"episode {task}#{trial} appears {len(seen)} times (lines {numbers})")
    return out


def _task_set(
    check: _Check, spec: Any, cfg: Any, manifest: Manifest, run_dir: Path
) -> tuple[Any, list[str]] | None:
    """The run's scoring context (every task of its set, the spec's run-wide parts) and the
    selected ids; the shipped task set's hash compared with the recorded one."""
    from todeval.runner.options import RuntimeOptions
    from todeval.runner.selection import select_for_run
    from todeval.spec import close_scoring_context, scoring_context
    from todeval.spec.build import task_content, task_set_hash

    try:
        context = scoring_context(spec, cfg, RuntimeOptions(out=run_dir, cache=False))
    except TodevalError as exc:
        check.refuse(f"its task set cannot be loaded here: {exc}")
        return None
    available = context.available
    by_id = context.tasks
    groups = {task_id: spec.tasks.group(t) for task_id, t in by_id.items()}
    canonical = spec.tasks.canonical(cfg, available) if spec.tasks.canonical else str
    set_name = spec.tasks.set_name(cfg)
    try:
        ids, selection = select_for_run(
            list(by_id), groups, cfg, task_set=set_name, ids=spec.tasks.ids(cfg),
            canonical=canonical, noun=spec.tasks.noun,
        )  # fmt: skip
    except TodevalError as exc:
        close_scoring_context(context)
        check.refuse(f"its selection of tasks cannot be drawn from the shipped set: {exc}")
        return None
    chosen = [by_id[i] for i in ids]
    content = spec.tasks.content
    digest = task_set_hash(content(context, t) if content else task_content(t) for t in chosen)
    legacy = spec.tasks.legacy_hash(context, chosen) if spec.tasks.legacy_hash else None
    known = {manifest.task_set_hash, *manifest.task_set_aliases}
    v = check.verdict
    v.task_set, v.n_tasks, v.trials = set_name, len(ids), cfg.trials
    if digest not in known and legacy not in known:
        check.refuse(
            f"task set: the run's hash {manifest.task_set_hash} is not the shipped "
            f"{set_name}'s ({digest}): its tasks are not the installed ones"
        )
    else:
        v.checked.append(f"task set {set_name}: {len(ids)} tasks, hash {digest} re-computed")
    if selection.mode != "all" and len(ids) < len(available):
        check.custom(f"a selection of {len(ids)} of the {len(available)} tasks ({selection.mode})")
    return context, ids


def _episodes(
    check: _Check,
    store: RunDirectory,
    records: Sequence[EpisodeRecord],
    ids: Sequence[str],
    trials: int,
    seed: int,
) -> None:
    from todeval.dialogue.episode import EpisodeStreams

    expected = {(i, t) for i in ids for t in range(trials)}
    have = Counter(r.key for r in records)
    missing = sorted(expected - set(have))
    extra = sorted(set(have) - expected)
    if missing:
        check.refuse(
            *_capped([f"episode {i}#{t} is missing" for i, t in missing], "missing episodes")
        )
    if extra:
        check.refuse(
            *_capped(
                [f"episode {i}#{t} is not one of the run's tasks and trials" for i, t in extra],
                "extra episodes",
            )
        )
    check.refuse(*_capped(_duplicates(store), "repeated episodes"))
    reseeded = [
        f"episode {r.episode_id}: its seed {r.seed} is not the one the run's seed gives"
        for r in records
        if r.key in expected and r.seed != EpisodeStreams(seed, r.task_id, r.trial).seed
    ]
    check.refuse(*_capped(reseeded, "episodes with another seed"))
    retry = [r.episode_id for r in records if not r.outcome.counts_in_metrics]
    if retry:
        check.refuse(
            f"{len(retry)} episode(s) ended in an infrastructure error (first {retry[0]}): "
            "resume the run until none is left"
        )
    if not (missing or extra or retry):
        check.verdict.checked.append(f"every task x {trials} trial(s): {len(records)} episodes")


def _options(check: _Check, spec: Any, cfg: Any, manifest: Manifest) -> None:
    protocol = getattr(cfg, "protocol", None)
    check.verdict.protocol = protocol if isinstance(protocol, str) else manifest.protocol
    if spec.protocols and protocol not in spec.protocols:
        check.custom(f"protocol {protocol!r} is not one of {', '.join(spec.protocols)}")
    if getattr(cfg, "prompt_overrides", None):
        check.custom("prompt templates overridden (--prompts)")
    exempt = set(RUN_KEYS)
    for role in spec.roles:  # who plays each role (the installed spec's word, not the run's)
        seat = (role.agent.url_key, role.agent.channel_key) if role.agent is not None else ()
        exempt.update(k for k in (role.player_key, role.model_key, *role.identity_keys, *seat) if k)
    replay = getattr(spec, "replay", None)
    if replay is not None:
        exempt.update(replay.set_keys)
    for name, info in type(cfg).model_fields.items():
        if name in exempt or name.endswith("_sha256") or info.is_required():
            continue
        value, default = getattr(cfg, name), info.get_default(call_default_factory=True)
        if value != default:
            check.custom(f"option {name} = {value!r} (standard: {default!r})")


def _played(role: Any, cfg: Any) -> tuple[bool | None, frozenset[str]]:
    """(privileged, the channels it can have run through) of a role's player as the config
    names it: a built-in is looked up in the installed package; a ``package.module:Class`` is
    not imported (its code is the submitter's): its flag is unknown (``None``)."""
    from todeval.core.imports import is_reference
    from todeval.dialogue.participants import split_params

    chosen = role.chosen(cfg)
    try:
        base = split_params(chosen)[0]
    except TodevalError:
        return None, frozenset()
    if role.agent is not None and base == "agent":
        return False, frozenset({"endpoint"})
    if base in role.role.builtins:
        try:
            return bool(role.role.resolve(chosen).privileged), frozenset({"built-in"})
        except (TodevalError, ImportError):
            return None, frozenset({"built-in"})
    if is_reference(base):
        return None, frozenset({"in-process", "isolated"})
    return None, frozenset()


def _roles(check: _Check, spec: Any, cfg: Any, manifest: Manifest) -> None:
    """No privileged player, and channels the config allows: the installed package says which
    built-in players are controls and how each player can have run (the manifest is the
    submitter's word)."""
    for r in spec.roles:
        if r.role is None:
            continue
        recorded = manifest.roles.get(r.name)
        privileged, channels = _played(r, cfg)
        if privileged or (recorded is not None and recorded.privileged):
            check.refuse(
                f"role {r.name} is played by {r.chosen(cfg)}, a privileged player (a control "
                "handed the answer key): never ranked"
            )
        channel = recorded.channel if recorded is not None else None
        if channels and channel is not None and channel not in channels:
            check.refuse(
                f"role {r.name}: the manifest says it ran {channel}, but its player "
                f"{r.chosen(cfg)} runs {' or '.join(sorted(channels))}"
            )
    subject = _subject(manifest.benchmark, manifest.roles)
    if subject is not None:
        role = manifest.roles[subject]
        check.verdict.subject = subject
        check.verdict.player = role.label
        check.verdict.channel = role.channel
        check.verdict.model = role.model_name or role.model


def _record_channels(check: _Check, manifest: Manifest, records: Sequence[EpisodeRecord]) -> None:
    """Every record names the channel each role's player ran through, as the manifest does: a
    record that names another (or leaves out a role the manifest names) is refused; records
    written before per-record channels name none and are taken as the manifest says."""
    declared = {name: r.channel for name, r in manifest.roles.items() if r.channel is not None}
    unnamed = [r.episode_id for r in records if r.channels is None]
    differ: list[str] = []
    for record in records:
        if record.channels is None:
            continue
        for role in sorted(set(declared) | set(record.channels)):
            said, ran = declared.get(role), record.channels.get(role)
            if said != ran:
                differ.append(
                    f"{record.episode_id}: role {role} ran {ran or 'no recorded channel'}, the "
                    f"manifest says {said or 'no channel'}"
                )
    if differ:
        check.refuse(*_capped(differ, "records whose channels differ from the manifest"))
    elif unnamed:
        check.verdict.limits.append(
            f"channels: {len(unnamed)} record(s) name none (written before per-record "
            "channels): taken as the manifest says"
        )
    elif declared:
        check.verdict.checked.append(
            "every record names the channels the manifest does ("
            + ", ".join(f"{role} {ch}" for role, ch in sorted(declared.items()))
            + ")"
        )


def _scorer(check: _Check, spec: Any, records: Sequence[EpisodeRecord]) -> bool:
    from todeval.results.rescore import shown_version

    installed = getattr(spec, "scorer_version", None)
    versions = sorted({shown_version(r.scorer_version) for r in records})
    if installed is None:
        check.verdict.limits.append("scorer version: the benchmark declares none")
        return True
    check.verdict.scorer_version = installed
    stale = [v for v in versions if v != installed]
    if stale:
        check.refuse(
            f"scorer version: the records were scored by {', '.join(stale)}, the installed "
            f"scorer is {installed}: re-grade them with todeval rescore"
        )
        return False
    return True


def _metrics(check: _Check, run_dir: Path, records: Sequence[EpisodeRecord]) -> None:
    from todeval.errors import RefusedError
    from todeval.results.rescore import recompute

    try:
        again = recompute(run_dir)
    except RefusedError as exc:
        check.verdict.limits.append(f"metrics not re-computed: {exc}")
        return
    except Exception as exc:  # the stored events are the submitter's: any failure refuses
        check.refuse(f"metrics cannot be re-computed: {type(exc).__name__}: {exc}")
        return
    stored = {r.key: r for r in records}
    problems: list[str] = []
    for new in again.records:
        old = stored.get(new.key)
        if old is None or not old.outcome.counts_in_metrics:
            continue
        if new.outcome is not old.outcome:
            problems.append(
                f"{old.episode_id}: outcome {old.outcome.value} stored, "
                f"{new.outcome.value} re-computed"
            )
        for name in sorted(set(old.metrics) | set(new.metrics)):
            a, b = old.metrics.get(name), new.metrics.get(name)
            if not _near(a, b):
                problems.append(f"{old.episode_id}: {name} {a} stored, {b} re-computed")
                break
        for name in sorted(set(old.labels) & set(new.labels)):
            if old.labels[name] != new.labels[name]:
                problems.append(
                    f"{old.episode_id}: label {name} {old.labels[name]!r} stored, "
                    f"{new.labels[name]!r} re-computed"
                )
    old_summary = again.old_summary
    if old_summary is not None:
        for name, m in sorted(again.summary.metrics.items()):
            was = old_summary.metrics.get(name)
            if was is None:
                problems.append(f"summary: {name} missing (re-computed {m.micro.value})")
            elif not _near(was.micro.value, m.micro.value) or was.micro.n != m.micro.n:
                problems.append(
                    f"summary: {name} {was.micro.value} (n {was.micro.n}) stored, "
                    f"{m.micro.value} (n {m.micro.n}) re-computed"
                )
            elif (was.macro is None) != (m.macro is None) or (
                was.macro is not None
                and m.macro is not None
                and not _near(was.macro.value, m.macro.value)
            ):
                old_macro = was.macro.value if was.macro is not None else None
                new_macro = m.macro.value if m.macro is not None else None
                problems.append(
                    f"summary: {name} macro {old_macro} stored, {new_macro} re-computed"
                )
    if problems:
        check.refuse(*_capped(problems, "metric differences"))
    else:
        check.verdict.checked.append(
            f"metrics of every episode and the summary re-computed from the events (scorer "
            f"{again.version})"
        )


def _run_files(run_dir: Path) -> dict[str, bytes]:
    return {
        p.name: p.read_bytes()
        for p in sorted(run_dir.iterdir())
        if p.is_file() and p.name not in RUN_FILES
    }


def _replay(
    check: _Check,
    spec: Any,
    context: Any,
    files: Mapping[str, bytes],
    records: Sequence[EpisodeRecord],
    summary: Summary | None,
) -> None:
    replay = getattr(spec, "replay", None)
    if replay is None:
        check.verdict.limits.append(
            f"trajectories not replayed: {spec.name} declares no replay (taken as recorded)"
        )
        return
    try:
        replayer = replay.start(context, files)
    except TodevalError as exc:
        check.refuse(f"the run cannot be replayed: {exc}")
        return
    found: list[str] = []

    def line(record: EpisodeRecord | None, m: Mismatch) -> str:
        where = record.episode_id if record is not None else "run"
        turn = f" turn {m.turn}" if m.turn is not None else ""
        return f"replay: {where}{turn}: {m.what}"

    async def play() -> None:
        for record in records:
            task = context.tasks.get(record.task_id)
            if task is None or not record.outcome.counts_in_metrics:
                continue
            try:
                mismatches = list(await replayer.episode(task, record))
            except Exception as exc:  # a record the replay cannot read did not happen either
                mismatches = [Mismatch(f"cannot be replayed ({type(exc).__name__}: {exc})")]
            found.extend(line(record, m) for m in mismatches)

    asyncio.run(play())
    if replayer.run is not None:
        try:
            found += [line(None, m) for m in replayer.run(records, summary)]
        except Exception as exc:
            found.append(f"replay: run: cannot be checked ({type(exc).__name__}: {exc})")
    if found:
        check.refuse(*_capped(found, "replay differences"))
    else:
        check.verdict.checked.append(f"replayed {len(records)} episodes: {replayer.replays}")
    check.verdict.limits.extend(replayer.cannot)


def verify_opened(opened: OpenedArchive) -> Verdict:
    """The verdict on an archive read by :func:`~.archive.open_archive`."""
    import todeval
    from todeval.results.rescore import load_spec
    from todeval.spec import close_scoring_context

    index = opened.index
    check = _Check(index)
    check.refuse(*opened.integrity)
    if not opened.integrity:
        check.verdict.checked.append(
            f"{len(index.files)} files as prepared (SHA-256) with todeval "
            f"{index.todeval_version}; verified with todeval {todeval.__version__}"
        )
    store = RunDirectory(opened.run_dir)
    if not store.exists():
        raise BadInputError("the archive holds no run manifest (run/manifest.json)")
    manifest, summary, records = _read_run(store)
    if manifest.benchmark != index.benchmark:
        check.refuse(f"the index names {index.benchmark}, the run {manifest.benchmark}")
    from todeval.runner.plan import config_hash

    if manifest.config_hash != index.config_hash:
        check.refuse("the run's config hash is not the one the index lists")
    if config_hash(manifest.config) != manifest.config_hash:
        check.refuse("the run's config is not the one its config hash was made from")
    if not records:
        raise BadInputError("the archive's run has no episodes")
    if summary is None:
        check.refuse("the run has no summary.json (unfinished)")
    try:
        spec = load_spec(manifest.benchmark)
    except BadInputError as exc:
        check.refuse(str(exc))
        return check.done()
    try:
        cfg = spec.config.model_validate(manifest.config)
    except ValidationError as exc:
        first = exc.errors()[0]
        check.refuse(f"config: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}")
        return check.done()
    _roles(check, spec, cfg, manifest)
    _record_channels(check, manifest, records)
    _options(check, spec, cfg, manifest)
    files = _run_files(opened.run_dir)
    if _scorer(check, spec, records):
        _metrics(check, opened.run_dir, records)
    planned = _task_set(check, spec, cfg, manifest, opened.run_dir)
    if planned is None:
        return check.done()
    context, ids = planned
    try:
        _episodes(check, store, records, ids, cfg.trials, cfg.seed)
        _replay(check, spec, context, files, records, summary)
    finally:
        close_scoring_context(context)
    return check.done()


def verify(path: Path) -> Verdict:
    """The verdict on the submission archive at ``path`` (a :class:`BadInputError` when it is
    not one)."""
    with tempfile.TemporaryDirectory(prefix="todeval-submission-") as folder:
        opened = open_archive(path, Path(folder))
        return verify_opened(opened)


__all__ = ["TRUST", "Verdict", "prepare", "verify", "verify_opened"]
