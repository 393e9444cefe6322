"""External agents: a participant whose turns come from an agent's own chat endpoint, and the
tools a benchmark serves to it over the Model Context Protocol (MCP).

Benchmark-neutral pieces, used by a benchmark's folder to put an agent built with any framework
in one of its roles:

* :mod:`.channels` -- the chat endpoint (``openai-chat``, ``rasa-rest``, ``plain``): one
  request per turn, the reply's text, its latency, and its token usage when reported;
* :mod:`.tool_server` -- an MCP server (official ``mcp`` SDK; streamable HTTP on loopback or
  stdio) whose tool calls, each carrying an episode token, are handed to the episode they
  belong to, where the benchmark's game master validates and answers them;
* :mod:`.conversation` -- one episode's conversation with an agent: chat requests with the
  tool calls made while the agent works on each;
* :mod:`.hub` -- how a run puts an agent in a role, and what its episodes share (HTTP
  clients, the tool server);
* :mod:`.sandbox` -- a benchmark's tools on their own (``todeval serve tools NAME``);
* :mod:`.bridge` -- a stdio MCP server forwarding to a run's tool server, for agents that
  start their tools as a subprocess.

See ``docs/agents.md``.
"""
