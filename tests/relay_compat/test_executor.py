"""relay.create_executor without code generation: kinds, targets, results, arguments, params.

Facts from TVM (python/tvm/relay/build_module.py, relay/backend/interpreter.py):
the debug interpreter and the VM return an NDArray per tensor and an ADT per
tuple, the graph executor a Python list for a tuple and rejects dynamic output
shapes; ``params`` are bound into ``@main`` by name; every executor
type-checks the program before running it; the default target is "llvm".
"""

from __future__ import annotations

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.errors import RelayCompatError, RelayPassError, TypeInferenceError
from relaypass.interp import ADT, Closure, Executor, GraphExecutor, Interpreter, VMExecutor
from relaypass.runtime.container import ADT as RuntimeADT

KINDS = ["debug", "graph", "vm"]


def _add_mod():
    x = relay.var("x", shape=(3,))
    y = relay.var("y", shape=(3,))
    return tvm.IRModule.from_expr(relay.Function([x, y], relay.add(x, y)))


def _pair_mod():
    x = relay.var("x", shape=(2,))
    return tvm.IRModule.from_expr(relay.Function([x], relay.Tuple([x, relay.negative(x)])))


# --- kinds and results ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_computes_the_same_ndarray(kind):
    ex = relay.create_executor(kind, mod=_add_mod(), device=tvm.cpu(0), target="llvm")
    assert isinstance(ex, Executor) and isinstance(ex, Interpreter) and ex.kind == kind
    out = ex.evaluate()(np.ones(3, "float32"), np.arange(3, dtype="float32"))
    assert isinstance(out, tvm.nd.NDArray)
    assert out.shape == (3,) and out.dtype == "float32" and out.device == tvm.cpu(0)
    np.testing.assert_array_equal(out.numpy(), [1.0, 2.0, 3.0])


def test_kinds_have_tvms_classes():
    mod = _add_mod()
    assert type(relay.create_executor("debug", mod=mod)) is Executor
    assert type(relay.create_executor("graph", mod=mod)) is GraphExecutor
    assert type(relay.create_executor("vm", mod=mod)) is VMExecutor
    assert relay.create_executor is tvm.interp.create_executor


@pytest.mark.parametrize("kind", ["debug", "vm"])
def test_tuples_come_back_as_adts(kind):
    out = relay.create_executor(kind, mod=_pair_mod()).evaluate()(np.array([1.0, 2.0], "float32"))
    assert isinstance(out, ADT) and out.tag == 0 and len(out) == 2
    assert ADT is RuntimeADT
    a, b = out
    np.testing.assert_array_equal(out[0].numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(b.numpy(), [-1.0, -2.0])
    assert isinstance(a, tvm.nd.NDArray)


def test_graph_executor_returns_a_list_for_a_tuple():
    out = relay.create_executor("graph", mod=_pair_mod()).evaluate()(np.array([1.0, 2.0], "float32"))
    assert type(out) is list and len(out) == 2
    np.testing.assert_array_equal(out[1].numpy(), [-1.0, -2.0])


def test_nested_tuples_nest():
    x = relay.var("x", shape=())
    body = relay.Tuple([x, relay.Tuple([x, x])])
    mod = tvm.IRModule.from_expr(relay.Function([x], body))
    out = relay.create_executor("vm", mod=mod).evaluate()(np.float32(2))
    assert isinstance(out[1], ADT) and float(out[1][1].numpy()) == 2.0
    listed = relay.create_executor("graph", mod=mod).evaluate()(np.float32(2))
    assert type(listed[1]) is list


def test_results_are_arrays_of_their_own():
    # An output is never the memory of an argument or a constant, as TVM copies outputs.
    x = relay.var("x", shape=(2,))
    c = relay.const(np.array([5.0, 6.0], "float32"))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.Tuple([x, c])))
    data = np.array([1.0, 2.0], "float32")
    got_x, got_c = relay.create_executor(mod=mod).evaluate()(data)
    got_x.copyfrom(np.zeros(2, "float32"))
    got_c.copyfrom(np.zeros(2, "float32"))
    np.testing.assert_array_equal(data, [1.0, 2.0])
    np.testing.assert_array_equal(c.data.numpy(), [5.0, 6.0])


def test_evaluate_of_a_closed_expression_gives_its_value():
    ex = relay.create_executor()
    out = ex.evaluate(relay.add(relay.const(1.0), relay.const(2.0)))
    assert isinstance(out, tvm.nd.NDArray) and out.shape == () and out.numpy() == 3.0
    pair = ex.evaluate(relay.Tuple([relay.const(1), relay.const(2)]))
    assert isinstance(pair, ADT) and [int(v.numpy()) for v in pair] == [1, 2]


def test_evaluate_of_a_function_gives_a_callable():
    x = relay.var("x", shape=(2,))
    f = relay.create_executor("vm").evaluate(relay.Function([x], relay.nn.relu(x)))
    np.testing.assert_array_equal(f(np.array([-1.0, 1.0], "float32")).numpy(), [0.0, 1.0])


def test_a_returned_closure_returns_ndarrays_too():
    x = relay.var("x", shape=())
    y = relay.var("y", shape=())
    make_adder = relay.Function([x], relay.Function([y], relay.add(x, y)))
    add_two = relay.create_executor().evaluate(make_adder)(np.float32(2))
    assert isinstance(add_two, Closure)
    out = add_two(np.float32(3))
    assert isinstance(out, tvm.nd.NDArray) and out.numpy() == 5.0


def test_binds_take_ndarrays():
    x = relay.var("x", shape=(2,))
    out = relay.create_executor().evaluate(
        relay.multiply(x, x), binds={x: tvm.nd.array(np.array([2.0, 3.0], "float32"))}
    )
    np.testing.assert_array_equal(out.numpy(), [4.0, 9.0])


def test_a_global_function_by_its_global_var():
    mod = _add_mod()
    f = relay.create_executor(mod=mod).evaluate(mod.get_global_var("main"))
    np.testing.assert_array_equal(f(np.ones(3, "float32"), np.ones(3, "float32")).numpy(), [2.0] * 3)


# --- arguments ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_arguments_may_be_ndarrays_numpy_or_python(kind):
    f = relay.create_executor(kind, mod=_add_mod()).evaluate()
    a = tvm.nd.array(np.array([1.0, 2.0, 3.0], "float32"))
    np.testing.assert_array_equal(f(a, np.zeros(3, "float32")).numpy(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(f(a, [1, 1, 1]).numpy(), [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(f(y=a, x=a).numpy(), [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(a.numpy(), [1.0, 2.0, 3.0])  # arguments are not written


def test_a_tuple_argument_may_be_an_adt():
    t = relay.var("t", relay.TupleType([relay.TensorType((2,)), relay.TensorType((2,))]))
    mod = tvm.IRModule.from_expr(relay.Function([t], relay.add(relay.TupleGetItem(t, 0),
                                                                relay.TupleGetItem(t, 1))))
    pair = relay.create_executor(mod=mod).evaluate()(
        ADT(0, [tvm.nd.array(np.ones(2, "float32")), tvm.nd.array(np.ones(2, "float32"))])
    )
    np.testing.assert_array_equal(pair.numpy(), [2.0, 2.0])


# --- params ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_params_are_bound_into_main(kind):
    mod = _add_mod()
    main = mod["main"]
    w = tvm.nd.array(np.array([10.0, 20.0, 30.0], "float32"))
    ex = relay.create_executor(kind, mod=mod, target="llvm", params={"y": w})
    assert [p.name_hint for p in ex.mod["main"].params] == ["x"]
    out = ex.evaluate()(np.ones(3, "float32"))
    np.testing.assert_array_equal(out.numpy(), [11.0, 21.0, 31.0])
    assert mod["main"] is main  # the caller's module is unchanged


def test_params_may_be_numpy_arrays():
    ex = relay.create_executor(mod=_add_mod(), params={"x": np.full(3, 2.0, "float32")})
    np.testing.assert_array_equal(ex.evaluate()(np.ones(3, "float32")).numpy(), [3.0] * 3)


# --- type checking, as TVM's executors do ----------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_an_ill_typed_program_is_rejected(kind):
    x = relay.var("x", shape=(2,), dtype="float64")
    bad = relay.Function([x], relay.multiply(x, relay.const(np.ones(2, "float32"))))
    with pytest.raises(TypeInferenceError, match="float64 and float32"):
        relay.create_executor(kind, mod=tvm.IRModule.from_expr(bad)).evaluate()
    with pytest.raises(TypeInferenceError):
        relay.create_executor(kind).evaluate(bad)


def test_graph_executor_rejects_a_dynamic_output_shape():
    x = relay.var("x", shape=(relay.Any(),))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.nn.relu(x)))
    with pytest.raises(ValueError, match="only supports static graphs"):
        relay.create_executor("graph", mod=mod).evaluate()
    out = relay.create_executor("vm", mod=mod).evaluate()(np.array([-1.0, 2.0], "float32"))
    np.testing.assert_array_equal(out.numpy(), [0.0, 2.0])


# --- targets and devices ------------------------------------------------------------------------


class _Target:
    """Stands for a tvm.target.Target object: only ``kind.name`` is read."""

    class kind:  # noqa: N801
        name = "llvm"

    def __str__(self):
        return "llvm -keys=cpu"


@pytest.mark.parametrize("target", ["llvm", "c", "llvm -mcpu=skylake-avx512", None, _Target(),
                                    {"cpu": "llvm"}])
def test_cpu_targets_run(target):
    ex = relay.create_executor("graph", mod=_add_mod(), target=target)
    np.testing.assert_array_equal(ex.evaluate()(np.ones(3, "f4"), np.ones(3, "f4")).numpy(), [2.0] * 3)


@pytest.mark.parametrize("target", ["cuda", "nvptx", "opencl", "vulkan", "metal", "rocm",
                                    "cuda -arch=sm_80", {"gpu": "cuda"}])
def test_other_targets_are_out_of_scope(target):
    with pytest.raises(RelayCompatError, match="is out of scope for relaypass") as info:
        relay.create_executor("graph", mod=_add_mod(), target=target)
    message = str(info.value)
    assert "create_executor(target=" in message and "relaypass help coming-from-relay#out-of-scope" in message


def test_the_aot_executor_is_out_of_scope():
    with pytest.raises(RelayCompatError, match=r'create_executor\(kind="aot"\) is out of scope'):
        relay.create_executor("aot", mod=_add_mod())


def test_a_gpu_device_is_out_of_scope():
    with pytest.raises(RelayCompatError, match=r"device=cuda\(0\)"):
        relay.create_executor("vm", mod=_add_mod(), device=tvm.cuda(0))
    assert relay.create_executor("vm", device=tvm.cpu(0)).device == tvm.cpu(0)


def test_unknown_kind_and_bad_arguments():
    with pytest.raises(ValueError, match="debug, graph, vm"):
        relay.create_executor("jit")
    with pytest.raises(TypeError, match="IRModule"):
        relay.create_executor(mod=relay.const(1.0))
    with pytest.raises(TypeError, match="device"):
        relay.create_executor(device="cpu")


def test_the_out_of_scope_error_is_a_relaypass_error():
    assert issubclass(RelayCompatError, RelayPassError)
    assert issubclass(RelayCompatError, NotImplementedError)


def test_the_documented_section_exists():
    import pathlib

    page = pathlib.Path(__file__).resolve().parents[2] / "docs" / "coming-from-relay.md"
    assert "\n## Out of scope\n" in page.read_text(encoding="utf-8")
