"""The toy's controls: ``todeval validate toy`` (registered in :mod:`todeval_toy.plugin`)."""

from __future__ import annotations

from todeval.validation import Control, ControlSuite


def _guesser(name: str, kind: str, what: str, low: float, high: float) -> Control:
    return Control(
        name=name,
        kind=kind,  # type: ignore[arg-type]
        description=what,
        metric="toy.success",
        low=low,
        high=high,
        run={"guesser": name},
    )


SUITE = ControlSuite(
    name="toy",
    controls=(
        _guesser("repeat", "floor", "guesses the lowest number every time", 0.0, 0.1),
        _guesser("bisect", "ceiling", "binary search: always within the cap", 1.0, 1.0),
        _guesser("oracle", "ceiling", "privileged: handed the secret", 1.0, 1.0),
    ),
)
