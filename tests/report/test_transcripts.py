"""The static report's bounded transcripts: failures first, a per-run cap, what was left out."""

from __future__ import annotations

import base64
import gzip
import json
import re
from collections import Counter
from pathlib import Path

import pytest

import todeval.api as td
from tests.report.test_report_html import _parse
from todeval.cli import main
from todeval.errors import UsageError
from todeval.report import build_html, load_inputs
from todeval.report._transcripts import DEFAULT_TRANSCRIPTS, TranscriptPicker, parse_cap
from todeval.runner.store import RunDirectory


def _payload(html: str) -> dict[str, object]:
    """The page's data, with gzipped episodes (``episodes_gz``) unpacked after the plain ones."""
    data = json.loads(_parse(html).scripts[0][1])
    assert isinstance(data, dict)
    if data.get("episodes_gz"):
        packed = json.loads(gzip.decompress(base64.b64decode(data.pop("episodes_gz"))))
        data["episodes"] = [*data["episodes"], *packed]
    return data


def _episodes(html: str) -> list[dict[str, object]]:
    episodes = _payload(html)["episodes"]
    assert isinstance(episodes, list)
    return episodes


def test_default_cap_keeps_failures_first_and_says_what_was_left_out(
    runs: dict[str, Path],
) -> None:
    inputs = load_inputs([runs["corpus"], runs["unrealistic"]])
    corpus, unreal = inputs.runs
    assert corpus.n_episodes == 117 and len(corpus.transcripts) == DEFAULT_TRANSCRIPTS == 50
    assert unreal.n_episodes == 30 and len(unreal.transcripts) == 30  # under the cap: all
    # every one of the 12 failures is kept, then successes in file order
    assert sum(r.outcome.value != "success" for r in corpus.transcripts) == 12
    on_disk = [r.episode_id for r in RunDirectory(runs["corpus"]).iter_episodes(light=True)]
    picked = [r.episode_id for r in corpus.transcripts]
    assert picked == sorted(picked, key=on_disk.index)  # shown in file order
    html = build_html(inputs)
    assert len(_episodes(html)) == 80
    assert "rule-corpus: shown 50 of 117" in html and "rule-unreal: shown" not in html
    assert "Left out: 67 of 147 transcripts (1 of 2 run(s) show a subset)." in html
    assert "80 of 147 episodes embedded: failures first, at most 50 per run" in html
    runs_view = {r["key"]: r for r in _payload(html)["runs"]}  # type: ignore[attr-defined]
    assert runs_view["rule-corpus"]["n_shown"] == 50
    assert runs_view["rule-corpus"]["n_episodes"] == 117


def test_small_cap_takes_failure_classes_in_turn(runs: dict[str, Path]) -> None:
    [corpus] = load_inputs([runs["corpus"]], transcripts=4).runs
    classes = Counter(r.labels["failure_class"] for r in corpus.transcripts)
    assert classes == {"wrong_booking": 2, "no_booking": 2}  # 6 of each on disk
    [corpus] = load_inputs([runs["corpus"]], transcripts=0).runs
    assert corpus.transcripts == [] and corpus.n_episodes == 117


def test_picker_memory_is_bounded_by_the_cap(runs: dict[str, Path]) -> None:
    picker = TranscriptPicker(3, "failure_class")
    for record in RunDirectory(runs["corpus"]).iter_episodes():
        picker.offer(record)
    held = len(picker._successes) + sum(len(b) for b in picker._order.values())
    assert picker.n_episodes == 117 and held <= 3 * 3  # successes + two failure classes
    assert len(picker.chosen()) == 3


def test_transcripts_all_embeds_every_episode(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "all.html"
    argv = ["report", str(runs["rule"]), str(runs["corpus"]), "-o", str(out)]
    assert main([*argv, "--transcripts", "all"]) == 0
    assert "234 episodes, 234 transcripts" in capsys.readouterr().out
    html = out.read_text(encoding="utf-8")
    assert len(_episodes(html)) == 234
    assert 'id="left-out"' not in html and "every episode of every run" in html
    assert main([*argv, "--transcripts", "7"]) == 0
    assert "234 episodes, 14 transcripts" in capsys.readouterr().out
    assert len(_episodes(out.read_text(encoding="utf-8"))) == 14


def test_big_reports_embed_the_same_transcripts_gzipped(runs: dict[str, Path]) -> None:
    inputs = load_inputs([runs["rule"], runs["corpus"]], transcripts="all")
    fixed = "2026-01-01 00:00 UTC"
    plain = build_html(inputs, generated_at=fixed)
    packed = build_html(inputs, generated_at=fixed, compress_above=0)
    raw = json.loads(_parse(packed).scripts[0][1])
    assert raw["episodes"] == [] and raw["episodes_gz"].startswith("H4sI")
    assert _episodes(packed) == _episodes(plain) and len(_episodes(plain)) == 234
    assert len(packed) < len(plain) / 3
    assert build_html(inputs, generated_at=fixed, compress_above=0) == packed  # no time in it
    # below the threshold (the default: 4 MB of JSON) the page keeps plain JSON
    assert '"episodes_gz":""' in plain


@pytest.mark.parametrize("bad", ["-1", "many", "1.5"])
def test_bad_transcripts_value_is_a_usage_error(
    runs: dict[str, Path], bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["report", str(runs["rule"]), "--transcripts", bad])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--transcripts" in err and "Traceback" not in err and len(err.strip().splitlines()) <= 2


def test_parse_cap() -> None:
    assert parse_cap("all") == "all" and parse_cap("ALL") == "all" and parse_cap("0") == 0
    with pytest.raises(ValueError):
        parse_cap("-3")


def test_api_report_takes_the_cap(runs: dict[str, Path], tmp_path: Path) -> None:
    path = td.report([runs["corpus"]], tmp_path / "r.html", transcripts=5)
    html = path.read_text(encoding="utf-8")
    assert len(_episodes(html)) == 5 and "rule-corpus: shown 5 of 117" in html
    path = td.report([runs["corpus"]], tmp_path / "r.html", transcripts="all")
    assert len(_episodes(path.read_text(encoding="utf-8"))) == 117
    with pytest.raises(UsageError):
        td.report([runs["corpus"]], tmp_path / "r.html", transcripts=-2)


def test_profile_data_is_sent_not_hard_coded(runs: dict[str, Path]) -> None:
    """The page gets the booking profile's event views, details, labels, roles and group noun;
    its script names no benchmark, event kind or detail field."""
    html = build_html(load_inputs([runs["corpus"]], transcripts=3))
    profile = _payload(html)["profiles"]["booking"]  # type: ignore[index]
    assert profile["events"]["db_query"]["code"] == "retrievefrom{domain}db"
    assert profile["failure"] == "failure_class" and profile["group_noun"] == "domain group"
    assert [d["key"] for d in profile["details"]][:2] == ["goal", "bookings"]
    assert {r["name"]: r["title"] for r in profile["roles"]}["user"] == "User sim."
    run = _payload(html)["runs"][0]  # type: ignore[index]
    assert {r["role"]: r["label"] for r in run["roles"]} == {"system": "rule", "user": "corpus"}
    script = _parse(html).scripts[1][1]
    for word in ("db_query", "booking", "goal", "failure_class", "domain", "user_message"):
        assert not re.search(word, script, re.IGNORECASE), word
