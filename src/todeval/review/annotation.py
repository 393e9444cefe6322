"""``todeval annotate export --from review:RUN_DIR[,RUN_DIR...]``: failed episodes for people to
answer "who failed?" (issue 30, item 4).

One multi-choice item per failed episode of the runs (infrastructure errors left out): the
benchmark's brief and how the episode ended as context fields, the transcript as turns, and the
question with four answers -- the agent under test, the simulator, both, or can't tell from the
conversation -- named as the benchmark's reviewer names its sides. The gold (the key file) is
the **rule** reviewer's verdict (``unclear`` when the rules found no fault), so ``annotate
agreement ANSWERS --gold`` measures people against the rules; ``annotate judge`` lets a model
answer the same items for the model-vs-people and model-vs-rules figures. Strata (for
``export --stratify``): ``benchmark``, ``run`` and ``ending`` (how the episode stopped) --
none derived from the gold, since the items file is what annotators see.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from todeval.annotation.items import Candidate, ContextField, ContextTurn, GoldItem, Item
from todeval.core.events import type_of_kind
from todeval.errors import UsageError
from todeval.review.command import reviewer_for
from todeval.review.reading import read_run

SOURCE = "review"


def items(spec: str, config: Mapping[str, Any]) -> list[GoldItem]:
    """The failed episodes of the run directories in ``spec`` (comma-separated) as items."""
    paths = [Path(p) for p in spec.split(",") if p.strip()]
    if not paths:
        raise UsageError("--from review:RUN_DIR[,RUN_DIR...]: name at least one run directory")
    out: list[GoldItem] = []
    for path in paths:
        manifest, records = read_run(path)
        reviewer = reviewer_for(manifest.benchmark)
        reviews = {r.episode_id: r for r in reviewer.review(manifest, records)}
        failed = [r for r in records if reviews[r.episode_id].verdict != "none"]
        briefs = reviewer.briefs(manifest, failed) if reviewer.briefs and failed else {}
        answers = [
            Candidate(id="agent", text=f"the {reviewer.agent}"),
            Candidate(id="simulator", text=f"the {reviewer.simulator}"),
            Candidate(id="both", text="both"),
            Candidate(id="unclear", text="can't tell from the conversation"),
        ]
        for record in failed:
            verdict = reviews[record.episode_id].verdict
            turns = [
                ContextTurn(speaker=e.actor, text=str(e.data.get("text", "")))
                for e in record.events
                if (e.type or type_of_kind(e.kind)) == "message"
            ]
            ending = f"{record.outcome.value}; {record.reason or record.termination or ''}"
            fields = [ContextField(name="benchmark", value=manifest.benchmark)]
            if record.episode_id in briefs:
                fields.append(ContextField(name="brief", value=briefs[record.episode_id]))
            fields.append(ContextField(name="ended", value=ending.strip("; ")))
            item = Item(
                id=f"{path.name}/{record.episode_id}",
                kind="multi-choice",
                source=SOURCE,
                question=(
                    f"This episode failed. Whose behaviour made it fail: the {reviewer.agent} "
                    f"(under test) or the {reviewer.simulator} (simulated)?"
                ),
                fields=fields,
                turns=turns,
                candidates=answers,
                strata={
                    "benchmark": manifest.benchmark,
                    "run": path.name,
                    "ending": str(record.termination or record.outcome.value),
                },
            )
            out.append(GoldItem(item=item, gold=[verdict]))
    return out


__all__ = ["SOURCE", "items"]
