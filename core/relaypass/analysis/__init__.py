"""Program analyses any pass may reuse (Relay's ``relay.analysis`` and the graphs behind FuseOps).

* variables: :func:`free_vars`, :func:`bound_vars`, :func:`all_vars` and their
  type-variable counterparts (defined with the IR, re-exported here);
* :mod:`~relaypass.analysis.well_formed`: every variable bound once, used in scope;
* :mod:`~relaypass.analysis.forward_graph`: the indexed dataflow graph of a function;
* :mod:`~relaypass.analysis.dominator`: its post-dominator tree;
* :mod:`~relaypass.analysis.graph_partition`: grouping operators by fusion pattern;
* :mod:`~relaypass.analysis.binding_scopes`: the scope each subexpression must be bound in;
* :mod:`~relaypass.analysis.purity`: which expressions and let bindings are free of effects;
* :mod:`~relaypass.analysis.feature`: which language features a program uses;
* :mod:`~relaypass.analysis.unmatched_cases`: the values a match leaves unhandled;
* :mod:`~relaypass.analysis.basic_block_normal_form`: values shared between blocks, and the check;
* :mod:`~relaypass.analysis.layout_rewrite`: moving operators to other layouts (ConvertLayout's and
  AlterOpLayout's machinery).
"""

from ..ir.traversal import post_order_visit
from ..ir.variables import (
    all_type_vars,
    all_vars,
    bound_type_vars,
    bound_vars,
    free_type_vars,
    free_vars,
)
from .basic_block_normal_form import check_basic_block_normal_form
from .feature import Feature, detect_feature
from .unmatched_cases import unmatched_cases
from .well_formed import ill_formed_reason, well_formed

__all__ = [
    "Feature", "check_basic_block_normal_form", "detect_feature",
    "all_type_vars", "all_vars", "bound_type_vars", "bound_vars", "free_type_vars", "free_vars",
    "ill_formed_reason", "post_order_visit", "unmatched_cases", "well_formed",
]
