"""Convert the released judge cache into keyed verdicts (``data/clarq/judge_verdicts.jsonl.gz``).

The original evaluator cached its judge calls by the text of the prompt. Each recorded prompt
asks about one leftover gold sentence (with its purpose) against the leftover predictions, in
English or Chinese. This script reads those fields back out of the prompts and stores every
answer under :func:`todeval.benchmarks.clarq._judge.verdict_key`'s content key, so that our
scorer (and our own judge prompt) can reuse the recorded verdicts offline.

Run it from a checkout::

    python -m todeval.benchmarks.clarq.tools._convert_judge_cache \\
        ../shared/data/clarq/reference/judge_cache.json.gz \\
        -o src/todeval/data/clarq/judge_verdicts.jsonl.gz

Parsing uses only the section headings of the recorded prompts (never their instructions):

* the gold section starts after its heading and holds one line ``1. <gold>`` followed by four
  tabs, a purpose label and the purpose;
* the predictions section (after its heading) runs up to the last blank line before the
  closing instructions; it is kept verbatim as the key's numbered list, and split at
  ``\\n2. ``, ``\\n3. ``, ... (where the item before ends in one sentence mark) only to show
  the predictions one by one;
* the original appended ``.``/``。`` to every line that did not end in a sentence mark; since the
  gold sentence and the predictions were stripped of those marks before, exactly one is removed.

Every entry is checked: the prompt language must equal the language detected from the gold
sentence, and the split predictions must render back to the recorded list. Entries that fail a
check are reported and left out. The output is deterministic (sorted by key, gzip without a
timestamp).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from todeval.benchmarks.clarq._judge import (
    RECORDED_JUDGE,
    JudgeReplyError,
    VerdictEntry,
    digest,
    key_fields,
    parse_verdict,
    predictions_block,
)
from todeval.benchmarks.clarq._text import Language, detect_language, strip_sentence_end
from todeval.core.files import write_output


@dataclass(frozen=True)
class _Headings:
    gold: str
    purpose: str
    predictions: str
    closing: str


_HEADINGS: dict[Language, _Headings] = {
    "en": _Headings(
        gold="Gold Information and its Purpose：\n",
        purpose="\t\t\t\tPurpose of Information: ",
        predictions="\n\nGenerated Information：\n",
        closing="\n\nCarefully determine",
    ),
    "zh": _Headings(
        gold="正确信息及其信息用途：\n",
        purpose="\t\t\t\t信息用途：",
        predictions="\n\n生成信息：\n",
        closing="\n\n仔细判断",
    ),
}


class PromptParseError(ValueError):
    pass


@dataclass(frozen=True)
class RecordedQuestion:
    language: Language
    gold: str
    purpose: str
    block: str
    predictions: list[str]


def _recorded_item(text: str) -> bool:
    """Whether ``text`` can be one recorded prediction: empty, or ending in exactly one
    sentence mark (the one the original appended to a prediction stripped of its marks)."""
    return not text or (strip_sentence_end(text) == text[:-1])


def _split_numbered(block: str) -> list[str]:
    """Split ``1. a\n2. b ...`` into items. A prediction may itself hold ``\n2. ``: a split
    point is taken only where the item before it can be a recorded prediction."""
    if not block.startswith("1. "):
        raise PromptParseError("the predictions do not start with '1. '")
    items: list[str] = []
    rest = block[3:]
    number = 2
    while True:
        marker = f"\n{number}. "
        at = rest.find(marker)
        while at >= 0 and not _recorded_item(rest[:at]):
            at = rest.find(marker, at + 1)
        if at < 0:
            items.append(rest)
            return items
        items.append(rest[:at])
        rest = rest[at + len(marker) :]
        number += 1


def _drop_added_mark(text: str) -> str:
    return text[:-1] if text and strip_sentence_end(text) != text else text


def parse_recorded_prompt(prompt: str) -> RecordedQuestion:
    """The question a recorded judge prompt asked (``PromptParseError`` if not recognised)."""
    language: Language | None = None
    for lang, h in _HEADINGS.items():
        if h.gold in prompt and h.predictions in prompt:
            language = lang
    if language is None:
        raise PromptParseError("no gold and prediction sections")
    h = _HEADINGS[language]
    gold_part = prompt.split(h.gold, 1)[1]
    gold_section, _, after = gold_part.partition(h.predictions)
    end = after.rfind(h.closing)
    if end < 0:
        raise PromptParseError("no closing instructions after the predictions")
    block = after[:end]
    gold_line, sep, purpose = gold_section.partition(h.purpose)
    if not sep or not gold_line.startswith("1. "):
        raise PromptParseError("the gold section is not one '1. <gold> <purpose>' line")
    gold = gold_line[3:]
    if "\n2. " in gold:
        raise PromptParseError("more than one gold sentence")
    predictions = [_drop_added_mark(item) for item in _split_numbered(block)]
    if detect_language(gold) != language:
        raise PromptParseError("the prompt's language is not the gold sentence's")
    if predictions_block(predictions, language) != block:
        raise PromptParseError("the predictions do not render back to the recorded list")
    return RecordedQuestion(
        language=language,
        gold=_drop_added_mark(gold),
        purpose=purpose,
        block=block,
        predictions=predictions,
    )


@dataclass
class Conversion:
    entries: dict[str, VerdictEntry]
    failures: list[str]
    conflicts: int = 0


def convert(document: Any, model: str = RECORDED_JUDGE) -> Conversion:
    """Recorded cache document (``{"entries": [{"messages", "response"}, ...]}``) -> entries."""
    raw = document.get("entries") if isinstance(document, dict) else document
    if not isinstance(raw, list):
        raise PromptParseError("expected an object with an 'entries' list")
    result = Conversion(entries={}, failures=[])
    for i, item in enumerate(raw):
        try:
            messages = item["messages"]
            if len(messages) != 1 or messages[0].get("role") != "user":
                raise PromptParseError("not one user message")
            question = parse_recorded_prompt(messages[0]["content"])
            match, analysis = parse_verdict(item["response"])
        except (PromptParseError, JudgeReplyError, KeyError, TypeError, AttributeError) as exc:
            result.failures.append(f"entry {i}: {exc}")
            continue
        key = digest(
            key_fields(question.language, question.gold, question.purpose, question.block, model)
        )
        entry = VerdictEntry.answering(
            question, key=key, model=model, match=match, analysis=analysis, origin="recorded"
        )
        previous = result.entries.get(key)
        if previous is not None and previous.match != entry.match:
            result.conflicts += 1
        result.entries[key] = entry
    return result


def write_entries(entries: dict[str, VerdictEntry], out: Path) -> None:
    """Sorted JSON lines, gzip-compressed without a timestamp (byte-identical on every run)."""
    text = "".join(entries[k].model_dump_json() + "\n" for k in sorted(entries))
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as gz:
        gz.write(text.encode("utf-8"))
    write_output(out, buffer.getvalue())  # whole or not at all


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m todeval.benchmarks.clarq.tools._convert_judge_cache",
        description="convert the released ClarQ-LLM judge cache into keyed verdicts",
    )
    parser.add_argument("source", type=Path, help="judge_cache.json.gz (or .json)")
    parser.add_argument("-o", "--output", type=Path, required=True, help="verdicts .jsonl.gz")
    parser.add_argument("--model", default=RECORDED_JUDGE, help=f"judge model ({RECORDED_JUDGE})")
    args = parser.parse_args(argv)
    try:
        data = args.source.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        document = json.loads(data.decode("utf-8"))
        result = convert(document, args.model)
        write_entries(result.entries, args.output)
    except (OSError, ValueError, EOFError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    for failure in result.failures:
        print(f"skipped {failure}", file=sys.stderr)
    by_lang = {
        lang: sum(e.language == lang for e in result.entries.values()) for lang in ("en", "zh")
    }
    print(
        f"{len(result.entries)} verdicts ({by_lang['en']} en, {by_lang['zh']} zh), "
        f"{len(result.failures)} skipped, {result.conflicts} conflicting duplicates -> "
        f"{args.output}"
    )
    return 0 if not result.failures else 3


if __name__ == "__main__":
    sys.exit(main())
