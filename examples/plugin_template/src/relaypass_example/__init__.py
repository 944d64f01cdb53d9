"""relaypass-example-plugin: a function pass and an instrument, declared in relaypass-plugin.toml.

Keep this file light: relaypass imports it whenever it builds one of the
package's passes or instruments, and it must not import their modules (each
is imported only when the manifest's ``factory`` names it).
"""

__version__ = "0.1.0"
