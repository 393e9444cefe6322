"""Plain-text output for the terminal: tables of summaries, usage and comparisons."""
