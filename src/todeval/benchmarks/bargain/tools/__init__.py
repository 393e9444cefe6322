"""The bargaining benchmark's tooling: the Intent Factory, the Problem Weaver's checks and LLM mode,
and the ``todeval data bargain`` command (the rules live one folder up)."""
