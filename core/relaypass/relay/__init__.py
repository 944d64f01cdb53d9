"""The namespace TVM Relay users know: ``from relaypass import relay``.

Code written against ``tvm.relay`` ports by changing the import: the IR
classes, ``relay.var``/``relay.const``, ``ScopeBuilder``, operator
constructors (``relay.add``, ``relay.nn.conv2d``), ``relay.analysis`` and
``relay.transform`` (every registered pass by name) live here.
"""

from ..analysis.substitution import bind
from ..frontend.prelude import Prelude
from ..functor import ExprFunctor, ExprMutator, ExprVisitor, MixedModeMutator
from ..ir.adt import (
    Clause,
    Constructor,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
)
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
)
from ..ir.expr_builders import const, var
from ..ir.module import IRModule
from ..ir.node import SourceName, Span
from ..ir.op import Op
from ..ir.scope_builder import ScopeBuilder
from ..ir.text.parser import parse_expr
from ..ir.type_relation import TypeConstraint, TypeRelation
from ..ir.types import (
    Any,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeKind,
    TypeVar,
    scalar_type,
)
from ..out_of_scope import MODULES as _OUT_OF_SCOPE_MODULES
from ..out_of_scope import RELAY_NAMES, relay_name
from ..transform.parsing import fromtext, parse
from . import adt, analysis, base, expr, expr_functor, function, op, prelude, quantize, ty
from .op import *  # noqa: F403
from .op import nn

RelayExpr = Expr

__all__ = [
    "Any", "Call", "Constant", "Expr", "ExprFunctor", "ExprMutator", "ExprVisitor", "FuncType",
    "Function", "GlobalTypeVar", "GlobalVar", "IRModule", "If", "MixedModeMutator", "SourceName",
    "Span", "base", "expr", "expr_functor", "function", "quantize", "ty",
    "IncompleteType", "Let", "Op", "RefCreate", "RefRead", "RefType", "RefWrite", "RelayExpr",
    "ScopeBuilder", "TensorType", "Tuple", "TupleGetItem", "TupleType", "Type", "TypeKind",
    "TypeVar", "Var", "analysis", "bind", "const", "nn", "op", "scalar_type", "var",
    "fromtext", "parse", "parse_expr",
    "Clause", "Constructor", "Match", "Pattern", "PatternConstructor", "PatternTuple",
    "PatternVar", "PatternWildcard", "Prelude", "TypeCall", "TypeData", "adt", "prelude",
    "TypeConstraint", "TypeRelation",
    *op.__all__,
]


_LAZY_SUBMODULES = {
    "transform": "relaypass.relay.transform",
    "annotation": "relaypass.relay.annotation",
    "frontend": "relaypass.relay.frontend",
    "testing": "relaypass.relay.testing",
    "build_module": "relaypass.relay.build_module",
    "dataflow_pattern": "relaypass.relay.dataflow_pattern",
    "scope_builder": "relaypass.relay.scope_builder",
}


def __getattr__(name: str):
    # ``relay.transform`` and other sub-namespaces that import heavier machinery
    # are loaded on first use.
    import importlib

    target = _LAZY_SUBMODULES.get(name)
    if target is None and f"relaypass.relay.{name}" in _OUT_OF_SCOPE_MODULES:
        target = f"relaypass.relay.{name}"  # a placeholder (relay.qnn, relay.backend, ...)
    if target is not None:
        module = importlib.import_module(target)
        globals()[name] = module
        return module
    if name == "create_executor":
        from ..interp import create_executor

        return create_executor
    if name in RELAY_NAMES:
        return relay_name(name)  # raises: a compilation API, or not provided yet
    raise AttributeError(f"module 'relaypass.relay' has no attribute {name!r}")
