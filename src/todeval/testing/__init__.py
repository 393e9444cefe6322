"""Test doubles that are real components, for tests and ``bench/`` scripts alike.

* :mod:`todeval.testing.openai_server` -- an OpenAI-compatible HTTP server with scripted replies
  and fault injection (``python -m todeval.testing.openai_server --port 0 ...``);
  ``ServerConfig`` and ``FaultConfig`` describe its behaviour.
* :mod:`todeval.testing.server_process` -- ``ServerProcess``, which runs that server as a child
  process on 127.0.0.1 and reads its stats.
* :mod:`todeval.testing.ray_cluster` -- ``LocalRayCluster``, a Ray cluster of several nodes on
  this machine (``ray start`` processes), one of which a test can kill as a lost machine.
* :mod:`todeval.testing.tmux` -- ``Tmux``, a private tmux server for tests in which a person
  plays a participant in the terminal (send-keys to type, capture-pane to read).

Nothing is imported here, so ``python -m todeval.testing.openai_server`` runs cleanly.
"""
