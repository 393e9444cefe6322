"""What a panel's roles and metric are called, from the benchmark's profile.

Tables and text say "Host" and "hosts" for the toy, "User sim." and "user simulators" for a
benchmark whose profile says so; nothing here knows any benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass

from todeval.results.profile import BenchmarkProfile, PanelRoles


@dataclass(frozen=True)
class PanelWords:
    subject_title: str  # a table heading, e.g. System, Guesser
    varied_title: str  # e.g. User sim., Host
    subject_noun: str  # running text, e.g. system, guesser
    varied_noun: str  # e.g. user simulator, host
    subject_plural: str
    varied_plural: str
    metric_title: str  # e.g. Found; the metric's name when the profile has no title for it

    @classmethod
    def of(cls, profile: BenchmarkProfile, subject: str, varied: str, metric: str) -> PanelWords:
        roles = profile.panel
        if roles is None or (roles.subject, roles.varied) != (subject, varied):
            roles = PanelRoles(subject=subject, varied=varied)
        subject_title = profile.role_title(subject)
        varied_title = profile.role_title(varied)
        subject_noun = roles.subject_noun or subject_title.lower()
        varied_noun = roles.varied_noun or varied_title.lower()
        return cls(
            subject_title=subject_title,
            varied_title=varied_title,
            subject_noun=subject_noun,
            varied_noun=varied_noun,
            subject_plural=roles.subject_plural or f"{subject_noun}s",
            varied_plural=roles.varied_plural or f"{varied_noun}s",
            metric_title=metric_title(profile, metric),
        )


def metric_title(profile: BenchmarkProfile, metric: str) -> str:
    """The profile's title of a metric (its primary or a micro column), else the metric."""
    if metric == profile.primary and profile.primary_title:
        return profile.primary_title
    column = next((c for c in profile.columns if c.metric == metric), None)
    return column.title if column is not None else metric
