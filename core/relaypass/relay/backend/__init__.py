"""``relay.backend``: TVM's backends compile, so its names are placeholders that raise when used.

Only ``relay.backend.interpreter`` is real (the values the interpreter hands
back, for code that checks them); every other name, and every other
submodule, is the out-of-scope placeholder of :mod:`relaypass.out_of_scope`.
"""

from ...out_of_scope import placeholder_attribute

__getattr__ = placeholder_attribute("relaypass.relay.backend")
