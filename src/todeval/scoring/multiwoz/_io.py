"""Reading and validating prediction files (``.json`` or ``.json.gz``).

Every problem is a :class:`~todeval.errors.BadInputError` with one line naming the file and the
record (dialogue id and turn index) at fault.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from todeval.core import safejson
from todeval.core.userfiles import read_user_bytes
from todeval.errors import BadInputError

if TYPE_CHECKING:  # pydantic is imported when predictions are validated, not before
    from pydantic import TypeAdapter

    from todeval.scoring.multiwoz._models import PredictedTurn

    Predictions = dict[str, list[PredictedTurn]]
_MAX_LISTED = 5


def read_prediction_file(path: str | Path) -> Any:
    """The parsed JSON of a prediction file (gzip-compressed when the name ends in ``.gz``)."""
    path = Path(path)
    try:
        data = read_user_bytes(path, what="prediction file")
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    if path.suffix == ".gz" or data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise BadInputError(f"{path}: not a valid gzip file ({exc})") from None
    if not data.strip():
        raise BadInputError(f"{path}: the file is empty; expected a JSON object of dialogues")
    try:
        return safejson.loads(data)
    except UnicodeDecodeError:
        raise BadInputError(f"{path}: not UTF-8 text; expected a JSON object") from None
    except safejson.JsonDepthError as exc:
        raise BadInputError(f"{path}: not accepted: JSON {exc}") from None
    except json.JSONDecodeError as exc:
        raise BadInputError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None


def _adapter() -> TypeAdapter[Predictions]:
    from pydantic import TypeAdapter

    from todeval.scoring.multiwoz._models import PredictedTurn

    return TypeAdapter(dict[str, list[PredictedTurn]])


def _where(loc: tuple[int | str, ...]) -> str:
    if not loc:
        return "top level"
    parts = [f"dialogue {loc[0]!r}"]
    if len(loc) > 1:
        parts.append(f"turn {loc[1]}")
    if len(loc) > 2:
        parts.append(".".join(str(p) for p in loc[2:]))
    return " ".join(parts[:2]) + (f": field {parts[2]}" if len(parts) > 2 else "")


def validate_predictions(
    raw: Any,
    source: str,
    known_turns: Mapping[str, int],
) -> Predictions:
    """Check the community format and the dialogue ids and turn counts against the test set.

    ``known_turns`` maps each test dialogue id to its number of system turns. Unknown dialogue
    ids are an error (listed, never silently dropped); so are dialogues with more turns than the
    test set has. Fewer dialogues or turns are fine: only what is given is scored.
    """
    if not isinstance(raw, dict):
        kind = type(raw).__name__ if raw is not None else "null"
        raise BadInputError(
            f"{source}: top level is a JSON {_json_kind(kind)}; expected an object mapping "
            "dialogue ids (e.g. 'sng0073') to lists of turns"
        )
    if not raw:
        raise BadInputError(f"{source}: contains no dialogues")
    _check_ids(raw.keys(), source, known_turns.keys())
    from pydantic import ValidationError

    try:
        predictions = _adapter().validate_python(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        first = errors[0]
        extra = len(errors) - 1
        more = f" (and {extra} more problem{'s' if extra > 1 else ''})" if extra else ""
        loc = tuple(first["loc"])
        raise BadInputError(f"{source}: {_where(loc)}: {first['msg'].lower()}{more}") from None
    for dialogue_id, turns in predictions.items():
        limit = known_turns[dialogue_id]
        if len(turns) > limit:
            raise BadInputError(
                f"{source}: dialogue {dialogue_id!r} has {len(turns)} turns; "
                f"the test set has {limit} system turns"
            )
    return predictions


def _json_kind(python_type: str) -> str:
    return {"list": "array", "str": "string", "int": "number", "float": "number",
            "bool": "boolean"}.get(python_type, python_type)  # fmt: skip


def _check_ids(ids: Collection[str], source: str, known: Collection[str]) -> None:
    unknown = sorted(i for i in ids if i not in known)
    if not unknown:
        return
    listed = ", ".join(repr(i) for i in unknown[:_MAX_LISTED])
    if len(unknown) > _MAX_LISTED:
        listed += f" and {len(unknown) - _MAX_LISTED} more"
    hint = ""
    if any(i.lower().removesuffix(".json") in known for i in unknown):
        hint = " (write ids in lower case without '.json', e.g. 'sng0073')"
    raise BadInputError(
        f"{source}: {len(unknown)} unknown dialogue id(s) not in the MultiWOZ test set: "
        f"{listed}{hint}"
    )
