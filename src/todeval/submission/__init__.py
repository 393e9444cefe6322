"""Submissions: one archive of a finished run that anyone can check (``todeval submit``).

:func:`prepare` writes the archive (the run's files, their SHA-256, the todeval version, the
system's declared description and model); :func:`verify` checks it -- the shipped task set,
every task's trials, standard or custom options, no privileged player, the scorer version,
metrics re-computed, and every episode replayed against the world it claims (each benchmark's
:class:`Replay`) -- and says whether it is verified standard, verified custom or refused.
"""

from todeval.submission.replay import Mismatch, Replay, Replayer, RunFiles

__all__ = ["Mismatch", "Replay", "Replayer", "RunFiles"]
