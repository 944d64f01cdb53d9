"""OpCounter: count the operator calls of a Relay function (an ExprVisitor analysis).

Usage, after ``import tvm``: count_ops(mod["main"]).
"""
from __future__ import annotations

from collections import Counter

import relaypass.relay as relay
from relaypass.relay.expr_functor import (  # the visitor base class
    ExprVisitor,
)

try:
    from relaypass.relay.analysis import free_vars
except ImportError:  # an older TVM
    free_vars = None


class OpCounter(ExprVisitor):
    def __init__(self):
        super().__init__()
        self.counts = Counter()

    def visit_call(self, call):
        if isinstance(call.op, relay.Op):  # tvm.ir.Op
            self.counts[call.op.name] += 1
        super().visit_call(call)


def count_ops(func):
    counter = OpCounter()
    counter.visit(func)
    return dict(counter.counts)


def describe(func):
    import relaypass as tvm, relaypass.relay.analysis

    names = [v.name_hint for v in tvm.relay.analysis.free_vars(func)]
    return f"{len(names)} free variables: {', '.join(names)}"


def shadowed(relay):
    # A parameter named relay is not the tvm.relay module.
    return relay.definitely_shadowed
