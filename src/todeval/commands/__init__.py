"""Commands that work across benchmarks (``todeval compare``, ``todeval report``, ...).

Each sub-module defines ``register(registry)`` and is discovered automatically.
"""
