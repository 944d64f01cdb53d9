"""BindAndSimplify: turn a model's parameters into constants and simplify it for
inference, written for TVM v0.18.

This is the original TVM source (``import tvm``); tests/relay_compat/
test_ported_passes.py ports it with ``relaypass port`` and runs the port.

A module pass: ``bind_params_by_name`` makes the weights constants of
``main``, then a Sequential of Relay's passes (InferType, SimplifyInference,
FoldConstant, EliminateCommonSubexpr, SimplifyExpr) runs in the PassContext
the pass was called in.  ``compare`` evaluates the model before and after on
the same random input and checks that the outputs agree.
"""
import numpy as np
import tvm
import tvm.relay.testing
import tvm.testing
from tvm import relay
from tvm.relay.build_module import bind_params_by_name


@tvm.transform.module_pass(opt_level=1, name="BindAndSimplify")
class BindAndSimplify:
    def __init__(self, params):
        self.params = params

    def transform_module(self, mod, ctx):
        main = bind_params_by_name(mod["main"], self.params)
        new_mod = tvm.IRModule(dict(mod.functions))
        new_mod[mod.get_global_var("main")] = main
        seq = tvm.transform.Sequential(
            [
                relay.transform.InferType(),
                relay.transform.SimplifyInference(),
                relay.transform.FoldConstant(),
                relay.transform.EliminateCommonSubexpr(),
                relay.transform.SimplifyExpr(),
            ]
        )
        return seq(new_mod)


def constant_stats(func):
    """How many constants ``func`` holds, and how many scalars they hold together."""
    stats = {"constants": 0, "elements": 0}

    def fvisit(node):
        if isinstance(node, relay.Constant):
            stats["constants"] += 1
            stats["elements"] += node.data.numpy().size

    relay.analysis.post_order_visit(func, fvisit)
    return stats


def op_names(func):
    names = set()

    def fvisit(node):
        if isinstance(node, relay.Call) and isinstance(node.op, tvm.ir.Op):
            names.add(node.op.name)

    relay.analysis.post_order_visit(func, fvisit)
    return names


def optimize(mod, params):
    with tvm.transform.PassContext(opt_level=3):
        return BindAndSimplify(params)(mod)


def compare(mod, params, seed=0, rtol=1e-5, atol=1e-5):
    """Optimize ``mod``, evaluate both versions on one random input, check they agree.

    Returns the optimized module, the input and the optimized model's output.
    """
    optimized = optimize(mod, params)
    data_type = mod["main"].params[0].checked_type
    shape = [int(dim) for dim in data_type.shape]
    data = np.random.RandomState(seed).uniform(-1, 1, size=shape).astype(data_type.dtype)
    expected = relay.create_executor("graph", mod=mod, params=params).evaluate()(data)
    actual = relay.create_executor("graph", mod=optimized).evaluate()(data)
    tvm.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=rtol, atol=atol)
    return optimized, data, actual.numpy()


def compare_mlp(batch_size=2):
    mod, params = tvm.relay.testing.mlp.get_workload(batch_size=batch_size)
    return (params, *compare(mod, params))


def compare_resnet(num_layers=18, image_shape=(3, 32, 32)):
    mod, params = tvm.relay.testing.resnet.get_workload(
        num_layers=num_layers, batch_size=1, num_classes=10, image_shape=image_shape
    )
    return (mod, *compare(mod, params, rtol=1e-4, atol=1e-5))
