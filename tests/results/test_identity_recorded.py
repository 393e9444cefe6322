"""Every benchmark fills the typed identity of its plans: roles (player, model, its name from
the models file, the digest of the role's prompts, the config keys the role's choice sets),
the selection and the protocol."""

from __future__ import annotations

import json
from pathlib import Path

from todeval.benchmarks.booking.llm_systems.prompts import load_prompts
from todeval.benchmarks.booking.run import SPEC as BOOKING
from todeval.benchmarks.booking.run import BookingConfig
from todeval.benchmarks.incar_turns.run import SPEC as INCAR
from todeval.benchmarks.incar_turns.run import IncarTurnsConfig
from todeval.benchmarks.multiwoz_turns.run import SPEC as MULTIWOZ
from todeval.benchmarks.multiwoz_turns.run import MultiwozTurnsConfig
from todeval.cli import main
from todeval.core.records import Manifest
from todeval.runner.options import RuntimeOptions

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "before_refactor"
SCRIPT = FIXTURES / "booking_script.json"
NO_CACHE = RuntimeOptions(cache=False)


def test_booking_roles_selection_and_protocol() -> None:
    plan = BOOKING.plan(BookingConfig(), NO_CACHE)
    roles, selection, protocol = plan.identity()
    assert {r: (i.player, i.model, i.prompts_sha256) for r, i in roles.items()} == {
        "system": ("rule", None, None),
        "user": ("agenda", None, None),
    }
    assert roles["system"].config_keys == [
        "system",
        "system_model",
        "module_model",
        "system_url",
        "system_channel",
        "system_timeout_s",
        "few_shot",
    ]
    assert roles["user"].config_keys == ["user", "user_model", "user_transcripts"]
    assert (selection.task_set, selection.mode, selection.n_tasks) == ("test", "all", 117)
    assert protocol == "clemtodd"  # the default: the released game master's rules
    _, ids, _ = BOOKING.plan(BookingConfig(task_ids=["sng01936"]), NO_CACHE).identity()
    assert (ids.mode, ids.ids, ids.n_tasks) == ("ids", ["sng01936"], 1)


def test_booking_llm_roles_name_their_model_and_prompts(tmp_path: Path) -> None:
    models = tmp_path / "models.toml"
    models.write_text(f'[models.tiny]\nspec = "scripted:{SCRIPT}"\n')
    config = BookingConfig(
        system="monolithic",
        system_model="tiny",
        user="llm",
        user_model=f"scripted:{SCRIPT}",
        models_file=str(models),
    )
    roles, _, _ = BOOKING.plan(config, NO_CACHE).identity()
    system, user = roles["system"], roles["user"]
    assert (system.player, system.model, system.model_name) == ("monolithic", "tiny", "tiny")
    assert system.label == "monolithic (tiny)"
    assert user.model == f"scripted:{SCRIPT}" and user.label.startswith("llm (scripted:")
    prompts = load_prompts()
    assert user.prompts_sha256 == prompts.digest_of(["user", "user_opening"])
    assert system.prompts_sha256 is not None
    assert system.prompts_sha256 not in (user.prompts_sha256, prompts.digest)
    # an override of the user's prompt changes the user's digest only
    changed = config.model_copy(update={"prompt_overrides": {"user": "Goal: ${goal}"}})
    roles2, _, _ = BOOKING.plan(changed, NO_CACHE).identity()
    assert roles2["system"].prompts_sha256 == system.prompts_sha256
    assert roles2["user"].prompts_sha256 != user.prompts_sha256


def test_turn_benchmarks_have_one_system_role_and_their_split() -> None:
    spec = f"scripted:{FIXTURES / 'multiwoz_script.json'}"
    plan = MULTIWOZ.plan(MultiwozTurnsConfig(model=spec, limit=5), NO_CACHE)
    roles, selection, _ = plan.identity()
    system = roles["system"]
    assert (system.player, system.model, system.config_keys) == ("llm", spec, ["model"])
    assert system.prompts_sha256 is not None
    assert (selection.task_set, selection.mode, selection.limit, selection.n_tasks) == (
        "test",
        "stratified",
        5,
        5,
    )
    incar = IncarTurnsConfig(model=spec, split="dev", dialogue_ids=["0", "1"])
    roles, selection, _ = INCAR.plan(incar, NO_CACHE).identity()
    assert list(roles) == ["system"]
    assert (selection.task_set, selection.mode, selection.ids) == ("dev", "ids", ["0", "1"])


def test_the_toy_records_its_guesser_and_host(tmp_path: Path) -> None:
    out = tmp_path / "toy"
    assert main(["run", "toy", "--limit", "3", "--out", str(out), "--quiet"]) == 0
    manifest = Manifest.model_validate(json.loads((out / "manifest.json").read_text()))
    guesser, host = manifest.roles["guesser"], manifest.roles["host"]
    assert (guesser.player, guesser.config_keys) == ("bisect", ["guesser", "guesser_model"])
    assert (host.player, host.config_keys) == ("rule", ["host"])
    assert manifest.selection.mode == "stratified" and manifest.selection.seed == 0
    groups = {json.loads(line)["group"] for line in (out / "episodes.jsonl").open()}
    assert groups == {"n10", "n100", "n1000"}  # one task of each range size
    assert manifest.protocol == "standard"
