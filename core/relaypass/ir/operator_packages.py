"""Operator packages: installed distributions that register operators, found by entry point.

Every operator set arrives this way, the standard one included (relaypass
declares ``relaypass.op`` in the ``relaypass.operators`` group), so the IR's
registry never names the package that defines ``add`` or ``nn.conv2d``.  Each
entry point names a module (or a callable) that registers operators with
:func:`relaypass.ir.op.register_op` when imported (or called); relaypass's own
set loads first, so the others can extend it.  A package that
fails to load (raising, or calling ``sys.exit``) is reported as a
:class:`OperatorPluginError` naming its distribution, and the other packages'
operators still load.

Another package may add operators, never quietly replace a standard one:
registering ``add`` again (``register_op(..., override=True)``) is undone
and reported unless the user allowed it by naming ``dist:add`` in
``RELAYPASS_OVERRIDES``.  Warnings raised while a package loads are
re-issued as :class:`~relaypass.entry_points.PluginWarning` naming it.
"""

from __future__ import annotations

import warnings
from collections.abc import MutableMapping
from typing import Any

from ..entry_points import (
    OVERRIDES_VARIABLE,
    STANDARD_DISTRIBUTION,
    entry_points_of_group,
    override_allowed,
    overrides_from_environment,
    plugin_warnings,
)
from ..errors import RelayPassError

GROUP = "relaypass.operators"


class OperatorPluginError(RelayPassError):
    """An operator package failed to import or to register its operators."""


#: The distribution whose operator set every other one builds on.
CORE_DISTRIBUTION = STANDARD_DISTRIBUTION


def load_operator_packages(registry: MutableMapping[str, Any] | None = None
                           ) -> list[OperatorPluginError]:
    """Load every operator entry point; failures are warned about and returned.

    ``registry`` is the operator table (name -> Op) the packages register
    into; after each non-standard package, a standard operator it replaced
    without the user's leave is put back.
    """
    failures: list[OperatorPluginError] = []
    allowed = overrides_from_environment()
    found = sorted(entry_points_of_group(GROUP), key=lambda e: e[1] != CORE_DISTRIBUTION)
    standard: dict[str, Any] = {}
    for ep, dist_name, dist_version in found:
        who = f"operator plugin {ep.name!r} of distribution {dist_name} {dist_version}"
        try:
            with plugin_warnings(who):
                obj = ep.load()
                if callable(obj):
                    obj()
        except (Exception, SystemExit) as exc:  # a broken plugin must not hide the healthy ones
            what = (f"called sys.exit({exc.code!r})" if isinstance(exc, SystemExit)
                    else f"{type(exc).__name__}: {exc}")
            _fail(failures, f"{who} failed to load ({what}); fix or uninstall {dist_name}")
        if registry is None:
            continue
        if dist_name == CORE_DISTRIBUTION:
            standard.update(registry)
            continue
        replaced = [name for name, op in standard.items() if registry.get(name) is not op]
        for name in replaced:
            if name in registry and override_allowed(name, dist_name, ep.name, allowed):
                standard[name] = registry[name]  # the user's choice stands for later packages
                continue
            registry[name] = standard[name]
            _fail(failures, f"{who} replaced the standard operator {name!r}; the standard one "
                            f"is kept (to use the plugin's, add {dist_name}:{name} to "
                            f"{OVERRIDES_VARIABLE})")
    return failures


def _fail(failures: list[OperatorPluginError], message: str) -> None:
    err = OperatorPluginError(message)
    failures.append(err)
    warnings.warn(str(err), stacklevel=3)
