"""``tvm._ffi`` as pass code uses it: the global function and object registries.

In TVM this package is the bridge to C++; what Relay passes take from it is
``register_func`` / ``get_global_func`` (functions by name) and
``register_object`` (classes by type key), which :mod:`.registry` keeps in
Python.
"""

from . import registry
from .registry import (
    get_global_func,
    list_global_func_names,
    register_func,
    register_object,
    remove_global_func,
)

__all__ = [
    "get_global_func", "list_global_func_names", "register_func", "register_object",
    "registry", "remove_global_func",
]
