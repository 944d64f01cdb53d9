"""relaypass_std: the standard Relay passes, each a plugin declared in relaypass-plugin.toml.

Deliberately empty: relaypass finds these passes through the manifest next
to this file (entry point group ``relaypass.plugins``) and imports a pass's
module only when the pass is first built, so importing this package must
stay free of the IR and of numpy.
"""
