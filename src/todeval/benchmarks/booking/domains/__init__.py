"""Domain packs: bring your own bookable world (docs/own-domain.md)."""
