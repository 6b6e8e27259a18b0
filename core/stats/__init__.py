"""Generic numerics: intervals, resampling, Newton's method, significance tests, Friedman."""
