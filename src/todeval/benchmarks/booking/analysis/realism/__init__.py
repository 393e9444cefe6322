"""Simulator realism for the booking benchmark (issue 18, item 3).

* :mod:`.judge` -- an LLM judge rates every user turn of booking run directories for
  naturalness and coherence (1-5); means per simulator with bootstrap CIs over dialogues;
* :mod:`.blind` -- "which one is the person?" pairwise annotation items (a MultiWOZ dialogue
  prefix, the real next user turn and a simulator's, in seeded order) and their scorer:
  accuracy of picking the person with a Wilson CI (50% = indistinguishable).

Commands: ``todeval booking realism judge`` and ``todeval booking realism score``; items:
``todeval annotate export --from booking-realism:SET,...``. See docs/user-simulators.md.
"""
