"""Simulator panels: one or more systems against several user simulators.

``todeval run booking --system S --users agenda,corpus,llm=<spec>`` (or ``--users-file``) runs
each (system, user) pair into ``<out>/<system>__<user>/`` and writes ``<out>/panel.json``:
per-simulator scores with CIs, the spread of each system's score across simulators (max - min,
as the clem:todd paper defines it, and the sample standard deviation, both labelled), and with
several systems (``--systems A,B``) the ranking of systems under each simulator, Kendall's tau
between every pair of rankings, and whether the top system changes.
"""

from __future__ import annotations

import itertools
import statistics
import tomllib
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from todeval.core.records import Estimate, Summary
from todeval.errors import BadInputError, UsageError
from todeval.runner.naming import slug

PANEL_SCHEMA_VERSION = 1
PANEL_FILE = "panel.json"


class PlayerSpec(BaseModel):
    """One panel member: a name, a player, and optionally its model."""

    name: str
    player: str
    model: str | None = None


class PanelFile(BaseModel):
    users: list[PlayerSpec] = Field(default_factory=list)
    systems: list[PlayerSpec] = Field(default_factory=list)


def parse_members(text: str) -> list[PlayerSpec]:
    """``agenda,corpus,llm=<spec>`` -> specs (a model spec may itself contain ``:``)."""
    members: list[PlayerSpec] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        player, _, model = item.partition("=")
        name = player if not model else f"{player}-{slug(model)}"
        members.append(PlayerSpec(name=name, player=player, model=model or None))
    names = [m.name for m in members]
    if len(set(names)) != len(names):
        raise UsageError(f"panel members must be distinct: {', '.join(names)}")
    if not members:
        raise UsageError("empty panel")
    return members


def load_panel_file(path: str) -> PanelFile:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        panel = PanelFile.model_validate(data)
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read the panel file ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise BadInputError(f"{path}: not valid TOML ({exc})") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise BadInputError(f"{path}: invalid panel file at {where}: {first['msg']}") from None
    return panel


class SystemSpread(BaseModel):
    per_user: dict[str, Estimate]
    spread_max_min: float | None = Field(description="max - min over simulators (the paper's)")
    std_sample: float | None = Field(description="sample standard deviation over simulators")
    best_user: str | None = None
    worst_user: str | None = None


class RankStability(BaseModel):
    rankings: dict[str, list[str]] = Field(
        description="per simulator: systems, best first (ties in name order; see ranking_text)"
    )
    ranking_text: dict[str, str] = Field(
        default_factory=dict, description="per simulator: 'a > b = c' with ties shown as '='"
    )
    kendall_tau: dict[str, float | None] = Field(
        description="'<user a>|<user b>' -> tau-b; null when a ranking is all ties"
    )
    top_system: dict[str, str] = Field(description="per simulator; tied tops joined by ' = '")
    top_changes: bool = Field(description="no system is (jointly) best under every simulator")


class PanelSummary(BaseModel):
    schema_version: int = PANEL_SCHEMA_VERSION
    benchmark: str = "booking"
    metric: str
    systems: list[str]
    users: list[str]
    runs: dict[str, str] = Field(description="'<system>|<user>' -> run directory (relative)")
    spread: dict[str, SystemSpread] = Field(description="per system")
    rank_stability: RankStability | None = None


def _best(scores: dict[str, float | None]) -> list[str]:
    top = max((v or 0.0) for v in scores.values())
    return sorted(s for s, v in scores.items() if (v or 0.0) == top)


def _ranking_text(scores: dict[str, float | None], order: list[str]) -> str:
    text = order[0]
    for prev, cur in itertools.pairwise(order):
        text += (" = " if (scores[prev] or 0.0) == (scores[cur] or 0.0) else " > ") + cur
    return text


def _rank(scores: dict[str, float | None]) -> list[str]:
    return [s for s, _ in sorted(scores.items(), key=lambda kv: (-(kv[1] or 0.0), kv[0]))]


def summarize_panel(
    summaries: dict[tuple[str, str], Summary],
    systems: list[str],
    users: list[str],
    runs: dict[str, str],
    metric: str = "booking.booking_accuracy",
) -> PanelSummary:
    from todeval.stats import kendall_tau

    spread: dict[str, SystemSpread] = {}
    for system in systems:
        per_user = {
            u: summaries[(system, u)].metrics[metric].micro
            for u in users
            if metric in summaries[(system, u)].metrics
        }
        values = {u: e.value for u, e in per_user.items() if e.value is not None}
        if values:
            best = max(values, key=lambda u: (values[u], u))
            worst = min(values, key=lambda u: (values[u], u))
            spread[system] = SystemSpread(
                per_user=per_user,
                spread_max_min=values[best] - values[worst],
                std_sample=statistics.stdev(values.values()) if len(values) > 1 else None,
                best_user=best,
                worst_user=worst,
            )
        else:
            spread[system] = SystemSpread(per_user=per_user, spread_max_min=None, std_sample=None)
    stability = None
    if len(systems) > 1:
        scores = {
            u: {
                s: spread[s].per_user[u].value if u in spread[s].per_user else None for s in systems
            }
            for u in users
        }
        rankings = {u: _rank(scores[u]) for u in users}
        taus: dict[str, float | None] = {}
        for a, b in itertools.combinations(users, 2):
            xs = [scores[a][s] or 0.0 for s in systems]
            ys = [scores[b][s] or 0.0 for s in systems]
            taus[f"{a}|{b}"] = kendall_tau(xs, ys)
        tops = {u: _best(scores[u]) for u in users}
        common = set.intersection(*(set(t) for t in tops.values()))
        stability = RankStability(
            rankings=rankings,
            ranking_text={u: _ranking_text(scores[u], rankings[u]) for u in users},
            kendall_tau=taus,
            top_system={u: " = ".join(t) for u, t in tops.items()},
            top_changes=not common,
        )
    return PanelSummary(
        metric=metric,
        systems=systems,
        users=users,
        runs=runs,
        spread=spread,
        rank_stability=stability,
    )


def panel_table(panel: PanelSummary) -> str:
    from todeval.console.tables import fmt_estimate, render_rows

    rows = []
    for system, sp in panel.spread.items():
        for user in panel.users:
            est = sp.per_user.get(user)
            rows.append([system, user, fmt_estimate(est)])
    out = [
        f"{panel.metric} per simulator (micro, 95% CI)",
        render_rows(["system", "user simulator", "value [95% CI]"], rows),
    ]
    spread_rows = [
        [
            s,
            "-" if sp.spread_max_min is None else f"{sp.spread_max_min:.3f}",
            "-" if sp.std_sample is None else f"{sp.std_sample:.3f}",
            f"{sp.best_user} / {sp.worst_user}",
        ]
        for s, sp in panel.spread.items()
    ]
    out += [
        "",
        "spread across simulators",
        render_rows(
            ["system", "max - min (paper)", "std (sample)", "best / worst simulator"], spread_rows
        ),
    ]
    rs = panel.rank_stability
    if rs is not None:
        out += ["", "rank stability"]
        out.append(
            render_rows(
                ["simulator", "ranking (best first)"],
                [[u, rs.ranking_text.get(u, " > ".join(r))] for u, r in rs.rankings.items()],
            )
        )
        tau_rows = [
            [
                pair.replace("|", " vs "),
                "undefined (a ranking is all ties)" if t is None else f"{t:.3f}",
            ]
            for pair, t in rs.kendall_tau.items()
        ]
        if tau_rows:
            out.append(render_rows(["simulators", "Kendall tau-b"], tau_rows))
        out.append(f"top system changes across simulators: {'yes' if rs.top_changes else 'no'}")
    return "\n".join(out)


def panel_json(panel: PanelSummary) -> str:
    return panel.model_dump_json(indent=2) + "\n"


def run_dir_name(system: PlayerSpec, user: PlayerSpec) -> str:
    return f"{slug(system.name)}__{slug(user.name)}"
