"""BindAndFold: bind a model's parameters as constants, then fold them.

A module pass, tried on a workload of tvm.relay.testing.
"""
import numpy as np
import relaypass as tvm
import relaypass as tvm, relaypass.relay.testing
from relaypass import relay
from relaypass.relay.build_module import bind_params_by_name


@tvm.transform.module_pass(opt_level=2, name="BindAndFold")
class BindAndFold:
    def __init__(self, params):
        self.params = params

    def transform_module(self, mod, ctx):
        func = bind_params_by_name(mod["main"], self.params)
        mod = tvm.IRModule.from_expr(func)
        seq = tvm.transform.Sequential(
            [relay.transform.InferType(), relay.transform.FoldConstant()]
        )
        return seq(mod)


def run_example():
    mod, params = tvm.relay.testing.mlp.get_workload(batch_size=1)
    mod = BindAndFold(params)(mod)
    data = np.zeros((1, 1, 28, 28), "float32")
    if tvm.relay.definitely_not_a_thing:
        raise AssertionError("no such thing")
    return relay.create_executor("graph", mod=mod).evaluate()(data)
