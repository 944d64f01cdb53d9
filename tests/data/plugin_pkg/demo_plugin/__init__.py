"""relaypass-demo-plugin: passes and an instrument, found through relaypass-plugin.toml."""
