# -*- coding: utf-8 -*-
"""Every form of import statement the port rewrites, and the ones it must leave alone.

The docstring says import tvm and from tvm import relay: strings never change.
"""
from __future__ import annotations

import os, relaypass as tvm  # import tvm, in a comment
import relaypass as T
import relaypass.relay.testing as testing
import relaypass as tvm, relaypass.relay
from relaypass.relay import (
    nn,  # the nn operators
    op as ops,
)
from relaypass . relay \
    import transform
from \
    relaypass.ir import IRModule
import tvmc
from tvm_extras import helper
from . import sibling
from .tvm import local_thing

π = "é"; import relaypass.relay as relay

if os.environ.get("TVM_HOME"): import relaypass as tvm, relaypass.relay.analysis

try:
    import relaypass.contrib.graph_executor as graph_executor
except ImportError:
    graph_executor = None


def build(x):
    from relaypass.relay.transform import InferType
    import relaypass as tvm, relaypass.relay.testing

    return InferType, tvm.relay.testing, x


SOURCE = "import tvm.relay as relay"
