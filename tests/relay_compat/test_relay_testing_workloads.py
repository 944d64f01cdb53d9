"""``relay.testing``'s model builders and helpers give the graphs and parameters Relay's give.

The expected counts, names and shapes were worked out by reading the builders
of TVM v0.18 (``python/tvm/relay/testing/*.py``): e.g. ResNet-18 has a stem
convolution, two per unit for eight units and a strided shortcut in the first
unit of each of the four stages (21), and batch norms on the data, after the
stem, two per unit and before the classifier (19).  Small images, batches and
class counts keep the suite fast; the parameter shapes that do not depend on
them are those of the full-size models.
"""

from __future__ import annotations

import functools
import importlib

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.ir.op import Op
from relaypass.ir.types import FuncType, TensorType
from relaypass.relay import testing
from relaypass.relay.testing import (
    dcgan,
    densenet,
    dqn,
    inception_v3,
    layers,
    lstm,
    mlp,
    resnet,
    squeezenet,
    synthetic,
    vgg,
)
from relaypass.relay.testing.init import Constant, Initializer, Xavier, create_workload
from relaypass.testing.workloads.common import MissingOperatorError


# --- helpers ------------------------------------------------------------------------------------
@functools.cache
def workload(name: str, **kwargs):
    """Each configuration is built once per session."""
    module = importlib.import_module(f"relaypass.relay.testing.{name}")
    return module.get_workload(**kwargs)


def cached(name: str, **kwargs):
    return workload(name, **dict(sorted(kwargs.items())))


def param_shapes(mod) -> dict[str, tuple[int, ...]]:
    return {p.name_hint: tuple(p.checked_type.shape) for p in mod["main"].params}


def ops(mod) -> dict[str, int]:
    return dict(testing.count_ops(mod["main"]))


def out_shape(mod) -> tuple[int, ...]:
    return tuple(mod["main"].checked_type.ret_type.shape)


def check_params(mod, params, dtype="float32"):
    """params holds every parameter of main but the ``data`` ones, in main's order."""
    names = [p.name_hint for p in mod["main"].params if p.name_hint != "data"]
    assert list(params) == list(dict.fromkeys(names))
    shapes = param_shapes(mod)
    for name, value in params.items():
        arr = np.asarray(value)
        assert arr.shape == shapes[name], name
        assert arr.dtype == np.dtype(dtype), name


# --- ResNet -------------------------------------------------------------------------------------
def test_resnet18_layers_names_and_shapes():
    mod, params = cached("resnet", num_layers=18, num_classes=10, image_shape=(3, 64, 64))
    counts = ops(mod)
    assert counts["nn.conv2d"] == 21
    assert counts["nn.batch_norm"] == 19
    assert counts["add"] == 8
    assert counts["nn.max_pool2d"] == 1
    assert counts["nn.dense"] == 1 and counts["nn.softmax"] == 1
    shapes = param_shapes(mod)
    names = list(shapes)
    assert names[:6] == [
        "data", "bn_data_gamma", "bn_data_beta", "bn_data_moving_mean", "bn_data_moving_var",
        "conv0_weight",
    ]
    assert names[-2:] == ["fc1_weight", "fc1_bias"]
    assert len(params) == 99
    assert shapes["data"] == (1, 3, 64, 64)
    assert shapes["conv0_weight"] == (64, 3, 7, 7)
    assert shapes["bn_data_gamma"] == (3,)
    assert shapes["stage1_unit1_conv1_weight"] == (64, 64, 3, 3)
    assert shapes["stage1_unit1_sc_weight"] == (64, 64, 1, 1)
    assert shapes["stage2_unit1_sc_weight"] == (128, 64, 1, 1)
    assert shapes["stage4_unit2_conv2_weight"] == (512, 512, 3, 3)
    assert shapes["fc1_weight"] == (10, 512)
    assert "stage1_unit2_sc_weight" not in shapes
    assert out_shape(mod) == (1, 10)
    check_params(mod, params)


def test_resnet_attributes_follow_relay():
    mod, _ = cached("resnet", num_layers=18, num_classes=10, image_shape=(3, 64, 64))
    calls = {}

    def collect(node):
        if isinstance(node, relay.Call) and isinstance(node.op, relay.Op):
            calls.setdefault(node.op.name, []).append(node)

    relay.analysis.post_order_visit(mod["main"], collect)
    stem = next(c for c in calls["nn.conv2d"] if c.args[1].name_hint == "conv0_weight")
    assert tuple(stem.attrs.strides) == (2, 2)
    assert tuple(stem.attrs.padding) == (3, 3, 3, 3)
    assert tuple(stem.attrs.kernel_size) == (7, 7)
    assert int(stem.attrs.channels) == 64
    bn_data = next(c for c in calls["nn.batch_norm"] if c.args[1].name_hint == "bn_data_gamma")
    assert not bn_data.attrs.scale
    assert bn_data.attrs.epsilon == pytest.approx(2e-5)
    pool = calls["nn.max_pool2d"][0]
    assert tuple(pool.attrs.pool_size) == (3, 3)
    assert tuple(pool.attrs.padding) == (1, 1, 1, 1)


def test_resnet50_bottleneck():
    mod, params = cached("resnet", num_layers=50, num_classes=10, image_shape=(3, 64, 64))
    counts = ops(mod)
    assert counts["nn.conv2d"] == 53
    assert counts["nn.batch_norm"] == 51
    assert counts["add"] == 16
    shapes = param_shapes(mod)
    assert shapes["stage1_unit1_conv1_weight"] == (64, 64, 1, 1)
    assert shapes["stage1_unit1_conv3_weight"] == (256, 64, 1, 1)
    assert shapes["stage1_unit1_sc_weight"] == (256, 64, 1, 1)
    assert shapes["stage4_unit3_conv2_weight"] == (512, 512, 3, 3)
    assert shapes["fc1_weight"] == (10, 2048)
    assert len(params) == 259


def test_resnet_cifar_family_and_nhwc():
    mod, params = cached("resnet", num_layers=20, num_classes=10, image_shape=(3, 28, 28))
    counts = ops(mod)
    assert counts["nn.conv2d"] == 22
    assert counts["nn.batch_norm"] == 20
    assert "nn.max_pool2d" not in counts
    shapes = param_shapes(mod)
    assert shapes["conv0_weight"] == (16, 3, 3, 3)
    assert shapes["stage3_unit3_conv2_weight"] == (64, 64, 3, 3)
    assert shapes["fc1_weight"] == (10, 64)
    assert "bn0_gamma" not in shapes

    nhwc, _ = cached("resnet", num_layers=18, num_classes=10, image_shape=(64, 64, 3),
                     layout="NHWC")
    shapes = param_shapes(nhwc)
    assert shapes["conv0_weight"] == (7, 7, 3, 64)
    assert shapes["bn0_gamma"] == (64,)
    assert out_shape(nhwc) == (1, 10)


def test_resnet_rejects_unknown_depths():
    with pytest.raises(ValueError):
        resnet.get_net(1, 10, num_layers=19)
    with pytest.raises(ValueError):
        resnet.get_net(1, 10, num_layers=18, image_shape=(3, 28, 28))


# --- MobileNet ----------------------------------------------------------------------------------
def test_mobilenet_nchw():
    mod, params = cached("mobilenet", num_classes=10, image_shape=(3, 64, 64))
    counts = ops(mod)
    assert counts["nn.conv2d"] == 27 and counts["nn.batch_norm"] == 27
    shapes = param_shapes(mod)
    assert len(params) == 137
    assert shapes["conv_block_1_conv_weight"] == (32, 3, 3, 3)
    assert shapes["separable_conv_block_1_weight"] == (32, 1, 3, 3)
    assert shapes["separable_conv_block_1_conv2_weight"] == (64, 32, 1, 1)
    assert shapes["separable_conv_block_13_weight"] == (1024, 1, 3, 3)
    assert shapes["fc_weight"] == (10, 1024) and shapes["fc_bias"] == (10,)
    depthwise = [c for c in _calls(mod, "nn.conv2d") if int(c.attrs.groups) > 1]
    assert len(depthwise) == 13
    check_params(mod, params)


def test_mobilenet_nhwc_keeps_relays_batch_norm_axis():
    # The first conv block normalizes axis 1 whatever the layout, as Relay's builder does:
    # in NHWC that is the height (48 here), not the 32 channels.
    mod, _ = cached("mobilenet", num_classes=10, image_shape=(96, 96, 3), layout="NHWC")
    shapes = param_shapes(mod)
    assert shapes["conv_block_1_conv_weight"] == (3, 3, 3, 32)
    assert shapes["separable_conv_block_1_weight"] == (3, 3, 32, 1)
    assert shapes["conv_block_1_bn_gamma"] == (48,)
    assert shapes["separable_conv_block_1_bn1_gamma"] == (32,)


def _calls(mod, op_name):
    found = []

    def collect(node):
        if isinstance(node, relay.Call) and isinstance(node.op, relay.Op) and node.op.name == op_name:
            found.append(node)

    relay.analysis.post_order_visit(mod["main"], collect)
    return found


# --- MLP, create_workload and the initializers --------------------------------------------------
def test_mlp_graph_and_params():
    mod, params = mlp.get_workload(batch_size=2)
    assert list(param_shapes(mod).items()) == [
        ("data", (2, 1, 28, 28)),
        ("fc1_weight", (128, 784)), ("fc1_bias", (128,)),
        ("fc2_weight", (64, 128)), ("fc2_bias", (64,)),
        ("fc3_weight", (10, 64)), ("fc3_bias", (10,)),
    ]
    assert ops(mod) == {
        "nn.batch_flatten": 1, "nn.dense": 3, "nn.bias_add": 3, "nn.relu": 2, "nn.softmax": 1,
    }
    assert out_shape(mod) == (2, 10)
    check_params(mod, params)


def test_create_workload_values_follow_the_seed_as_relay():
    """Xavier draws, in main's parameter order, from numpy's global generator seeded with seed."""
    _, params = mlp.get_workload(batch_size=1)
    np.random.seed(0)
    for name, shape in [("fc1_weight", (128, 784)), ("fc2_weight", (64, 128)),
                        ("fc3_weight", (10, 64))]:
        bound = np.sqrt(3.0 / ((shape[0] + shape[1]) / 2.0))
        expected = np.random.uniform(-bound, bound, size=shape).astype("float32")
        np.testing.assert_array_equal(np.asarray(params[name]), expected)
    for name in ("fc1_bias", "fc2_bias", "fc3_bias"):
        assert not np.asarray(params[name]).any()

    again = create_workload(mlp.get_net(1))[1]
    other = create_workload(mlp.get_net(1), seed=1)[1]
    np.testing.assert_array_equal(np.asarray(again["fc1_weight"]), np.asarray(params["fc1_weight"]))
    assert not np.array_equal(np.asarray(other["fc1_weight"]), np.asarray(params["fc1_weight"]))


def test_params_are_what_constants_hold():
    _, params = mlp.get_workload(batch_size=1)
    value = params["fc1_bias"]
    assert type(value) is type(relay.const(np.zeros(2, "float32")).data)


def test_initializer_rules():
    arr = np.zeros((4, 2, 3, 3), "float32")
    Constant()("conv_weight", arr)
    np.testing.assert_allclose(arr, 1.0 / arr.size)
    for name, value in [("x_gamma", 1.0), ("x_beta", 0.0), ("x_moving_mean", 0.0),
                        ("x_moving_var", 1.0), ("x_bias", 0.0)]:
        vec = np.full(3, 7.0, "float32")
        Xavier()(name, vec)
        assert (vec == value).all(), name
    with pytest.raises(ValueError):
        Xavier()("mystery", np.zeros(3))
    with pytest.raises(ValueError):
        Xavier()("flat_weight", np.zeros(3))
    with pytest.raises(NotImplementedError):
        Initializer()("w_weight", np.zeros((2, 2)))

    np.random.seed(3)
    weight = np.zeros((8, 4, 3, 3), "float32")
    Xavier(factor_type="in", magnitude=2)("c_weight", weight)
    assert np.abs(weight).max() <= np.sqrt(2 / (4 * 9))
    depthwise = np.zeros((8, 1, 3, 3), "float32")
    Xavier()("block_depthwise_weight", depthwise)
    assert np.abs(depthwise).max() <= np.sqrt(3 / 9)
    assert np.abs(depthwise).max() > np.sqrt(3 / ((9 + 72) / 2))


def test_workload_dtype():
    mod, params = mlp.get_workload(batch_size=1, dtype="float16")
    check_params(mod, params, dtype="float16")


# --- SqueezeNet, Inception v3, VGG, DenseNet ----------------------------------------------------
@pytest.mark.parametrize("version, stem", [("1.0", (96, 3, 7, 7)), ("1.1", (64, 3, 3, 3))])
def test_squeezenet(version, stem):
    mod, params = cached("squeezenet", num_classes=10, version=version, image_shape=(3, 64, 64))
    counts = ops(mod)
    assert counts["nn.conv2d"] == 26 and counts["nn.bias_add"] == 26
    assert counts["concatenate"] == 8 and counts["nn.max_pool2d"] == 3
    assert counts["nn.dropout"] == 1
    shapes = param_shapes(mod)
    assert shapes["conv1_weight"] == stem
    assert shapes["fire1_input_conv_weight"] == (16, stem[0], 1, 1)
    assert shapes["fire1_right_conv_weight"] == (64, 16, 3, 3)
    assert shapes["conv_final_weight"] == (10, 512, 1, 1)
    assert len(params) == 52
    with pytest.raises(ValueError):
        squeezenet.get_net(1, (3, 64, 64), 10, "2.0", "float32")


def test_inception_v3():
    mod, params = cached("inception_v3", num_classes=10)
    counts = ops(mod)
    assert counts["nn.conv2d"] == 94 and counts["nn.batch_norm"] == 94
    assert counts["concatenate"] == 11
    assert counts["nn.max_pool2d"] == 5 and counts["nn.avg_pool2d"] == 9
    shapes = param_shapes(mod)
    assert shapes["data"] == (1, 3, 299, 299)
    assert shapes["conv_conv1_weight"] == (32, 3, 3, 3)
    assert shapes["mixed_tower_1_conv_2_conv1_weight"] == (96, 96, 3, 3)
    assert shapes["mixed_4_tower_conv_1_conv1_weight"] == (128, 128, 1, 7)
    assert shapes["mixed_10_tower_1_mixed_conv_1_conv1_weight"] == (384, 384, 3, 1)
    assert shapes["fc1_weight"] == (10, 2048) and shapes["fc2_bias"] == (10,)
    assert len(params) == 472
    assert all(c.attrs.count_include_pad for c in _calls(mod, "nn.avg_pool2d"))


def test_vgg():
    mod, params = cached("vgg", batch_size=1, num_classes=10, image_shape=(3, 32, 32))
    counts = ops(mod)
    assert counts["nn.conv2d"] == 8 and counts["nn.dense"] == 3
    assert counts["nn.max_pool2d"] == 5 and counts["nn.dropout"] == 2
    assert "nn.batch_norm" not in counts
    shapes = param_shapes(mod)
    assert shapes["conv1_1_weight"] == (64, 3, 3, 3)
    assert shapes["conv5_2_weight"] == (512, 512, 3, 3)
    assert shapes["fc6_weight"] == (4096, 512) and shapes["fc8_weight"] == (10, 4096)
    assert len(params) == 22

    bn, bn_params = cached("vgg", batch_size=1, num_classes=10, image_shape=(3, 32, 32),
                           num_layers=16, batch_norm=True)
    counts = ops(bn)
    assert counts["nn.conv2d"] == 13 and counts["nn.batch_norm"] == 13
    assert param_shapes(bn)["bn3_3_gamma"] == (256,)
    with pytest.raises(ValueError):
        vgg.get_net(1, (3, 32, 32), 10, "float32", num_layers=12)


def test_densenet121_chains_its_layers_as_relay():
    mod, params = cached("densenet", batch_size=1, classes=10)
    counts = ops(mod)
    assert counts["nn.conv2d"] == 120 and counts["nn.batch_norm"] == 121
    assert counts["concatenate"] == 4 and counts["nn.avg_pool2d"] == 4
    shapes = param_shapes(mod)
    assert shapes["conv1_weight"] == (64, 3, 7, 7)
    assert shapes["conv2d_1_0_0_weight"] == (128, 64, 1, 1)
    # Each layer reads the previous layer's 32 channels, not the concatenation so far.
    assert shapes["conv2d_1_0_1_weight"] == (128, 32, 1, 1)
    assert shapes["conv2d_2_0_5_weight"] == (32, 128, 3, 3)
    assert shapes["conv_t_0_weight"] == (128, 192, 1, 1)
    assert shapes["batch_2_3_15_gamma"] == (128,)
    assert shapes["dense_weight"] == (10, 512)
    assert len(params) == 606
    assert out_shape(mod) == (1, 10)


def test_densenet169_keeps_relays_initial_width():
    mod, params = cached("densenet", densenet_size=169, batch_size=1, classes=10)
    shapes = param_shapes(mod)
    assert shapes["conv1_weight"] == (69, 3, 7, 7)
    assert ops(mod)["nn.conv2d"] == 168
    with pytest.raises(ValueError):
        densenet.get_workload(densenet_size=100)


# --- DCGAN, LSTM, DQN, synthetic ----------------------------------------------------------------
@pytest.mark.parametrize("layout, weight", [("NCHW", (64, 32, 4, 4)), ("NHWC", (4, 4, 32, 64))])
def test_dcgan(layout, weight):
    mod, params = cached("dcgan", batch_size=1, ngf=8, random_len=10, layout=layout)
    counts = ops(mod)
    assert counts["nn.conv2d_transpose"] == 4 and counts["nn.batch_norm"] == 3
    assert counts["tanh"] == 1 and counts["reshape"] == 1
    shapes = param_shapes(mod)
    assert shapes["data"] == (1, 10)
    assert shapes["dense_weight"] == (4 * 4 * 8 * 8, 10)
    assert shapes["g2_deconv_weight"] == weight
    assert out_shape(mod) == ((1, 3, 64, 64) if layout == "NCHW" else (1, 64, 64, 3))
    deconv = _calls(mod, "nn.conv2d_transpose")[0]
    assert tuple(deconv.attrs.padding) == (1, 1, 1, 1)
    assert tuple(deconv.attrs.output_padding) == (0, 0)
    assert len(params) == 17
    with pytest.raises(ValueError):
        dcgan.get_net(1, oshape=(3, 32, 32))


def test_lstm():
    mod, params = lstm.get_workload(iterations=3, num_hidden=8)
    main = mod["main"]
    names = [p.name_hint for p in main.params]
    assert names.count("data") == 3
    assert len(params) == 12 and "data" not in params
    shapes = param_shapes(mod)
    assert shapes["i2h_0_weight"] == (32, 8) and shapes["h2h_2_bias"] == (32,)
    assert out_shape(mod) == (1, 8)
    counts = ops(mod)
    assert counts["split"] == 3 and counts["sigmoid"] == 9 and counts["tanh"] == 6
    assert counts["nn.dense"] == 6 and counts["zeros"] == 1
    cell = lstm.lstm_cell(8, name="c")
    assert [p.name_hint for p in cell.params] == [
        "inputs", "states", "i2h_weight", "i2h_bias", "h2h_weight", "h2h_bias",
    ]
    assert isinstance(testing.run_infer_type(cell).checked_type, FuncType)


def test_dqn():
    mod, params = dqn.get_workload(batch_size=1)
    shapes = param_shapes(mod)
    assert shapes["conv1_weight"] == (32, 4, 8, 8)
    assert shapes["conv3_weight"] == (64, 64, 3, 3)
    assert shapes["dense1_weight"] == (512, 3136)
    assert shapes["dense2_weight"] == (18, 512)
    assert out_shape(mod) == (1, 18)
    assert len(params) == 10


def test_synthetic_needs_reshape_like():
    if "reshape_like" not in Op.list_op_names():
        with pytest.raises(MissingOperatorError, match="reshape_like"):
            synthetic.get_workload()
        return
    mod, params = synthetic.get_workload()
    shapes = param_shapes(mod)
    assert shapes["conv_weight"] == (3, 3, 3, 3) and shapes["dense_weight"] == (12, 12)
    np.testing.assert_allclose(np.asarray(params["conv_weight"]), 1.0 / 81)


# --- layers and the helpers ---------------------------------------------------------------------
def test_layer_helpers_create_named_weights():
    x = relay.var("x", shape=(1, 3, 8, 8))
    out = layers.conv2d(x, channels=4, kernel_size=(3, 3), name="c")
    assert out.args[1].name_hint == "c_weight"
    bn = layers.batch_norm_infer(out, name="b")
    assert isinstance(bn, relay.TupleGetItem) and bn.index == 0
    assert [a.name_hint for a in bn.tuple_value.args[1:]] == [
        "b_gamma", "b_beta", "b_moving_mean", "b_moving_var",
    ]
    dense = layers.dense_add_bias(relay.var("y", shape=(1, 5)), units=2, name="d")
    assert dense.op.name == "nn.bias_add" and int(dense.attrs.axis) == -1
    assert dense.args[1].name_hint == "d_bias"
    given = relay.var("w")
    assert layers.conv2d(x, weight=given, channels=4, kernel_size=3, name="z").args[1] is given
    assert layers.conv_kernel_layout("NHWC") == "HWIO"
    assert layers.conv_kernel_layout("NHWC", True) == "HWOI"
    with pytest.raises(ValueError):
        layers.conv_kernel_layout("NCDHW")
    with pytest.raises(TypeError, match="name"):
        layers.conv2d(x, channels=4, kernel_size=3)
    if "nn.conv3d" not in Op.list_op_names():
        with pytest.raises(MissingOperatorError, match="nn.conv3d"):
            layers.conv3d(x, name="c3")


def test_run_infer_type_and_run_opt_pass():
    x = relay.var("x", shape=(2, 3))
    body = relay.add(x, relay.const(np.ones((2, 3), "float32")))
    typed = testing.run_infer_type(body)
    assert not isinstance(typed, relay.Function)
    assert typed.checked_type == TensorType((2, 3), "float32")

    func = relay.Function([x], relay.nn.relu(x))
    typed_func = testing.run_infer_type(func)
    assert isinstance(typed_func, relay.Function)
    assert isinstance(typed_func.checked_type, FuncType)

    two = relay.add(relay.const(1.0), relay.const(2.0))
    folded = testing.run_opt_pass(two, relay.transform.FoldConstant())
    assert isinstance(folded, relay.Constant) and float(np.asarray(folded.data)) == 3.0

    with pytest.raises(TypeError):
        testing.run_opt_pass(body, "FoldConstant")
    # With the prelude in the module, a program may use its lists.
    consed = testing.run_opt_pass(
        relay.Function([], relay.Call(_prelude_cons(), [relay.const(1.0), _prelude_nil()])),
        relay.transform.FoldConstant(), import_prelude=True,
    )
    assert consed.body.op.name_hint == "Cons"


def _prelude_cons():
    return relay.prelude.Prelude().mod.get_constructor("List", "Cons")


def _prelude_nil():
    return relay.Call(relay.prelude.Prelude().mod.get_constructor("List", "Nil"), [])


def test_count_ops_and_rand():
    x = relay.var("x", shape=(4,))
    expr = relay.nn.relu(relay.add(relay.nn.relu(x), x))
    assert testing.count_ops(expr) == {"nn.relu": 2, "add": 1}
    value = testing.rand("float32", 2, 3)
    arr = np.asarray(value)
    assert arr.shape == (2, 3) and arr.dtype == np.float32
    assert ((arr >= 0) & (arr < 1)).all()


def test_import_forms():
    import relaypass.relay.testing
    import relaypass.relay.testing.resnet as r
    from relaypass.relay.testing import resnet as r2

    assert r is r2 is relaypass.relay.testing.resnet is relay.testing.resnet
    assert tvm.relay.testing.mlp.get_workload is mlp.get_workload
    assert relay.testing.init.create_workload is create_workload
    for name in ("mobilenet", "lstm", "squeezenet", "inception_v3", "vgg", "densenet", "dcgan",
                 "synthetic", "dqn", "init", "layers"):
        assert getattr(relay.testing, name).__name__ == f"relaypass.relay.testing.{name}"
    # The kit for pass authors stays where it was.
    import relaypass.testing

    assert hasattr(relaypass.testing, "random_inputs")
    assert inception_v3.get_workload and densenet.get_workload and vgg.get_workload
