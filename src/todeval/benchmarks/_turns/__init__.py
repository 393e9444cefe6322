"""Machinery shared by the context-to-response runs (``multiwoz-turns``, ``incar-turns``).

* :mod:`.replies` -- checking a model reply against the run's JSON schema;
* :mod:`.generation` -- the run's backends, one model call per turn, the episode record;
* :mod:`.summaries` -- the format-failure metric and usage totals added to a scorer's summary;
* :mod:`.options` -- the configuration, CLI options and dialogue selection both runs share.

It lives in the ``multiwoz_turns`` package only because a plug-in package is the unit of
ownership; nothing in it is MultiWOZ-specific.
"""
