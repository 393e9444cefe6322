"""The toy through its Gymnasium environment: the guesser's reader is ``int`` (Role.action), and
a text it cannot read is the guesser's format violation, not an error of the run."""

from __future__ import annotations

import os

import pytest

try:
    import todeval.gym as tg
except ImportError:  # pragma: no cover - CI installs it
    if os.environ.get("CI") == "true":
        raise
    pytest.skip("gymnasium not installed", allow_module_level=True)


def test_a_number_is_a_guess_and_a_word_a_format_violation() -> None:
    env = tg.make("toy", {"task_ids": ["n10-00"]})  # the secret is 8
    env.reset(seed=0)
    answer, _, done, _, _ = env.step(" 5 ")
    assert answer == "higher" and not done
    _, reward, done, _, info = env.step("fifty")
    assert done and reward == 0.0 and info["outcome"] == "aborted"
    record = env.records[-1]
    assert record.termination == "format_violation"
    assert record.reason.startswith("unreadable action: invalid literal for int()")
    assert [e.data for e in record.events if e.kind == "guess"] == [{"guess": 5}]
    env.close()
