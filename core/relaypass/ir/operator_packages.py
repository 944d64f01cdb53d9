"""Operator packages: installed distributions that register operators, found by entry point.

Every operator set arrives this way, the standard one included (relaypass
declares ``relaypass.op`` in the ``relaypass.operators`` group), so the IR's
registry never names the package that defines ``add`` or ``nn.conv2d``.  Each
entry point names a module (or a callable) that registers operators with
:func:`relaypass.ir.op.register_op` when imported (or called); relaypass's own
set loads first, so the others can extend it.  A package that
fails to load is reported as a :class:`OperatorPluginError` naming its
distribution, and the other packages' operators still load.
"""

from __future__ import annotations

import warnings

from ..entry_points import entry_points_of_group
from ..errors import RelayPassError

GROUP = "relaypass.operators"


class OperatorPluginError(RelayPassError):
    """An operator package failed to import or to register its operators."""


#: The distribution whose operator set every other one builds on.
CORE_DISTRIBUTION = "relaypass"


def load_operator_packages() -> list[OperatorPluginError]:
    """Load every operator entry point; failures are warned about and returned."""
    failures: list[OperatorPluginError] = []
    found = sorted(entry_points_of_group(GROUP), key=lambda e: e[1] != CORE_DISTRIBUTION)
    for ep, dist_name, dist_version in found:
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
