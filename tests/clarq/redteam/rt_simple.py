"""Attack B: "half-parrot" -- each turn one question: 'Which <a random half of the words the
provider has said so far (response 0 + releases)>?' (zh: '<those bigrams joined by 、>？').
No background, no guard-avoidance logic. Stops at the first fixed reply."""
import random
import re

from tests.clarq.redteam.rt_common import fixed_replies
from todeval.benchmarks.clarq._text import strip_provider_prefix
from todeval.benchmarks.clarq.protocol import GOODBYES

_W = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
_CJK = re.compile("[\u4e00-\u9fff]+")

class SimpleSeeker:
    async def start(self, view):
        self.lang = view.lang
        self.fixed = fixed_replies(self.lang)
        self.turn = 0
        self.said = []
        self.rng = random.Random(view.seed)
    def _units(self, t):
        if self.lang == "en":
            return _W.findall(t)
        return [r[i:i+2] for r in _CJK.findall(t) for i in range(len(r) - 1)]
    async def respond(self, msg):
        self.turn += 1
        body = strip_provider_prefix(msg).strip()
        if self.turn == 1:
            return "I need help with my task." if self.lang == "en" else "我需要你帮我完成任务。"
        if body in self.fixed:
            return GOODBYES[self.lang]
        self.said.append(body)
        units = list(dict.fromkeys(u for t in self.said for u in self._units(t)))
        pick = [u for u in units if self.rng.random() < 0.5]
        if self.lang == "en":
            return "Which " + " ".join(pick) + "?"
        return "、".join(pick) + "？"
