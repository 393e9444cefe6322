"""Corpus scorers (``todeval score <name>``): one sub-package each."""
