"""The pass manager: ``relaypass.transform`` mirrors ``tvm.transform``.

PassInfo, PassContext, the pass kinds and their decorators, PrintIR, pass
constructors (``pass_constructor``: ``Name(**options)`` through the registry), the
registry of plugin passes (``get_pass``, ``get_pass_by_role``, ``register_pass``,
``list_passes``) and pipeline files (``load_pipeline``).  Importing this package imports
neither the IR nor numpy nor pluggy: they load when a pass runs or the
registry is first consulted.
"""

from .config import ConfigError, ConfigKey, ConfigTypeError, PassConfig, UnknownConfigKeyError
from .constructors import PassConstructor, pass_constructor
from .context import PassContext
from .decorators import function_pass, module_pass
from .pass_info import PassInfo
from .passes import PRESERVES_ALL, FunctionPass, ModulePass, Pass, PassResultError, Sequential
from .pipeline import (
    Pipeline,
    PipelineError,
    PipelineSpec,
    load_pipeline,
    parse_pipeline,
    read_pipeline,
)
from .print_ir import PrintIR
from .registry import (
    get_instrument,
    get_pass,
    get_pass_by_role,
    list_instruments,
    list_passes,
    plugin_errors,
    refresh_plugins,
    register_instrument,
    register_pass,
    unregister_instrument,
    unregister_pass,
)

__all__ = [
    "ConfigError", "ConfigKey", "ConfigTypeError", "FunctionPass", "ModulePass", "PRESERVES_ALL",
    "Pass", "PassConfig", "PassConstructor", "PassContext", "PassInfo", "PassResultError", "Pipeline",
    "PipelineError", "PipelineSpec", "PrintIR", "Sequential", "UnknownConfigKeyError",
    "function_pass", "get_instrument", "get_pass", "get_pass_by_role", "list_instruments",
    "list_passes", "load_pipeline", "module_pass", "parse_pipeline", "pass_constructor",
    "plugin_errors", "read_pipeline",
    "refresh_plugins", "register_instrument", "register_pass", "unregister_instrument",
    "unregister_pass",
]
