"""Statistics, the maths only: bootstrap CIs over tasks, Wilson and McNemar checks, paired
differences, rankings. Nothing here reads a run directory (that is :mod:`todeval.results`).

Public API:

* :func:`bootstrap_mean`, :func:`bootstrap_macro`, :func:`summarize_metric` -- percentile
  bootstrap over tasks (binary metrics also get the Wilson interval);
* :func:`wilson_interval`, :func:`mcnemar_exact` -- closed-form checks for 0/1 outcomes;
* :func:`paired_bootstrap` -- difference of two paired means with CI and p-value;
* :func:`rank`, :func:`kendall_tau` -- rankings of systems (simulator panels).

See docs/statistics.md for the methods and their assumptions.
"""

from todeval.stats.bootstrap import bootstrap_macro, bootstrap_mean, summarize_metric
from todeval.stats.paired import PairedDifference, bootstrap_p_value, paired_bootstrap
from todeval.stats.proportions import McNemar, is_binary, mcnemar_exact, wilson_interval
from todeval.stats.ranking import kendall_tau, rank

__all__ = [
    "McNemar",
    "PairedDifference",
    "bootstrap_macro",
    "bootstrap_mean",
    "bootstrap_p_value",
    "is_binary",
    "kendall_tau",
    "mcnemar_exact",
    "paired_bootstrap",
    "rank",
    "summarize_metric",
    "wilson_interval",
]
