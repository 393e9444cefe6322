"""ClarQ-LLM (clarification benchmark): tasks, the response tree and the exact scorer.

Public API (imported on first use, so registering the commands costs nothing)::

    from todeval.benchmarks.clarq import load_tasks, read_original, score_transcripts
    tasks = load_tasks("en", "test")            # 260 ClarqTask, ids en/test/<Type>-<index>
    tree = tasks[0].tree()                      # ResponseTree: available(), release(label)
    records = read_original("l2l_....json").records
    score = score_transcripts(records)          # recorded verdicts only, nothing is called
    score.summary.metrics["clarq.success"].micro.value

CLI: ``todeval run clarq`` (self-play: seekers in :mod:`.seekers`, the game master in
:mod:`.game`, the run in :mod:`.run`), ``todeval score clarq TRANSCRIPTS|RUN_DIR... [-o OUT.json]
[--judge-model SPEC] [--offline]`` and ``todeval data clarq [--check] [--show TASK_ID]``.
Rules, figures and caveats: ``docs/clarq.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from todeval.core.imports import lazy_attributes
from todeval.registry import Registry

if TYPE_CHECKING:
    from todeval.benchmarks.clarq._judge import (
        RECORDED_JUDGE,
        Judge,
        JudgeAnswer,
        JudgeQuestion,
        VerdictEntry,
        VerdictStore,
        default_verdicts_path,
        judge_messages,
        recorded_verdicts,
        verdict_key,
    )
    from todeval.benchmarks.clarq._matching import (
        ROUTES,
        Leftovers,
        MatchResult,
        Prematch,
        Route,
        decide,
        match_dialogue,
        prematch,
    )
    from todeval.benchmarks.clarq._original import TranscriptFile, read_original
    from todeval.benchmarks.clarq._scoring import (
        METRICS,
        ClarqScore,
        ClarqSummary,
        EpisodeScore,
        JudgeReport,
        RouteCounts,
        score_transcripts,
        score_transcripts_async,
        summarize,
    )
    from todeval.benchmarks.clarq._tasks import (
        Background,
        ClarqTask,
        ResponseNode,
        ResponseTree,
        Split,
        depth_group,
        label_key,
        load_tasks,
        read_tasks,
    )
    from todeval.benchmarks.clarq._text import (
        Language,
        detect_language,
        provider_message,
        strip_provider_prefix,
    )
    from todeval.benchmarks.clarq._transcripts import (
        ClarqTranscript,
        provider_answers,
        seeker_utterances,
    )

_EXPORTS = {
    "_judge": (
        "RECORDED_JUDGE", "Judge", "JudgeAnswer", "JudgeQuestion", "VerdictEntry",
        "VerdictStore", "default_verdicts_path", "judge_messages", "recorded_verdicts",
        "verdict_key",
    ),
    "_matching": (
        "ROUTES", "Leftovers", "MatchResult", "Prematch", "Route", "decide", "match_dialogue",
        "prematch",
    ),
    "_original": ("TranscriptFile", "read_original"),
    "_scoring": (
        "METRICS", "ClarqScore", "ClarqSummary", "EpisodeScore", "JudgeReport", "RouteCounts",
        "score_transcripts", "score_transcripts_async", "summarize",
    ),
    "_tasks": (
        "Background", "ClarqTask", "ResponseNode", "ResponseTree", "Split", "depth_group",
        "label_key", "load_tasks", "read_tasks",
    ),
    "_text": ("Language", "detect_language", "provider_message", "strip_provider_prefix"),
    "_transcripts": ("ClarqTranscript", "provider_answers", "seeker_utterances"),
}  # fmt: skip
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}


__getattr__ = lazy_attributes(globals(), _WHERE, relative=True)


_CLI = f"{__name__}._cli"  # imported only when a clarq command runs
SCORE_HELP = "score ClarQ-LLM transcripts: success S, AQD, AQL (the original's rules)"
DATA_HELP = "check and show the shipped ClarQ-LLM tasks (English and Chinese)"
_AUDIT_CLI = f"{__name__}.tools._audit_cli"
AUDIT_HELP = (
    "teacher-forced provider audit: a provider's decisions vs a transcript's original "
    "provider, turn by turn (accuracy, kappa, node ids, the always-release baseline)"
)


RUN_HELP = "ClarQ-LLM self-play: a seeker asks a provider (Jax) until it can do the task"


def register(registry: Registry) -> None:
    """Add ``todeval run clarq``, ``todeval score clarq``, ``todeval data clarq`` and the
    profile of clarq results."""
    registry.profile(f"{__name__}.profile:PROFILE", benchmark="clarq")
    registry.benchmark(
        "clarq",
        RUN_HELP,
        cli=f"{__name__}.cli",
        spec=f"{__name__}.run:SPEC",
    )
    registry.lazy("score", "clarq", SCORE_HELP, _CLI, add="add_score_arguments", run="run_score")
    registry.lazy("data", "clarq", DATA_HELP, _CLI, add="add_data_arguments", run="run_data")
    registry.group("clarq", "commands of the ClarQ-LLM benchmark")
    registry.lazy(
        "clarq", "audit", AUDIT_HELP, _AUDIT_CLI, add="add_audit_arguments", run="run_audit"
    )
    registry.controls("clarq", f"{__name__}.controls:SUITE")


__all__ = [
    "METRICS",
    "RECORDED_JUDGE",
    "ROUTES",
    "Background",
    "ClarqScore",
    "ClarqSummary",
    "ClarqTask",
    "ClarqTranscript",
    "EpisodeScore",
    "Judge",
    "JudgeAnswer",
    "JudgeQuestion",
    "JudgeReport",
    "Language",
    "Leftovers",
    "MatchResult",
    "Prematch",
    "ResponseNode",
    "ResponseTree",
    "Route",
    "RouteCounts",
    "Split",
    "TranscriptFile",
    "VerdictEntry",
    "VerdictStore",
    "decide",
    "default_verdicts_path",
    "depth_group",
    "detect_language",
    "judge_messages",
    "label_key",
    "load_tasks",
    "match_dialogue",
    "prematch",
    "provider_answers",
    "provider_message",
    "read_original",
    "read_tasks",
    "recorded_verdicts",
    "register",
    "score_transcripts",
    "score_transcripts_async",
    "seeker_utterances",
    "strip_provider_prefix",
    "summarize",
    "verdict_key",
]
