"""``todeval booking review``: who failed, for every failed episode of booking runs."""
