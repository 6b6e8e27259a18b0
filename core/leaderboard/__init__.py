"""Leaderboards from score tables (docs/methods.md §8): ``scores`` (EvalRuns → models × tasks matrix), ``aggregate``
(means, win rates, CIs, pairs, ranks), ``draws`` / ``task_bootstrap`` / ``subset_draws`` (the task bootstrap of
§3), ``nemenyi`` and ``short_names`` (sentences and labels), ``render`` (JSON, CSV, markdown) and ``tables``
(the frames the dashboard and the report figures draw)."""
