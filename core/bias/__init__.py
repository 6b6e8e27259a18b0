"""Bias diagnostics of blind A/B votes and the raw-versus-corrected comparison."""
