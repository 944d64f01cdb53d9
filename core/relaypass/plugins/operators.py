"""Operators contributed by installed packages through the ``relaypass.operators`` group.

Each entry point names a module (or a callable) that registers operators with
:func:`relaypass.ir.op.register_op` when imported (or called).  A package that
fails to load is reported as a :class:`OperatorPluginError` naming its
distribution, and the other packages' operators still load.
"""

from __future__ import annotations

import warnings

from ..errors import RelayPassError
from .metadata import entry_points_of_group

GROUP = "relaypass.operators"


class OperatorPluginError(RelayPassError):
    """An operator package failed to import or to register its operators."""


def load_operator_entry_points() -> list[OperatorPluginError]:
    """Load every operator entry point; failures are warned about and returned."""
    failures: list[OperatorPluginError] = []
    for ep, dist_name, dist_version in entry_points_of_group(GROUP):
        try:
            obj = ep.load()
            if callable(obj):
                obj()
        except Exception as exc:  # a broken plugin must not hide the healthy ones
            err = OperatorPluginError(
                f"operator plugin {ep.name!r} of distribution {dist_name} {dist_version} "
                f"failed to load ({type(exc).__name__}: {exc}); fix or uninstall {dist_name}"
            )
            failures.append(err)
            warnings.warn(str(err), stacklevel=2)
    return failures
