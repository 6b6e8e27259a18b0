"""``evalboard report``: the whole bundle of one input, as files (docs/design.md "CLI").

:mod:`core.report.build` reads the input and writes the bundle of its kind; :mod:`core.report.votes`
(with the figure data of :mod:`core.report.votes_data`) and :mod:`core.report.runs` write the votes and
score-table bundles; :mod:`core.report.bundle` holds what every bundle shares (settings, progress,
PNG figures). Figures come from :mod:`core.charts`.
"""
