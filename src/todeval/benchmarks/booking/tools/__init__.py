"""Booking tooling: the realism judge and blind test of user simulators (the rules live one
folder up)."""
