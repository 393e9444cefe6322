"""Attack A: "bag" -- one question sentence per turn packing a bag of words (background words
under the list guard and the provider's own words) behind all the
wh-words. Never reasons about what is missing. Costs 1 question a turn by the counter."""
from __future__ import annotations

import os
import random
import re

from tests.clarq.redteam.rt_common import entries_named_count, fixed_replies, list_limit, log
from todeval.benchmarks.clarq._text import strip_provider_prefix
from todeval.benchmarks.clarq.protocol import GOODBYES, SeekerView
from todeval.benchmarks.clarq.providers._lexical import tokenize

_WORD_EN = re.compile(r"[A-Za-z][A-Za-z'-]*")
_CJK = re.compile("[\u4e00-\u9fff]+")

KEEP = float(os.environ.get("RT_KEEP", "0.7"))
MISSES = int(os.environ.get("RT_MISSES", "1"))
SAID_MAX = float(os.environ.get("RT_SAID", "0.7"))
MAXBG = int(os.environ.get("RT_MAXBG", "99"))
TEMPLATE = os.environ.get("RT_TPL", "full")


def surface_words(text, lang):
    """Surface units whose tokens the provider reads (English words, Chinese runs split into
    2-char pieces so each piece is one bigram token)."""
    if lang == "en":
        out = []
        for w in _WORD_EN.findall(text):
            t = tokenize(w, lang)
            if t:
                out.append((w, frozenset(t)))
        return out
    out = []
    for run in _CJK.findall(text):
        for i in range(len(run) - 1):
            piece = run[i : i + 2]
            t = tokenize(piece, lang)
            if t:
                out.append((piece, frozenset(t)))
    return out


class BagSeeker:
    async def start(self, context: SeekerView) -> None:
        self.view = context
        self.lang = context.lang
        self.fixed = fixed_replies(self.lang)
        self.turn = 0
        self.provider_texts: list[str] = []  # response 0 + releases
        self.misses_in_row = 0
        self.hits = 0
        self.rng = random.Random(context.seed)
        b = context.background
        self.bg_text = [b.task, *b.items, *b.skills, *b.scenes]

    def _bag(self):
        lang = self.lang
        bg = self.view.background
        limit = list_limit(bg)
        # provider words: every unit of what it said; keep a share
        prov = []
        mode = os.environ.get("RT_PROV", "all")
        texts = list(self.provider_texts)
        if mode == "r0":
            texts = texts[-1:]
        elif mode == "r0latest":
            texts = texts[-1:] + texts[:1] if len(texts) > 1 else texts
        elif mode == "none":
            texts = []
        for t in texts:
            prov.extend(surface_words(t, lang))
        bgw = []
        for t in self.bg_text:
            bgw.extend(surface_words(_strip(t), lang))
        seen = set()
        chosen = []
        words: set[str] = set()
        bgtok = set()
        for _, toks in bgw:
            bgtok |= toks
        said = set()
        for _, toks in prov:
            said |= toks
        said -= bgtok
        said_cov = set()
        pool = [(w, t, "p") for w, t in prov] + [(w, t, "b") for w, t in bgw]
        excl = os.environ.get("RT_EXCL", "0")
        if os.environ.get("RT_ADAPT") and self.misses_in_row > 0:
            excl = "1"
        if excl != "0" and len(self.provider_texts) > 1:
            rel = set()
            for t in self.provider_texts[:-1]:
                for _, tk in surface_words(t, lang):
                    rel |= tk
            if excl == "2":  # keep the newest release's words
                keep = set()
                for _, tk in surface_words(self.provider_texts[0], lang):
                    keep |= tk
                newest = set()
                for t in self.provider_texts[1:-1]:
                    for _, tk in surface_words(t, lang):
                        newest |= tk
                rel = newest - keep
            pool = [p for p in pool if not (p[1] & rel)]
        # newest release first
        for w, toks, _src in pool:
            if w.lower() in seen:
                continue
            if self.rng.random() > KEEP:
                continue
            new_words = words | toks
            if entries_named_count(new_words, bg, lang) >= limit:
                continue
            new_cov = said_cov | (toks & said)
            if len(new_cov) >= 8 and len(new_cov) >= SAID_MAX * max(1, len(said)) and len(
                new_cov
            ) > len(said_cov):
                continue
            seen.add(w.lower())
            chosen.append(w)
            words = new_words
            said_cov = new_cov
        return chosen

    def _question(self):
        bag = self._bag()
        if self.lang == "en":
            if TEMPLATE == "full":
                return f"Which {' '.join(bag)} should I use, where, when, who, why and how?"
            return f"Which {' '.join(bag)} should I use?"
        if TEMPLATE == "full":
            return f"我应该用哪个：{'、'.join(bag)}？"
        return f"{'、'.join(bag)}？"

    async def respond(self, provider_message: str) -> str:
        self.turn += 1
        body = strip_provider_prefix(provider_message).strip()
        if self.turn == 1:
            return "I need help with my task." if self.lang == "en" else "我需要你帮我完成任务。"
        if body in self.fixed:
            if self.turn > 2:
                self.misses_in_row += 1
        else:
            if self.turn > 2:
                self.hits += 1
            self.misses_in_row = 0
            self.provider_texts.insert(0, body)
        if self.misses_in_row >= MISSES:
            return GOODBYES[self.lang]
        q = self._question()
        log({"task": self.view.task_id, "turn": self.turn, "q": q, "prev": body[:80]})
        return q


def _strip(t):
    return re.sub(r"[(（][^)）]*[)）]", "", t)
