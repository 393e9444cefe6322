"""A toy todeval benchmark (number guessing): the worked example of a benchmark plug-in."""
