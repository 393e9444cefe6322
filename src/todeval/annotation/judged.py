"""``todeval annotate ppi``: a judge's labels on every item, people's on a sample -> the judge's
agreement with people and a prediction-powered estimate of the people's rate (docs/annotation.md).

The judge's labels are an answer file like a person's (``{"item", "annotator", "choice"}`` per
line), covering every item; people's answer files cover a sample (their majority per item).
The rate is the share of items whose label set holds ``--positive``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pydantic import BaseModel, Field

from todeval.annotation.agreement import cohen_kappa, majority
from todeval.annotation.items import merge_answers
from todeval.errors import BadInputError, UsageError
from todeval.stats.ppi import Interval, PPIEstimate, ppi_mean


class JudgeCheck(BaseModel):
    """``todeval annotate ppi --json``."""

    positive: str
    judge: str = Field(description="the judge file's annotator")
    items: int = Field(description="items the judge labelled")
    labelled: int = Field(description="of them, items people labelled too")
    accuracy: float = Field(description="share of labelled items where judge and people agree")
    kappa: float | None = Field(description="Cohen's kappa of judge and people on the rate")
    estimate: PPIEstimate


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("people", nargs="+", metavar="ANSWERS", help="people's answer files")
    parser.add_argument(
        "--judge", required=True, metavar="FILE", help="the judge's answers on every item"
    )
    parser.add_argument(
        "--positive", required=True, metavar="LABEL", help="the label whose rate is estimated"
    )
    parser.add_argument("--level", type=float, default=0.95, help="interval level (default 0.95)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def check_judge(
    judge_path: Path, people_paths: list[Path], positive: str, level: float = 0.95
) -> JudgeCheck:
    for path in [judge_path, *people_paths]:
        if not path.is_file():
            raise BadInputError(f"{path}: no such file")
    judged = merge_answers([judge_path])
    judges = {a for answers in judged.values() for a in answers}
    if len(judges) != 1:
        raise BadInputError(f"{judge_path}: a judge file holds one annotator, not {len(judges)}")
    (judge,) = judges
    people = merge_answers(people_paths)
    verdicts = {item: positive in answers[judge] for item, answers in judged.items()}
    labels = {
        item: positive in majority({a: s for a, s in answers.items() if a != judge})
        for item, answers in people.items()
        if any(a != judge for a in answers)
    }
    labelled = sorted(set(verdicts) & set(labels))
    unlabelled = sorted(set(verdicts) - set(labels))
    if len(labelled) < 2 or len(unlabelled) < 2:
        raise BadInputError(
            f"people labelled {len(labelled)} of the judge's {len(verdicts)} items: PPI needs at "
            "least two labelled and two unlabelled items"
        )
    f_lab = [float(verdicts[i]) for i in labelled]
    y = [float(labels[i]) for i in labelled]
    kappa = cohen_kappa(f_lab, y)
    return JudgeCheck(
        positive=positive,
        judge=judge,
        items=len(verdicts),
        labelled=len(labelled),
        accuracy=sum(a == b for a, b in zip(f_lab, y, strict=True)) / len(y),
        kappa=None if kappa != kappa else kappa,  # NaN: one label only
        estimate=ppi_mean([float(verdicts[i]) for i in unlabelled], f_lab, y, level=level),
    )


def format_check(check: JudgeCheck) -> str:
    e = check.estimate
    level = round(e.level * 100)

    def line(name: str, iv: Interval) -> str:
        return f"{name:<22}{iv.value:.3f} [{iv.ci_low:.3f}, {iv.ci_high:.3f}]  n={iv.n}"

    kappa = "undefined (one label only)" if check.kappa is None else f"{check.kappa:.3f}"
    return "\n".join(
        [
            f"rate of {check.positive!r}: judge {check.judge!r} on {check.items} items, people "
            f"on {check.labelled}",
            f"judge vs people: agreement {check.accuracy:.3f}, Cohen's kappa {kappa}, judge bias "
            f"{e.judge_bias:+.3f}",
            f"estimate ({level}% CI):",
            line("  judge only (biased)", e.judge_only),
            line("  people only", e.people_only),
            line("  prediction-powered", e.ppi),
            "",
        ]
    )


def run(args: argparse.Namespace) -> int:
    if not 0 < args.level < 1:
        raise UsageError("--level must lie between 0 and 1")
    check = check_judge(Path(args.judge), [Path(p) for p in args.people], args.positive, args.level)
    sys.stdout.write(check.model_dump_json(indent=2) + "\n" if args.json else format_check(check))
    return 0
