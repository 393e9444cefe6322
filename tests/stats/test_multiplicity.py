"""Multiplicity (issue 29.3): Holm and Benjamini-Hochberg adjusted p-values equal statsmodels'
``multipletests``, and ``compare`` reports raw and adjusted p-values in console and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from todeval.cli import main
from todeval.stats.multiplicity import adjust


@pytest.mark.parametrize(("ours", "theirs"), [("holm", "holm"), ("bh", "fdr_bh")])
def test_adjusted_p_values_equal_statsmodels(ours: str, theirs: str) -> None:
    rng = np.random.default_rng(29)
    for _ in range(20):  # statsmodels takes ~50 ms a call here
        size = int(rng.integers(1, 40))
        p = rng.uniform(0, 1, size) ** rng.uniform(0.2, 4)
        if size > 2:
            p[1] = p[0]  # ties
        expected = multipletests(p, method=theirs)[1]
        assert np.allclose(adjust(list(p), ours), expected, rtol=0, atol=1e-12)  # type: ignore[arg-type]
    assert adjust([0.01, 0.04], "none") == [0.01, 0.04]
    assert adjust([], "holm") == []


def test_compare_prints_and_writes_raw_and_adjusted_p_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = []
    for guesser in ("random", "bisect", "random"):
        out = tmp_path / f"{guesser}-{len(runs)}"
        seed = str(len(runs))
        argv = ["run", "toy", "--guesser", guesser, "--seed", seed, "--limit", "12"]
        assert main([*argv, "--limit-mode", "first", "--quiet", "--out", str(out)]) == 0
        runs.append(str(out))
    capsys.readouterr()
    for method, theirs in (("holm", "holm"), ("bh", "fdr_bh")):
        output = tmp_path / f"{method}.json"
        argv = ["compare", *runs, "--adjust", method, "--resamples", "400", "-o", str(output)]
        assert main(argv) == 0
        text = capsys.readouterr().out
        assert f"p {method}" in text and "adjusted for the 4 tests" in text
        data = json.loads(output.read_text())
        assert data["method"]["adjustment"] == method and data["method"]["family"] == 4
        metrics = [m for pair in data["pairs"] for m in pair["metrics"]]
        raw = [m["p_value"] for m in metrics]
        assert [m["p_adjusted"] for m in metrics] == pytest.approx(
            list(multipletests(raw, method=theirs)[1]), abs=1e-12
        )
    with pytest.raises(SystemExit) as exit_:
        main(["compare", *runs, "--adjust", "bonferroni"])
    assert exit_.value.code == 2
