"""TVM v0.18's test_tensor_array.py: the prelude's dynamic and static tensor arrays.

Every case of TVM's file is here, written as a TVM user writes them (only
the imports differ).  TVM runs each program on its "debug" and "vm"
executors; here the interpreter (``create_executor("debug")``) runs them,
since both of TVM's give the same values and relaypass's "vm" is the same
interpreter.  TVM's random inputs come from a seeded generator.
"""
import numpy as np
import pytest

import relaypass as tvm
import relaypass.testing
from relaypass import relay
from relaypass.relay.backend.interpreter import ConstructorValue
from relaypass.relay.prelude import Prelude, StaticTensorArrayOps

DTYPES = ["float32", "int32"]
rng = np.random.default_rng(20)


def random(shape, dtype, high=8.0):
    return rng.uniform(0.0, high, size=shape).astype(dtype)


def flatten(value):
    """The tensors of a result, in order: a list's elements, a tensor_t's data, 0 for an empty slot.

    A List walks its Cons cells in a loop; a tensor value gives its array.
    """
    out = []
    pending = [value]
    while pending:
        v = pending.pop()
        if isinstance(v, tvm.nd.NDArray):
            out.append(v.numpy())
            continue
        assert isinstance(v, ConstructorValue), f"not a tensor-array value: {v!r}"
        name = v.constructor.name_hint
        if name == "Cons":
            pending.append(v.fields[1])
            pending.append(v.fields[0])
        elif name == "Nil":
            continue
        elif name.startswith("tensor_nil"):
            out.append(0)
        else:
            assert name.startswith("tensor"), name
            out.append(v.fields[0].numpy())
    return out


def check(mod, expected, *args):
    """Run main on the interpreter and compare its tensors with ``expected``, one by one."""
    result = relay.create_executor("debug", mod=mod, device=tvm.cpu(0), target="llvm").evaluate()(
        *args
    )
    got = flatten(result)
    assert len(got) == len(expected), (len(got), len(expected))
    for g, e in zip(got, expected):
        tvm.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-5, atol=1e-5)


def fresh():
    mod = tvm.IRModule()
    return mod, Prelude(mod)


# --- the dynamic tensor arrays (tensor_<dtype>_t) -----------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_expand_dims(dtype):
    mod, p = fresh()
    x = relay.var("x")
    grow = p.get_global_var("tensor_expand_dims", dtype)
    mod["main"] = relay.Function([x], grow(p.get_tensor_ctor("tensor1", dtype)(x)))
    data = random((1,), dtype)
    check(mod, [data[np.newaxis]], data)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_array_constructor(dtype):
    mod, p = fresh()
    n = relay.var("n")
    mod["main"] = relay.Function([n], p.get_global_var("tensor_array", dtype)(n))
    check(mod, [0] * 5, 5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_array_read(dtype):
    mod, p = fresh()
    length, index = relay.var("length"), relay.var("index")
    read = p.get_global_var("tensor_array_read", dtype)
    empty = p.get_global_var("tensor_array", dtype)
    mod["main"] = relay.Function([length, index], read(empty(length), index))
    check(mod, [0], 1, 0)
    check(mod, [0], 5, 1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_array_write(dtype):
    mod, p = fresh()
    a, b = relay.var("a"), relay.var("b")
    write = p.get_global_var("tensor_array_write", dtype)
    tensor1 = p.get_tensor_ctor("tensor1", dtype)
    arr = p.get_global_var("tensor_array", dtype)(relay.const(2))
    arr = write(arr, relay.const(0), tensor1(a))
    arr = write(arr, relay.const(1), tensor1(b))
    mod["main"] = relay.Function([a, b], arr)
    check(mod, [3, 7], 3, 7)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_array_stack(dtype):
    mod, p = fresh()
    tensor_t = p.get_type("tensor_t", dtype)
    write = p.get_global_var("tensor_array_write", dtype)
    tensor1 = p.get_tensor_ctor("tensor1", dtype)
    v = relay.var("v", shape=(1,), dtype=dtype)
    arr = p.get_global_var("tensor_array", dtype)(relay.const(3))
    for i in range(3):
        arr = write(arr, relay.const(i), tensor1(v))
    mod["main"] = relay.Function([v], p.get_global_var("tensor_array_stack", dtype)(arr),
                                 tensor_t())
    data = random((1,), dtype)
    check(mod, [np.stack([data] * 3)], data)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_array_unstack(dtype):
    mod, p = fresh()
    v = relay.var("v")
    mod["main"] = relay.Function([v], p.get_global_var("tensor_array_unstack_tensor1", dtype)(v))
    data = random((1,), dtype)
    check(mod, list(data), data)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_take(dtype):
    mod, p = fresh()
    v, lower, upper = relay.var("v"), relay.var("lower"), relay.var("upper")
    take = p.get_global_var("tensor_take", dtype)
    mod["main"] = relay.Function(
        [v, lower, upper], take(p.get_tensor_ctor("tensor2", dtype)(v), lower, upper))
    data = random((10, 10), dtype)
    check(mod, [data[2:5]], data, 2, 5)
    check(mod, [data[0:9]], data, 0, 9)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_concatenate(dtype):
    mod, p = fresh()
    tensor1 = p.get_tensor_ctor("tensor1", dtype)
    a = relay.var("a", shape=(tvm.tir.Any(),), dtype=dtype)
    b = relay.var("b", shape=(tvm.tir.Any(),), dtype=dtype)
    concat = p.get_global_var("tensor_concatenate", dtype)
    mod["main"] = relay.Function([a, b], concat(tensor1(a), tensor1(b)))
    x, y = random((5,), dtype), random((5,), dtype)
    check(mod, [np.concatenate([x, y])], x, y)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_array_concat(dtype):
    mod, p = fresh()
    a, b = relay.var("a"), relay.var("b")
    write = p.get_global_var("tensor_array_write", dtype)
    tensor2 = p.get_tensor_ctor("tensor2", dtype)
    arr = p.get_global_var("tensor_array", dtype)(relay.const(2))
    arr = write(write(arr, relay.const(0), tensor2(a)), relay.const(1), tensor2(b))
    mod["main"] = relay.Function([a, b], p.get_global_var("tensor_array_concat", dtype)(arr))
    x, y = random((2, 3), dtype), random((1, 3), dtype)
    check(mod, [np.concatenate([x, y], axis=0)], x, y)


def _three_written(make, write, tensor):
    """An array of three slots, slot k written with a new variable; the variables too."""
    variables = [relay.var(n) for n in ("v1", "v2", "v3")]
    arr = make(relay.const(3))
    for i, v in enumerate(variables):
        arr = write(arr, relay.const(i), tensor(v))
    return arr, variables


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_array_scatter(dtype):
    mod, p = fresh()
    make = p.get_global_var("tensor_array", dtype)
    write = p.get_global_var("tensor_array_write", dtype)
    tensor2 = p.get_tensor_ctor("tensor2", dtype)
    arr, slots = _three_written(make, write, tensor2)
    index = relay.var("index")
    w0, w1 = relay.var("w0"), relay.var("w1")
    values = write(write(make(relay.const(2)), relay.const(0), tensor2(w0)), relay.const(1),
                   tensor2(w1))
    scatter = p.get_global_var("tensor_array_scatter", dtype)
    mod["main"] = relay.Function([*slots, index, w0, w1], scatter(arr, index, values))
    old = [random((2, 3), dtype) for _ in range(3)]
    new = [random((2, 3), dtype) for _ in range(2)]
    check(mod, [new[0], new[1], old[2]], *old, np.array([0, 1], "int32"), *new)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_array_split(dtype):
    mod, p = fresh()
    make = p.get_global_var("tensor_array", dtype)
    write = p.get_global_var("tensor_array_write", dtype)
    tensor2 = p.get_tensor_ctor("tensor2", dtype)
    arr, slots = _three_written(make, write, tensor2)
    value, lengths = relay.var("value"), relay.var("lengths")
    split = p.get_global_var("tensor_array_split", dtype)
    mod["main"] = relay.Function([*slots, value, lengths], split(arr, tensor2(value), lengths))
    old = [random((2, 3), dtype) for _ in range(3)]
    data = random((4, 3), dtype)
    # The first two slots get two rows of the value each; the third keeps its tensor.
    check(mod, [data[:2], data[2:], old[2]], *old, data, np.array([2, 2], "int32"))


# --- the static tensor arrays (static_tensor_<dtype>_<shape>_t) ---------------------------


def static_prelude(dtype, shape):
    mod, p = fresh()
    StaticTensorArrayOps(p, dtype, shape).register()
    return mod, p


@pytest.mark.parametrize("dtype,shape", [("float32", [10, 10]), ("int32", [15, 11])])
def test_static_tensor_take(dtype, shape):
    mod, p = static_prelude(dtype, shape)
    take = p.get_global_var_static("tensor_take", dtype, shape)
    tensor = p.get_tensor_ctor_static("tensor_constructor", dtype, shape)
    v, lower, upper = relay.var("v"), relay.var("lower"), relay.var("upper")
    mod["main"] = relay.Function([v, lower, upper], take(tensor(v), lower, upper))
    data = random(shape, dtype)
    check(mod, [data[2:5]], data, 2, 5)
    check(mod, [data[0:9]], data, 0, 9)


@pytest.mark.parametrize("dtype,shape", [("float32", [5]), ("int32", [2, 3])])
def test_static_tensor_concatenate(dtype, shape):
    mod, p = static_prelude(dtype, shape)
    concat = p.get_global_var_static("tensor_concatenate", dtype, shape)
    tensor = p.get_tensor_ctor_static("tensor_constructor", dtype, shape)
    a, b = relay.var("a"), relay.var("b")
    mod["main"] = relay.Function([a, b], concat(tensor(a), tensor(b)))
    x, y = random(shape, dtype), random(shape, dtype)
    check(mod, [np.concatenate([x, y])], x, y)


@pytest.mark.parametrize("dtype,shape", [("float32", []), ("int32", [2])])
def test_static_tensor_expand_dims(dtype, shape):
    mod, p = static_prelude(dtype, shape)
    grow = p.get_global_var_static("tensor_expand_dims", dtype, shape)
    tensor = p.get_tensor_ctor_static("tensor_constructor", dtype, shape)
    x = relay.var("x")
    mod["main"] = relay.Function([x], grow(tensor(x)))
    data = random(shape, dtype)
    check(mod, [np.expand_dims(data, 0)], data)


def test_static_tensor_array_constructor():
    _, p = static_prelude("float32", [1, 1])
    name = p.get_name_static("tensor_constructor", "float32", [1, 1])
    assert name == "tensor_constructor_float32_1_1"
    assert p.get_tensor_ctor_static("tensor_constructor", "float32", [1, 1]).name_hint == name


def _static_written(p, dtype, shape, count):
    """An array of ``count`` slots of the static type, slot k written with variable v<k>."""
    tensor = p.get_tensor_ctor_static("tensor_constructor", dtype, shape)
    write = p.get_global_var_static("tensor_array_write", dtype, shape)
    arr = p.get_global_var_static("tensor_array", dtype, shape)(relay.const(count))
    variables = [relay.var(f"v{k}") for k in range(count)]
    for k, v in enumerate(variables):
        arr = write(arr, relay.const(k), tensor(v))
    return arr, variables


@pytest.mark.parametrize("dtype,shape", [("float32", []), ("int32", [2, 3])])
def test_static_tensor_array_read(dtype, shape):
    mod, p = static_prelude(dtype, shape)
    arr, variables = _static_written(p, dtype, shape, 3)
    n = relay.var("n")
    read = p.get_global_var_static("tensor_array_read", dtype, shape)
    mod["main"] = relay.Function([*variables, n], read(arr, n))
    data = [random(shape, dtype, high=10) for _ in range(3)]
    for k in range(3):
        check(mod, [data[k]], *data, k)


@pytest.mark.parametrize("dtype,shape", [("float32", []), ("int32", [2, 3])])
def test_static_tensor_array_write(dtype, shape):
    mod, p = static_prelude(dtype, shape)
    arr, variables = _static_written(p, dtype, shape, 2)
    mod["main"] = relay.Function(variables, arr)
    data = [random(shape, dtype, high=10) for _ in range(2)]
    check(mod, data, *data)


@pytest.mark.parametrize("dtype,shape", [("float32", [4]), ("int32", [2, 3])])
def test_static_tensor_array_unstack(dtype, shape):
    mod, p = static_prelude(dtype, shape)
    v = relay.var("v")
    mod["main"] = relay.Function(
        [v], p.get_global_var_static("tensor_array_unstack", dtype, shape)(v))
    data = random(shape, dtype, high=10)
    check(mod, list(data), data)


@pytest.mark.parametrize("dtype,shape,indices_shape",
                         [("float32", [2, 3], None), ("int32", [2, 3], None),
                          ("float32", [2, 3], [2])])
def test_static_tensor_array_scatter(dtype, shape, indices_shape):
    mod, p = fresh()
    ops = StaticTensorArrayOps(p, dtype, shape)
    ops.register()
    if indices_shape is not None:
        ops.define_tensor_array_scatter(indices_shape, True)
    arr, slots = _static_written(p, dtype, shape, 3)
    tensor = p.get_tensor_ctor_static("tensor_constructor", dtype, shape)
    write = p.get_global_var_static("tensor_array_write", dtype, shape)
    make = p.get_global_var_static("tensor_array", dtype, shape)
    w0, w1, index = relay.var("w0"), relay.var("w1"), relay.var("index")
    values = write(write(make(relay.const(2)), relay.const(0), tensor(w0)), relay.const(1),
                   tensor(w1))
    scatter = p.get_global_var_static("tensor_array_scatter", dtype, shape)
    mod["main"] = relay.Function([*slots, index, w0, w1], scatter(arr, index, values))
    old = [random(shape, dtype) for _ in range(3)]
    new = [random(shape, dtype) for _ in range(2)]
    check(mod, [new[0], new[1], old[2]], *old, np.array([0, 1], "int32"), *new)


@pytest.mark.parametrize("dtype,shape,value_shape,lengths_shape",
                         [("float32", [4, 3], None, None), ("int32", [4, 3], None, None),
                          ("int32", [relay.Any(), 3], [4, 3], [2])])
def test_static_tensor_array_split(dtype, shape, value_shape, lengths_shape):
    mod, p = fresh()
    ops = StaticTensorArrayOps(p, dtype, shape)
    ops.register()
    if value_shape is not None or lengths_shape is not None:
        ops.define_tensor_array_split(value_shape, lengths_shape, False)
    # The array holds the rows' type, [?, 3].
    rows = StaticTensorArrayOps(p, dtype, [relay.Any(), *shape[1:]])
    rows.register()
    tensor = p.get_tensor_ctor_static("tensor_constructor", dtype, rows.shape)
    write = rows.get_global_var("tensor_array_write")
    arr = rows.get_global_var("tensor_array")(relay.const(3))
    slots = [relay.var(f"v{k}") for k in range(3)]
    for k, v in enumerate(slots):
        arr = write(arr, relay.const(k), tensor(v))
    split_ops = StaticTensorArrayOps(p, dtype, shape)
    split_ops.register()
    split = split_ops.get_global_var("tensor_array_split")
    if value_shape is None:
        value_ctor = p.get_tensor_ctor_static("tensor_constructor", dtype, shape)
    else:
        StaticTensorArrayOps(p, dtype, value_shape).register()
        value_ctor = p.get_tensor_ctor_static("tensor_constructor", dtype, rows.shape)
    value, lengths = relay.var("value"), relay.var("lengths")
    mod["main"] = relay.Function([*slots, value, lengths], split(arr, value_ctor(value), lengths))
    old = [random((2, 3), dtype) for _ in range(3)]
    data = random(value_shape or shape, dtype)
    check(mod, [data[:2], data[2:], old[2]], *old, data, np.array([2, 2], "int32"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_static_tensor_array_concat(dtype):
    shape = [relay.Any(), 3]
    mod, p = static_prelude(dtype, shape)
    arr, variables = _static_written(p, dtype, shape, 2)
    concat = p.get_global_var_static("tensor_array_concat", dtype, shape)
    mod["main"] = relay.Function(variables, concat(arr))
    x, y = random((2, 3), dtype), random((1, 3), dtype)
    check(mod, [np.concatenate([x, y], axis=0)], x, y)


@pytest.mark.parametrize("dtype,shape", [("float32", []), ("int32", [2, 3])])
def test_static_tensor_array_gather(dtype, shape):
    mod, p = static_prelude(dtype, shape)
    tensor = p.get_tensor_ctor_static("tensor_constructor", dtype, shape)
    write = p.get_global_var_static("tensor_array_write", dtype, shape)
    v, indices = relay.var("v"), relay.var("indices")
    arr = p.get_global_var_static("tensor_array", dtype, shape)(relay.const(3))
    for k in range(3):
        arr = write(arr, relay.const(k), tensor(v))
    gather = p.get_global_var_static("tensor_array_gather", dtype, shape)
    mod["main"] = relay.Function([v, indices], gather(arr, indices))
    data = random(shape, dtype)
    check(mod, [np.stack([data, data])], data, np.array([0, 2], "int32"))


@pytest.mark.parametrize("dtype,shape", [("float32", []), ("int32", [2, 3])])
def test_static_tensor_array_stack(dtype, shape):
    mod, p = static_prelude(dtype, shape)
    tensor = p.get_tensor_ctor_static("tensor_constructor", dtype, shape)
    write = p.get_global_var_static("tensor_array_write", dtype, shape)
    v = relay.var("v")
    arr = p.get_global_var_static("tensor_array", dtype, shape)(relay.const(3))
    for k in range(3):
        arr = write(arr, relay.const(k), tensor(v))
    mod["main"] = relay.Function(
        [v], p.get_global_var_static("tensor_array_stack", dtype, shape)(arr))
    data = random(shape, dtype)
    check(mod, [np.stack([data] * 3)], data)


@pytest.mark.parametrize("dtype,shape", [("float32", []), ("int32", [2, 3])])
def test_static_tensor_get_data(dtype, shape):
    mod, p = static_prelude(dtype, shape)
    arr, variables = _static_written(p, dtype, shape, 3)
    n = relay.var("n")
    read = p.get_global_var_static("tensor_array_read", dtype, shape)
    get_data = p.get_global_var_static("tensor_get_data", dtype, shape)
    mod["main"] = relay.Function([*variables, n], get_data(read(arr, n)))
    data = [random(shape, dtype, high=10) for _ in range(3)]
    for k in range(3):
        check(mod, [data[k]], *data, k)
