"""todeval: evaluate task-oriented dialogue agents with numbers a reviewer would trust."""

__version__ = "0.2.0"
