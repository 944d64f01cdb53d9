"""broken-passes: the kinds of bug a pass author makes, one pass each (see relaypass-plugin.toml)."""
