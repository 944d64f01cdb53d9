"""Which language features a program uses (Relay's ``relay.analysis.detect_feature``).

Passes state their preconditions in terms of features: ToGraphNormalForm
leaves no ``let`` (no :attr:`Feature.fLet`), ToANormalForm leaves no shared
subexpression (no :attr:`Feature.fGraph`), a pass that cannot handle
references checks for :attr:`Feature.fRefCreate`.  The answer is Relay's:

* one feature per kind of node reached (``fVar``, ``fCall``, ``fLet``, ...);
  the body of a function marked ``Primitive`` is not looked into (the
  function itself still counts as ``fFunction``);
* ``fGraph`` when a node that is not atomic (anything but a variable, a
  global, a constant or an operator) is reached along two edges, that is the
  program is a graph rather than a tree;
* ``fLetRec`` when a let-bound variable occurs in its own value (a recursive
  closure).

The walk uses an explicit stack, so any depth of nesting is fine, and it is
linear: each node is expanded once, and a let's recursion is found during
the same walk (a variable reached while its own let's value is being walked),
not by collecting the free variables of every let value.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from ..errors import RelayPassError
from ..ir.adt import Constructor, Match
from ..ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
    children,
)
from ..ir.module import IRModule
from ..ir.op import Op
from ..ir.summary import short_text

__all__ = ["Feature", "FeatureDetectionError", "detect_feature"]


class FeatureDetectionError(RelayPassError, TypeError):
    """``detect_feature`` was given something other than an expression and/or a module."""


class Feature(IntEnum):
    """The features a Relay program may use; the values are Relay's."""

    fVar = 0
    fGlobalVar = 1
    fConstant = 2
    fTuple = 3
    fTupleGetItem = 4
    fFunction = 5
    fOp = 6
    fCall = 7
    fLet = 8
    fIf = 9
    fRefCreate = 10
    fRefRead = 11
    fRefWrite = 12
    fConstructor = 13
    fMatch = 14
    fGraph = 15
    """A node that is not atomic is shared: the program is a graph, not a tree."""
    fLetRec = 16
    """A let-bound variable is used in its own value."""


_KIND_FEATURE: dict[type, Feature] = {
    Var: Feature.fVar,
    GlobalVar: Feature.fGlobalVar,
    Constant: Feature.fConstant,
    Tuple: Feature.fTuple,
    TupleGetItem: Feature.fTupleGetItem,
    Function: Feature.fFunction,
    Op: Feature.fOp,
    Call: Feature.fCall,
    Let: Feature.fLet,
    If: Feature.fIf,
    RefCreate: Feature.fRefCreate,
    RefRead: Feature.fRefRead,
    RefWrite: Feature.fRefWrite,
    Constructor: Feature.fConstructor,
    Match: Feature.fMatch,
}

# Reaching one of these twice does not make a graph: they are names or values, not computations.
_ATOMIC = (Var, GlobalVar, Constant, Op, Constructor)


def _feature_of(node: Expr) -> Feature:
    for cls in type(node).__mro__:
        feature = _KIND_FEATURE.get(cls)
        if feature is not None:
            return feature
    raise FeatureDetectionError(
        f"detect_feature: no Relay feature for a {type(node).__name__} node "
        f"({short_text(node)})"
    )


class _LeaveLetValue:
    """Marks, on the walk's stack, the end of a let's value: its variable leaves ``open``."""

    __slots__ = ("var",)

    def __init__(self, var: Var) -> None:
        self.var = var


def _expr_features(expr: Expr) -> set[Feature]:
    found: set[Feature] = set()
    seen: set[Expr] = set()
    open_lets: set[Var] = set()  # variables of the lets whose value is being walked
    stack: list[Any] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, _LeaveLetValue):
            open_lets.discard(node.var)
            continue
        if node in seen:
            if isinstance(node, Var):
                if node in open_lets:
                    found.add(Feature.fLetRec)
            elif not isinstance(node, _ATOMIC):
                found.add(Feature.fGraph)
            continue
        seen.add(node)
        found.add(_feature_of(node))
        if isinstance(node, Let):
            # The binder is reached first, then the value (with the variable open), then
            # the body: Relay's order.  A variable is bound once in a well-formed program,
            # so every use of it inside the value is a use of itself.
            var = node.var
            if var not in seen:
                seen.add(var)
                found.add(Feature.fVar)
            open_lets.add(var)
            stack.append(node.body)
            stack.append(_LeaveLetValue(var))
            stack.append(node.value)
            continue
        if isinstance(node, Function) and node.attrs.get("Primitive"):
            continue
        stack.extend(reversed(children(node)))
    return found


def detect_feature(a: Expr | IRModule | None, b: Expr | IRModule | None = None) -> set[Feature]:
    """The features used by an expression, a module, or one of each (in either order).

    For a module, each global function is examined on its own (a node shared
    between two functions does not make ``fGraph``) and the sets are joined.
    """
    if isinstance(a, IRModule):
        a, b = b, a
    if a is not None and not isinstance(a, Expr):
        raise FeatureDetectionError(
            f"detect_feature expects a Relay expression or an IRModule, got {type(a).__name__}"
        )
    if b is not None and not isinstance(b, IRModule):
        what = "two expressions" if isinstance(b, Expr) else f"a {type(b).__name__}"
        raise FeatureDetectionError(
            f"detect_feature expects at most one expression and one IRModule, got {what}"
        )
    found = _expr_features(a) if a is not None else set()
    if b is not None:
        for func in b.functions.values():
            found |= _expr_features(func)
    return found
