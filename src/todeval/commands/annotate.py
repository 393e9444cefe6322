"""``todeval annotate export|serve|agreement``: human annotation of benchmark items.

Registered lazily: :mod:`todeval.annotation.cli` is imported only when a command runs.
"""

from __future__ import annotations

from todeval.registry import Registry

CLI = "todeval.annotation.cli"


def register(registry: Registry) -> None:
    registry.group("annotate", "export items for people to label, serve a labelling page, agree")
    registry.lazy(
        "annotate",
        "export",
        "a stratified, seeded sample of a benchmark's items (the gold in a separate key file)",
        CLI,
        add="add_export",
        run="run_export",
    )
    registry.lazy(
        "annotate",
        "serve",
        "a labelling page on 127.0.0.1 saving every answer to a per-annotator file",
        CLI,
        add="add_serve",
        run="run_serve",
    )
    registry.lazy(
        "annotate",
        "agreement",
        "inter-annotator agreement (kappa, alpha, MASI) and the majority against the gold",
        CLI,
        add="add_agreement",
        run="run_agreement",
    )
    registry.lazy(
        "annotate",
        "ppi",
        "an LLM judge against people: agreement, and the judged rate corrected by people (PPI)",
        "todeval.annotation.judged",
        add="add_arguments",
        run="run",
    )
    registry.lazy(
        "annotate",
        "judge",
        "an LLM answers every exported item as an annotator (its calls' tokens, cost, latency)",
        "todeval.annotation.judged",
        add="add_judge_arguments",
        run="run_judge",
    )
