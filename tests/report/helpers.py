"""Run directories for report tests: real runs through the CLI, and a crafted XSS run."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from todeval.cli import main
from todeval.core.events import Event
from todeval.core.outcome import Outcome
from todeval.core.records import EpisodeRecord, Manifest, Session, Timing
from todeval.runner.store import RunDirectory
from todeval.runner.summary import summarize
from todeval.testing import browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"

PAYLOADS = (
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=1">',
    "</script><script>window.__pwned=1</script>",
    '<svg onload="window.__pwned=1"></svg>',
    '"><img src=x onerror=window.__pwned=1>',
    "javascript:window.__pwned=1",
    "line\u2028separator\u2029and <b>bold</b> & ampersand",
)
ALL_PAYLOADS = " ".join(PAYLOADS)


def run_cli(*argv: str) -> None:
    code = main(list(argv))
    assert code == 0, argv


def rule_run(out: Path, *extra: str) -> Path:
    """A rule-system booking run under ``--protocol strict`` (the figures these tests pin were
    recorded under it; the report does not depend on the protocol)."""
    protocol = [] if "--protocol" in extra else ["--protocol", "strict"]
    run_cli("run", "booking", "--out", str(out), "--quiet", *protocol, *extra)
    return out


def scripted_llm_run(out: Path, tmp: Path) -> Path:
    """A monolithic LLM system on a scripted model with prices: costs, violations, no bookings."""
    script = tmp / "script.json"
    script.write_text(
        json.dumps(
            {
                "rules": [{"match": "(?i)hotel", "reply": {"text": "Let me think <b>now</b>."}}],
                "default": {
                    "tool_calls": [
                        {"name": "followup", "arguments": {"message": "Could you say more?"}}
                    ],
                    "usage": {"prompt_tokens": 900, "completion_tokens": 40},
                },
            }
        ),
        encoding="utf-8",
    )
    models = tmp / "models.toml"
    models.write_text(
        f'[models.toy-gpt]\nspec = "scripted:{script}"\n'
        "price_in_per_1m = 0.5\nprice_out_per_1m = 1.5\nparameters = 8000000000\n",
        encoding="utf-8",
    )
    run_cli(
        "run",
        "booking",
        "--system",
        "monolithic",
        "--system-model",
        "toy-gpt",
        "--models-file",
        str(models),
        "--no-cache",
        "--out",
        str(out),
        "--quiet",
    )
    return out


def _events(p: str, outcome: str = "failure") -> list[Event]:
    def ev(kind: str, actor: str, turn: int, **data: Any) -> Event:
        return Event(t=0.01 * turn, kind=kind, actor=actor, turn=turn, data=data)

    return [
        ev("user_message", "user", 1, text=p),
        ev("db_query", "system", 1, domain="hotel", arguments={"name": p, p: "x"}),
        ev(
            "db_result",
            "game_master",
            1,
            domain="hotel",
            total=1,
            rows=[{"name": p, p: p}],
            message=p,
        ),
        ev("system_message", "system", 1, text=p),
        ev("user_message", "user", 2, text=f"book it {p}"),
        ev("booking_request", "system", 2, domain="hotel", arguments={"name": p}),
        ev("booking_result", "game_master", 2, domain="hotel", ok=False, reference=p, message=p),
        ev("violation", "system", 2, reason=p, raw=p),
        ev(p, p, 2, payload=p),
        ev("episode_end", "game_master", 2, outcome=outcome, reason=p),
    ]


def xss_run(path: Path) -> Path:
    """A run whose every text field (ids, groups, labels, messages, rows, config) is a payload."""
    store = RunDirectory(path)
    records = []
    for i, p in enumerate(PAYLOADS):
        task = f"test/{i:03d}-{p}"
        outcome = Outcome.SUCCESS if i % 2 else Outcome.FAILURE
        records.append(
            EpisodeRecord(
                benchmark="booking",
                episode_id=f"{task}#0",
                task_id=task,
                trial=0,
                seed=i,
                group=p if i < 3 else "hotel",
                outcome=outcome,
                reason=p,
                metrics={"booking.booking_accuracy": float(i % 2), "booking.inform": 1.0},
                turns=2,
                events=_events(p, outcome.value),
                timing=Timing(
                    started_at="2026-01-01T00:00:00Z",
                    ended_at="2026-01-01T00:00:01Z",
                    duration_s=1.0,
                ),
                labels={"failure_class": p if i == 0 else outcome.value, p: p},
                details={
                    "goal": {"hotel": {"info": {"name": p}, "book": {p: p}}, p: {"info": {p: p}}},
                    "bookings": {"hotel": {"reference": p, "info": {"name": p}, "book": {}}},
                    "domain_scores": {
                        "hotel": {"inform": False, "booked": True, "mismatches": [p]}
                    },
                    "violations": [{"turn": 2, "reason": p, "raw": p}],
                    p: p,
                },
            )
        )
    manifest = Manifest(
        benchmark="booking",
        config={
            "task_set": PAYLOADS[1],
            "system": PAYLOADS[0],
            "user": PAYLOADS[3],
            "system_model": PAYLOADS[2],
            "seed": 0,
        },
        config_hash=PAYLOADS[0],
        task_set_hash=PAYLOADS[1],
        n_tasks=len(records),
        seed=0,
        players={
            "system": PAYLOADS[0],
            "user": PAYLOADS[3],
            "models": {PAYLOADS[2]: {"name": PAYLOADS[4]}},
        },
        package_version=PAYLOADS[1],
        git_commit=PAYLOADS[5],
        sessions=[
            Session(
                started_at=PAYLOADS[0],
                ended_at=PAYLOADS[1],
                host=PAYLOADS[4],
                command=list(PAYLOADS),
            )
        ],
    )
    store.write_manifest(manifest)
    writer = store.open_appender()
    for r in records:
        writer.append(r)
    writer.close()
    store.write_summary(
        summarize("booking", records, seed=0, success_metric="booking.booking_accuracy")
    )
    return path


def write_panel(
    base: Path, runs: dict[str, Path], metric: str = "booking.booking_accuracy"
) -> Path:
    """A panel.json over existing runs ('<system>|<user>' -> run dir under ``base``)."""
    from todeval.runner.store import RunDirectory as RD

    per_user: dict[str, dict[str, Any]] = {}
    for pair, path in runs.items():
        system, user = pair.split("|")
        summary = RD(path).read_summary()
        assert summary is not None
        per_user.setdefault(system, {})[user] = summary.metrics[metric].micro.model_dump()
    spread = {}
    for system, users in per_user.items():
        vals = [e["value"] for e in users.values()]
        spread[system] = {
            "per_user": users,
            "spread_max_min": max(vals) - min(vals),
            "std_sample": 0.05,
            "best_user": max(users, key=lambda u: users[u]["value"]),
            "worst_user": min(users, key=lambda u: users[u]["value"]),
        }
    systems = sorted(per_user)
    users = sorted({u for s in per_user.values() for u in s})
    panel = {
        "schema_version": 1,
        "benchmark": "booking",
        "systems": systems,
        "users": [*users, "llm-missing"],
        "runs": {
            **{k: str(v.relative_to(base)) for k, v in runs.items()},
            f"{systems[0]}|llm-missing": "gone",
        },
        "metric": metric,
        "spread": spread,
        "rank_stability": {
            "rankings": {u: systems for u in users},
            "kendall_tau": {f"{users[0]}|{users[-1]}": 1.0},
            "top_system": {u: systems[0] for u in users},
            "top_changes": False,
        },
    }
    path = base / "panel.json"
    path.write_text(json.dumps(panel, indent=2), encoding="utf-8")
    return base


# --- headless Chromium ---------------------------------------------------------------------


def _missing(what: str) -> None:
    message = f"{what} missing (Debian packages chromium and chromium-driver; pip install selenium)"
    if os.environ.get("CI") == "true":
        pytest.fail(message + " -- required with CI=true")
    pytest.skip(message)


def chromium_driver(tmp: Path) -> Any:
    """Headless Chromium through selenium and the system chromedriver (never Selenium Manager)."""
    missing = browser.missing_parts()
    if missing:
        _missing(", ".join(missing))
    return browser.chromium_driver(tmp, browser_log=True)


WAIT_S = 30


def browser_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium for a test module (``yield from`` it in a fixture)."""
    d = chromium_driver(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield d
    finally:
        d.quit()


def wait(driver: Any, condition: Any, seconds: float = WAIT_S) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, seconds).until(condition)


def css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, selector))


def screenshot(driver: Any, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    driver.save_screenshot(str(path))
    return path
