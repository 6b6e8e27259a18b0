"""Judged preferences against one baseline: win rates, length control and prompt difficulty (docs/methods.md §12)."""
