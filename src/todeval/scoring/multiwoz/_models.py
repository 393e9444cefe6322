"""Pydantic models crossing the scorer's boundary: prediction turns in, results out."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictStr

from todeval.scoring.multiwoz._names import METRICS as METRICS
from todeval.scoring.multiwoz._names import Metric as Metric

SCHEME = "standard MultiWOZ evaluator (Nekvinda & Dusek 2021)"
"""The scoring scheme's name, recorded in every result (other MultiWOZ schemes exist)."""


class PredictedTurn(BaseModel):
    """One system turn of the community prediction format (extra keys are ignored)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    response: StrictStr = Field(description="delexicalised response with [slot] placeholders")
    state: dict[StrictStr, dict[StrictStr, StrictStr]] | None = Field(
        None, description="predicted dialogue state {domain: {slot: value}}"
    )
    active_domains: list[StrictStr] | None = Field(None, description="domains the turn is about")


class DomainRates(BaseModel):
    """Inform and Success (percent) over the dialogues whose goal has this domain."""

    dialogues: int
    inform: float | None = None
    success: float | None = None


class RichnessScores(BaseModel):
    avg_length: float = Field(description="mean tokens per response")
    entropy: float = Field(description="unigram entropy, bits")
    cond_entropy: float = Field(description="conditional bigram entropy, bits")
    unique_words: int
    unique_bigrams: int
    unique_trigrams: int
    msttr: float = Field(description="mean segmental type-token ratio, windows of 50 tokens")


class DstScores(BaseModel):
    """Percentages over all scored turns (slot scores pool all slots)."""

    turns: int
    joint_accuracy: float
    slot_precision: float
    slot_recall: float
    slot_f1: float


class DialogueScore(BaseModel):
    """Per-dialogue details; the bootstrap over dialogues resamples these."""

    dialogue_id: str
    turns: int
    domains: list[str] = Field(default_factory=list, description="goal domains")
    inform: dict[str, bool] = Field(default_factory=dict, description="per goal domain")
    success: dict[str, bool] = Field(default_factory=dict, description="per goal domain")
    inform_total: bool | None = None
    success_total: bool | None = None
    bleu_stats: list[int] | None = Field(
        None, description="summed BLEU statistics: hyp_len, ref_len, correct 1-4, total 1-4"
    )
    lengths: list[int] | None = Field(None, description="richness tokens per response")
    dst_joint: list[bool] | None = None
    dst_counts: list[int] | None = Field(None, description="slot tp, fp, fn")


class ScoringOptions(BaseModel):
    metrics: list[Metric]
    active_domains: Literal["given", "state", "placeholders"]
    gold_states: bool = Field(description="True when gold states replaced the predicted ones")
    estimated_active_domain_turns: int = Field(
        0, description="turns whose active domains were estimated from state changes"
    )


class MultiwozResult(BaseModel):
    """Everything ``evaluate`` computed, rates in percent (BLEU 0-100)."""

    scheme: str = SCHEME
    source: str = Field("", description="the prediction file, when scored from a file")
    options: ScoringOptions
    n_dialogues: int
    n_turns: int
    missing_dialogues: int = Field(
        0, description="test dialogues absent from the predictions (not scored)"
    )
    missing_turns: int = Field(
        0, description="system turns absent at the end of given dialogues (not scored)"
    )
    inform: float | None = None
    success: float | None = None
    bleu: float | None = None
    combined: float | None = Field(None, description="(Inform + Success) / 2 + BLEU")
    by_domain: dict[str, DomainRates] = Field(default_factory=dict)
    richness: RichnessScores | None = None
    dst: DstScores | None = None
    warnings: list[str] = Field(default_factory=list)
    dialogues: list[DialogueScore] = Field(default_factory=list)
