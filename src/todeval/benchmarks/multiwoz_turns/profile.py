"""How ``todeval run multiwoz-turns`` results are shown (imported when results are shown)."""

from __future__ import annotations

from todeval.scoring.multiwoz.profile import corpus_profile

PROFILE = corpus_profile("multiwoz-turns", run=True)
