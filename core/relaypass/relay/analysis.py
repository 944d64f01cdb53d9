"""``relay.analysis``: the program analyses a Relay pass imports by this name."""

from ..analysis import (
    all_type_vars,
    all_vars,
    bound_type_vars,
    bound_vars,
    free_type_vars,
    free_vars,
    ill_formed_reason,
    post_order_visit,
    well_formed,
)

__all__ = [
    "all_type_vars", "all_vars", "bound_type_vars", "bound_vars", "free_type_vars", "free_vars",
    "ill_formed_reason", "post_order_visit", "well_formed",
]
