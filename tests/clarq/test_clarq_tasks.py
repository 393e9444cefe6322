"""The shipped tasks, the response tree and ``todeval data clarq``."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from tests.clarq.helpers import run_cli
from todeval.benchmarks.clarq import (
    ClarqTask,
    ResponseTree,
    depth_group,
    label_key,
    load_tasks,
    read_tasks,
)
from todeval.benchmarks.clarq._tasks import TaskFormatError, parse_task
from todeval.errors import BadInputError

DATA = resources.files("todeval") / "data" / "clarq"


def _raw(lang_dir: str, name: str) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(gzip.decompress((DATA / lang_dir / name).read_bytes()))
    return data


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_splits_counts_and_depths(lang: str) -> None:
    test = load_tasks(lang, "test")  # type: ignore[arg-type]
    dev = load_tasks(lang, "dev")  # type: ignore[arg-type]
    assert len(test) == 260 and len(dev) == 50
    assert {t.type_number for t in test} == set(range(1, 27))
    assert {t.type_number for t in dev} == set(range(27, 32))
    assert Counter(t.depth for t in test) == {1: 141, 2: 100, 3: 17, 4: 2}
    assert sum(len(t.nodes) for t in test) / 260 == pytest.approx(4.42, abs=0.005)
    assert all(2 <= len(t.nodes) <= 6 for t in test)
    assert all(t.has_purposes for t in test) and not any(t.purposes for t in dev)
    assert test[0].task_id == f"{lang}/test/Gather_Resources-0"
    assert dev[-1].task_id == f"{lang}/dev/Magic_Task-9"
    assert len({t.task_id for t in test + dev}) == 310


def test_the_same_trees_in_both_languages() -> None:
    en = load_tasks("en", None)
    zh = load_tasks("zh", None)
    assert [[n.label for n in t.nodes] for t in en] == [[n.label for n in t.nodes] for t in zh]


def test_jax_prefix_is_stripped_on_load_and_emitted_on_output() -> None:
    missing = {"English": 0, "Chinese": 0}
    for lang_dir in missing:
        for number in range(1, 27):
            name = next(
                p.name for p in (DATA / lang_dir).iterdir() if p.name.startswith(f"{number}._")
            )
            for entry in _raw(lang_dir, name)[:10]:
                lines = entry["all_response"].split("\n")
                responses = lines[: len(lines) // 2]
                missing[lang_dir] += sum(not x.startswith("Jax: ") for x in responses)
    assert missing == {"English": 52, "Chinese": 428}
    for lang in ("en", "zh"):
        for task in load_tasks(lang, "test"):  # type: ignore[arg-type]
            assert not any(text.lower().startswith("jax") for text in task.responses)
            assert all(m.startswith("Jax: ") for m in task.gold_messages())


def test_background_comes_from_background_splitted() -> None:
    task = load_tasks("en", "test")[0]
    raw = _raw("English", "1._Gather_Resources.json.gz")[0]["background_splitted"]
    assert task.background.role == raw[0] == "adventurer"
    assert task.background.task == "collect rubies"
    assert task.background.items == ["An air sucker"]
    assert task.background.skills == raw[3].split("\n")
    assert task.background.scenes[0].startswith("West Mine (")
    assert task.opening == "You can go to the mine to dig for rubies."
    assert task.node("1.1.1").purpose is not None
    assert "Fantasy Forest" in task.node("1.1.1").text


def test_tree_unlocks_children_on_release_in_label_order() -> None:
    task = load_tasks("en", "test")[0]  # labels 1, 1.1, 1.1.1, 2, 3
    tree = task.tree()
    assert [n.label for n in tree.available()] == ["1", "2", "3"]
    assert not tree.is_available("1.1")
    with pytest.raises(ValueError, match="locked until '1'"):
        tree.release("1.1")
    tree.release("2")
    tree.release("1")
    assert [n.label for n in tree.available()] == ["1.1", "3"]
    with pytest.raises(ValueError, match="already released"):
        tree.release("1")
    with pytest.raises(ValueError, match="no node"):
        tree.release("9")
    copy = tree.copy()
    copy.release("1.1")
    assert [n.label for n in copy.available()] == ["1.1.1", "3"]
    assert [n.label for n in tree.available()] == ["1.1", "3"]  # the copy is independent
    for label in ("1.1", "1.1.1", "3"):
        tree.release(label)
    assert tree.exhausted and [n.label for n in tree.released] == ["2", "1", "1.1", "1.1.1", "3"]
    replayed = task.tree(released=["1", "1.1"])
    assert [n.label for n in replayed.available()] == ["1.1.1", "2", "3"]


def test_label_order_not_file_order() -> None:
    out_of_order = [
        t
        for t in load_tasks("en", "test")
        if [n.label for n in t.nodes] != sorted((n.label for n in t.nodes), key=label_key)
    ]
    assert len(out_of_order) == 3
    task = out_of_order[0]
    tree = task.tree()
    for node in list(tree.available()):
        tree.release(node.label)
    labels = [n.label for n in tree.available()]
    assert labels == sorted(labels, key=label_key)
    assert label_key("1.10") > label_key("1.2") and label_key("2") > label_key("1.9.9")


def test_siblings_below_the_second_level_in_label_order() -> None:
    task = next(t for t in load_tasks("en", "test") if t.task_id.endswith("Stealth_Mission-3"))
    tree = task.tree(released=["1", "1.1"])
    labels = [n.label for n in tree.available()]
    assert labels.index("1.1.1") < labels.index("1.1.2")


def test_depth_groups() -> None:
    assert [depth_group(d) for d in (1, 2, 3, 4, None)] == ["1", "2", "3+", "3+", "unknown"]


def _entry(**changes: Any) -> dict[str, Any]:
    entry = {
        "all_response": "Jax: zero\nJax: one\nJax: two\n0\n1\n1.1",
        "background_splitted": ["hero", "find it", "", "", ""],
        "all_response_exaplain": ["p1", "p2"],
    }
    entry.update(changes)
    return entry


def _parse(entry: dict[str, Any], type_number: int = 1) -> ClarqTask:
    return parse_task(entry, lang="en", type_number=type_number, type_name="X", index=0)


def test_parse_task_checks_the_format() -> None:
    task = _parse(_entry())
    assert task.background.items == [] and [n.label for n in task.nodes] == ["1", "1.1"]
    assert isinstance(task.tree(), ResponseTree)
    bad = {
        "bad label": _entry(all_response="Jax: zero\nJax: one\n0\nx"),
        "orphan": _entry(all_response="Jax: zero\nJax: one\nJax: two\n0\n1\n2.1"),
        "first label": _entry(all_response="Jax: zero\nJax: one\n1\n0"),
        "duplicate": _entry(all_response="Jax: zero\nJax: one\nJax: two\n0\n1\n1"),
        "purposes": _entry(all_response_exaplain=["p1"]),
        "odd lines": _entry(all_response="Jax: zero\nJax: one\n0"),
        "background": _entry(background_splitted=["hero"]),
        "missing": {"background_splitted": ["a", "b", "", "", ""]},
    }
    for name, entry in bad.items():
        with pytest.raises(TaskFormatError):
            _parse(entry)
        assert name
    dev = _parse(_entry(all_response_exaplain=[]), type_number=27)
    assert dev.split == "dev" and not dev.has_purposes and dev.purposes == []


def _copy_data(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    for lang_dir in ("English", "Chinese"):
        (root / lang_dir).mkdir(parents=True)
        for item in (DATA / lang_dir).iterdir():
            (root / lang_dir / item.name.removesuffix(".gz")).write_bytes(
                gzip.decompress(item.read_bytes())
            )
    return root


def test_data_check_prints_counts_and_depths(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["data", "clarq", "--check"], capsys)
    assert code == 0 and err == ""
    assert "en    test   260    26     1149 (4.42)" in out
    assert "1:141 2:100 3:17 4:2" in out
    assert "zh    dev    50     5" in out
    assert "19 tasks whose labels tie under the original's sort key" in out
    assert "en/test/Stealth_Mission-3" in out
    assert "every task loaded" in out


def test_data_check_reports_tasks_that_fail_to_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _copy_data(tmp_path)
    path = root / "English" / "3._Stealth_Mission.json"
    entries = json.loads(path.read_text(encoding="utf-8"))
    entries[4]["all_response"] = entries[4]["all_response"].replace("\n1\n", "\n7.1\n", 1)
    path.write_text(json.dumps(entries), encoding="utf-8")
    (root / "Chinese" / "31._Magic_Task.json").write_text("{oops", encoding="utf-8")
    code, out, _ = run_cli(["data", "clarq", "--check", "--data-dir", str(root)], capsys)
    assert code == 3
    assert "2 failed to load:" in out
    assert "en English/3._Stealth_Mission.json entry 4: label '7.1' has no parent '7'" in out
    assert "zh Chinese/31._Magic_Task.json: unreadable" in out
    assert "en    test   259" in out  # every other task still counted
    with pytest.raises(BadInputError, match=r"3\._Stealth_Mission\.json entry 4"):
        load_tasks("en", "test", data_dir=root)
    assert len(read_tasks("zh", root).tasks) == 300


def test_data_show_prints_one_task(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["data", "clarq", "--show", "zh/test/Gather_Resources-0"], capsys)
    assert code == 0 and "role: 冒险者" in out and "    1.1: " in out and "purpose:" in out
    code, _, err = run_cli(["data", "clarq", "--show", "en/test/Nope-0"], capsys)
    assert code == 2 and "no task 'en/test/Nope-0'" in err
