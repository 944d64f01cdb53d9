"""``relay.backend.interpreter``: the interpreter's values under TVM's module name."""

from ...interp import ConstructorValue, Executor, Interpreter, RefValue

__all__ = ["ConstructorValue", "Executor", "Interpreter", "RefValue"]
