"""The agenda user: determinism, fallbacks, references, questions, giving up, odd values."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

import pytest

from todeval.benchmarks.booking.messages import UserContext, UserSimulator, is_done
from todeval.benchmarks.booking.tasks import BookingTask, DomainGoal, load_tasks
from todeval.benchmarks.booking.users import AgendaUser, EndReason
from todeval.errors import UsageError

from .test_users_selfplay import FakeSystem, _play

System = Callable[[str], str]


def _task(message: str, domains: dict[str, DomainGoal], task_set: str = "test") -> BookingTask:
    return BookingTask(
        task_id=f"{task_set}/900-unit",
        task_set=task_set,
        index=900,
        filename="unit.json",
        message=message,
        domains=domains,
        dialogue_type="single" if len(domains) == 1 else "multi",
    )


def _by_id(task_set: str, stem: str) -> BookingTask:
    return next(t for t in load_tasks(task_set) if t.task_id.endswith(stem))


def _talk(
    task: BookingTask, system: System, seed: int = 0, user: AgendaUser | None = None
) -> tuple[AgendaUser, list[str]]:
    """Play up to 15 user turns against a function from user text to system text."""
    agent = user or AgendaUser(phrasing="verbatim")  # these test the agenda, not its words

    async def main() -> list[str]:
        await agent.start(UserContext(task=task, rng=random.Random(seed), seed=seed))
        said: list[str] = []
        message: str | None = None
        for _ in range(15):
            text = (await agent.respond(message)).text
            assert text.strip(), "the user must never send an empty reply"
            said.append(text)
            if is_done(text):
                break
            message = system(text)
        return said

    return agent, asyncio.run(main())


HOTEL_FALLBACK = _task(
    "You are looking for a place to stay. The hotel should be in the expensive price range and "
    "should include free parking.\nThe hotel should be in the type of guesthouse.\n"
    "If there is no such hotel, how about one that is in the cheap price range.\n"
    "Once you find the hotel you want to book it for 5 people and 4 nights starting from "
    "wednesday.\nMake sure you get the reference number",
    {
        "hotel": DomainGoal(
            info={"type": "guesthouse", "pricerange": "cheap", "parking": "yes"},
            fail_info={"type": "guesthouse", "pricerange": "expensive", "parking": "yes"},
            book={"stay": "4", "day": "wednesday", "people": "5"},
        )
    },
)


# ---------------------------------------------------------------------------------------------
# Determinism


def _transcripts(seed: int, n: int = 25) -> list[list[tuple[str, str]]]:
    async def main() -> list[list[tuple[str, str]]]:
        out = []
        for task in load_tasks("test")[:n]:
            transcript = await _play(task, AgendaUser(), FakeSystem(), seed)
            out.append(transcript.turns)
        return out

    return asyncio.run(main())


def test_same_seed_gives_the_same_dialogues() -> None:
    assert _transcripts(11) == _transcripts(11)


def test_different_seeds_give_different_wording() -> None:
    a, b = _transcripts(11), _transcripts(12)
    openings_differ = sum(x[0] != y[0] for x, y in zip(a, b, strict=True))
    assert openings_differ >= 15


def test_wording_varies_across_seeds_for_one_task() -> None:
    task = load_tasks("test")[1]
    openings = {_talk(task, lambda _: "Hmm.", seed=s)[1][0] for s in range(12)}
    assert len(openings) >= 6


# ---------------------------------------------------------------------------------------------
# Fallbacks


def test_fail_info_is_tried_first_and_info_after_no_match() -> None:
    said_before: list[str] = []
    state = {"failed": False}

    def system(text: str) -> str:
        low = text.lower()
        if not state["failed"]:
            said_before.append(low)
            if "expensive" in low:
                state["failed"] = True
                return "I'm sorry, there is no guesthouse matching that."
            return "Okay. Can you tell me more?"
        if "book" in low:
            return "Done! Your reference number is QW12ER."
        return "I found the alexander bed and breakfast, a cheap guesthouse. Shall I book it?"

    user, said = _talk(HOTEL_FALLBACK, system)
    assert not any("cheap" in s for s in said_before)
    switch = said[len(said_before)].lower()
    assert "cheap" in switch and "instead" in switch
    booking = " ".join(said).lower()
    assert "5 people" in booking or "of 5" in booking
    assert "4 nights" in booking and "wednesday" in booking
    assert is_done(said[-1]) and user.end_reason == EndReason.COMPLETED
    assert user.stated["hotel"]["pricerange"] == "cheap"


def test_fail_book_is_tried_first_and_book_after_a_failed_booking() -> None:
    task = _task(
        "You are looking for a restaurant. The restaurant should be in the centre and should "
        "serve chinese food.\nOnce you find the restaurant you want to book a table for 7 people "
        "at 15:00 on thursday.\nIf the booking fails how about 14:00.\n"
        "Make sure you get the reference number",
        {
            "restaurant": DomainGoal(
                info={"food": "chinese", "area": "centre"},
                book={"people": "7", "day": "thursday", "time": "14:00"},
                fail_book={"time": "15:00"},
            )
        },
    )
    requests: list[str] = []

    def system(text: str) -> str:
        if "15:00" in text:
            requests.append(text)
            return "I'm sorry, the booking failed: no table is free then."
        if "14:00" in text:
            return "Booked. Your reference number is 7H2K9Q."
        return "I found charlie chan, a chinese restaurant in the centre. Would you like to book?"

    user, said = _talk(task, system)
    assert requests and "14:00" not in requests[0]
    switch = said[said.index(requests[0]) + 1]
    assert "14:00" in switch and "instead" in switch
    assert is_done(said[-1]) and user.references == {"restaurant": "7H2K9Q"}


def test_fallbacks_message_mode_ignores_unstated_fail_values() -> None:
    task = _by_id("test", "005-sng01710")  # fail_info.name is not in the goal message
    assert task.domains["hotel"].fail_info == {"name": "finches bed and breakfast"}
    _, said = _talk(task, lambda _: "Hmm.")
    assert "warkworth house" in said[0]
    _, said = _talk(task, lambda _: "Hmm.", user=AgendaUser(fallbacks="goal", phrasing="verbatim"))
    assert "finches bed and breakfast" in said[0]


# ---------------------------------------------------------------------------------------------
# References and done


def test_done_only_after_a_reference_for_every_booking_domain() -> None:
    task = _by_id("test", "060-pmul0938")  # restaurant first, then train
    log: list[tuple[str, str]] = []

    def system(text: str) -> str:
        low = text.lower()
        on_train = any("train" in u.lower() for u, _ in log) or "train" in low
        if "book" in low and not on_train:
            reply = "Booked! Your reference number is ABC123."
        elif "book" in low and not any("TR5511" in s for _, s in log):
            reply = "TR5511 is booked, the reference will follow."  # a train id, no reference
        elif "book" in low or "reference" in low:
            reply = "Here it is: reference XYZ789."
        else:
            reply = "I found one that fits. Would you like me to book it?"
        log.append((text, reply))
        return reply

    user, said = _talk(task, system)
    replies = [s for _, s in log]
    first_ref = replies.index("Booked! Your reference number is ABC123.")
    assert "train" in said[first_ref + 1].lower() and not is_done(said[first_ref + 1])
    train_id = replies.index("TR5511 is booked, the reference will follow.")
    assert not is_done(said[train_id + 1]) and "reference" in said[train_id + 1].lower()
    assert is_done(said[-1]) and sum(is_done(s) for s in said) == 1
    assert replies[-1] == "Here it is: reference XYZ789."
    assert user.references == {"restaurant": "ABC123", "train": "XYZ789"}
    assert user.end_reason == EndReason.COMPLETED and not user.gave_up


def test_requested_attributes_are_asked_before_done() -> None:
    task = load_tasks("synthetic")[0]  # hotel: address and phone requested
    assert set(task.domains["hotel"].reqt) == {"address", "phone"}

    def system(text: str) -> str:
        if "book" in text.lower():
            return "Your booking is confirmed, reference number 00AB12."
        return "I found a guesthouse for you. Would you like me to book it?"

    user, said = _talk(task, system)
    before_done = " ".join(said[:-1]).lower()
    assert "address" in before_done and "phone" in before_done
    assert is_done(said[-1]) and user.references == {"hotel": "00AB12"}


def test_a_claimed_booking_without_reference_makes_the_user_ask_for_it() -> None:
    def system(text: str) -> str:
        if "reference" in text.lower():
            return "Of course: reference number K9L8M7."
        if "book" in text.lower():
            return "All done, your room is booked."
        return "I found a cheap guesthouse with free parking. Would you like me to book it?"

    task = HOTEL_FALLBACK.model_copy(
        update={
            "domains": {
                "hotel": DomainGoal(
                    **{**HOTEL_FALLBACK.domains["hotel"].model_dump(), "fail_info": {}}
                )
            }
        }
    )
    user, said = _talk(task, system)
    assert any("reference" in s.lower() for s in said[:-1])
    assert user.references == {"hotel": "K9L8M7"} and is_done(said[-1])


# ---------------------------------------------------------------------------------------------
# Questions and offers


def test_answers_questions_from_the_goal_and_does_not_mind_the_rest() -> None:
    task = _task(
        "You are looking for a place to stay. The hotel should be in the north.",
        {
            "hotel": DomainGoal(
                info={"area": "north"}, book={"people": "2", "day": "friday", "stay": "3"}
            )
        },
    )
    questions = iter(["Do you need free parking?", "How many nights will you stay?"])
    replies: list[str] = []

    def system(text: str) -> str:
        replies.append(text)
        return next(questions, "Thanks.")

    _talk(task, system)
    assert "north" in replies[0]
    parking, nights = replies[1].lower(), replies[2].lower()
    assert "free parking" not in parking
    assert any(w in parking for w in ("mind", "preference", "matter", "fine"))
    assert "3 night" in nights


def test_rejects_an_offer_that_contradicts_a_constraint() -> None:
    task = _task(
        "You are looking for a restaurant in the north.",
        {
            "restaurant": DomainGoal(
                info={"area": "north"}, book={"people": "2", "day": "friday", "time": "19:00"}
            )
        },
    )
    replies: list[str] = []

    def system(text: str) -> str:
        replies.append(text)
        return "I found the golden wok in the south. Would you like me to book it?"

    _talk(task, system)
    assert "north" in replies[1] and "book" not in replies[1].lower()


def test_odd_values_are_said_verbatim() -> None:
    task = load_tasks("unrealistic")[0]  # volcano, 7B people, clearday, 3.75 nights

    def system(text: str) -> str:
        if "book" in text.lower():
            return "Booked. Reference: ZZ9PLZ."
        return "I found earthquake in the volcano. Would you like me to book it?"

    user, said = _talk(task, system)
    text = " ".join(said)
    for value in ("volcano", "7B", "clearday", "3.75"):
        assert value in text
    assert is_done(said[-1]) and user.references == {"hotel": "ZZ9PLZ"}


# ---------------------------------------------------------------------------------------------
# Giving up


def test_gives_up_politely_when_the_dialogue_makes_no_progress() -> None:
    counter = iter(range(100))
    user, said = _talk(HOTEL_FALLBACK, lambda _: f"Hmm, let me think ({next(counter)}).")
    assert user.gave_up and user.end_reason == EndReason.GAVE_UP_NO_PROGRESS
    assert not any(s.lower().startswith(("sounds", "perfect", "great")) for s in said)
    assert is_done(said[-1]) and not is_done(said[-2])
    assert "thank" in said[-2].lower()
    assert len(said) < 15


def test_gives_up_when_the_system_repeats_itself() -> None:
    user, said = _talk(HOTEL_FALLBACK, lambda _: "I'm sorry, there is no match.")
    assert user.gave_up and user.end_reason == EndReason.GAVE_UP_REPEATS
    assert is_done(said[-1]) and len(said) < 15


def test_done_is_repeated_after_the_end() -> None:
    user, _ = _talk(HOTEL_FALLBACK, lambda _: "I'm sorry, there is no match.")
    assert asyncio.run(user.respond("Anything else?")).text == "done"


# ---------------------------------------------------------------------------------------------
# Protocol and options


def test_implements_the_protocol_and_checks_its_options() -> None:
    assert isinstance(AgendaUser(), UserSimulator)
    with pytest.raises(UsageError):
        AgendaUser(patience=0)
    with pytest.raises(UsageError):
        AgendaUser(fallbacks="sometimes")  # type: ignore[arg-type]
    with pytest.raises(RuntimeError):
        asyncio.run(AgendaUser().respond(None))


def test_a_confirmation_question_is_answered_without_repeating_the_booking() -> None:
    task = _by_id("test", "001-sng0792")  # 8 people, 3 nights, thursday
    replies: list[str] = []

    def system(text: str) -> str:
        replies.append(text)
        return (
            "Allenbell is a cheap 4-star guesthouse. Could you confirm the number of guests, "
            "the day of arrival and how many nights?"
        )

    _talk(task, system)
    answer = replies[1].lower()
    assert answer.count("thursday") == 1 and answer.count("3 nights") == 1
    assert "8" in answer


# ---------------------------------------------------------------------------------------------
# Pursuing the goal: every constraint, checked offers and bookings, misread searches

CHINESE_EAST = _task(
    "You are looking for a place to dine. The restaurant should be in the east and should "
    "serve chinese food.\nOnce you find the restaurant you want to book a table for 2 people "
    "at 19:30 on monday.\nMake sure you get the reference number",
    {
        "restaurant": DomainGoal(
            info={"food": "chinese", "area": "east"},
            book={"people": "2", "day": "monday", "time": "19:30"},
        )
    },
)
CHEAP_GUESTHOUSE = _task(
    "You are looking for a place to stay. The hotel should be in the cheap price range and "
    "should be in the type of guesthouse.\nOnce you find the hotel you want to book it for 2 "
    "people and 3 nights starting from friday.\nMake sure you get the reference number",
    {
        "hotel": DomainGoal(
            info={"pricerange": "cheap", "type": "guesthouse"},
            book={"people": "2", "day": "friday", "stay": "3"},
        )
    },
)


def test_an_offer_contradicting_an_unstated_constraint_is_turned_down() -> None:
    for seed in range(8):
        _check_offer_turned_down(seed)


def _check_offer_turned_down(seed: int) -> None:
    replies: list[str] = []

    def system(text: str) -> str:
        replies.append(text)
        low = text.lower()
        if "book" in low and "chinese" in " ".join(replies).lower():
            return "Booked at yu garden. Your reference number is 4RT6YU."
        if "chinese" in low:
            return "How about yu garden, a chinese restaurant in the east? Shall I book it?"
        return (
            "How about the missing sock, a cheap international restaurant in the east? "
            "How many people is the table for, which day and what time?"
        )

    user, said = _talk(CHINESE_EAST, system, seed=seed)
    first = next(i for i, s in enumerate(said) if "chinese" in s.lower())
    # the offer named another food: the user says what it wants instead of giving details
    assert not any(w in said[first].lower() for w in ("19:30", "monday", "2 people"))
    assert user.references == {"restaurant": "4RT6YU"} and is_done(said[-1])


def test_booking_details_never_come_before_the_constraints() -> None:
    def system(text: str) -> str:
        if "19:30" in text:
            return "Booked at yu garden. Your reference number is 4RT6YU."
        return "Sure. How many people is the table for, which day and what time?"

    for seed in range(8):
        _, said = _talk(CHINESE_EAST, system, seed=seed)
        detail = next(i for i, s in enumerate(said) if "19:30" in s)
        before = " ".join(said[: detail + 1]).lower()
        assert "chinese" in before and "east" in before, said


def test_a_booking_that_breaks_the_goal_is_changed() -> None:
    log: list[str] = []

    def system(text: str) -> str:
        log.append(text)
        if len(log) == 1:
            return "How about gonville hotel, an expensive 3-star hotel in the centre?"
        if len(log) == 2:
            return "I have booked gonville hotel for 2 people. Your reference number is AAA111."
        return (
            "I have booked alexander bed and breakfast, a cheap guesthouse, for 2 people for "
            "3 nights from friday. Your reference number is BBB222."
        )

    user, said = _talk(CHEAP_GUESTHOUSE, system)
    change = said[2].lower()
    assert "cheap" in change and "guesthouse" in change and "booking" in change
    assert user.references == {"hotel": "BBB222"} and is_done(said[-1])


def test_wrong_booking_details_are_corrected() -> None:
    booked: list[str] = []

    def system(text: str) -> str:
        if booked:
            return "Updated: 2 people, 3 nights from friday. Your reference number is CCC333."
        if "book" in text.lower() or "night" in text:
            booked.append(text)
            return "Booked for 1 person, 3 nights from friday. Your reference number is BBB222."
        return "How about alexander bed and breakfast, a cheap guesthouse? Shall I book it?"

    user, said = _talk(CHEAP_GUESTHOUSE, system)
    change = said[said.index(booked[0]) + 1]
    assert "2 people" in change or "of 2" in change
    assert user.references == {"hotel": "CCC333"} and is_done(said[-1])


def test_keeps_a_booking_the_system_stands_by() -> None:
    def system(text: str) -> str:
        if "book" in text.lower() or "night" in text:
            return "Booked for 1 person, 3 nights from friday. Your reference number is BBB222."
        return "How about alexander bed and breakfast, a cheap guesthouse? Shall I book it?"

    user, said = _talk(CHEAP_GUESTHOUSE, system)
    assert user.references == {"hotel": "BBB222"} and not user.gave_up
    assert is_done(said[-1]) and len(said) == 4


def test_keeps_a_booking_the_system_does_not_change() -> None:
    def system(text: str) -> str:
        if "book" in text.lower() and "gonville" not in text:
            if "anything else" in " ".join(log):
                return "Is there anything else I can help you with?"
            log.append("anything else")
            return "I have booked gonville hotel, an expensive hotel. Reference number DDD444."
        return "How about alexander bed and breakfast, a cheap guesthouse? Shall I book it?"

    log: list[str] = []
    user, said = _talk(CHEAP_GUESTHOUSE, system)
    assert user.references == {"hotel": "DDD444"} and not user.gave_up
    assert is_done(said[-1]) and sum(is_done(s) for s in said) == 1


def test_a_misread_search_is_pointed_out_before_giving_up() -> None:
    task = _task(
        "You are looking for a train. The train should leave after 12:00 and should leave on "
        "monday.\nThe train should depart from cambridge and should go to ely.\nOnce you find "
        "the train you want to make a booking for 3 people.",
        {
            "train": DomainGoal(
                info={
                    "leaveat": "12:00",
                    "day": "monday",
                    "departure": "cambridge",
                    "destination": "ely",
                },
                book={"people": "3"},
            )
        },
    )
    failure = (
        "I'm sorry, there is no train from cambridge to ely on monday leaving after 12:00 "
        "arriving by 12:00. Would you like to change one of your requirements?"
    )

    def system(text: str) -> str:
        return failure if "ely" in text.lower() else "Where are you travelling to?"

    user, said = _talk(task, system)
    first = next(i for i, s in enumerate(said) if "ely" in s.lower())
    correction = said[first + 1].lower()
    assert "arriv" in correction and "12:00" in correction.split("arriv")[0] + "12:00"
    assert "arriving by 12:00" not in correction and "arrives by 12:00" not in correction
    # the correction is progress: the user tries once more before giving up
    assert user.gave_up and len(said) - first >= 4
