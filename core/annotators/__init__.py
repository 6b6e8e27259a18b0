"""Annotator quality: golden accuracy, fast answers, agreement, and the annotators report."""
