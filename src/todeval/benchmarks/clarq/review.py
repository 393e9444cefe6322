"""Who failed in a ClarQ dialogue (issue 30): the seeker (the agent under test) or the provider.

Every provider turn of a finished episode is replayed from its record -- the history, the
tree's state, the gate -- and read by the ``rule`` provider, teacher-forced as the provider
audit reads a transcript (:mod:`.tools.audit`): what kind of turn the seeker sent and whether it
targets a node. Against that reading:

provider (the simulator)
  ``release_unasked``   it released a node the seeker's turn does not target (a free answer:
                        it spoils a success as much as a failure)
  ``refused_targeted``  it released nothing to a turn that targets an available node by its
                        intent or meaning (the ``rule`` provider would have released it), or
                        kept the gate shut to a question about the task
  ``false_enough``      it said "enough information" with nodes still to release
  ``provider_error``    it crashed or broke the protocol

seeker (the agent under test)
  ``quit_early``        it said goodbye with nodes still to release and no "enough"
  ``ran_out``           it reached the message cap with nodes still to release
  ``untargeted``        a detail question that targets no available node
  ``repeated``          it asked again what was already answered
  ``asked_nothing``     a turn with no detail question (a plan, thanks, "anything else?")
  ``off_task``          a turn that shares nothing with the task (at the gate too)
  ``seeker_error``      it crashed or returned no text

Under the ``rule`` provider its own runs show no provider fault by construction (it is the
reference); the review is for other providers (``llm``, a panel's) and for the seeker's side.
A reading by rules cannot see what a turn means beyond its words and the embedding matcher:
the provider audit's agreement with GPT-4o (kappa 0.759) bounds how far it can be trusted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from todeval.benchmarks.clarq._tasks import ClarqTask, load_tasks
from todeval.benchmarks.clarq.game import says_goodbye
from todeval.benchmarks.clarq.protocol import PROTOCOLS, Decision, ProviderView, SeekerKind
from todeval.benchmarks.clarq.providers.rule import Route, RuleProvider
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord, Manifest
from todeval.dialogue.episode import Termination
from todeval.errors import BadInputError
from todeval.review import Fault, Review, Reviewer, review_of

SIMULATOR_FAULTS = ("release_unasked", "refused_targeted", "false_enough", "provider_error")
AGENT_FAULTS = (
    "quit_early", "ran_out", "untargeted", "repeated", "asked_nothing", "off_task",
    "seeker_error",
)  # fmt: skip

_SEEKER_KINDS = {
    SeekerKind.UNANSWERABLE: "untargeted",
    SeekerKind.REPEAT: "repeated",
    SeekerKind.WHOLE_TASK: "asked_nothing",
    SeekerKind.VAGUE: "asked_nothing",
    SeekerKind.UNRELATED: "off_task",
}


def review_episode(
    task: ClarqTask,
    record: EpisodeRecord,
    reference: RuleProvider | None = None,
    protocol: str = PROTOCOLS[0],
) -> Review:
    """The review of one episode played under ``protocol`` (see the module)."""
    reader = reference or RuleProvider()
    tree = task.tree()
    history: list[str] = []
    gate_open = False
    enough = False
    faults: list[Fault] = []
    pending: tuple[ProviderView, Any] | None = None
    for event in record.events:
        text = str(event.data.get("text", ""))
        if event.kind == "seeker_message":
            history.append(text)
            if says_goodbye(text, task.lang, protocol):
                pending = None
                if tree.available() and not enough:
                    left = ", ".join(n.label for n in tree.available())
                    faults.append(_agent("quit_early", event.turn, f"{text} (open: {left})"))
                continue
            view = ProviderView(
                task=task,
                history=tuple(history),
                available=tree.available(),
                released=tree.released,
                gate_open=gate_open,
                protocol=protocol,
            )
            pending = (view, reader.decide(view))
        elif event.kind == "provider_message":
            history.append(text)
            decision = str(event.data.get("decision", ""))
            released = [str(label) for label in event.data.get("released", [])]
            if pending is not None:
                view, expected = pending
                faults += _turn_faults(reader, view, expected, decision, released, event.turn)
                pending = None
            for label in released:
                if tree.is_available(label):
                    tree.release(label)
            gate_open = gate_open or decision == Decision.GATE_PASS.value
            enough = enough or decision == Decision.ENOUGH.value
    faults += _ending(record, bool(tree.available()))
    return review_of(record, faults)


def _turn_faults(
    reader: RuleProvider,
    view: ProviderView,
    expected: Any,
    decision: str,
    released: list[str],
    turn: int,
) -> list[Fault]:
    asked = view.question
    if not view.gate_open:  # the opening: the task question passes the gate, anything else not
        if expected.decision is Decision.APOLOGY:
            return [_agent("off_task", turn, asked)]
        if decision == Decision.APOLOGY.value:
            return [_simulator("refused_targeted", turn, f"{asked} (about the task)")]
        return []
    out: list[Fault] = []
    kind = _SEEKER_KINDS.get(expected.kind)
    if kind is not None and expected.decision is not Decision.RELEASE:
        out.append(_agent(kind, turn, asked))
    by_label = {node.label: node for node in view.available}
    for label in released:
        node = by_label.get(label)
        if node is not None and reader.route_of(view, node) is None:
            out.append(_simulator("release_unasked", turn, f"{asked} -> node {label}"))
    refused = not released and decision != Decision.ENOUGH.value
    if refused and expected.decision is Decision.RELEASE and _targeted(expected.note):
        labels = ", ".join(expected.released)
        out.append(_simulator("refused_targeted", turn, f"{asked} (targets node {labels})"))
    if decision == Decision.ENOUGH.value and view.available:
        left = ", ".join(n.label for n in view.available)
        out.append(_simulator("false_enough", turn, f"{asked} (open: {left})"))
    return out


def _targeted(note: str) -> bool:
    """Whether the reference released by intent or meaning (not by unseen words alone)."""
    return f"targeted by {Route.INTENT}" in note or f"targeted by {Route.MEANING}" in note


def _ending(record: EpisodeRecord, nodes_left: bool) -> list[Fault]:
    reason = record.reason or ""
    if record.outcome is Outcome.USER_SIMULATOR_ERROR:
        return [_simulator("provider_error", record.turns, reason)]
    if record.outcome is Outcome.SYSTEM_ERROR:
        return [_agent("seeker_error", record.turns, reason)]
    if record.termination == Termination.TURN_CAP.value and nodes_left:
        return [_agent("ran_out", record.turns, reason)]
    return []


def _agent(kind: str, turn: int, evidence: str) -> Fault:
    return Fault(side="agent", kind=kind, turn=turn, evidence=evidence)


def _simulator(kind: str, turn: int, evidence: str) -> Fault:
    return Fault(side="simulator", kind=kind, turn=turn, evidence=evidence)


def review_run(manifest: Manifest, records: Iterable[EpisodeRecord]) -> Iterator[Review]:
    """Every record of one ClarQ run, reviewed against the shipped tasks of its language."""
    lang = str(manifest.config.get("lang", "en"))
    split = str(manifest.config.get("task_set", "test"))
    protocol = str(manifest.config.get("protocol", PROTOCOLS[0]))
    try:
        tasks = {t.task_id: t for t in load_tasks(lang, split)}  # type: ignore[arg-type]
    except (ValueError, KeyError) as exc:
        raise BadInputError(f"cannot read the {lang} {split} tasks: {exc}") from None
    reader = RuleProvider()
    for record in records:
        task = tasks.get(record.task_id)
        if task is None:
            raise BadInputError(f"task {record.task_id} is not a shipped {lang} {split} task")
        yield review_episode(task, record, reader, protocol)


def briefs(manifest: Manifest, records: Sequence[EpisodeRecord]) -> dict[str, str]:
    """For the LLM reviewer: what the seeker was told and the provider's response tree."""
    lang = str(manifest.config.get("lang", "en"))
    split = str(manifest.config.get("task_set", "test"))
    tasks = {t.task_id: t for t in load_tasks(lang, split)}  # type: ignore[arg-type]
    out = {}
    for record in records:
        task = tasks.get(record.task_id)
        if task is None:
            continue
        b = task.background
        told = "; ".join(
            f"{name}: {value}"
            for name, value in (
                ("role", b.role),
                ("task", b.task),
                ("items", ", ".join(b.items)),
                ("skills", ", ".join(b.skills)),
                ("scenes", ", ".join(b.scenes)),
            )
            if value
        )
        nodes = "\n".join(
            f"- [{n.label}] {n.text}" + (f" (answers: {n.purpose})" if n.purpose else "")
            for n in task.nodes
        )
        out[record.episode_id] = (
            f"The seeker was told only this: {told}. It had to find out, by asking, what it was "
            "not told. The provider holds these responses and should release one (verbatim) "
            "only when the seeker asks a question that it answers, one per turn, a child only "
            f"after its parent:\n{nodes}"
        )
    return out


REVIEWER = Reviewer(
    benchmark="clarq",
    agent="seeker",
    simulator="provider",
    review=review_run,
    notes=(
        "read by the rule provider teacher-forced (audit kappa 0.759 against GPT-4o); under "
        "--provider rule the provider is its own reference and shows no fault",
    ),
    briefs=briefs,
    simulator_role="provider",
)
"""``todeval review`` of ClarQ runs (registered in the package)."""

__all__ = ["AGENT_FAULTS", "REVIEWER", "SIMULATOR_FAULTS", "review_episode", "review_run"]
