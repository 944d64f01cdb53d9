"""FoldConstant on the cases of TVM v0.18's test_pass_fold_constant.py, written as a TVM user.

Only the import lines differ from what such a user writes for TVM.  Out of
scope (see the report that came with this file): the ``on_device`` /
``virtual_device_`` cases (devices and targets), the QNN cases (no ``qnn``
operators), ``test_pass_link_params`` (the AOT executor); ``test_fold_const``
is checked without TVM's ``tvm.target.Target("cuda")`` context.
"""
import numpy as np
import pytest

import relaypass as tvm
import relaypass.testing  # noqa: F401
from relaypass import relay
from relaypass.relay import transform
from relaypass.relay.build_module import bind_params_by_name
from relaypass.relay.testing import create_workload, run_infer_type


def run_opt_pass(expr, opt_pass):
    assert isinstance(opt_pass, tvm.transform.Pass)
    mod = tvm.IRModule.from_expr(expr)
    mod = relay.transform.InferType()(mod)
    mod = opt_pass(mod)
    entry = mod["main"]
    return entry if isinstance(expr, relay.Function) else entry.body


def test_concatenate_const():
    # tvm.nd.array keeps numpy's float64: the constants are float64 tensors.
    values = tvm.nd.array(np.array([1.0, 2.0, 3.0]))
    c = relay.const(values)
    before = relay.Function([], relay.op.concatenate([c, c], axis=0))
    folded = relay.const(tvm.nd.array(np.array([1.0, 2.0, 3.0] * 2)))
    expected = relay.Function([], folded)

    result = run_opt_pass(before, transform.FoldConstant())
    tvm.ir.assert_structural_equal(result, run_opt_pass(expected, transform.InferType()))
    assert result.body.data.dtype == "float64"


def test_fold_const():
    data = np.array([1, 2, 3]).astype("float32")
    ty = relay.TensorType([1, 2, 3], "float32")

    def before():
        x = relay.var("x", ty)
        c = relay.const(data)
        doubled = relay.multiply(relay.add(c, c), relay.const(2, "float32"))
        return relay.Function([x], relay.add(relay.add(x, doubled), c))

    def expected():
        x = relay.var("x", ty)
        body = relay.add(relay.add(x, relay.const((data + data) * 2)), relay.const(data))
        return relay.Function([x], body)

    result = run_opt_pass(before(), transform.FoldConstant())
    tvm.ir.assert_structural_equal(result, run_opt_pass(expected(), transform.InferType()))


def test_fold_let():
    one = np.array(1).astype("float32")
    ty = relay.TensorType([1], "float32")

    def before():
        x = relay.var("x", ty)
        sb = relay.ScopeBuilder()
        a = sb.let("t1", relay.const(one))
        b = sb.let("t2", relay.add(a, a))
        c = sb.let("t3", relay.add(b, x))
        sb.ret(c)
        return relay.Function([x], sb.get())

    def expected():
        x = relay.var("x", ty)
        sb = relay.ScopeBuilder()
        c = sb.let("t3", relay.add(relay.const(one + one), x))
        sb.ret(c)
        return relay.Function([x], sb.get())

    result = run_opt_pass(before(), transform.FoldConstant())
    tvm.ir.assert_structural_equal(result, run_opt_pass(expected(), transform.InferType()))


def test_fold_tuple():
    one = np.array(1).astype("float32")
    ty = relay.TensorType([1], "float32")

    def before():
        x = relay.var("x", ty)
        c = relay.const(one)
        tup = relay.Tuple([x, c])
        return relay.Function([x], relay.add(relay.add(tup[1], c), tup[0]))

    def expected():
        x = relay.var("x", ty)
        return relay.Function([x], relay.add(relay.const(one + one), x))

    result = run_opt_pass(before(), transform.FoldConstant())
    tvm.ir.assert_structural_equal(result, run_opt_pass(expected(), transform.InferType()))


def test_fold_concat():
    row = np.array([[1, 2, 3]]).astype("float32")
    before = relay.Function([], relay.concatenate((relay.const(row), relay.const(row)), axis=0))
    expected = relay.Function([], relay.const(np.concatenate((row, row), axis=0)))

    result = run_opt_pass(before, transform.FoldConstant())
    tvm.ir.assert_structural_equal(result, run_opt_pass(expected, transform.InferType()))


@pytest.mark.parametrize("cond", [True, False])
def test_fold_if(cond):
    row = np.array([[1, 2, 3]]).astype("float32")
    a = relay.const(np.array(cond).astype("bool"))
    lhs, rhs = relay.const(row), relay.const(row)
    before = relay.Function([], relay.If(a, lhs + rhs, lhs - rhs))
    expected = relay.Function([], relay.const(row + row if cond else row - row))

    result = run_opt_pass(before, transform.FoldConstant())
    tvm.ir.assert_structural_equal(result, run_opt_pass(expected, transform.InferType()))


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_fold_shape_of(dtype):
    shape = (8, 9, 10)

    def before():
        x = relay.var("x", shape=shape, dtype="float32")
        y = relay.var("y", shape=shape, dtype="float32")
        return relay.Function([x, y], relay.shape_of(x + y, dtype))

    def expected():
        x = relay.var("x", shape=shape, dtype="float32")
        y = relay.var("y", shape=shape, dtype="float32")
        return relay.Function([x, y], relay.const(np.array(shape).astype(dtype), dtype=dtype))

    result = run_opt_pass(before(), transform.FoldConstant())
    tvm.ir.assert_structural_equal(result, run_opt_pass(expected(), transform.InferType()))


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_fold_ndarray_size(dtype):
    shape = (8, 9, 10)

    def before():
        x = relay.var("x", shape=shape, dtype="float32")
        y = relay.var("y", shape=shape, dtype="float32")
        return relay.Function([x, y], relay.ndarray_size(x + y, dtype))

    def expected():
        x = relay.var("x", shape=shape, dtype="float32")
        y = relay.var("y", shape=shape, dtype="float32")
        size = relay.const(int(np.prod(shape)), dtype=dtype)
        return tvm.IRModule.from_expr(relay.Function([x, y], size))["main"]

    result = run_opt_pass(before(), transform.FoldConstant())
    tvm.ir.assert_structural_equal(result, run_opt_pass(expected(), transform.InferType()))


def _conv_bn_workload():
    data = relay.var("data", relay.TensorType((1, 3, 224, 224), "float32"))
    conv = relay.nn.conv2d(
        data=data, weight=relay.var("weight"), kernel_size=(3, 3), channels=16, padding=(1, 1)
    )
    bn = relay.nn.batch_norm(
        conv, relay.var("bn_gamma"), relay.var("bn_beta"), relay.var("bn_mean"),
        relay.var("bn_var"),
    )

    def initializer(_, param):
        # As in TVM's test: rebinding the name leaves the parameter as created.
        param = np.zeros(param.shape)  # noqa: F841

    mod, params = create_workload(bn[0], initializer)
    mod["main"] = bind_params_by_name(mod["main"], params)
    return mod, params


def test_fold_batch_norm():
    def expected():
        data = relay.var("data", relay.TensorType((1, 3, 224, 224), "float32"))
        conv = relay.nn.conv2d(
            data=data, weight=relay.const(np.zeros((16, 3, 3, 3))), kernel_size=(3, 3),
            channels=16, padding=(1, 1),
        )
        out = relay.add(conv, relay.const(np.zeros((16, 1, 1))))
        return relay.Function(relay.analysis.free_vars(out), out)

    remove_bn = tvm.transform.Sequential([
        relay.transform.InferType(),
        relay.transform.SimplifyInference(),
        relay.transform.FoldConstant(),
        relay.transform.FoldScaleAxis(),
    ])
    mod, _ = _conv_bn_workload()
    with tvm.transform.PassContext(opt_level=3):
        mod = remove_bn(mod)
    tvm.ir.assert_structural_equal(mod["main"], run_infer_type(expected()))


def test_fold_batch_norm_up_to_fold_scale_axis():
    """TVM's test_fold_batch_norm without its last pass (FoldScaleAxis): the step in between.

    SimplifyInference spells batch_norm out as ``conv * scale + shift``;
    FoldConstant then evaluates scale and shift from the bound statistics,
    their axes already expanded to (16, 1, 1).
    """
    mod, params = _conv_bn_workload()
    passes = tvm.transform.Sequential([
        relay.transform.InferType(),
        relay.transform.SimplifyInference(),
        relay.transform.FoldConstant(),
    ])
    with tvm.transform.PassContext(opt_level=3):
        mod = passes(mod)

    eps = np.float32(1e-5)
    scale = (np.float32(1) / np.sqrt(params["bn_var"].numpy() + eps)) * params["bn_gamma"].numpy()
    shift = -params["bn_mean"].numpy() * scale + params["bn_beta"].numpy()
    data = relay.var("data", relay.TensorType((1, 3, 224, 224), "float32"))
    conv = relay.nn.conv2d(
        data=data, weight=relay.const(params["weight"].numpy()), kernel_size=(3, 3),
        channels=16, padding=(1, 1),
    )
    out = relay.add(
        relay.multiply(conv, relay.const(scale.reshape(16, 1, 1))),
        relay.const(shift.reshape(16, 1, 1)),
    )
    expected = run_infer_type(relay.Function([data], out))
    tvm.ir.assert_structural_equal(mod["main"], expected)


def test_fold_dropout():
    def before():
        data = relay.const(np.arange(10).astype(np.float32))
        out = relay.nn.dropout(data) + relay.const(1.0)
        return relay.Function(relay.analysis.free_vars(out), out)

    passes = tvm.transform.Sequential([
        relay.transform.InferType(),
        relay.transform.FoldConstant(),
    ])
    before_mod = tvm.IRModule.from_expr(before())
    with tvm.transform.PassContext(opt_level=3):
        after_mod = passes(before_mod)
    # dropout is stateful: nothing folds.
    tvm.ir.assert_structural_equal(run_infer_type(before_mod["main"]), after_mod["main"])


if __name__ == "__main__":
    tvm.testing.main()
