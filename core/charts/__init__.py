"""Plotly figure builders: pure functions of results, shared by the dashboard and the reports.

Submodules: :mod:`core.charts.cd` (critical-difference diagram), :mod:`core.charts.votes` (A/B-vote
charts), :mod:`core.charts.runs` (score-table charts), :mod:`core.charts.export` (PNG export)."""

from core.charts.cd import cd_groups, critical_difference_figure

__all__ = ["cd_groups", "critical_difference_figure"]
