"""Statistics: bootstrap CIs over tasks, Wilson and McNemar checks, paired run comparisons.

Public API:

* :func:`bootstrap_mean`, :func:`bootstrap_macro`, :func:`summarize_metric` -- percentile
  bootstrap over tasks (binary metrics also get the Wilson interval);
* :func:`wilson_interval`, :func:`mcnemar_exact` -- closed-form checks for 0/1 outcomes;
* :func:`paired_bootstrap` -- difference of two paired means with CI and p-value;
* :func:`compare_runs` -> :class:`Comparison` -- ``todeval compare`` as a function;
* :func:`rank`, :func:`kendall_tau` -- rankings of systems (simulator panels).

See docs/statistics.md for the methods and their assumptions.
"""

from todeval.stats.bootstrap import bootstrap_macro, bootstrap_mean, summarize_metric
from todeval.stats.compare import compare_runs
from todeval.stats.comparison import (
    Comparison,
    ComparisonMethod,
    MetricComparison,
    PairComparison,
    Ratio,
    RunInfo,
)
from todeval.stats.paired import PairedDifference, bootstrap_p_value, paired_bootstrap
from todeval.stats.proportions import McNemar, is_binary, mcnemar_exact, wilson_interval
from todeval.stats.ranking import kendall_tau, rank

__all__ = [
    "Comparison",
    "ComparisonMethod",
    "McNemar",
    "MetricComparison",
    "PairComparison",
    "PairedDifference",
    "Ratio",
    "RunInfo",
    "bootstrap_macro",
    "bootstrap_mean",
    "bootstrap_p_value",
    "compare_runs",
    "is_binary",
    "kendall_tau",
    "mcnemar_exact",
    "paired_bootstrap",
    "rank",
    "summarize_metric",
    "wilson_interval",
]
