"""The numpy interpreter: the executable meaning of a Relay program (Relay's debug executor)."""

from .interpreter import Closure, Interpreter, RefValue, create_executor

__all__ = ["Closure", "Interpreter", "RefValue", "create_executor"]
