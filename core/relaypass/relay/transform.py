"""``relay.transform``: the pass namespace a TVM Relay user knows.

Every registered pass is an attribute resolved by name when first read:
``relay.transform.FoldConstant()`` is ``get_pass("FoldConstant")`` and keyword
arguments become the pass's options.  The pass-manager classes and decorators
are re-exported, so ``from relaypass.relay import transform`` reads like
``from tvm.relay import transform``.  Reading a pass attribute consults only
the plugins' manifests; the pass's code loads when it is called.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from ..transform import (
    FunctionPass,
    ModulePass,
    Pass,
    PassContext,
    PassInfo,
    PrintIR,
    Sequential,
    function_pass,
    get_pass,
    list_passes,
    load_pipeline,
    module_pass,
    register_pass,
)
from ..transform.registry import get_registry

__all__ = [
    "FunctionPass", "ModulePass", "Pass", "PassContext", "PassInfo", "PrintIR", "Sequential",
    "function_pass", "get_pass", "list_passes", "load_pipeline", "module_pass", "register_pass",
]


def _pass_constructor(name: str) -> Callable[..., Pass]:
    spec = get_registry().pass_spec(name)

    def construct(*args: Any, **options: Any) -> Pass:
        # Relay passes take their options positionally too: EliminateCommonSubexpr(fskip).
        if args:
            declared = [o.name for o in (spec.options or ())]
            if len(args) > len(declared):
                raise TypeError(
                    f"{name}() takes at most {len(declared)} positional option(s), got {len(args)}"
                )
            for key, value in zip(declared, args):
                if key in options:
                    raise TypeError(f"{name}() got option {key!r} twice")
                options[key] = value
        return get_pass(name, **options)

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = f"{spec.help or 'The ' + name + ' pass.'}\n\n(from {spec.origin})"
    return construct


def __getattr__(name: str) -> Callable[..., Pass]:
    # Not cached in the module: a pass registered, shadowed or uninstalled later
    # must be seen the next time the name is read.
    if name.startswith("__"):
        raise AttributeError(name)
    registry = get_registry()
    if not registry.has_pass(name):
        near = difflib.get_close_matches(name, registry.pass_names(), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise AttributeError(f"relay.transform has no pass or attribute {name!r}{hint}")
    return _pass_constructor(name)


def __dir__() -> list[str]:
    return sorted({*globals(), *get_registry().pass_names()})
