"""``todeval data bargain --check``: what a scripted set holds and how easy it is to game.

* the share of multi-intent turns and the turns per intent;
* paraphrase diversity per intent: over the single-intent turns of each intent, distinct
  word bigrams / all bigrams (distinct-2) and the number of distinct utterances;
* the keyword baseline's micro F1 on the set (naive Bayes over words, cross-fitted over 5
  folds of the tasks, the same candidate lists as a run with K = 20, seed 0): a high value
  means the templates give each intent away by its words;
* template-mode sets: the same baseline **across paraphrases** -- fitted on 500 tasks woven
  from one half of every intent's buyer templates, scored on 500 tasks from the other half
  (a category left without a template in a half keeps its templates from the other half): how
  far word statistics carry to wordings never seen;
* llm-mode sets: the blind verifier's disagreement rate.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel

from todeval.benchmarks.bargain.baselines import Fits, fit, tokens
from todeval.benchmarks.bargain.data import (
    DEFAULT_K,
    Dialogue,
    candidates,
    labels_of,
    public_key,
    scripted_dialogue,
)
from todeval.benchmarks.bargain.hierarchy import default_hierarchy
from todeval.benchmarks.bargain.scoring import TurnScore, metric_summaries, score_turn
from todeval.benchmarks.bargain.weaver import (
    CATEGORIES,
    ScriptedTask,
    SetHeader,
    Templates,
    default_templates,
    weave_templates,
)
from todeval.core.records import Estimate


class IntentFigures(BaseModel):
    intent: str
    parent: str
    turns: int
    single_turns: int
    distinct_utterances: int
    distinct_2: float


class CheckReport(BaseModel):
    name: str
    mode: str
    seed: int
    content_sha256: str
    tasks: int
    turns: int
    multi_intent_share: float
    intents_per_turn: dict[str, int]
    turns_per_depth: dict[str, int]
    per_intent: list[IntentFigures]
    keyword_f1: Estimate
    keyword_f1_unseen_templates: Estimate | None = None
    disagreement_rate: float | None = None
    modal_parent_rate: dict[str, float] = {}  # distractors -> share of lists (ties split)


def _distinct_2(texts: Sequence[str]) -> float:
    grams: list[tuple[str, str]] = []
    for text in texts:
        toks = tokens(text)
        grams += list(itertools.pairwise(toks))
    return len(set(grams)) / len(grams) if grams else 0.0


def keyword_scores(dialogues: Sequence[Dialogue], seed: int = 0) -> dict[str, list[TurnScore]]:
    """The keyword labeller's turn scores, cross-fitted, on a run's default candidate lists."""
    fits = Fits("scripted", dialogues)
    labels = list(labels_of("scripted"))
    out: dict[str, list[TurnScore]] = {}
    for d in dialogues:
        model = fits.for_dialogue(d.dialogue_id).keyword
        scored = []
        for turn in d.turns:
            cands = candidates(
                d.dialogue_id, turn, labels, DEFAULT_K, seed, public_key("check", seed)
            )
            text = d.utterances[turn.index].text
            scored.append(
                score_turn(
                    turn.index,
                    turn.speaker,
                    turn.depth,
                    cands,
                    turn.gold,
                    model.predict(text, cands),
                )
            )
        out[d.dialogue_id] = scored
    return out


def template_half(templates: Templates, half: int) -> Templates:
    """Every intent's buyer templates of one parity (0 or 1); a category that would be left
    without one keeps the other half's templates for it."""
    intents = {}
    for intent_id, entry in templates.intents.items():
        mine = [v for i, v in enumerate(entry.buyer) if i % 2 == half]
        for category in CATEGORIES:
            if entry.fits(category) and not entry.model_copy(update={"buyer": tuple(mine)}).texts(
                "buyer", category
            ):
                mine += [
                    v
                    for v in entry.buyer
                    if not isinstance(v, str) and category in v.categories and v not in mine
                ] or [v for v in entry.buyer if isinstance(v, str)]
        intents[intent_id] = entry.model_copy(update={"buyer": tuple(mine)})
    return templates.model_copy(update={"intents": intents})


def unseen_template_f1(seed: int, *, n: int = 500, resamples: int = 1000) -> Estimate:
    """Keyword F1 fitted on tasks from one half of the templates, scored on the other half."""
    h, t = default_hierarchy(), default_templates()
    train = [scripted_dialogue(x) for x in weave_templates(n, seed + 1, h, template_half(t, 0))]
    test = [scripted_dialogue(x) for x in weave_templates(n, seed + 2, h, template_half(t, 1))]
    labels = list(labels_of("scripted"))
    model = fit(train, labels, "template half 0").keyword
    scored = {}
    for d in test:
        turns = []
        for turn in d.turns:
            cands = candidates(d.dialogue_id, turn, labels, DEFAULT_K, 0, public_key("check", 0))
            guess = model.predict(d.utterances[turn.index].text, cands)
            turns.append(score_turn(turn.index, turn.speaker, turn.depth, cands, turn.gold, guess))
        scored[d.dialogue_id] = turns
    return metric_summaries(scored, labels, prefix="kw", seed=0, resamples=resamples)["kw.f1"].micro


def check_set(
    header: SetHeader, tasks: Sequence[ScriptedTask], *, resamples: int = 1000
) -> CheckReport:
    h = default_hierarchy()
    parent = h.parent_of()
    turns = [turn for t in tasks for turn in t.turns]
    sizes = Counter(len(turn.intents) for turn in turns)
    counts = Counter(x for turn in turns for x in turn.intents)
    single: dict[str, list[str]] = {}
    for turn in turns:
        if len(turn.intents) == 1:
            single.setdefault(turn.intents[0], []).append(turn.buyer)
    per_intent = [
        IntentFigures(
            intent=i,
            parent=parent[i],
            turns=counts.get(i, 0),
            single_turns=len(single.get(i, [])),
            distinct_utterances=len(set(single.get(i, []))),
            distinct_2=round(_distinct_2(single.get(i, [])), 4),
        )
        for i in h.intent_ids
    ]
    dialogues = [scripted_dialogue(t) for t in tasks]
    depth = Counter(t.depth_bucket for d in dialogues for t in d.turns)
    scored = keyword_scores(dialogues)
    f1 = metric_summaries(
        scored, list(labels_of("scripted")), prefix="kw", seed=0, resamples=resamples
    )
    agreed = [turn.agreed for turn in turns if turn.agreed is not None]
    return CheckReport(
        name=header.name,
        mode=header.mode,
        seed=header.seed,
        content_sha256=header.content_sha256,
        tasks=len(tasks),
        turns=len(turns),
        multi_intent_share=round(
            sum(n > 1 for n in (len(t.intents) for t in turns)) / len(turns), 4
        ),
        intents_per_turn={str(k): v for k, v in sorted(sizes.items())},
        turns_per_depth={k: depth[k] for k in ("1", "2", "3", "4+") if k in depth},
        per_intent=per_intent,
        keyword_f1=f1["kw.f1"].micro,
        keyword_f1_unseen_templates=(
            unseen_template_f1(header.seed, resamples=resamples)
            if header.mode == "template"
            else None
        ),
        disagreement_rate=(1 - sum(agreed) / len(agreed)) if agreed else None,
        modal_parent_rate={
            mode: round(modal_parent_rate(dialogues, mode), 4) for mode in ("uniform", "hard")
        },
    )


def modal_parent_rate(dialogues: Sequence[Dialogue], distractors: str, k: int = DEFAULT_K) -> float:
    """How often the gold's parent is the most frequent parent of a turn's candidate list (a
    tie among m parents counts 1/m): the parent signal a list gives a labeller that reads
    only the list. Parent-balanced lists leave it at or below the uniform lists' rate."""
    parent = default_hierarchy().parent_of()
    labels = list(labels_of("scripted"))
    groups = parent if distractors == "hard" else None
    total = 0.0
    n = 0
    for d in dialogues:
        for turn in d.turns:
            cands = candidates(
                d.dialogue_id, turn, labels, k, 0, public_key("check", 0), groups=groups
            )
            counts = Counter(parent[c] for c in cands)
            top = max(counts.values())
            modal = [p for p, c in counts.items() if c == top]
            gold = {parent[g] for g in turn.gold}
            total += len(gold & set(modal)) / len(modal)
            n += 1
    return total / n if n else 0.0


def report_text(report: CheckReport) -> str:
    e = report.keyword_f1
    lines = [
        f"scripted set {report.name}: {report.mode} mode, seed {report.seed}, "
        f"sha256 {report.content_sha256[:16]}",
        f"{report.tasks} tasks, {report.turns} buyer turns; multi-intent turns "
        f"{report.multi_intent_share:.1%} (intents per turn: "
        + ", ".join(f"{k}: {v}" for k, v in report.intents_per_turn.items())
        + ")",
        "turns by depth: " + ", ".join(f"{k}: {v}" for k, v in report.turns_per_depth.items()),
        f"keyword baseline micro F1 (cross-fitted, K = {DEFAULT_K}): {e.value:.3f} "
        f"[{e.ci_low:.3f}, {e.ci_high:.3f}]",
    ]
    u = report.keyword_f1_unseen_templates
    if u is not None:
        lines.append(
            f"keyword baseline micro F1 across paraphrases (fitted on one half of the "
            f"templates, scored on the other): {u.value:.3f} [{u.ci_low:.3f}, {u.ci_high:.3f}]"
        )
    if report.disagreement_rate is not None:
        lines.append(f"blind verifier disagreement rate: {report.disagreement_rate:.3f}")
    if report.modal_parent_rate:
        r = report.modal_parent_rate
        lines.append(
            "gold's parent is the modal parent of its candidate list (ties split): "
            + ", ".join(f"{mode} distractors {rate:.3f}" for mode, rate in r.items())
            + " (hard lists are parent-balanced: no more parent signal than uniform ones)"
        )
    d2 = sorted(report.per_intent, key=lambda x: x.distinct_2)
    mean = sum(x.distinct_2 for x in d2) / len(d2)
    lines.append(
        f"distinct-2 per intent (single-intent turns): mean {mean:.3f}, lowest "
        + ", ".join(f"{x.intent} {x.distinct_2:.3f}" for x in d2[:3])
    )
    lines.append(f"{'intent':<34}{'turns':>6}{'single':>7}{'distinct':>9}{'dist-2':>8}")
    for x in report.per_intent:
        lines.append(
            f"{x.intent:<34}{x.turns:>6}{x.single_turns:>7}{x.distinct_utterances:>9}{x.distinct_2:>8.3f}"
        )
    return "\n".join(lines)


__all__ = ["CheckReport", "IntentFigures", "check_set", "keyword_scores", "report_text"]
