"""Machinery shared by the context-to-response runs (``multiwoz-turns``, ``incar-turns``).

* :mod:`.replies` -- checking a model reply against the run's JSON schema;
* :mod:`.generation` -- the run's backends, one model call per turn, the episode record;
* :mod:`.summaries` -- the format-failure metric and usage totals added to a scorer's summary;
* :mod:`.options` -- the configuration, CLI options and dialogue selection both runs share;
* :mod:`.plan` -- the run plan and the prediction file, given a benchmark's :class:`TurnsSpec`;
* :mod:`.command` -- the ``todeval run`` command: lazy registration, execution, printed output;
* :mod:`.report` -- the lines printed after the scorer's table.

A benchmark package keeps only what differs: its corpus, prompts, reply schema and scorer call.
This package defines no ``register`` function, so plug-in discovery adds no command for it.
"""
