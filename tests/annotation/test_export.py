"""``todeval annotate export`` and ``agreement`` on the bargaining tracks."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from todeval.annotation.items import (
    Answer,
    AnswerLog,
    Candidate,
    GoldItem,
    Item,
    merge_answers,
    read_items,
    read_key,
    stratified_sample,
)
from todeval.annotation.simulate import simulate
from todeval.benchmarks.bargain.annotation import items as bargain_items
from todeval.cli import main
from todeval.registry import discover


def test_registered_lazily() -> None:
    registry = discover()
    assert "annotate" in registry.groups
    assert set(registry.commands["annotate"]) == {"export", "serve", "agreement", "judge", "ppi"}
    source = registry.annotation_sources["bargain"]
    assert source.items == "todeval.benchmarks.bargain.annotation:items"


@pytest.mark.parametrize("spec", ["casino", "craigslist"])
def test_bargain_items(spec: str) -> None:
    gold_items = bargain_items(spec, {})
    assert gold_items
    for g in gold_items[:50]:
        item = g.item
        assert item.kind == "multi-choice" and item.multiple
        assert set(g.gold) <= {c.id for c in item.candidates}
        assert sum(t.focus for t in item.turns) == 1 and item.turns[-1].focus
        assert {"speaker", "depth", "group", "track"} <= set(item.strata)
        assert "gold" not in item.model_dump_json()


@pytest.mark.parametrize(("spec", "suffix"), [("casino", ".jsonl"), ("craigslist", ".csv")])
def test_export_hides_gold_and_round_trips(tmp_path: Path, spec: str, suffix: str) -> None:
    out = tmp_path / f"items{suffix}"
    args = ["annotate", "export", "--from", f"bargain:{spec}", "--n", "30"]
    assert main([*args, "--stratify", "speaker", "--seed", "3", "-o", str(out)]) == 0
    key = tmp_path / "items.key.jsonl"
    gold = read_key(key)
    assert len(gold) == 30
    text = out.read_text(encoding="utf-8")
    assert '"gold"' not in text and "gold" not in text.splitlines()[0]
    again = tmp_path / f"again{suffix}"
    assert main([*args, "--stratify", "speaker", "--seed", "3", "-o", str(again)]) == 0
    assert again.read_text(encoding="utf-8") == text  # seeded
    if suffix == ".jsonl":
        items = read_items(out)
        assert [i.id for i in items] == list(gold)
        shares = Counter(i.strata["speaker"] for i in items)
        assert abs(shares["Camper 1"] - shares["Camper 2"]) <= 6
        a = simulate(out, "gold", noise=0.0, seed=0)
        b = simulate(out, "noisy", noise=0.15, seed=1)
        ratings = merge_answers([a, b])
        assert all(frozenset(ratings[i]["gold"]) == gold[i] for i in gold)
        assert main(["annotate", "agreement", str(a), str(b), "--gold", "--json"]) == 0
    else:
        # a filled-in CSV imports as answers
        import csv

        with out.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
        for row in rows:
            row["choice"] = ";".join(sorted(gold[row["id"]]))
        filled = tmp_path / "alice.csv"
        with filled.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        ratings = merge_answers([filled])
        assert {i: s["alice"] for i, s in ratings.items()} == gold


def test_export_from_run_directory_and_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    code = main(
        ["run", "bargain", "--track", "casino", "--labeller", "gold", "--out", str(run), "--quiet"]
    )
    assert code == 0
    out = tmp_path / "items.jsonl"
    assert main(["annotate", "export", "--from", str(run), "--n", "5", "-o", str(out)]) == 0
    assert len(read_items(out)) == 5
    assert main(["annotate", "export", "--from", "nope:x", "-o", str(out)]) == 2
    missing = tmp_path / "no-such-run"
    assert main(["annotate", "export", "--from", str(missing), "-o", str(out)]) == 3
    assert f"{missing}: no such run directory" in capsys.readouterr().err
    assert main(["annotate", "export", "--from", "bargain:mars", "-o", str(out)]) == 2
    stratify = ["--stratify", "nope", "-o", str(out)]
    assert main(["annotate", "export", "--from", "bargain:casino", *stratify]) == 2
    assert main(["annotate", "export", "--from", "bargain:casino", "--n", "0", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") >= 3


def test_agreement_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "x.jsonl"
    assert (
        main(["annotate", "export", "--from", "bargain:casino", "--n", "40", "-o", str(out)]) == 0
    )
    a = simulate(out, "gold", noise=0.0, seed=0)
    b = simulate(out, "noisy", noise=0.1, seed=1)
    capsys.readouterr()
    assert main(["annotate", "agreement", str(a), str(b), "--gold", "--resamples", "100"]) == 0
    text = capsys.readouterr().out
    assert "label-set alpha (MASI distance)" in text and "majority-vs-gold" in text
    assert main(["annotate", "agreement", str(a), str(b), "--json", "--resamples", "50"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["annotators"] == ["gold", "noisy"] and 0.3 < report["masi_alpha"]["value"] < 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item": 1}\n', encoding="utf-8")
    assert main(["annotate", "agreement", str(bad)]) == 3
    assert main(["annotate", "agreement", str(tmp_path / "missing.jsonl")]) == 3


def test_answer_log_resumes_and_last_answer_wins(tmp_path: Path) -> None:
    path = tmp_path / "a.answers.ann.jsonl"
    log = AnswerLog(path, "ann", "a")
    log.record("i1", ["x"])
    log.record("i2", ["y"])
    log.record("i1", ["z"])
    log.close()
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"item": "i3", "annot')  # a torn line from a crash
    again = AnswerLog(path, "ann", "a")
    assert {k: v.choice for k, v in again.answers.items()} == {"i1": ["z"], "i2": ["y"]}
    again.close()
    assert merge_answers([path]) == {"i1": {"ann": frozenset("z")}, "i2": {"ann": frozenset("y")}}


def _pairwise(i: int) -> GoldItem:
    item = Item(
        id=f"p{i}",
        kind="pairwise",
        source="toy",
        question="Which one is the person?",
        candidates=[Candidate(id="a", text="hi"), Candidate(id="b", text="hello")],
        cant_tell=True,
        strata={"half": str(i % 2)},
    )
    return GoldItem(item=item, gold=["a"])


def test_pairwise_items_and_stratified_sample() -> None:
    items = [_pairwise(i) for i in range(20)]
    item = items[0].item
    assert item.choices() == ["a", "b", "cant-tell"]
    assert item.check_answer(["a"]) is None
    assert item.check_answer(["a", "b"]) is not None
    assert item.check_answer(["c"]) is not None
    sample = stratified_sample(items, 7, "half", seed=1)
    assert len(sample) == 7 and {g.item.strata["half"] for g in sample} == {"0", "1"}
    assert stratified_sample(items, 7, "half", seed=1) == sample
    with pytest.raises(ValueError):
        Item(
            id="x", kind="pairwise", source="t", question="q", candidates=[{"id": "a", "text": ""}]
        )  # type: ignore[list-item]
    assert Answer(item="x", annotator="y", choice=["a"]).export == ""
