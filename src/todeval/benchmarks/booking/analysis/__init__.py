"""Analysis of booking runs after they are played -- not part of the game (the game's own
tools, the DB and booking calls a system makes, live in :mod:`..world` and
:mod:`..environment`):

* :mod:`.realism` -- the LLM judge and the blind test of user simulators;
* :mod:`.review` -- ``todeval booking review``: who failed, for every failed episode (the rules
  are :mod:`..review`).
"""
