"""Panels: the players of one role (the subject, e.g. a system) scored against several players
of another (the varied role, e.g. user simulators), for any benchmark whose profile declares
:class:`~todeval.results.profile.PanelRoles`.

This layer sits above :mod:`todeval.runner`, :mod:`todeval.stats` and :mod:`todeval.results`
and names no benchmark. Import from the modules:

* :mod:`todeval.panels.model` -- ``PanelSummary``, the one model of ``panel.json`` (schema 2;
  schema 1 of 0.1.0 read and migrated), ``read_panel``, ``write_panel``;
* :mod:`todeval.panels.members` -- ``Member``, ``parse_members`` (``a,b,llm=<spec>``) and the
  TOML panel file (``[[<role>]]`` tables), validated whole before anything runs;
* :mod:`todeval.panels.summary` -- ``summarize_panel``: spread (max - min, sample std, best /
  worst) and rank stability (rankings with ties, Kendall tau-b, top changes);
* :mod:`todeval.panels.run` -- ``run_panel``: every pair's plan first, then one run directory
  per pair, ``panel.json`` and the console tables;
* :mod:`todeval.panels.cli` -- ``add_panel_arguments`` / ``members_from_args``: the options
  ``--<varied>s``, ``--<subject>s``, ``--panel FILE`` in one call;
* :mod:`todeval.panels.detect` -- panels found among runs differing only in the varied role;
* :mod:`todeval.panels.words` -- role titles and nouns from the benchmark's profile.
"""
