"""The two tracks' dialogues, labelled turns and candidate lists, read from package data.

* **craigslist** -- CraigslistBargain dialogues (PPDPP's act-labelled test file): every buyer
  turn carries one of 11 coarse acts, **silver** labels from a rule-based parser. The labeller
  (the seller) sees the listing (title, description, listing price) and the dialogue so far,
  never ``buyer_price`` (the buyer's private target).
* **casino** -- CaSiNo campsite negotiations: utterances of both participants carry **human**
  multi-label strategy annotations. The labeller sees the scenario (the three items) and the
  dialogue so far, never ``participant_info`` (priorities, reasons, outcomes).

CaSiNo's ``annotations`` are ``[text, "l1,l2"]`` pairs with no speaker or index; they are
aligned to ``chat_logs`` in order by exact text (deal actions are never annotated, and in three
dialogues one utterance is skipped), the speaker taken from ``chat_logs``; an empty label inside
a label string is dropped. A dialogue whose annotations do not all align is refused.
"""

from __future__ import annotations

import gzip
import hashlib
import hmac
import json
import math
import random
import secrets
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Literal

from todeval.benchmarks.bargain.hierarchy import default_hierarchy
from todeval.benchmarks.bargain.weaver import (
    ScriptedTask,
    SetHeader,
    default_set,
    hierarchy_tag,
    read_set,
)
from todeval.errors import BadInputError, UsageError

Track = Literal["craigslist", "casino", "scripted"]
TRACKS: tuple[Track, ...] = ("craigslist", "casino", "scripted")
Distractors = Literal["uniform", "hard"]
DISTRACTORS: tuple[Distractors, ...] = ("uniform", "hard")
Split = Literal["test", "all"]
SPLITS: tuple[Split, ...] = ("test", "all")

CRAIGSLIST_LABELS: dict[str, str] = {
    "greet": "says hello or chats casually",
    "inquire": "asks a question about the item or the deal",
    "inform": "gives information about themselves, the item or the deal",
    "propose": "proposes a first price",
    "counter": "proposes a new price after a price was named",
    "counter-noprice": "asks for a better price without naming one",
    "confirm": "asks a yes/no question to confirm something",
    "affirm": "gives an affirmative or positive response",
    "deny": "gives a negative response",
    "agree": "accepts the other side's offer",
    "disagree": "rejects the other side's offer",
}
"""The 11 coarse dialogue acts of the CraigslistBargain lineage (silver labels)."""

CASINO_LABELS: dict[str, str] = {
    "small-talk": "talks about things apart from the negotiation, to build rapport",
    "self-need": "argues for an item from their own need",
    "other-need": "argues for an item from someone else's need (family, friends, pets)",
    "no-need": "says they do not need an item (so the partner may take it)",
    "elicit-pref": "tries to find out which items the partner prefers",
    "uv-part": "undervalues the partner's needs (suggests the partner needs less)",
    "vouch-fair": "appeals to fairness, for their own benefit or to acknowledge a fair deal",
    "showing-empathy": "acknowledges the partner's needs or situation positively",
    "promote-coordination": "promotes working together towards a deal good for both",
    "non-strategic": "none of the strategies above (e.g. a plain offer or logistics)",
}
"""CaSiNo's 10 utterance-level strategies (human labels)."""

PROVENANCE: dict[Track, Literal["silver", "human", "constructed"]] = {
    "craigslist": "silver",
    "casino": "human",
    "scripted": "constructed",
}
PROVENANCE_NOTE: dict[Track, str] = {
    "craigslist": "silver labels: acts assigned by a rule-based parser, not by people",
    "casino": "human labels: utterance-level multi-label strategy annotations (CaSiNo)",
    "scripted": "constructed labels: the intents each generated buyer turn was written for "
    "(Problem Weaver), not checked by people",
}
LABELLED_ROLE: dict[Track, str] = {
    "craigslist": "buyer",
    "casino": "both participants",
    "scripted": "buyer",
}
DEAL_ACTIONS = frozenset({"Submit-Deal", "Accept-Deal", "Reject-Deal", "Walk-Away"})
CASINO_SPEAKERS = {"mturk_agent_1": "Camper 1", "mturk_agent_2": "Camper 2"}
CRAIGSLIST_SPEAKERS = {"sys": "Buyer", "usr": "Seller"}
CASINO_SCENARIO = (
    "Two campers negotiate how to split three packages each of Food, Water and Firewood for "
    "their camping trips (each item matters differently to each of them)."
)
DEFAULT_K = 20
PAPER_STRATEGIES: dict[str, tuple[str, ...]] = {
    "casino": (
        "small-talk",
        "self-need",
        "other-need",
        "no-need",
        "elicit-pref",
        "uv-part",
        "vouch-fair",
    ),
}
"""The strategies a track's own paper scores (CaSiNo, Chawla et al. 2021: seven of the ten;
showing-empathy, promote-coordination and non-strategic are not predicted there)."""


def labels_of(track: Track) -> dict[str, str]:
    """Label id -> meaning: the acts, the strategies, or the hierarchy's intents."""
    if track == "scripted":
        return default_hierarchy().labels()
    return CRAIGSLIST_LABELS if track == "craigslist" else CASINO_LABELS


@dataclass(frozen=True)
class Utterance:
    """One entry of the dialogue as every participant saw it."""

    speaker: str
    text: str


@dataclass(frozen=True)
class LabelledTurn:
    """A turn to label: the utterance at ``index``, its speaker, its gold label set and its
    depth (the position of this turn among the speaker's labelled turns, from 1)."""

    index: int
    speaker: str
    gold: tuple[str, ...]
    depth: int
    agreed: bool | None = None  # scripted llm-mode sets: did the blind verifier agree?

    @property
    def depth_bucket(self) -> str:
        return str(self.depth) if self.depth < 4 else "4+"


@dataclass(frozen=True)
class Dialogue:
    """One dialogue of a track: its public context, its utterances and its labelled turns."""

    dialogue_id: str
    track: Track
    split: str
    context: tuple[tuple[str, str], ...]  # public fields shown to the labeller, in order
    utterances: tuple[Utterance, ...]
    turns: tuple[LabelledTurn, ...]
    group: str

    @property
    def n_turns(self) -> int:
        return len(self.turns)


DEPTHS = ("1", "2", "3", "4+")


def _data(*parts: str) -> bytes:
    node = resources.files("todeval") / "data" / "bargain"
    for part in parts:
        node = node / part
    try:
        return node.read_bytes()
    except FileNotFoundError as exc:  # pragma: no cover - a broken install
        raise BadInputError(f"bargain package data missing: {'/'.join(parts)}") from exc


def _with_depths(raw: Sequence[tuple[int, str, tuple[str, ...]]]) -> tuple[LabelledTurn, ...]:
    seen: dict[str, int] = {}
    out = []
    for index, speaker, gold in raw:
        seen[speaker] = seen.get(speaker, 0) + 1
        out.append(LabelledTurn(index, speaker, gold, seen[speaker]))
    return tuple(out)


@cache
def craigslist_dialogues() -> tuple[Dialogue, ...]:
    """The 181 non-empty act-labelled dialogues; buyer turns are labelled."""
    text = gzip.decompress(_data("craigslistbargain_acts_test.jsonl.gz")).decode("utf-8")
    out = []
    for row_no, line in enumerate(text.splitlines()):
        row = json.loads(line)
        if not row["dialog"]:
            continue
        utterances = []
        raw = []
        for i, turn in enumerate(row["dialog"]):
            speaker = CRAIGSLIST_SPEAKERS[turn["speaker"]]
            utterances.append(Utterance(speaker, turn["text"]))
            if speaker == "Buyer":
                act = turn["strategy"]
                if act not in CRAIGSLIST_LABELS:
                    raise BadInputError(f"craigslist row {row_no}: unknown act {act!r}")
                raw.append((i, speaker, (act,)))
        context = (
            ("item", str(row["item_name"])),
            ("listing price", f"${row['seller_price']}"),
            ("description", str(row["seller_item_description"])),
        )
        out.append(
            Dialogue(
                dialogue_id=f"cb-{row_no:03d}",
                track="craigslist",
                split="test",
                context=context,
                utterances=tuple(utterances),
                turns=_with_depths(raw),
                group=str(row["item_name"]),
            )
        )
    return tuple(out)


def _casino_labels(text: str) -> tuple[str, ...]:
    labels: list[str] = []
    for part in text.split(","):
        label = part.strip()
        if label and label not in labels:
            if label not in CASINO_LABELS:
                raise BadInputError(f"casino: unknown strategy {label!r}")
            labels.append(label)
    return tuple(labels)


def _deal_text(entry: dict[str, object], speaker: str) -> str:
    data = entry.get("task_data")
    if entry["text"] == "Submit-Deal" and isinstance(data, dict):
        mine = data.get("issue2youget", {})
        theirs = data.get("issue2theyget", {})
        if isinstance(mine, dict) and isinstance(theirs, dict):
            gets = ", ".join(f"{k} {v}" for k, v in sorted(mine.items()))
            gives = ", ".join(f"{k} {v}" for k, v in sorted(theirs.items()))
            return f"[Submit-Deal: {speaker} gets {gets}; the partner gets {gives}]"
    return f"[{entry['text']}]"


@cache
def casino_dialogues(split: str) -> tuple[Dialogue, ...]:
    """The annotated dialogues of one CaSiNo split (train, valid or test)."""
    rows = json.loads(gzip.decompress(_data("casino", f"casino_{split}.json.gz")))
    out = []
    for row in rows:
        annotations = row.get("annotations") or []
        if not annotations:
            continue
        utterances = []
        raw = []
        j = 0
        for entry in row["chat_logs"]:
            speaker = CASINO_SPEAKERS.get(entry["id"], str(entry["id"]))
            if entry["text"] in DEAL_ACTIONS:
                utterances.append(Utterance(speaker, _deal_text(entry, speaker)))
                continue
            index = len(utterances)
            utterances.append(Utterance(speaker, entry["text"]))
            if j < len(annotations) and annotations[j][0] == entry["text"]:
                labels = _casino_labels(annotations[j][1])
                j += 1
                if labels:
                    raw.append((index, speaker, labels))
        if j != len(annotations):
            raise BadInputError(
                f"casino {split} dialogue {row['dialogue_id']}: {len(annotations) - j} "
                "annotation(s) match no chat_logs utterance in order"
            )
        out.append(
            Dialogue(
                dialogue_id=f"casino-{split}-{row['dialogue_id']}",
                track="casino",
                split=split,
                context=(("scenario", CASINO_SCENARIO),),
                utterances=tuple(utterances),
                turns=_with_depths(raw),
                group=split,
            )
        )
    return tuple(out)


def scripted_dialogue(task: ScriptedTask) -> Dialogue:
    """A Problem-Weaver task as a dialogue: buyer turns labelled, seller replies between."""
    utterances: list[Utterance] = []
    raw: list[tuple[int, str, tuple[str, ...]]] = []
    agreed: dict[int, bool | None] = {}
    for turn in task.turns:
        index = len(utterances)
        utterances.append(Utterance("Buyer", turn.buyer))
        raw.append((index, "Buyer", tuple(turn.intents)))
        agreed[index] = turn.agreed
        if turn.seller is not None:
            utterances.append(Utterance("Seller", turn.seller))
    context = (
        ("item", task.title),
        ("category", task.category),
        ("listing price", f"${task.price}"),
        ("description", task.description),
    )
    turns = tuple(replace(t, agreed=agreed[t.index]) for t in _with_depths(raw))
    return Dialogue(
        dialogue_id=task.task_id,
        track="scripted",
        split="test",
        context=context,
        utterances=tuple(utterances),
        turns=turns,
        group=task.category,
    )


def scripted_set(path: str | None = None) -> tuple[SetHeader, tuple[ScriptedTask, ...]]:
    """The shipped scripted set, or the set file at ``path``; its hierarchy must be ours."""
    if path is None:
        return default_set()
    header, tasks = read_set(path)
    if header.hierarchy != hierarchy_tag(default_hierarchy()):
        raise BadInputError(
            f"{path}: made with hierarchy {header.hierarchy}; this package scores "
            f"{hierarchy_tag(default_hierarchy())}"
        )
    known = set(default_hierarchy().intent_ids)
    for task in tasks:
        for turn in task.turns:
            for intent in turn.intents:
                if intent not in known:
                    raise BadInputError(f"{path}: task {task.task_id}: unknown intent {intent!r}")
    return header, tuple(tasks)


@cache
def scripted_dialogues(path: str | None = None) -> tuple[Dialogue, ...]:
    return tuple(scripted_dialogue(t) for t in scripted_set(path)[1])


def load_track(track: Track, split: Split, scripted: str | None = None) -> tuple[Dialogue, ...]:
    """The dialogues a run labels: craigslist has one set (``test`` and ``all`` are the same
    181 dialogues); casino ``test`` is the 42 annotated test dialogues, ``all`` the 396;
    scripted is the shipped Problem-Weaver set or the set file ``scripted``."""
    if track == "scripted":
        return scripted_dialogues(scripted)
    if track == "craigslist":
        return craigslist_dialogues()
    if split == "test":
        return casino_dialogues("test")
    return casino_dialogues("train") + casino_dialogues("valid") + casino_dialogues("test")


def task_set_name(track: Track, split: Split, scripted: str | None = None) -> str:
    """The task set's name carries the label provenance, so it shows beside every number."""
    if track == "scripted":
        return f"scripted-{scripted_set(scripted)[0].name}-constructed"
    if track == "craigslist":
        return "craigslist-acts-silver"
    return f"casino-{split}-human"


# -- candidate lists -------------------------------------------------------------------------

CANDIDATE_SCHEME = "keyed-v2"
"""How candidate lists are drawn (part of every task's content, so of the task-set hash): from
a per-run secret key, in the label set's order. ``v1`` (before issue 41) drew them from public
values and shuffled them; the shuffle could be inverted to read the gold off the list."""
KEY_BYTES = 32
HARD_MIN_PER_PARENT = 3
"""A hard list holds at least this many intents of every parent: the most intents a scripted
turn holds (so every gold set fits in any hard list)."""


def new_key() -> bytes:
    """A fresh secret candidate key (``secrets.token_bytes``)."""
    return secrets.token_bytes(KEY_BYTES)


def public_key(purpose: str, seed: int) -> bytes:
    """A key anyone can recompute, for tools where no labeller under test reads the lists (the
    annotation export, the set checks, an llm-mode verifier): never for a run."""
    return hashlib.sha256(f"bargain-public-key|{purpose}|{seed}".encode()).digest()


def key_fingerprint(key: bytes) -> str:
    """What a record says about the key its lists came from (a one-way digest)."""
    return hashlib.sha256(b"bargain-candidate-key|" + key).hexdigest()[:16]


def _keyed_rng(key: bytes, *parts: object) -> random.Random:
    message = "|".join(str(p) for p in parts).encode()
    digest = hmac.new(key, message, hashlib.sha256).digest()
    return random.Random(int.from_bytes(digest, "big"))


def hard_quota(labels: Sequence[str], groups: Mapping[str, str], k: int) -> dict[str, int]:
    """``--distractors hard``: how many intents of each parent a list holds -- the same number
    for every parent (``max(3, ceil(k / parents))``, capped at the parent's size), whatever the
    gold: 21 for the 7 parents of the hierarchy at any ``k`` up to 21."""
    sizes = Counter(groups.get(label, "") for label in labels)
    per = max(HARD_MIN_PER_PARENT, -(-k // len(sizes)))
    return {parent: min(per, n) for parent, n in sizes.items()}


def list_inclusion(
    gold: Sequence[str], labels: Sequence[str], k: int, groups: Mapping[str, str] | None = None
) -> float:
    """The probability that a list drawn *without* the gold would hold every label of ``gold``
    (uniform: C(L-g, s-g) / C(L, s); hard: the product over parents). A turn's list is that
    gold-free draw conditioned on holding the gold, so what a list alone says of the gold is
    P(G | list) ∝ P(G) / list_inclusion(G) over the G it holds: the in-list prior."""
    g = len(set(gold))
    if groups:
        quota = hard_quota(labels, groups, k)
        sizes = Counter(groups.get(label, "") for label in labels)
        mine = Counter(groups.get(label, "") for label in set(gold))
        p = 1.0
        for parent, n in sizes.items():
            m, t = mine.get(parent, 0), quota[parent]
            if m > t:
                return 0.0
            p *= math.comb(n - m, t - m) / math.comb(n, t)
        return p
    size = max(min(k, len(labels)), g)
    return math.comb(len(labels) - g, size - g) / math.comb(len(labels), size)


def candidates(
    dialogue_id: str,
    turn: LabelledTurn,
    labels: Sequence[str],
    k: int,
    seed: int,
    key: bytes,
    groups: Mapping[str, str] | None = None,
) -> list[str]:
    """The turn's candidate list, in the label set's order: every gold label plus distractors,
    ``min(k, len(labels))`` ids in all (never fewer than the gold).

    The distractors are drawn with a generator keyed by ``key`` (HMAC-SHA256 of the scheme,
    ``seed``, the dialogue and the turn): a run's key is a secret no labeller can reach, so
    the draw cannot be replayed, and the order is the label set's, so it says nothing. The list
    is a *gold-free* draw conditioned on holding the gold: uniform over the other labels, or,
    with ``groups`` (``--distractors hard``: label -> parent), the same number of intents of
    every parent (:func:`hard_quota`; the gold's siblings fill its parent). With the default
    ``k`` on craigslist and casino a list is every label: it does not depend on the gold."""
    gold = list(dict.fromkeys(turn.gold))
    order = {label: i for i, label in enumerate(labels)}
    unknown = [g for g in gold if g not in order]
    if unknown:
        raise BadInputError(f"{dialogue_id} turn {turn.index}: unknown label {unknown[0]!r}")
    rng = _keyed_rng(key, "bargain-candidates", CANDIDATE_SCHEME, seed, dialogue_id, turn.index)
    if groups:
        chosen = _balanced(gold, labels, groups, k, rng, f"{dialogue_id} turn {turn.index}")
    else:
        size = max(min(k, len(labels)), len(gold))
        others = [label for label in labels if label not in gold]
        chosen = gold + rng.sample(others, size - len(gold))
    return sorted(chosen, key=order.__getitem__)


def _balanced(
    gold: Sequence[str],
    labels: Sequence[str],
    groups: Mapping[str, str],
    k: int,
    rng: random.Random,
    where: str,
) -> list[str]:
    """Parent-balanced candidates: every parent holds its :func:`hard_quota` of intents (the
    gold's own, then siblings drawn uniformly), so the list's shape never depends on the gold."""
    quota = hard_quota(labels, groups, k)
    by_parent: dict[str, list[str]] = {}
    for label in labels:
        by_parent.setdefault(groups.get(label, ""), []).append(label)
    chosen: list[str] = []
    for parent, members in by_parent.items():
        mine = [g for g in gold if groups.get(g, "") == parent]
        if len(mine) > quota[parent]:
            raise BadInputError(
                f"{where}: {len(mine)} gold intents of parent {parent!r}; a hard list holds "
                f"{quota[parent]} (raise --k)"
            )
        rest = [x for x in members if x not in mine]
        chosen += mine + rng.sample(rest, quota[parent] - len(mine))
    return chosen


def parent_groups(track: Track) -> dict[str, str]:
    """``--distractors hard``: each intent's parent (the hierarchy's groups)."""
    if track != "scripted":
        raise UsageError("--distractors hard needs an intent hierarchy (--track scripted)")
    return default_hierarchy().parent_of()


__all__ = [
    "CANDIDATE_SCHEME",
    "CASINO_LABELS",
    "CRAIGSLIST_LABELS",
    "DEFAULT_K",
    "DEPTHS",
    "DISTRACTORS",
    "PROVENANCE",
    "SPLITS",
    "TRACKS",
    "Dialogue",
    "LabelledTurn",
    "Split",
    "Track",
    "Utterance",
    "candidates",
    "casino_dialogues",
    "craigslist_dialogues",
    "hard_quota",
    "key_fingerprint",
    "labels_of",
    "list_inclusion",
    "load_track",
    "new_key",
    "public_key",
    "scripted_dialogue",
    "scripted_dialogues",
    "scripted_set",
    "task_set_name",
]
