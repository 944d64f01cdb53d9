"""relaypass_instruments: the standard pass instruments, declared in relaypass-plugin.toml.

Deliberately empty: relaypass finds these instruments through the manifest
next to this file (entry point group ``relaypass.plugins``) and imports an
instrument's module only when it is first built.
"""
