"""The prelude's tensor arrays beyond TVM's tests: names, first-use registration, bad input, depth.

TVM's own cases are in tests/relay_compat/test_tensor_array.py.  Here: the
global names TVM's front ends rely on, what a lookup defines on first use,
that every definition type-checks and survives the text format, the
differences from TVM the docs state (ranks 5 and 6 stack), the errors for
an unknown dtype, a wrong shape, a name that does not exist and a read out
of range, and a 1,000-tensor array written and stacked in the interpreter.
"""

from __future__ import annotations

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.errors import ModuleError, RelayPassError
from relaypass.interp import ConstructorValue, MatchFailureError
from relaypass.relay.prelude import (
    Prelude,
    StaticTensorArrayOps,
    TensorArrayError,
    TensorArrayOps,
    get_tensor_array_shape,
)

TVM_DTYPES = ("float32", "float16", "float64", "int32", "uint8", "int8", "int16", "uint16",
              "int64")


def run(mod, *args):
    return relay.create_executor("debug", mod=mod).evaluate()(*args)


def list_values(value):
    items = []
    while value.constructor.name_hint == "Cons":
        items.append(value.fields[0])
        value = value.fields[1]
    return items


# --- names and registration ---------------------------------------------------------------


def test_loading_defines_tvms_dtypes_under_tvms_names():
    mod = tvm.IRModule()
    Prelude(mod)
    types = {gtv.name_hint for gtv in mod.get_global_type_vars()}
    for dtype in TVM_DTYPES:
        assert f"tensor_{dtype}_t" in types
        ctors = [c.name_hint for c in mod.get_type(f"tensor_{dtype}_t")[1:]]
        assert ctors == [f"tensor_nil_{dtype}"] + [f"tensor{r}_{dtype}" for r in range(7)]
        for name in ("tensor_array", "tensor_array_read", "tensor_array_write",
                     "tensor_array_stack", "tensor_array_concat", "tensor_array_scatter",
                     "tensor_array_split", "tensor_take", "tensor_concatenate",
                     "tensor_expand_dims", "tensor_array_unstack_tensor1",
                     "tensor_array_unstack_tensor6", "ta_split_helper"):
            assert f"{name}_{dtype}" in mod
    assert "tensor_array_bool" not in mod  # TVM's list only, until asked for


def test_prelude_names():
    p = Prelude()
    assert p.get_name("tensor_t", "int32") == "tensor_int32_t"
    assert p.get_name("tensor_array", "float") == "tensor_array_float32"
    assert p.get_name("tensor_t", "float32", [2, relay.Any()]) == "static_tensor_float32_2_any_t"
    assert p.get_name_static("tensor_array", "int8", []) == "tensor_array_int8_scalar"
    assert p.get_name_static("tensor_array_stack", "int8", [3], batch_dim=1) == \
        "tensor_array_stack_int8_batch1_3"
    # A type's constructors never carry the batch.
    assert p.get_name_static("tensor_nil", "int8", [3], batch_dim=1) == "tensor_nil_int8_3"
    ops = StaticTensorArrayOps(p, "float32", [3])
    assert ops.get_name("tensor_array_scatter", {"indices": [2]}) == \
        "tensor_array_scatter_float32_3_indices_2"


def test_lookups_define_other_dtypes_and_static_shapes_on_first_use():
    mod = tvm.IRModule()
    p = Prelude(mod)
    assert "tensor_array_bool" not in mod
    assert p.get_global_var("tensor_array", "bool").name_hint == "tensor_array_bool"
    assert "tensor_array_stack_bool" in mod
    assert "tensor_array_float32_4" not in mod
    read = p.get_global_var("tensor_array_read", "float32", [4])
    assert read.name_hint == "tensor_array_read_float32_4"
    assert p.get_tensor_ctor("tensor_constructor", "float32", [4]).name_hint == \
        "tensor_constructor_float32_4"
    assert p.get_type_static("tensor_t", "uint8", [1, 1]).name_hint == "static_tensor_uint8_1_1_t"
    # The functions TVM names on the prelude are its attributes.
    assert p.tensor_array_read_float32_4 == read
    assert p.tensor_array_int32 == mod.get_global_var("tensor_array_int32")


def test_a_second_prelude_on_a_module_keeps_its_types_and_constructors():
    mod = tvm.IRModule()
    first = Prelude(mod)
    tensor1 = first.get_tensor_ctor("tensor1", "int32")
    count = len(mod.functions)
    second = Prelude(mod)
    assert second.get_tensor_ctor("tensor1", "int32") is tensor1
    assert len(mod.functions) == count


def test_ops_classes_build_into_a_prelude_as_tvms_front_ends_call_them():
    p = Prelude()
    ops = TensorArrayOps(p, "float32")
    assert ops.get_name("tensor_t") == "tensor_float32_t"
    assert ops.get_global_var("tensor_array_stack") == p.get_global_var("tensor_array_stack",
                                                                         "float32")
    static = StaticTensorArrayOps(p, "float32", [2, 3])
    # Redefining scatter for static indices works before anything else is defined.
    static.define_tensor_array_scatter([2], True)
    assert "tensor_array_scatter_float32_2_3_indices_2" in p.mod


def test_every_definition_types_and_round_trips_through_the_text_format():
    mod = tvm.IRModule()
    p = Prelude(mod)
    StaticTensorArrayOps(p, "float32", [2, relay.Any()]).register()
    StaticTensorArrayOps(p, "int32", [], batch_dim=1).register()
    typed = relay.transform.InferType()(mod)
    assert str(typed["tensor_array_stack_int32_batch1_scalar"].checked_type.ret_type) == \
        "static_tensor_int32_1_t[]"
    back = tvm.relay.parse(typed.astext())
    tvm.ir.assert_structural_equal(back, typed)


def test_get_tensor_array_shape():
    p = Prelude()
    ops = StaticTensorArrayOps(p, "float32", [relay.Any(), 3])
    ops.register()
    static = ops.get_global_var("tensor_array")(relay.const(2))
    shape = get_tensor_array_shape(static, "float32", p)
    assert len(shape) == 2 and isinstance(shape[0], relay.Any) and shape[1] == 3
    scalar = StaticTensorArrayOps(p, "int8", [])
    scalar.register()
    assert get_tensor_array_shape(scalar.get_global_var("tensor_array")(relay.const(1)), "int8",
                                  p) == ()
    dynamic = p.get_global_var("tensor_array", "float32")(relay.const(2))
    assert get_tensor_array_shape(dynamic, "float32", p) is None


def test_partitioning_keeps_the_type_definitions():
    """TVM's test_preserve_type_import (test_pass_partition_graph.py): a gather program through
    RemoveUnusedFunctions and PartitionGraph still types, its List and tensor types kept."""
    mod = tvm.IRModule()
    p = Prelude(mod)
    ops = StaticTensorArrayOps(p, "float32", [2, 3])
    ops.register()
    tensor = ops.get_ctor("tensor_constructor")
    write = ops.get_global_var("tensor_array_write")
    v, indices = relay.var("v"), relay.var("indices")
    arr = ops.get_global_var("tensor_array")(relay.const(3))
    for k in range(3):
        arr = write(arr, relay.const(k), tensor(v))
    mod["main"] = relay.Function([v, indices], ops.get_global_var("tensor_array_gather")(
        arr, indices))
    mod = relay.transform.RemoveUnusedFunctions()(mod)
    mod = relay.transform.PartitionGraph()(mod)
    types = {gtv.name_hint for gtv in mod.get_global_type_vars()}
    assert {"List", "static_tensor_float32_2_3_t", "static_tensor_float32_any_2_3_t"} <= types
    out = run(mod, np.ones((2, 3), "float32"), np.array([2, 0], "int32"))
    np.testing.assert_array_equal(out.fields[0].numpy(), np.ones((2, 2, 3), "float32"))


# --- running them -----------------------------------------------------------------------


@pytest.mark.parametrize("rank", [4, 5])
def test_stack_grows_ranks_beyond_tvms_four(rank):
    # TVM's tensor_concatenate stops at rank 4, so TVM cannot stack rank-4 tensors.
    mod = tvm.IRModule()
    p = Prelude(mod)
    ctor = p.get_tensor_ctor(f"tensor{rank}", "float32")
    write = p.get_global_var("tensor_array_write", "float32")
    x = relay.var("x", shape=[2] * rank)
    arr = p.get_global_var("tensor_array", "float32")(relay.const(2))
    arr = write(write(arr, relay.const(0), ctor(x)), relay.const(1), ctor(x + relay.const(1.0)))
    mod["main"] = relay.Function([x], p.get_global_var("tensor_array_stack", "float32")(arr))
    data = np.arange(2 ** rank, dtype="float32").reshape([2] * rank)
    out = run(mod, data)
    assert out.constructor.name_hint == f"tensor{rank + 1}_float32"
    np.testing.assert_array_equal(out.fields[0].numpy(), np.stack([data, data + 1]))


def test_unstack_then_concat_gives_the_tensor_back():
    mod = tvm.IRModule()
    p = Prelude(mod)
    x = relay.var("x", shape=(relay.Any(), 3), dtype="int32")
    rows = p.get_global_var("tensor_array_unstack_tensor2", "int32")(x)
    mod["main"] = relay.Function([x], p.get_global_var("tensor_array_concat", "int32")(rows))
    data = np.arange(12, dtype="int32").reshape(4, 3)
    out = run(mod, data)
    # Rows are rank 1, so concatenating them flattens the tensor.
    np.testing.assert_array_equal(out.fields[0].numpy(), data.reshape(-1))


def test_a_thousand_tensors_unstacked_then_stacked():
    """A 1,000-element tensor array: unstacking and stacking each recurse 1,000 calls deep
    through the prelude's list functions, past Python's recursion limit, in linear time
    (filling it with writes instead would walk the list once per write)."""
    n = 1000
    mod = tvm.IRModule()
    p = Prelude(mod)
    dtype = "float32"
    rows = relay.var("rows", shape=(n, 2), dtype=dtype)
    unstacked = p.get_global_var("tensor_array_unstack_tensor2", dtype)(rows)
    mod["main"] = relay.Function(
        [rows], p.get_global_var("tensor_array_stack", dtype)(unstacked))
    data = np.arange(2 * n, dtype=dtype).reshape(n, 2)
    out = run(mod, data)
    assert out.constructor.name_hint == "tensor2_float32"
    np.testing.assert_array_equal(out.fields[0].numpy(), data)


# --- bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["complex", "float33", "int32x4", "handle", None, 3])
def test_an_unknown_dtype_is_named(dtype):
    p = Prelude()
    with pytest.raises(TensorArrayError, match="is not a tensor dtype") as info:
        p.get_global_var("tensor_array", dtype)
    assert repr(dtype) in str(info.value)
    with pytest.raises(TensorArrayError, match="is not a tensor dtype"):
        TensorArrayOps(p, dtype)
    with pytest.raises(TensorArrayError, match="is not a tensor dtype"):
        StaticTensorArrayOps(p, dtype, [2])


@pytest.mark.parametrize("shape, shown", [
    ([2, -1], "not -1"), ([2.5], "not 2.5"), ("23", "list of sizes"), (7, "list of sizes"),
    ([relay.var("n")], "not %n"),
])
def test_a_wrong_shape_is_named(shape, shown):
    p = Prelude()
    with pytest.raises(TensorArrayError, match="shape") as info:
        StaticTensorArrayOps(p, "float32", shape)
    assert shown in str(info.value)
    with pytest.raises(TensorArrayError, match=shown):
        p.get_global_var("tensor_array", "float32", shape)


def test_a_name_the_prelude_does_not_have_is_named():
    p = Prelude()
    with pytest.raises(TensorArrayError, match="'tensor_arra' for dtype int32"):
        p.get_global_var("tensor_arra", "int32")
    with pytest.raises(TensorArrayError, match="tensor9"):
        p.get_tensor_ctor("tensor9", "int32")
    # A scalar's static arrays have no take; the error names the shape.
    with pytest.raises(TensorArrayError, match=r"shape \[\]"):
        p.get_global_var_static("tensor_take", "float32", [])
    with pytest.raises(TensorArrayError, match="not a tensor array"):
        get_tensor_array_shape(relay.const(1), "int32", p)
    # The error is a lookup error of the module, for code catching ModuleError.
    assert issubclass(TensorArrayError, ModuleError)
    assert issubclass(TensorArrayError, RelayPassError)


@pytest.mark.parametrize("index", [3, -1])
def test_reading_out_of_range_is_a_match_failure_on_nil(index):
    mod = tvm.IRModule()
    p = Prelude(mod)
    read = p.get_global_var("tensor_array_read", "int32")
    i = relay.var("i", "int32")
    mod["main"] = relay.Function([i], read(p.get_global_var("tensor_array", "int32")(
        relay.const(3)), i))
    assert run(mod, 2).constructor.name_hint == "tensor_nil_int32"
    with pytest.raises(MatchFailureError, match="constructor Nil") as info:
        run(mod, index)
    assert info.value.constructor.name_hint == "Nil"


def test_unstacked_values_are_constructor_values():
    mod = tvm.IRModule()
    p = Prelude(mod)
    x = relay.var("x", shape=(3,), dtype="int64")
    mod["main"] = relay.Function([x], p.get_global_var("tensor_array_unstack_tensor1", "int64")(x))
    items = list_values(run(mod, np.array([4, 5, 6], "int64")))
    assert all(isinstance(v, ConstructorValue) for v in items)
    assert [v.constructor.name_hint for v in items] == ["tensor0_int64"] * 3
    assert [int(v.fields[0].numpy()) for v in items] == [4, 5, 6]
