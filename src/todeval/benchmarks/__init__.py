"""Benchmarks: one sub-package each, registered through :func:`register`."""
