"""``todeval score incar`` and ``todeval data incar``."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from todeval.core.files import write_output
from todeval.errors import UsageError
from todeval.scoring.incar._evaluate import score_predictions
from todeval.scoring.incar._export import gold_as_predictions, gold_document
from todeval.scoring.incar._gold import SPLITS, Split, load_gold
from todeval.scoring.incar._ontology import INTENTS, load_lexicon
from todeval.scoring.incar._predictions import read_predictions
from todeval.scoring.incar._report import format_table
from todeval.scoring.incar._sequicity import read_sequicity
from todeval.stats.bootstrap import DEFAULT_RESAMPLES


def _write_json(path: Path, document: Any) -> None:
    write_output(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")


def add_score_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "predictions", type=Path, metavar="PRED.json", help="prediction file (JSON, or see --from)"
    )
    parser.add_argument(
        "--from",
        dest="source_format",
        choices=("json", "sequicity"),
        default="json",
        help="prediction file format: our JSON (default) or a Sequicity results/kvret*.csv",
    )
    parser.add_argument("--split", choices=SPLITS, default="test", help="gold split (test)")
    parser.add_argument("-o", "--output", type=Path, help="write the Summary JSON here")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (0)")
    parser.add_argument(
        "--resamples", type=int, default=DEFAULT_RESAMPLES, help="bootstrap resamples (2000)"
    )


def run_score(args: argparse.Namespace) -> int:
    if args.resamples < 1:
        raise UsageError("--resamples must be at least 1")
    split: Split = args.split
    lexicon = load_lexicon()
    gold = load_gold(split, lexicon)
    note: str | None = None
    if args.source_format == "sequicity":
        mapped = read_sequicity(args.predictions, gold)
        predictions, note = mapped.predictions, mapped.summary_line()
    else:
        predictions = read_predictions(args.predictions, gold)
    result = score_predictions(
        predictions, gold, lexicon=lexicon, seed=args.seed, resamples=args.resamples
    )
    if args.output is not None:
        _write_json(args.output, result.summary.model_dump(mode="json"))
    print(format_table(result))
    if note is not None:
        print(note)
    return 0


def add_data_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--export", action="store_true", help="write the gold to -o FILE")
    parser.add_argument("--split", choices=SPLITS, default="test", help="gold split (test)")
    parser.add_argument("-o", "--output", type=Path, help="output file for --export")
    parser.add_argument(
        "--predictions-format",
        action="store_true",
        help="export the gold as a prediction file (responses and states only)",
    )


def run_data(args: argparse.Namespace) -> int:
    split: Split = args.split
    if not args.export:
        if args.output is not None or args.predictions_format:
            raise UsageError("-o and --predictions-format need --export")
        gold = load_gold(split)
        dialogues = Counter(d.intent for d in gold.dialogues)
        turns = Counter(
            {i: sum(len(d.turns) for d in gold.dialogues if d.intent == i) for i in INTENTS}
        )
        print(
            f"In-Car Assistant (KVRET) {split}: {len(gold.dialogues)} dialogues, "
            f"{sum(turns.values())} system turns"
        )
        for intent in INTENTS:
            print(f"  {intent:<9} {dialogues[intent]:>4} dialogues {turns[intent]:>5} turns")
        return 0
    if args.output is None:
        raise UsageError("--export needs -o FILE")
    gold = load_gold(split)
    document = gold_as_predictions(gold) if args.predictions_format else gold_document(gold)
    _write_json(args.output, document)
    print(f"wrote {len(gold.dialogues)} {split} dialogues to {args.output}")
    return 0
