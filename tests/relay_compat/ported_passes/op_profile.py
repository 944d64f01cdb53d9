"""OpProfile: how many times each operator is called, and the multiply-accumulates
of the convolutions and dense layers, written for TVM v0.18.

This is the original TVM source (``import tvm``); tests/relay_compat/
test_ported_passes.py ports it with ``relaypass port`` and runs the port.

An ExprVisitor with a ``visit_call`` override: each call node is counted
once, however many consumers it has (the visitor memoizes), and the MACs of
``nn.conv2d`` and ``nn.dense`` come from the types InferType gave the call
and its weight:

* conv2d (NCHW data, OIHW weight): N * O * OH * OW * (I / groups) * KH * KW,
  where the weight's second dimension already is ``I / groups``;
* dense: N * units * K for an (N, K) input and a (units, K) weight.
"""
import tvm
import tvm.relay.testing
from tvm import relay
from tvm.relay.expr_functor import ExprVisitor


def _product(dims):
    total = 1
    for dim in dims:
        total *= int(dim)
    return total


class OpProfile(ExprVisitor):
    """Walks a type-checked function; ``calls`` and ``macs`` hold what it found."""

    def __init__(self):
        super().__init__()
        self.calls = {}
        self.macs = {}

    def visit_call(self, call):
        if isinstance(call.op, tvm.ir.Op):
            name = call.op.name
            self.calls[name] = self.calls.get(name, 0) + 1
            macs = self._macs(name, call)
            if macs:
                self.macs[name] = self.macs.get(name, 0) + macs
        super().visit_call(call)

    def _macs(self, name, call):
        if name == "nn.conv2d":
            attrs = call.attrs
            if (attrs.data_layout, attrs.kernel_layout) != ("NCHW", "OIHW"):
                raise ValueError(f"OpProfile reads NCHW/OIHW convolutions, not {attrs.data_layout}")
            out_shape = call.checked_type.shape
            weight_shape = call.args[1].checked_type.shape
            return _product(out_shape) * _product(weight_shape[1:])
        if name == "nn.dense":
            out_shape = call.checked_type.shape
            in_features = call.args[0].checked_type.shape[-1]
            return _product(out_shape) * int(in_features)
        return 0


def profile(func):
    """The profile of a function, as two ``tvm.ir.Map``s (operator name -> number)."""
    visitor = OpProfile()
    visitor.visit(func)
    return tvm.runtime.convert(visitor.calls), tvm.runtime.convert(visitor.macs)


def profile_resnet(num_layers=18, image_shape=(3, 224, 224)):
    mod, _ = tvm.relay.testing.resnet.get_workload(
        num_layers=num_layers, batch_size=1, image_shape=image_shape
    )
    return profile(mod["main"])


def profile_grouped_conv():
    """A convolution with two groups, then a dense layer, on a small input."""
    data = relay.var("data", shape=(2, 4, 8, 8))
    weight = relay.var("weight", shape=(6, 2, 3, 3))
    conv = relay.nn.conv2d(data, weight, channels=6, kernel_size=(3, 3), groups=2)
    flat = relay.nn.batch_flatten(relay.nn.relu(conv))
    dense_weight = relay.var("dense_weight", shape=(5, 6 * 6 * 6))
    out = relay.nn.dense(flat, dense_weight, units=5)
    mod = tvm.IRModule.from_expr(relay.Function(relay.analysis.free_vars(out), out))
    mod = relay.transform.InferType()(mod)
    return profile(mod["main"])
