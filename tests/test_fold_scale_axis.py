"""FoldScaleAxis on a real model: every batch norm's scale of ResNet-50 ends up in a weight.

The ONNX ResNet-50 the onnx package ships (random weights) has a batch norm
after each convolution; SimplifyInference makes each one a multiply and an
add, and FoldScaleAxis must fold every multiply into the convolution before
it without changing the output (the interpreter runs both).
"""

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.functor import post_order_visit
from relaypass.ir.expr import Call
from relaypass.ir.op import Op


def _count(mod, op_name):
    found = []
    post_order_visit(mod["main"], lambda e: found.append(e) if isinstance(e, Call)
                     and isinstance(e.op, Op) and e.op.name == op_name else None)
    return len(found)


def test_every_batch_norm_scale_of_resnet50_folds_into_its_convolution():
    pytest.importorskip("onnx")
    from relaypass.tools import model_zoo

    zoo = model_zoo.light_model("resnet50")
    proto = model_zoo.randomize_weights(zoo.load(), seed=0)
    mod = model_zoo.import_onnx(proto, None)
    inputs = model_zoo.main_arguments(mod, model_zoo.random_input(proto, seed=0))
    prepare = tvm.transform.Sequential([relay.transform.InferType(),
                                        relay.transform.SimplifyInference(),
                                        relay.transform.FoldConstant()])
    with tvm.transform.PassContext(opt_level=3):
        before = prepare(mod)
        after = relay.transform.FoldScaleAxis()(before)
    assert _count(before, "multiply") == _count(before, "nn.conv2d") > 50  # one per batch norm
    assert _count(after, "multiply") == 0
    assert _count(after, "add") == _count(before, "add")
    expected = relay.create_executor("debug", mod=before).evaluate()(*inputs).numpy()
    actual = relay.create_executor("debug", mod=after).evaluate()(*inputs).numpy()
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("scale", [
    relay.const(np.array([0.5, 0.0, 2.0], "float32").reshape(3, 1, 1)),  # a zero
    relay.var("s", shape=(3, 1, 1)),                                      # may hold one
], ids=["constant-with-a-zero", "variable"])
def test_forward_keeps_a_scale_before_an_add_unless_it_can_divide_by_it(scale):
    # x * s + b = (x + b / s) * s only where no s is zero: the scale is multiplied back.
    x = relay.var("x", shape=(1, 3, 4, 4))
    w = relay.var("w", shape=(2, 3, 1, 1))
    b = relay.var("b", shape=(3, 1, 1))
    y = relay.nn.conv2d(relay.add(relay.multiply(x, scale), b), w, channels=2, kernel_size=(1, 1))
    mod = relay.transform.InferType()(tvm.IRModule.from_expr(
        relay.Function(relay.analysis.free_vars(y), y)))
    with tvm.transform.PassContext(opt_level=3):
        out = relay.transform.ForwardFoldScaleAxis()(mod)
    assert _count(out, "divide") == 0
    rng = np.random.default_rng(0)
    args = [rng.uniform(0.5, 1, [int(d) for d in p.checked_type.shape]).astype("float32")
            for p in mod["main"].params]
    want, got = (relay.create_executor("debug", mod=m).evaluate()(*args).numpy() for m in (mod, out))
    np.testing.assert_allclose(got, want, rtol=1e-5)
