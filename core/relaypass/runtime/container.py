"""``tvm.runtime.container``: the tuple value executors return (re-exported from the interpreter)."""

from ..interp.container import ADT, tuple_object

__all__ = ["ADT", "tuple_object"]
