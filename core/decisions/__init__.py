"""Decisions from a ranking: how robust its order is to the votes behind it (docs/methods.md §13)."""
