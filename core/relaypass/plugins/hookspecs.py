"""The hooks of relaypass's plugin manager (pluggy project name ``"relaypass"``).

Every installed plugin distribution is represented in the plugin manager by
an object built from its manifest, which implements the two declaration hooks
from data alone; that is how listing and dependency resolution stay free of
plugin imports.  Code running in-process (a script, a test's conftest, a tool
embedding relaypass) can register its own plugin object with
:func:`relaypass.plugins.register_plugin` and implement any of these hooks
with :data:`relaypass.plugins.hookimpl`::

    from relaypass.plugins import hookimpl, register_plugin

    class AuditLog:
        @hookimpl
        def relaypass_pass_built(self, spec, pass_):
            print("built", spec.name, "from", spec.origin)

    register_plugin(AuditLog())

Hooks are called when the registry is built or a pass is built, never while
passes run: watching passes run is what instruments are for, and a hook call
per pass would double the cost of a pipeline of small passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pluggy

from ..transform.errors import PluginError
from ..transform.specs import InstrumentSpec, PassSpec

PROJECT = "relaypass"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def relaypass_pass_specs() -> Sequence[PassSpec]:
    """Declare passes: return the :class:`PassSpec` of each pass this plugin provides.

    Called once each time the registry is (re)built, for every plugin.  Return
    declarations only: a spec's ``factory`` (``"module:attr"`` or a callable)
    is resolved when the pass is first built, so an implementation must not
    import heavy code to answer.  Two plugins declaring the same name make that
    name unusable (a :class:`DuplicatePassError` naming both) until one goes.
    An implementation that raises is reported as a :class:`PluginHookError`
    and its passes are left out; the other plugins' passes stay available.
    """


@hookspec
def relaypass_instrument_specs() -> Sequence[InstrumentSpec]:
    """Declare instruments: return the :class:`InstrumentSpec` of each one this plugin provides.

    Same rules as :func:`relaypass_pass_specs`; instrument names are a
    namespace of their own (a pass and an instrument may share a name).
    """


@hookspec
def relaypass_pass_built(spec: PassSpec, pass_: Any) -> None:
    """Observe a pass just built from ``spec`` by its factory (``get_pass``, pipelines, dependencies).

    ``pass_`` carries its ``info``, ``preserves`` and ``origin``.  Called
    after the pass was checked against its declaration; useful for audit logs
    and for tools that want to know which plugin code actually got loaded.
    """


@hookspec
def relaypass_instrument_built(spec: InstrumentSpec, instrument: Any) -> None:
    """Observe an instrument just built from ``spec`` by its factory."""


@hookspec
def relaypass_plugin_error(error: PluginError) -> None:
    """Observe a contained plugin failure.

    Called for each failure found when the registry is built (bad manifest,
    duplicate name, a hook that raised) and each time a factory fails to import
    or to build.  ``error`` is the specific :class:`PluginError` naming the
    distribution, its version and the way out.  relaypass itself keeps going
    with the healthy plugins; a front end implements this hook to show the
    failures as warnings.
    """
