"""``relay.build_module``: the parts of TVM's module that need no code generator.

``bind_params_by_name`` turns a model's parameter arrays into constants of its
main function, ahead of constant folding.  Building for a target
(``relay.build``) is out of scope for relaypass.
"""

from ..analysis.substitution import bind_params_by_name

__all__ = ["bind_params_by_name"]
