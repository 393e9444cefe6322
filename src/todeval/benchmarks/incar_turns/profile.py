"""How ``todeval run incar-turns`` results are shown (imported when results are shown)."""

from __future__ import annotations

from todeval.scoring.incar.profile import corpus_profile

PROFILE = corpus_profile("incar-turns", run=True)
