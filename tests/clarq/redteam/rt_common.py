"""Shared helpers for red-team seekers (read only SeekerView + provider messages)."""
from __future__ import annotations

import json
import os
import re

from todeval.benchmarks.clarq._text import strip_provider_prefix
from todeval.benchmarks.clarq.protocol import NEUTRAL_REPLIES
from todeval.benchmarks.clarq.providers._lexical import tokenize
from todeval.benchmarks.clarq.providers._replies import canned
from todeval.benchmarks.clarq.providers._targeting import entry_names

_PARENS = re.compile(r"[(（][^)）]*[)）]")


def fixed_replies(lang):
    c = canned(lang)
    texts = {c.apology, c.whole_task, c.unanswerable, c.repeat, c.unrelated, c.vague, c.enough}
    out = {strip_provider_prefix(t).strip() for t in texts}
    out.add(strip_provider_prefix(NEUTRAL_REPLIES[lang]).strip())
    return out


def entries_named_count(words, background, lang):
    count = 0
    for name in entry_names(background):
        tokens = set(tokenize(name, lang))
        if tokens and (tokens <= words or len(tokens & words) >= 2):
            count += 1
    return count


def list_limit(background):
    n = len(entry_names(background))
    return max(4, 0.6 * n)


LOG = os.environ.get("RT_LOG")


def log(obj):
    if LOG:
        with open(LOG, "a") as f:
            f.write(json.dumps(obj, ensure_ascii=False) + "\n")
