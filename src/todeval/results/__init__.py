"""Results of runs: reading run directories, comparing runs, benchmark profiles, panels.

This layer sits above :mod:`todeval.runner` (which writes run directories) and
:mod:`todeval.stats` (the maths); the report and the CLI read results through it. Import from
the modules (this package imports nothing, so a plug-in registering a profile stays light):

* :mod:`todeval.results.profile` -- :class:`~todeval.results.profile.BenchmarkProfile`, how a
  benchmark's results are shown (registered by the benchmark);
* :mod:`todeval.results.runs` -- ``load_run`` -> ``LoadedRun`` (manifest, summary, per-task
  values);
* :mod:`todeval.results.compare` -- ``compare_runs`` -> ``Comparison`` (``todeval compare``).
"""
