"""MultiWOZ corpus scoring (``todeval score multiwoz``): Inform, Success, BLEU, Combined,
lexical richness and DST under the standard MultiWOZ evaluator's rules."""

from __future__ import annotations

from todeval.scoring.multiwoz._evaluate import evaluate

__all__ = ["evaluate"]
