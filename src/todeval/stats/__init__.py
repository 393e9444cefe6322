"""Statistics: bootstrap confidence intervals over tasks."""

from todeval.stats.bootstrap import bootstrap_macro, bootstrap_mean, summarize_metric

__all__ = ["bootstrap_macro", "bootstrap_mean", "summarize_metric"]
