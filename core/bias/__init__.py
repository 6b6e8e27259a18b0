"""Bias diagnostics of blind A/B votes (docs/methods.md §4): ``diagnose`` (the tests, each deciding ``detected``),
``render`` (JSON, markdown) and ``view`` (what the Bias page draws)."""
