"""Talking to models: one client for OpenAI-compatible endpoints, and cleaning of their answers."""
