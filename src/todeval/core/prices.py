"""Fixed pricing assumptions shared by the model layer and the summaries."""

USD_PER_PETAFLOP = 0.05  # the clem:todd paper's FLOP price assumption
