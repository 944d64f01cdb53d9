"""The numpy interpreter (Relay's semantics, executable) and ``relay.create_executor`` over it.

:class:`Interpreter` computes with numpy values, for the tools and checks
inside relaypass; :func:`create_executor` gives Relay's executors, whose
results are TVM's runtime values (NDArray, ADT).
"""

from .adt_values import ConstructorValue, MatchFailureError
from .container import ADT
from .executor import Executor, GraphExecutor, VMExecutor, create_executor
from .interpreter import Closure, Interpreter, RefValue

__all__ = [
    "ADT", "Closure", "ConstructorValue", "Executor", "GraphExecutor", "Interpreter",
    "MatchFailureError", "RefValue", "VMExecutor", "create_executor",
]
