"""Relay's text format: the printer, the parser, and model files on disk."""
