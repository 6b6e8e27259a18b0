"""Leaderboards from score tables: aggregation, task bootstrap, Friedman/Nemenyi, rendering."""
