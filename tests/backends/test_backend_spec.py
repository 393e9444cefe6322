"""Spec strings, models files and make_backend's one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.backends.backend_helpers import require_local_model
from todeval.backends import Script, load_models_file, make_backend, model_info, parse_model_spec
from todeval.backends.spec import DEFAULT_OPENAI_URL
from todeval.errors import BadInputError, UsageError


def test_openai_spec_with_url_splits_at_last_at() -> None:
    parsed = parse_model_spec("openai:llama3:8b@http://localhost:11434/v1")
    assert parsed.backend == "openai"
    assert parsed.target == "llama3:8b"
    assert parsed.base_url == "http://localhost:11434/v1"


def test_openai_spec_without_url_uses_openai(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    parsed = parse_model_spec("openai:gpt-4o-mini")
    assert (parsed.target, parsed.base_url) == ("gpt-4o-mini", DEFAULT_OPENAI_URL)


def test_openai_base_url_variable_is_honoured_like_the_sdk() -> None:
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1/"}
    parsed = parse_model_spec("openai:gpt-4o-mini", env)
    assert (parsed.base_url, parsed.url_from_env) == ("http://127.0.0.1:8000/v1", True)
    # an explicit @URL wins over the variable
    explicit = parse_model_spec("openai:m@http://127.0.0.1:9/v1", env)
    assert (explicit.base_url, explicit.url_from_env) == ("http://127.0.0.1:9/v1", False)
    with pytest.raises(UsageError, match="OPENAI_BASE_URL 'localhost:8000' must start with"):
        parse_model_spec("openai:m", {"OPENAI_BASE_URL": "localhost:8000"})


@pytest.mark.parametrize(
    ("spec", "backend", "target"),
    [
        ("openai/gpt-4o-mini", "openai", "gpt-4o-mini"),
        ("openai/meta-llama/Llama-3-8B", "openai", "meta-llama/Llama-3-8B"),
        ("openai:meta-llama/Llama-3-8B", "openai", "meta-llama/Llama-3-8B"),
        ("llamacpp/smollm2", "llamacpp", "smollm2"),
    ],
)
def test_provider_slash_model_specs(spec: str, backend: str, target: str) -> None:
    parsed = parse_model_spec(spec, {})
    assert (parsed.backend, parsed.target) == (backend, target)


def test_model_name_may_contain_at_sign() -> None:
    parsed = parse_model_spec("openai:org@model@https://example.test/v1/")
    assert parsed.target == "org@model"
    assert parsed.base_url == "https://example.test/v1"


def test_llamacpp_and_scripted_specs() -> None:
    assert parse_model_spec("llamacpp:smollm2").target == "smollm2"
    assert parse_model_spec("llamacpp:/m/x.gguf").target == "/m/x.gguf"
    assert parse_model_spec("scripted:replies.jsonl").backend == "scripted"


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("gpt-4o", "has no backend"),
        ("vllm:x", "unknown model backend"),
        ("openai:", "names no model"),
        ("openai:m@localhost:8000", "must start with http"),
        ("openai:@http://h/v1", "names no model"),
        ("llamacpp:model.bin", ".gguf"),
    ],
)
def test_bad_specs_give_one_line_usage_errors(spec: str, fragment: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_model_spec(spec)
    assert fragment in info.value.message
    assert "\n" not in info.value.message


TOML = """
[models.small]
spec = "openai:qwen2.5:0.5b@http://127.0.0.1:9/v1"
parameters = 500_000_000
context_size = 32768
price_in_per_1m = 0.12
price_out_per_1m = 0.30
connection_limit = 3
api_key_env = "TODEVAL_TEST_KEY"
tool_mode = "text"
schema_mode = "guided_json"
timeout_s = 5
[models.small.generation]
max_tokens = 64
top_p = 0.9

[models.local]
spec = "openai:local@http://127.0.0.1:9/v1"
"""

YAML = """
models:
  small:
    spec: "openai:qwen2.5:0.5b@http://127.0.0.1:9/v1"
    parameters: 500000000
    context_size: 32768
    price_in_per_1m: 0.12
    price_out_per_1m: 0.30
    connection_limit: 3
    api_key_env: TODEVAL_TEST_KEY
    tool_mode: text
    schema_mode: guided_json
    timeout_s: 5
    generation: {max_tokens: 64, top_p: 0.9}
  local:
    spec: "openai:local@http://127.0.0.1:9/v1"
"""


@pytest.mark.parametrize(("suffix", "text"), [(".toml", TOML), (".yaml", YAML)])
def test_models_file_fills_model_info(tmp_path: Path, suffix: str, text: str) -> None:
    path = tmp_path / f"models{suffix}"
    path.write_text(text)
    backend = make_backend("small", path, environ={"TODEVAL_TEST_KEY": "k"})
    info = backend.info
    assert info.name == "small"
    assert info.model == "qwen2.5:0.5b"
    assert info.base_url == "http://127.0.0.1:9/v1"
    assert info.parameters == 500_000_000
    assert info.context_size == 32768
    assert (info.price_in_per_1m, info.price_out_per_1m) == (0.12, 0.30)
    assert info.connection_limit == 3
    assert info.api_key_env == "TODEVAL_TEST_KEY"
    assert info.tool_mode == "text"
    assert info.schema_mode == "guided_json"
    assert info.timeout_s == 5
    assert info.generation == {"max_tokens": 64, "top_p": 0.9}
    local = make_backend("local", path, environ={}).info
    assert local.api_key_env is None  # local server, no key needed
    assert local.tool_mode == "native"


def test_unknown_model_name_lists_choices(tmp_path: Path) -> None:
    path = tmp_path / "models.toml"
    path.write_text(TOML)
    with pytest.raises(UsageError, match="unknown model 'large'; valid choices: local, small"):
        make_backend("large", path)


def test_name_without_models_file_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown model 'gpt4'"):
        make_backend("gpt4")


def test_missing_api_key_variable_names_the_variable(tmp_path: Path) -> None:
    path = tmp_path / "models.toml"
    path.write_text(TOML)
    with pytest.raises(UsageError, match="TODEVAL_TEST_KEY is not set"):
        make_backend("small", path, environ={})
    with pytest.raises(UsageError, match="OPENAI_API_KEY is not set"):
        make_backend("openai:gpt-4o-mini", environ={})


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[models.x]\nspec = 'openai:m'\nprice = 3\n", "models.x.price"),
        ("[models.x]\nspec = 'nope'\n", "model 'x'"),
        ("[models.x\n", "not valid TOML"),
    ],
)
def test_bad_models_files_are_bad_input(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "models.toml"
    path.write_text(text)
    with pytest.raises(BadInputError, match=fragment):
        load_models_file(path)


def test_missing_models_file_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="cannot read the models file"):
        load_models_file(tmp_path / "absent.toml")


def test_missing_gguf_is_bad_input(tmp_path: Path) -> None:
    require_local_model()
    with pytest.raises(BadInputError, match="GGUF model file not found"):
        make_backend(f"llamacpp:{tmp_path / 'absent.gguf'}")


def _doc_blocks(language: str) -> list[str]:
    text = (Path(__file__).parents[2] / "docs" / "backends.md").read_text(encoding="utf-8")
    return [block.split("```")[0] for block in text.split(f"```{language}\n")[1:]]


def test_models_file_example_in_the_docs_is_valid(tmp_path: Path) -> None:
    (block,) = _doc_blocks("toml")
    path = tmp_path / "models.toml"
    path.write_text(block)
    models = load_models_file(path)
    infos = {name: model_info(name, entry) for name, entry in models.items()}
    assert infos["gpt-4o-mini"].api_key_env == "OPENAI_API_KEY"
    assert infos["qwen32b"].schema_mode == "guided_json"
    assert infos["ollama-llama3"].model == "llama3:8b"
    assert infos["smol"].parameters == 134_515_008


def test_script_example_in_the_docs_is_valid() -> None:
    (block,) = _doc_blocks("json")
    script = Script.model_validate_json(block)
    assert script.replies[1].tool_calls[0].name == "followup"
