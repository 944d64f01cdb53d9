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
