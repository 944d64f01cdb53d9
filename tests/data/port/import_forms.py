# -*- coding: utf-8 -*-
"""Every form of import statement the port rewrites, and the ones it must leave alone.

The docstring says import tvm and from tvm import relay: strings never change.
"""
from __future__ import annotations

import os, tvm  # import tvm, in a comment
import tvm as T
import tvm.relay.testing as testing
import tvm.relay
from tvm.relay import (
    nn,  # the nn operators
    op as ops,
)
from tvm . relay \
    import transform
from \
    tvm.ir import IRModule
import tvmc
from tvm_extras import helper
from . import sibling
from .tvm import local_thing

π = "é"; import tvm.relay as relay

if os.environ.get("TVM_HOME"): import tvm.relay.analysis

try:
    import tvm.contrib.graph_executor as graph_executor
except ImportError:
    graph_executor = None


def build(x):
    from tvm.relay.transform import InferType
    import tvm.relay.testing

    return InferType, tvm.relay.testing, x


SOURCE = "import tvm.relay as relay"
