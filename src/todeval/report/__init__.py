"""Rendering results: terminal tables (and later the web report)."""
