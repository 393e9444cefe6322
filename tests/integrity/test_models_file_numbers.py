"""Finding 5 of issue 16: every number in a models file is finite and in range. A price of
``inf`` or ``1e308`` (which led to ``cost_usd: null`` in episodes.jsonl, a directory our own
reader then rejects) or a ``timeout_s`` of ``inf`` (a trickling server holds the run forever)
is refused when the file is loaded: exit 3 and one line naming file, model and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from todeval.backends.spec import load_models_file
from todeval.cli import main
from todeval.errors import BadInputError

GOOD = """[models.m]
spec = "openai:m@http://127.0.0.1:9/v1"
{line}
"""

BAD_LINES = [
    ("price_in_per_1m = inf", "price_in_per_1m"),
    ("price_in_per_1m = nan", "price_in_per_1m"),
    ("price_out_per_1m = 1e308", "price_out_per_1m"),
    ("price_out_per_1m = 10001", "price_out_per_1m"),
    ("price_in_per_1m = -0.5", "price_in_per_1m"),
    ("timeout_s = inf", "timeout_s"),
    ("timeout_s = 3601", "timeout_s"),
    ("timeout_s = 0", "timeout_s"),
    ("parameters = 1_000_000_000_000_000_000", "parameters"),
    ("context_size = -1", "context_size"),
    ("connection_limit = 100000", "connection_limit"),
    ("generation = { temperature = inf }", "generation.temperature"),
    ("generation = { stop = [1.0, nan] }", "generation.stop[1]"),
]


@pytest.mark.parametrize(("line", "field"), BAD_LINES)
def test_out_of_range_number_is_refused_at_load(tmp_path: Path, line: str, field: str) -> None:
    path = tmp_path / "models.toml"
    path.write_text(GOOD.format(line=line), encoding="utf-8")
    with pytest.raises(BadInputError) as caught:
        load_models_file(path)
    message = caught.value.message
    assert str(path) in message and field in message and "\n" not in message


def test_limits_themselves_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "models.toml"
    lines = "price_in_per_1m = 10000\nprice_out_per_1m = 0\ntimeout_s = 3600\n"
    path.write_text(GOOD.format(line=lines + "generation = { temperature = 0.7 }"), "utf-8")
    entry = load_models_file(path)["m"]
    assert (entry.price_in_per_1m, entry.timeout_s) == (10000, 3600)


@pytest.mark.parametrize("line", ["price_in_per_1m = inf", "price_in_per_1m = 1e308",
                                  "timeout_s = inf"])  # fmt: skip
def test_run_with_such_a_models_file_exits_3_before_any_episode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str
) -> None:
    path = tmp_path / "models.toml"
    path.write_text(GOOD.format(line=line), encoding="utf-8")
    out = tmp_path / "run"
    argv = ["run", "booking", "--system", "monolithic", "--system-model", "m",
            "--models-file", str(path), "--limit", "1", "--out", str(out), "--quiet"]  # fmt: skip
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("todeval: error: ")
    assert "Traceback" not in err and str(path) in err
    assert not (out / "episodes.jsonl").exists()
