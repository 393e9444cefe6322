"""LLM judges checked against people (issue 29.7): the prediction-powered estimate keeps its
coverage with a biased judge (where the judge alone never covers), and ``todeval annotate ppi``
reads a judge's and people's answer files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from todeval.cli import main
from todeval.stats.ppi import ppi_mean

TRUTH = 0.6


def _biased(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    """People's labels and a judge that says yes to 90% of yes and to 30% of no."""
    people = (rng.random(size) < TRUTH).astype(float)
    judge = np.where(people == 1, rng.random(size) < 0.9, rng.random(size) < 0.3)
    return people, judge.astype(float)


def test_ppi_covers_with_a_biased_judge_and_the_judge_alone_does_not() -> None:
    rng = np.random.default_rng(2907)
    runs, unlabelled, labelled = 1000, 2000, 150
    hits = {"ppi": 0, "judge only": 0, "people only": 0}
    width = {"ppi": 0.0, "people only": 0.0}
    for _ in range(runs):
        people, judge = _biased(rng, unlabelled + labelled)
        est = ppi_mean(
            list(judge[:unlabelled]), list(judge[unlabelled:]), list(people[unlabelled:])
        )
        for name, iv in (
            ("ppi", est.ppi),
            ("judge only", est.judge_only),
            ("people only", est.people_only),
        ):
            hits[name] += iv.ci_low <= TRUTH <= iv.ci_high
        width["ppi"] += est.ppi.ci_high - est.ppi.ci_low
        width["people only"] += est.people_only.ci_high - est.people_only.ci_low
    coverage = {k: v / runs for k, v in hits.items()}
    print(coverage, {k: v / runs for k, v in width.items()})
    assert 0.93 <= coverage["ppi"] <= 0.97
    assert coverage["judge only"] < 0.05  # biased by +0.06
    assert width["ppi"] < width["people only"]  # the judge buys precision


def _answers(path: Path, annotator: str, labels: dict[str, str]) -> None:
    lines = [
        json.dumps({"item": item, "annotator": annotator, "choice": [label]})
        for item, label in labels.items()
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_command_reports_agreement_and_the_three_estimates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(5)
    people, judge = _biased(rng, 400)
    items = [f"i{k}" for k in range(400)]
    word = {1.0: "person", 0.0: "simulator"}
    _answers(
        tmp_path / "judge.jsonl",
        "gpt-judge",
        {i: word[j] for i, j in zip(items, judge, strict=True)},
    )
    _answers(
        tmp_path / "alice.jsonl",
        "alice",
        {i: word[p] for i, p in zip(items[:100], people[:100], strict=True)},
    )
    argv = [
        "annotate",
        "ppi",
        str(tmp_path / "alice.jsonl"),
        "--judge",
        str(tmp_path / "judge.jsonl"),
    ]
    assert main([*argv, "--positive", "person"]) == 0
    text = capsys.readouterr().out
    assert "prediction-powered" in text and "Cohen's kappa" in text
    assert main([*argv, "--positive", "person", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["items"] == 400 and report["labelled"] == 100
    agree = float(np.mean(judge[:100] == people[:100]))
    assert report["accuracy"] == pytest.approx(agree)
    expected = ppi_mean(list(judge[100:]), list(judge[:100]), list(people[:100]))
    assert report["estimate"]["ppi"]["value"] == pytest.approx(expected.ppi.value)
    _answers(tmp_path / "few.jsonl", "bob", {"i0": "person"})
    few = ["annotate", "ppi", str(tmp_path / "few.jsonl"), "--judge", str(tmp_path / "judge.jsonl")]
    assert main([*few, "--positive", "person"]) == 3
    assert "PPI needs at least two labelled" in capsys.readouterr().err
