"""``relay.expr_functor``: the visitor and mutator classes, under TVM's module name."""

from ..functor import ExprFunctor, ExprMutator, ExprVisitor, MixedModeMutator, MixedModeVisitor

__all__ = ["ExprFunctor", "ExprMutator", "ExprVisitor", "MixedModeMutator", "MixedModeVisitor"]
