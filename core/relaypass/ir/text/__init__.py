"""Relay's text format: tokenizer, printer, parser, metadata section, and model files on disk."""
