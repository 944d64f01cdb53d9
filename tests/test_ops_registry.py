"""The operator set as a whole: coverage, the relay namespace, custom and plugin operators."""

from __future__ import annotations

import re
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import relaypass.ir.op as op_registry
from relaypass import relay
from relaypass.ir import Any, Op, OpPattern, TensorType
from relaypass.ir.operator_packages import OperatorPluginError, load_operator_packages
from relaypass.op import TupleWrapper

DOCS = Path(__file__).resolve().parent.parent / "docs" / "operators.md"

# The operator list of the issue, with Relay's names.
REQUIRED = """
add subtract multiply divide floor_divide mod power maximum minimum negative abs exp log sqrt
rsqrt sigmoid tanh erf floor ceil round sign clip cast equal not_equal less less_equal greater
greater_equal logical_and logical_or logical_not where zeros ones full zeros_like ones_like
full_like copy reshape transpose squeeze expand_dims concatenate stack split strided_slice take
gather gather_nd tile repeat broadcast_to layout_transform reverse shape_of ndarray_size arange
sum mean max min prod argmax argmin variance nn.conv2d nn.conv2d_transpose nn.dense
nn.batch_matmul nn.matmul nn.bias_add nn.relu nn.leaky_relu nn.prelu nn.softmax nn.log_softmax
nn.max_pool2d nn.avg_pool2d nn.global_avg_pool2d nn.global_max_pool2d nn.adaptive_avg_pool2d
nn.batch_norm nn.layer_norm nn.lrn nn.dropout nn.batch_flatten nn.pad nn.upsampling
nn.depth_to_space
""".split()


@pytest.fixture
def scratch_registry(monkeypatch):
    """Registrations made by a test are undone afterwards."""
    monkeypatch.setattr(op_registry, "_REGISTRY", dict(op_registry._REGISTRY))


def test_every_required_operator_is_complete():
    for name in REQUIRED:
        op = Op.get(name)
        assert callable(op.get_attr("FTypeRelation")), name
        assert callable(op.get_attr("FKernel")), name
        assert isinstance(op.get_attr("TOpPattern"), OpPattern), name
        assert op.description, name
        constructor = getattr(relay.nn, name[3:]) if name.startswith("nn.") else getattr(relay, name)
        assert callable(constructor), name


def test_docs_table_lists_every_standard_operator_with_its_pattern():
    rows = re.findall(r"^\| [a-z ]+ \| (.*) \| ([A-Z_]+) \(\d\) \|$", DOCS.read_text(), re.M)
    documented = {}
    for names, pattern in rows:
        for name in re.findall(r"`([A-Za-z_.0-9]+)`", names):
            assert name not in documented, f"{name} is listed twice"
            documented[name] = OpPattern[pattern]
    assert set(documented) == set(_standard_operators())
    for name, pattern in documented.items():
        assert Op.get(name).get_attr("TOpPattern") == pattern, name


def _operators_of_the_standard_set() -> list[str]:
    return [n for n in Op.list_op_names()
            if getattr(Op.get(n).get_attr("FTypeRelation"), "__module__", "").startswith("relaypass.op.")]


# Read when this module is collected, before any test runs: other tests register operators
# of their own in the same process (with named relations of the standard set, as TVM allows).
_STANDARD = _operators_of_the_standard_set()


def _standard_operators() -> list[str]:
    return list(_STANDARD)


def test_flags_follow_relay():
    standard = _standard_operators()
    assert {n for n in standard if Op.get(n).get_attr("TOpIsStateful")} == {"nn.dropout"}
    # Relay's shape_of and ndarray_size are ordinary (computational) operators.
    assert not any(Op.get(n).get_attr("TNonComputational") for n in standard)


def test_relay_namespace_reexports_the_constructors():
    assert relay.nn is __import__("relaypass.op.nn", fromlist=["nn"])
    assert relay.TupleWrapper is TupleWrapper
    assert relay.sum is __import__("relaypass.op.reduce", fromlist=["sum"]).sum
    assert relay.nn.conv2d(relay.var("x"), relay.var("w")).op is Op.get("nn.conv2d")


def test_attribute_schemas_use_relays_names_and_defaults():
    conv = Op.get("nn.conv2d").attrs_schema
    assert conv.type_key == "relay.attrs.Conv2DAttrs"
    assert {k: f.default for k, f in conv.fields.items()} == {
        # Relay's Conv2DAttrs default padding has two values (the constructor gives four).
        "strides": (1, 1), "padding": (0, 0), "dilation": (1, 1), "groups": 1,
        "channels": None, "kernel_size": None, "data_layout": "NCHW", "kernel_layout": "OIHW",
        "out_layout": "", "out_dtype": "",
    }
    pool = relay.nn.avg_pool2d(relay.var("x")).attrs
    assert pool.type_key == "relay.attrs.AvgPool2DAttrs"
    assert (pool.pool_size, pool.ceil_mode, pool.count_include_pad) == ((1, 1), False, False)
    assert relay.sum(relay.var("x"), axis=1).attrs.axis == (1,)
    assert relay.take(relay.var("x"), relay.var("i")).attrs.mode == "clip"
    assert relay.shape_of(relay.var("x")).attrs.dtype == "int32"


# --- a custom operator, from the documentation ----------------------------------------------


def test_docs_example_registers_and_uses_my_swish(scratch_registry, capsys):
    code = re.findall(r"```python\n(.*?)```", DOCS.read_text(), re.S)[0]
    exec(compile(code, str(DOCS), "exec"), {"__name__": "docs_example"})
    assert capsys.readouterr().out.strip() == "Tensor[(2, 3), float32]"
    op = Op.get("my.swish")
    assert op.get_attr("TOpPattern") == OpPattern.ELEMWISE
    assert op.attrs_schema.type_key == "my.attrs.SwishAttrs"


def test_registering_a_name_twice_needs_override(scratch_registry):
    def rel(types, attrs):
        return types[0]

    op_registry.register_op("my.twice", num_inputs=1, type_relation=rel)
    with pytest.raises(ValueError, match="'my.twice' is already registered; pass override=True"):
        op_registry.register_op("my.twice", num_inputs=1, type_relation=rel)
    replaced = op_registry.register_op("my.twice", num_inputs=1, type_relation=rel,
                                       stateful=True, override=True)
    assert Op.get("my.twice") is replaced and replaced.get_attr("TOpIsStateful")


# --- operators from installed packages ------------------------------------------------------


def _fake_distribution(root: Path, name: str, entry_points: dict[str, str],
                       modules: dict[str, str]) -> None:
    info = root / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    lines = "\n".join(f"{k} = {v}" for k, v in entry_points.items())
    (info / "entry_points.txt").write_text(f"[relaypass.operators]\n{lines}\n")
    for module, source in modules.items():
        (root / f"{module}.py").write_text(textwrap.dedent(source))


_PLUGIN_MODULE = """
    import numpy as np
    from relaypass.ir import OpPattern, register_op

    register_op(
        "fake.double", num_inputs=1, type_relation=lambda types, attrs: types[0],
        kernel=lambda args, attrs: args[0] * args[0].dtype.type(2), pattern=OpPattern.ELEMWISE,
    )

    def register_more():
        register_op("fake.triple", num_inputs=1, type_relation=lambda types, attrs: types[0],
                    kernel=lambda args, attrs: args[0] * args[0].dtype.type(3))
"""


def test_operator_entry_points_load_on_first_unknown_lookup(tmp_path, monkeypatch,
                                                             scratch_registry):
    _fake_distribution(
        tmp_path, "fake_relaypass_ops",
        {"double": "fake_ops_module", "triple": "fake_ops_module:register_more",
         "broken": "fake_ops_broken"},
        {"fake_ops_module": _PLUGIN_MODULE, "fake_ops_broken": "raise ImportError('no luck')\n"},
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(op_registry, "_loaded", False)
    for module in ("fake_ops_module", "fake_ops_broken"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.warns(UserWarning, match="operator plugin 'broken' of distribution "
                                         "fake_relaypass_ops 1.0 failed to load"):
        double = Op.get("fake.double")
    assert Op.get("fake.triple").get_attr("FKernel")([np.ones(2, "float32")], None)[1] == 3
    x = relay.var("x", shape=(3,), dtype="float32")
    call = relay.Call(double, [x])
    assert double.get_attr("FTypeRelation")([x.type_annotation], None) == TensorType((3,))
    out = relay.create_executor().evaluate(relay.Function([x], call))(np.arange(3, dtype="f4"))
    np.testing.assert_array_equal(out, [0, 2, 4])


def test_broken_operator_plugin_is_reported_with_its_distribution(tmp_path, monkeypatch):
    _fake_distribution(tmp_path, "fake_broken_ops", {"bad": "fake_broken_only"},
                       {"fake_broken_only": "raise RuntimeError('boom')\n"})
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "fake_broken_only", raising=False)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        failures = load_operator_packages()
    mine = [f for f in failures if "fake_broken_ops" in str(f)]
    assert len(mine) == 1 and isinstance(mine[0], OperatorPluginError)
    assert "RuntimeError: boom" in str(mine[0]) and "fix or uninstall fake_broken_ops" in str(
        mine[0])


# --- argument types the operators determine -------------------------------------------------


def _arg_types(call, *known):
    call = call.astuple() if isinstance(call, TupleWrapper) else call
    return call.op.get_attr("FInferArgTypes")(list(known), call.attrs)


def test_operators_infer_their_parameter_types():
    x, p = relay.var("x"), relay.var("p")
    data = TensorType((2, 3, 8, 8))
    vec = TensorType((3,))
    bn = relay.nn.batch_norm(x, p, p, p, p)
    assert _arg_types(bn, data, None, None, None, None) == [None, vec, vec, vec, vec]
    assert _arg_types(bn, None, None, None, None, None) == [None] * 5
    assert _arg_types(relay.nn.bias_add(x, p, axis=-1), data, None) == [None, TensorType((8,))]
    assert _arg_types(relay.nn.layer_norm(x, p, p), data, None, None)[1] == TensorType((8,))
    assert _arg_types(relay.nn.prelu(x, p), data, None) == [None, vec]
    conv = relay.nn.conv2d(x, p, channels=6, kernel_size=3, groups=3)
    assert _arg_types(conv, data, None) == [None, TensorType((6, 1, 3, 3))]
    assert _arg_types(relay.nn.conv2d(x, p), data, None) == [None, None]
    nhwc = relay.nn.conv2d(x, p, channels=4, kernel_size=(1, 3), data_layout="NHWC",
                           kernel_layout="HWIO")
    assert _arg_types(nhwc, TensorType((1, 5, 5, Any())), None) == \
        [None, TensorType((1, 3, Any(), 4))]
    deconv = relay.nn.conv2d_transpose(x, p, channels=4, kernel_size=2, groups=1)
    assert _arg_types(deconv, data, None) == [None, TensorType((3, 4, 2, 2))]
    dense = relay.nn.dense(x, p, units=5)
    assert _arg_types(dense, TensorType((4, 7), "float16"), None) == \
        [None, TensorType((5, 7), "float16")]


@pytest.mark.parametrize("register, key", [
    (relay.op.register_alter_op_layout, "FTVMAlterOpLayout"),
    (relay.op.register_convert_op_layout, "FTVMConvertOpLayout"),
    (relay.op.register_infer_correct_layout, "FInferCorrectLayout"),
    (relay.op.register_legalize, "FTVMLegalize"),
    (relay.op.register_canonicalize, "FTVMCanonicalize"),
    (relay.op.op.register_mixed_precision_conversion, "FTVMMixedPrecisionConversionType"),
])
def test_graph_pass_hooks_are_operator_attributes_with_tvms_keys_and_levels(register, key):
    op = Op.get("nn.bias_add")
    # A default registered by an earlier test (ToMixedPrecision's lists) is set aside.
    previous = op.get_attr(key)
    op.reset_attr(key)

    @register("nn.bias_add", level=101)
    def first(*args):
        return None

    try:
        assert op.get_attr(key) is first
        register("nn.bias_add", lambda *a: None, level=100)  # a lower level is ignored
        assert op.get_attr(key) is first
        with pytest.raises(op_registry.OpRegistrationError, match="same level 101"):
            register("nn.bias_add", lambda *a: None, level=101)
        second = register("nn.bias_add", lambda *a: None, level=102)
        assert op.get_attr(key) is second
    finally:
        op.reset_attr(key)
        if previous is not None:
            op.set_attr(key, previous)
