"""``relay.analysis``: the program analyses a Relay pass imports by this name.

A package, as TVM's: ``relay.analysis.feature`` is the module of ``Feature``.
"""

from ...analysis import (
    Feature,
    all_type_vars,
    all_vars,
    bound_type_vars,
    bound_vars,
    check_basic_block_normal_form,
    detect_feature,
    free_type_vars,
    free_vars,
    ill_formed_reason,
    post_order_visit,
    unmatched_cases,
    well_formed,
)
from ...analysis.kind_check import KindCheckError, check_kind
from . import feature

__all__ = [
    "Feature", "KindCheckError", "check_basic_block_normal_form", "check_kind", "detect_feature",
    "feature",
    "all_type_vars", "all_vars", "bound_type_vars", "bound_vars", "free_type_vars", "free_vars",
    "ill_formed_reason", "post_order_visit", "unmatched_cases", "well_formed",
]
