"""Annotator quality (docs/methods.md §7): ``quality`` (golden accuracy, fast answers, the policy), ``agreement``
(κ, α on real overlap), ``report`` (the report and the ranking before/after the policy), ``render`` (its
JSON, markdown and the dashboard's tables), ``golden_names``."""
