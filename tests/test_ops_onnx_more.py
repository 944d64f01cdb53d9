"""The operators added for the ONNX models that did not import, and their converters.

For each operator: its type relation (shapes, dtypes, errors), its kernel
against a naive loop written from the definition, its fusion pattern and
attributes as Relay registers them, and its text round trip.  For each ONNX
converter: the cases of the ONNX specification (negative indices, reductions,
reverse and exclusive scans, tie-breaking, coordinate transformation modes...)
against onnxruntime.  The converter tests skip without the ``onnx`` extra.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from op_helpers import T, assert_text_round_trip, evaluate, relation

from relaypass import relay
from relaypass.errors import TypeRelationError
from relaypass.ir import Any, Op, OpPattern, TupleType
from relaypass.transform import get_pass

X, Y, Z = relay.var("x"), relay.var("y"), relay.var("z")
rng = np.random.default_rng(17)


def randn(*shape, dtype="float32"):
    return rng.standard_normal(shape).astype(dtype)


def typed_var(name, value):
    return relay.var(name, shape=value.shape, dtype=str(value.dtype))


# --- trigonometric, classification and bitwise operators ---------------------------------------

TRIG = {"sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
        "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh,
        "acosh": np.arccosh, "atanh": np.arctanh}


@pytest.mark.parametrize("name", sorted(TRIG))
def test_trigonometric_operators(name):
    build = getattr(relay, name)
    assert relation(build(X), T((2, Any()), "float16")) == T((2, Any()), "float16")
    a = rng.uniform(-0.9, 0.9, (3, 4)).astype("float32")
    if name == "acosh":
        a = a + 2
    out = evaluate(build(X), a)
    np.testing.assert_allclose(out, TRIG[name](a.astype("float64")), rtol=1e-6)
    op = Op.get(name)
    assert op.get_attr("TOpPattern") == OpPattern.ELEMWISE
    assert getattr(relay.op, name) is build and getattr(relay.op.tensor, name) is build
    assert f"{name}(" in assert_text_round_trip(build(relay.var("v", shape=(2,))))


def test_classification_operators_give_bool():
    a = np.array([0.0, np.nan, np.inf, -np.inf, 1.0], "float32")
    for name, fn in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
        call = getattr(relay, name)(X)
        assert relation(call, T((5,))) == T((5,), "bool")
        np.testing.assert_array_equal(evaluate(call, a), fn(a))
        ints = evaluate(call, np.arange(3, dtype="int32"))
        np.testing.assert_array_equal(ints, [name == "isfinite"] * 3)
        assert Op.get(name).get_attr("TOpPattern") == OpPattern.ELEMWISE


def test_bitwise_operators():
    a = rng.integers(-50, 50, (3, 4)).astype("int16")
    b = rng.integers(-50, 50, (4,)).astype("int16")
    for name, fn in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                     ("bitwise_xor", np.bitwise_xor)):
        call = getattr(relay, name)(X, Y)
        assert relation(call, T((3, 4), "int16"), T((4,), "int16")) == T((3, 4), "int16")
        np.testing.assert_array_equal(evaluate(call, a, b), fn(a, b))
        assert Op.get(name).get_attr("TOpPattern") == OpPattern.BROADCAST
    np.testing.assert_array_equal(evaluate(relay.bitwise_not(X), a), ~a)
    with pytest.raises(ValueError, match="bitwise_and: operands must have an integer"):
        evaluate(relay.bitwise_and(X, Y), np.ones(2, "float32"), np.ones(2, "float32"))


# --- trilu --------------------------------------------------------------------------------------


def naive_trilu(a, k, upper):
    out = np.zeros_like(a)
    for idx in itertools.product(*map(range, a.shape)):
        i, j = idx[-2:]
        if (j - i >= k) if upper else (j - i <= k):
            out[idx] = a[idx]
    return out


@pytest.mark.parametrize("k", [-2, 0, 1, 5])
@pytest.mark.parametrize("upper", [True, False])
def test_trilu_matches_the_definition(k, upper):
    a = randn(2, 3, 4)
    call = relay.trilu(X, Y, upper=upper)
    kk = np.array(k, "int64")
    assert relation(call, T((2, 3, 4)), T((), "int64")) == T((2, 3, 4))
    np.testing.assert_array_equal(evaluate(call, a, kk), naive_trilu(a, k, upper))


def test_trilu_registration_and_errors():
    op = Op.get("trilu")
    assert op.get_attr("TOpPattern") == OpPattern.ELEMWISE
    assert op.attrs_type_key == "relay.attrs.TriluAttrs"
    call = relay.trilu(X, 1)
    assert isinstance(call.args[1], relay.Constant) and call.args[1].data.dtype == "int32"
    with pytest.raises(TypeRelationError, match="trilu: data must have rank 2"):
        relation(relay.trilu(X, Y), T((3,)), T((), "int32"))
    with pytest.raises(TypeRelationError, match="trilu: k must be a scalar"):
        relation(relay.trilu(X, Y), T((3, 3)), T((1,), "int32"))
    with pytest.raises(TypeRelationError, match="trilu: k must have an integer dtype"):
        relation(relay.trilu(X, Y), T((3, 3)), T((), "float32"))
    text = assert_text_round_trip(relay.trilu(relay.var("m", shape=(3, 3)), -1, upper=False))
    assert "trilu(" in text and "upper=False" in text


# --- topk ---------------------------------------------------------------------------------------


def naive_topk(a, k, axis, largest):
    """Sort each line by value (largest first or smallest first), ties by index."""
    moved = np.moveaxis(a, axis, -1)
    values, indices = np.empty(moved.shape[:-1] + (k,), a.dtype), np.empty(
        moved.shape[:-1] + (k,), "int64")
    for idx in itertools.product(*map(range, moved.shape[:-1])):
        line = list(moved[idx])
        order = sorted(range(len(line)), key=lambda i: ((-line[i] if largest else line[i]), i))
        values[idx] = [line[i] for i in order[:k]]
        indices[idx] = order[:k]
    return np.moveaxis(values, -1, axis), np.moveaxis(indices, -1, axis)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("is_ascend", [False, True])
def test_topk_matches_a_sort_with_ties_by_index(axis, is_ascend):
    a = rng.integers(0, 4, (4, 5, 3)).astype("float32")  # many ties
    k = 2
    call = relay.topk(X, k, axis=axis, is_ascend=is_ascend, dtype="int64")
    shape = list(a.shape)
    shape[axis] = k
    assert relation(call, T(a.shape)) == TupleType([T(shape), T(shape, "int64")])
    values, indices = evaluate(call, a)
    want_v, want_i = naive_topk(a, k, axis, not is_ascend)
    np.testing.assert_array_equal(values, want_v)
    np.testing.assert_array_equal(indices, want_i)


def test_topk_return_types_and_k_below_one_takes_everything():
    a = randn(3, 6)
    values = evaluate(relay.topk(X, 0, ret_type="values"), a)
    np.testing.assert_array_equal(values, -np.sort(-a, axis=-1))
    assert relation(relay.topk(X, 2, ret_type="indices"), T((3, 6))) == T((3, 2), "int32")
    assert relation(relay.topk(X, 2, axis=0, ret_type="values"), T((Any(), 6))) == T((2, 6))


def test_topk_registration_errors_and_text():
    op = Op.get("topk")
    assert op.get_attr("TOpPattern") == OpPattern.OPAQUE
    assert op.attrs_type_key == "relay.attrs.TopkAttrs"
    assert relay.op.algorithm.topk is relay.topk
    with pytest.raises(TypeRelationError, match="topk: k=7 is larger than the extent 6"):
        relation(relay.topk(X, 7), T((3, 6)))
    with pytest.raises(TypeRelationError, match="topk: attribute ret_type must be one of"):
        relation(relay.topk(X, 1, ret_type="all"), T((3, 6)))
    with pytest.raises(TypeRelationError, match="topk: cannot take the top elements of a scalar"):
        relation(relay.topk(X, 1), T(()))
    x = relay.var("x", shape=(3, 6))
    text = assert_text_round_trip(relay.topk(x, 2, axis=0, is_ascend=True).astuple())
    assert "topk(" in text and "is_ascend=True" in text
    assert_text_round_trip(relay.topk(x, 3, ret_type="indices", dtype="int64"))


# --- cumsum, cumprod ----------------------------------------------------------------------------


def naive_scan(a, axis, exclusive, product):
    out = np.empty(a.shape, "float64")
    moved_in, moved_out = np.moveaxis(a, axis, -1), np.moveaxis(out, axis, -1)
    for idx in itertools.product(*map(range, moved_in.shape[:-1])):
        acc = 1.0 if product else 0.0
        for j, v in enumerate(moved_in[idx]):
            if not exclusive:
                acc = acc * v if product else acc + v
            moved_out[idx + (j,)] = acc
            if exclusive:
                acc = acc * v if product else acc + v
    return out


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("exclusive", [False, True])
def test_scans_match_a_running_loop(name, axis, exclusive):
    a = rng.uniform(0.5, 1.5, (3, 4, 2)).astype("float64")
    call = getattr(relay, name)(X, axis=axis, exclusive=exclusive)
    out = evaluate(call, a)
    np.testing.assert_allclose(out, naive_scan(a, axis, exclusive, name == "cumprod"))


def test_scan_without_axis_flattens_and_dtype_sets_the_result():
    a = np.arange(6, dtype="int8").reshape(2, 3)
    call = relay.cumsum(X, dtype="int32")
    assert relation(call, T((2, 3), "int8")) == T((6,), "int32")
    assert relation(call, T((2, Any()), "int8")) == T((Any(),), "int32")
    np.testing.assert_array_equal(evaluate(call, a), np.cumsum(a.reshape(-1)).astype("int32"))
    # int8 accumulates in int8 and wraps around, as TVM's generated code does
    big = np.full(3, 100, "int8")
    np.testing.assert_array_equal(evaluate(relay.cumsum(X, 0), big), [100, -56, 44])


def test_scan_registration_errors_and_text():
    for name in ("cumsum", "cumprod"):
        op = Op.get(name)
        assert op.get_attr("TOpPattern") == OpPattern.OPAQUE
        assert op.attrs_type_key == "relay.attrs.ScanopAttrs"
    with pytest.raises(TypeRelationError, match="cumsum: axis 2 is out of range"):
        relation(relay.cumsum(X, 2), T((2, 3)))
    text = assert_text_round_trip(relay.cumprod(relay.var("v", shape=(2, 3)), 1, "float64", True))
    assert "cumprod(" in text and "exclusive=True" in text


# --- scatter_elements, scatter_nd ---------------------------------------------------------------


REDUCE = {"update": lambda old, new: new, "add": np.add, "mul": np.multiply,
          "min": np.minimum, "max": np.maximum, "mean": lambda old, new: (old + new) / 2}


def combine(reduction, old, new):
    return REDUCE[reduction](old, new)


def naive_scatter_elements(data, indices, updates, axis, reduction):
    out = data.copy()
    for idx in itertools.product(*map(range, indices.shape)):
        target = list(idx)
        target[axis] = indices[idx] % data.shape[axis]
        target = tuple(target)
        out[target] = combine(reduction, out[target], updates[idx])
    return out


@pytest.mark.parametrize("reduction", ["update", "add", "mul", "mean", "min", "max"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_scatter_elements_matches_the_loop_with_repeated_and_negative_indices(reduction, axis):
    data = randn(4, 5)
    ishape = (3, 5) if axis == 0 else (4, 3)
    extent = data.shape[axis]
    indices = rng.integers(-extent, extent, ishape).astype("int64")
    updates = randn(*ishape)
    call = relay.scatter_elements(X, Y, Z, axis=axis, reduction=reduction)
    assert relation(call, T((4, 5)), T(ishape, "int64"), T(ishape)) == T((4, 5))
    out = evaluate(call, data, indices, updates)
    np.testing.assert_allclose(out, naive_scatter_elements(data, indices, updates, axis % 2,
                                                           reduction), rtol=1e-6)


def naive_scatter_nd(data, indices, updates, mode):
    out = data.copy()
    m = indices.shape[0]
    for y in itertools.product(*map(range, indices.shape[1:])):
        target = tuple(int(indices[(k,) + y]) % data.shape[k] for k in range(m))
        out[target] = combine(mode, out[target], updates[y])
    return out


@pytest.mark.parametrize("mode", ["update", "add", "mul", "min", "max"])
@pytest.mark.parametrize("m", [1, 2, 3])
def test_scatter_nd_matches_the_loop(mode, m):
    data = randn(3, 4, 2)
    indices = np.stack([rng.integers(-d, d, (2, 3)) for d in data.shape[:m]]).astype("int32")
    updates = randn(2, 3, *data.shape[m:])
    call = relay.scatter_nd(X, Y, Z, mode)
    assert relation(call, T(data.shape), T(indices.shape, "int32"), T(updates.shape)) == \
        T(data.shape)
    out = evaluate(call, data, indices, updates)
    np.testing.assert_allclose(out, naive_scatter_nd(data, indices, updates, mode), rtol=1e-6)


def test_scatter_errors_registration_and_text():
    for name, key in (("scatter_elements", "relay.attrs.ScatterElementsAttrs"),
                      ("scatter_nd", "relay.attrs.ScatterNDAttrs")):
        assert Op.get(name).get_attr("TOpPattern") == OpPattern.OPAQUE
        assert Op.get(name).attrs_type_key == key
    with pytest.raises(TypeRelationError, match=r"scatter_nd: updates must have shape \(2, 2\)"):
        relation(relay.scatter_nd(X, Y, Z), T((3, 2)), T((1, 2), "int64"), T((2, 3)))
    with pytest.raises(TypeRelationError, match="scatter_nd: indices address 3 axes"):
        relation(relay.scatter_nd(X, Y, Z), T((3, 2)), T((3, 2), "int64"), T((2,)))
    with pytest.raises(TypeRelationError, match="scatter_elements: indices must have an integer"):
        relation(relay.scatter_elements(X, Y, Z), T((3,)), T((3,)), T((3,)))
    with pytest.raises(TypeRelationError, match="attribute reduction must be one of"):
        relation(relay.scatter_elements(X, Y, Z, reduction="sum"), T((3,)), T((3,), "int32"),
                 T((3,)))
    with pytest.raises(ValueError, match="scatter_elements: index 3 at position"):
        evaluate(relay.scatter_elements(X, Y, Z), randn(3), np.array([3]), randn(1))
    d, i, u = (relay.var("d", shape=(4, 3)), relay.var("i", shape=(1, 2), dtype="int64"),
               relay.var("u", shape=(2, 3)))
    assert 'mode="add"' in assert_text_round_trip(relay.scatter_nd(d, i, u, "add"))
    i2 = relay.var("i", shape=(2, 3), dtype="int64")
    u2 = relay.var("u", shape=(2, 3))
    assert 'reduction="max"' in assert_text_round_trip(
        relay.scatter_elements(d, i2, u2, axis=1, reduction="max"))


# --- one_hot, argwhere --------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [-1, 0, 1, 2])
def test_one_hot_matches_the_definition(axis):
    indices = np.array([[0, 2, 5], [1, -1, 3]], "int32")  # 5 and -1 are out of range
    depth = 4
    call = relay.one_hot(X, Y, Z, depth, axis, "float32")
    on, off = np.array(2.5, "float32"), np.array(-1.0, "float32")
    out = evaluate(call, indices, on, off)
    want = np.full((2, 3, depth), off)
    for i, j in itertools.product(range(2), range(3)):
        if 0 <= indices[i, j] < depth:
            want[i, j, indices[i, j]] = on
    np.testing.assert_array_equal(out, want if axis == -1 else np.moveaxis(want, -1, axis))


def test_one_hot_relation_and_errors():
    call = relay.one_hot(X, Y, Z, 3, 1, "int32")
    assert relation(call, T((2, Any()), "int64"), T((), "int32"), T((), "int32")) == \
        T((2, 3, Any()), "int32")
    with pytest.raises(TypeRelationError, match="one_hot: on_value has dtype float32"):
        relation(call, T((2,), "int64"), T(()), T((), "int32"))
    with pytest.raises(TypeRelationError, match="one_hot: axis 3 is out of range"):
        relation(relay.one_hot(X, Y, Z, 3, 3, "int32"), T((2,), "int64"), T((), "int32"),
                 T((), "int32"))
    assert Op.get("one_hot").get_attr("TOpPattern") == OpPattern.OUT_ELEMWISE_FUSABLE
    depth = relay.const(np.array(3, "int64"))
    assert relay.one_hot(X, Y, Z, depth, -1, "int32").attrs.depth == 3
    text = assert_text_round_trip(relay.one_hot(
        relay.var("i", shape=(2,), dtype="int64"), relay.const(1.0), relay.const(0.0), 5, 0,
        "float32"))
    assert "one_hot(" in text and "depth=5" in text


def test_argwhere_has_an_unknown_count():
    a = np.array([[0, 1, 0], [2, 0, 3]], "float32")
    call = relay.argwhere(X)
    assert relation(call, T((2, 3))) == T((Any(), 2), "int32")
    np.testing.assert_array_equal(evaluate(call, a), [[0, 1], [1, 0], [1, 2]])
    assert evaluate(call, np.zeros((2, 2), "float32")).shape == (0, 2)
    assert Op.get("argwhere").get_attr("TOpPattern") == OpPattern.OPAQUE
    assert "argwhere(" in assert_text_round_trip(relay.argwhere(relay.var("c", shape=(3,))))


# --- einsum -------------------------------------------------------------------------------------

EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)], (2, 4)),
    ("ij,jk", [(2, 3), (3, 4)], (2, 4)),
    ("ii->i", [(3, 3)], (3,)),
    ("ij->", [(2, 3)], ()),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)], (2, 3, 5)),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)], (2, 5, 3, 2)),
    ("i...->...", [(3, 2, 4)], (2, 4)),
    ("ba,ca", [(2, 3), (4, 3)], (2, 4)),
    ("i,i->i", [(3,), (1,)], (3,)),
    ("a...c,c->...a", [(2, 3, 4), (4,)], (3, 2)),
]


@pytest.mark.parametrize("equation, shapes, out_shape", EINSUM, ids=[e[0] for e in EINSUM])
def test_einsum_relation_and_kernel_follow_numpy(equation, shapes, out_shape):
    arrays = [randn(*s) for s in shapes]
    vars_ = [relay.var(f"a{i}") for i in range(len(arrays))]
    call = relay.einsum(vars_, equation)
    assert relation(call, TupleType([T(s) for s in shapes])) == T(out_shape)
    out = call.op.get_attr("FKernel")([tuple(arrays)], call.attrs)
    np.testing.assert_allclose(out, np.einsum(equation, *arrays), rtol=1e-5, atol=1e-6)
    assert out.dtype == np.float32 and out.shape == out_shape


def test_einsum_errors_and_registration():
    pair = TupleType([T((2, 3)), T((4, 5))])
    with pytest.raises(TypeRelationError, match="einsum: label 'j' has extent 3 in one operand "
                                                "and 4 in operand 1"):
        relation(relay.einsum([X, Y], "ij,jk->ik"), pair)
    with pytest.raises(TypeRelationError, match="has 1 operand terms, but 2 operands"):
        relation(relay.einsum([X, Y], "ij->i"), pair)
    with pytest.raises(TypeRelationError, match="output label 'z' is not in any operand"):
        relation(relay.einsum([X], "ij->z"), TupleType([T((2, 3))]))
    with pytest.raises(TypeRelationError, match="which does not fit its term ij"):
        relation(relay.einsum([X], "ij->i"), TupleType([T((2, 3, 4))]))
    with pytest.raises(TypeRelationError, match="the output must keep with '...'"):
        relation(relay.einsum([X], "...i->i"), TupleType([T((2, 3))]))
    with pytest.raises(TypeRelationError, match="same dtype"):
        relation(relay.einsum([X, Y], "i,i->i"), TupleType([T((2,)), T((2,), "float64")]))
    assert relation(relay.einsum([X, Y], "ij,jk->ik"), TupleType([T((Any(), 3)), T((3, 4))])) \
        == T((Any(), 4))
    op = Op.get("einsum")
    assert op.get_attr("TOpPattern") == OpPattern.INJECTIVE
    assert op.attrs_type_key == "relay.attrs.EinsumAttrs"
    a, b = relay.var("a", shape=(2, 3)), relay.var("b", shape=(3, 4))
    assert 'equation="ij,jk->ik"' in assert_text_round_trip(relay.einsum([a, b], "ij,jk->ik"))


# --- image.resize2d -----------------------------------------------------------------------------


def naive_resize_linear_half_pixel(a, out_h, out_w):
    n, c, h, w = a.shape
    out = np.empty((n, c, out_h, out_w))
    for y, x in itertools.product(range(out_h), range(out_w)):
        sy = min(max((y + 0.5) * h / out_h - 0.5, 0), h - 1)
        sx = min(max((x + 0.5) * w / out_w - 0.5, 0), w - 1)
        y0, x0 = int(np.floor(sy)), int(np.floor(sx))
        y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
        ty, tx = sy - y0, sx - x0
        top = a[:, :, y0, x0] * (1 - tx) + a[:, :, y0, x1] * tx
        bottom = a[:, :, y1, x0] * (1 - tx) + a[:, :, y1, x1] * tx
        out[:, :, y, x] = top * (1 - ty) + bottom * ty
    return out


@pytest.mark.parametrize("size", [(8, 6), (3, 2), (4, 4)])
def test_resize2d_bilinear_half_pixel_matches_the_loop(size):
    a = randn(1, 2, 4, 3)
    call = relay.op.image.resize2d(X, size)
    assert relation(call, T((1, 2, 4, 3))) == T((1, 2, *size))
    np.testing.assert_allclose(evaluate(call, a), naive_resize_linear_half_pixel(a, *size),
                               rtol=1e-5, atol=1e-6)


def test_resize2d_nhwc_nearest_and_registration():
    a = randn(1, 3, 4, 2)
    nchw = np.transpose(a, (0, 3, 1, 2))
    for method in ("nearest_neighbor", "linear", "cubic"):
        nhwc = evaluate(relay.op.image.resize2d(X, (6, 5), layout="NHWC", method=method), a)
        want = evaluate(relay.op.image.resize2d(X, (6, 5), method=method), nchw)
        np.testing.assert_allclose(np.transpose(nhwc, (0, 3, 1, 2)), want, rtol=1e-6)
    # nearest with asymmetric coordinates and floor: every output pixel copies one input pixel
    up = evaluate(relay.op.image.resize2d(X, (6, 8), method="nearest_neighbor",
                                          coordinate_transformation_mode="asymmetric",
                                          rounding_method="floor"), nchw)
    np.testing.assert_array_equal(up, nchw.repeat(2, axis=2).repeat(2, axis=3))
    op = Op.get("image.resize2d")
    assert op.get_attr("TOpPattern") == OpPattern.INJECTIVE
    assert op.attrs_type_key == "relay.attrs.Resize2DAttrs"
    with pytest.raises(TypeRelationError, match="image.resize2d: data must have rank 4"):
        relation(relay.op.image.resize2d(X, (2, 2)), T((2, 2)))
    with pytest.raises(TypeRelationError, match="attribute method must be one of"):
        relation(relay.op.image.resize2d(X, (2, 2), method="area"), T((1, 1, 2, 2)))
    v = relay.var("v", shape=(1, 2, 3, 3))
    text = assert_text_round_trip(relay.op.image.resize2d(
        v, (5, 4), method="cubic", coordinate_transformation_mode="align_corners",
        cubic_alpha=-0.75, cubic_exclude=1))
    assert "image.resize2d(" in text and 'method="cubic"' in text


# --- the importer's converters against onnxruntime ---------------------------------------------


@pytest.fixture(scope="module")
def ox():
    onnx = pytest.importorskip(
        "onnx", reason="the onnx extra is not installed (pip install 'relaypass[onnx]')")
    ort = pytest.importorskip(
        "onnxruntime", reason="the onnx extra is not installed (pip install 'relaypass[onnx]')")
    return onnx, ort


def one_node_model(op_type, inputs, attrs=None, n_outputs=1, opset=18, initializers=()):
    """One ONNX node, inputs named in order (None: omitted); those listed in
    ``initializers`` are initializers, the others graph inputs.  Returns the model and the
    feeds of its graph inputs."""
    from onnx import helper, numpy_helper

    names = [None if v is None else f"in{i}" for i, v in enumerate(inputs)]
    feeds = {n: v for n, v in zip(names, inputs) if n is not None and n not in
             {f"in{i}" for i in initializers}}
    inits = [numpy_helper.from_array(inputs[i], f"in{i}") for i in initializers]
    outs = [f"out{i}" for i in range(n_outputs)]
    graph = helper.make_graph(
        [helper.make_node(op_type, [n or "" for n in names], outs, **(attrs or {}))], "case",
        [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
         for k, v in feeds.items()],
        [helper.make_empty_tensor_value_info(o) for o in outs], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model, feeds


def convert_and_compare(ox, op_type, inputs, attrs=None, n_outputs=1, opset=18,
                        initializers=(), rtol=1e-5, atol=1e-6):
    """One ONNX node (:func:`one_node_model`) imported, typed and evaluated: it must match
    onnxruntime in values, dtypes and shapes."""
    onnx, ort = ox
    from relaypass.frontend import from_onnx

    model, feeds = one_node_model(op_type, inputs, attrs, n_outputs, opset, initializers)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    expected = ort.InferenceSession(model.SerializeToString(), options,
                                    providers=["CPUExecutionProvider"]).run(None, feeds)
    mod, _ = from_onnx(model)
    mod = get_pass("InferType")(mod)
    got = relay.create_executor(mod=mod).evaluate()(**feeds)
    got = list(got) if isinstance(got, tuple) else [got]
    ret = mod["main"].body.checked_type
    types = list(ret.fields) if isinstance(ret, TupleType) else [ret]
    for g, e, t in zip(got, expected, types):
        g = np.asarray(g)
        assert g.dtype == e.dtype and g.shape == e.shape, (g.dtype, e.dtype, g.shape, e.shape)
        assert t.dtype == str(g.dtype)
        assert all(isinstance(d, Any) or d == n for d, n in zip(t.shape, g.shape))
        if e.dtype.kind == "f":
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g, e)
    return mod


ONNX_UNARY = [("Sin", 7), ("Cos", 7), ("Tan", 7), ("Asin", 7), ("Acos", 7), ("Atan", 7),
              ("Sinh", 9), ("Cosh", 9), ("Asinh", 9), ("Atanh", 9)]


@pytest.mark.parametrize("op_type, opset", ONNX_UNARY)
def test_onnx_trigonometric(ox, op_type, opset):
    convert_and_compare(ox, op_type, [rng.uniform(-0.9, 0.9, (2, 3)).astype("float32")],
                        opset=max(opset, 13))
    convert_and_compare(ox, op_type, [rng.uniform(-0.9, 0.9, (4,)).astype("float32")],
                        opset=opset)


def test_onnx_acosh_isnan_isinf(ox):
    convert_and_compare(ox, "Acosh", [rng.uniform(1.0, 3.0, (5,)).astype("float32")])
    special = np.array([1.0, np.nan, np.inf, -np.inf, -2.0], "float32")
    convert_and_compare(ox, "IsNaN", [special])
    for neg, pos in itertools.product((0, 1), repeat=2):
        convert_and_compare(ox, "IsInf", [special],
                            {"detect_negative": neg, "detect_positive": pos})


@pytest.mark.parametrize("dtype", ["uint8", "uint32", "uint64"])
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_onnx_bitshift(ox, dtype, direction):
    x = rng.integers(0, 200, (3, 4)).astype(dtype)
    y = rng.integers(0, 7, (4,)).astype(dtype)
    convert_and_compare(ox, "BitShift", [x, y], {"direction": direction})


def test_onnx_bitwise(ox):
    a = rng.integers(-100, 100, (3, 4)).astype("int32")
    b = rng.integers(-100, 100, (3, 4)).astype("int32")
    for op_type in ("BitwiseAnd", "BitwiseOr", "BitwiseXor"):
        convert_and_compare(ox, op_type, [a, b])
    convert_and_compare(ox, "BitwiseNot", [a.astype("uint8")])


@pytest.mark.parametrize("fmod, dtype", [(0, "int32"), (1, "int32"), (1, "float32"),
                                         (0, "int64")])
def test_onnx_mod_signs(ox, fmod, dtype):
    a = np.array([-7, -3, 3, 7, 5, -5], dtype)
    b = np.array([2, -2, -2, 3, -3, 3], dtype)
    convert_and_compare(ox, "Mod", [a, b], {"fmod": fmod})


@pytest.mark.parametrize("k, upper", [(None, 1), (None, 0), (1, 1), (-1, 0), (-5, 1), (7, 0)])
def test_onnx_trilu(ox, k, upper):
    x = randn(2, 3, 5)
    inputs = [x] if k is None else [x, np.array(k, "int64")]
    convert_and_compare(ox, "Trilu", inputs, {"upper": upper}, initializers=(1,) if k is not None
                        else ())


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("largest", [1, 0])
def test_onnx_topk_ties_by_index(ox, axis, largest):
    x = rng.integers(0, 3, (4, 6)).astype("float32")
    convert_and_compare(ox, "TopK", [x, np.array([3], "int64")],
                        {"axis": axis, "largest": largest}, n_outputs=2, initializers=(1,))


def test_onnx_topk_legacy_attribute_and_bad_k(ox):
    from relaypass.frontend import OnnxImportError

    convert_and_compare(ox, "TopK", [randn(3, 5)], {"k": 2}, n_outputs=2, opset=9)
    from relaypass.frontend import from_onnx

    model, _ = one_node_model("TopK", [randn(3, 5), np.array([9], "int64")], n_outputs=2,
                              initializers=(1,))
    with pytest.raises(OnnxImportError, match="K=9 must be between 1 and the extent 5"):
        from_onnx(model)


@pytest.mark.parametrize("exclusive, reverse", itertools.product((0, 1), repeat=2))
@pytest.mark.parametrize("axis", [0, -1])
def test_onnx_cumsum(ox, exclusive, reverse, axis):
    x = randn(3, 4)
    convert_and_compare(ox, "CumSum", [x, np.array(axis, "int32")],
                        {"exclusive": exclusive, "reverse": reverse}, initializers=(1,))
    ints = rng.integers(-5, 5, (5,)).astype("int64")
    convert_and_compare(ox, "CumSum", [ints, np.array(0, "int64")],
                        {"exclusive": exclusive, "reverse": reverse}, initializers=(1,))


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_onnx_one_hot_negative_and_out_of_range_indices(ox, axis):
    indices = np.array([[0, -1, 3], [4, -4, 2]], "int64")  # 4 is out of range, -1 and -4 wrap
    convert_and_compare(ox, "OneHot", [indices, np.array(4, "int64"),
                                       np.array([-2.0, 3.0], "float32")],
                        {"axis": axis}, initializers=(1, 2), opset=11)


def test_onnx_one_hot_float_indices_and_runtime_values(ox):
    indices = np.array([0.0, 2.0, -1.0], "float32")
    convert_and_compare(ox, "OneHot", [indices, np.array([3.0], "float32"),
                                       np.array([0.5, 7.0], "float32")], initializers=(1,),
                        opset=11)


@pytest.mark.parametrize("reduction, opset", [("none", 13), ("add", 16), ("mul", 16),
                                              ("max", 18), ("min", 18)])
@pytest.mark.parametrize("axis", [0, 1])
def test_onnx_scatter_elements(ox, reduction, opset, axis):
    data = randn(3, 4)
    if reduction == "none":  # no repeated positions: their order is unspecified in ONNX
        indices = np.stack([rng.permutation(3)[:2] for _ in range(4)], axis=1) if axis == 0 \
            else np.stack([rng.permutation(4)[:3] for _ in range(3)])
        indices = indices - (3 if axis == 0 else 4) * (rng.random(indices.shape) < 0.5)
    else:
        indices = rng.integers(0, data.shape[axis], (2, 4) if axis == 0 else (3, 3))
    indices = indices.astype("int64")
    updates = randn(*indices.shape)
    attrs = {"axis": axis} if reduction == "none" else {"axis": axis, "reduction": reduction}
    convert_and_compare(ox, "ScatterElements", [data, indices, updates], attrs, opset=opset)


def test_onnx_deprecated_scatter(ox):
    data = randn(3, 3)
    indices = np.array([[1, 0, 2], [0, 2, 1]], "int64")
    convert_and_compare(ox, "Scatter", [data, indices, randn(2, 3)], {"axis": 0}, opset=9)


@pytest.mark.parametrize("reduction, opset", [("none", 13), ("add", 16), ("mul", 16),
                                              ("max", 18), ("min", 18)])
def test_onnx_scatter_nd(ox, reduction, opset):
    data = randn(4, 3, 2)
    if reduction == "none":
        indices = np.array([[[0, 1], [2, 2]], [[3, 0], [1, 1]]], "int64")  # distinct
    else:
        indices = rng.integers(0, 3, (2, 2, 2)).astype("int64")
    updates = randn(2, 2, 2)
    attrs = {} if reduction == "none" else {"reduction": reduction}
    convert_and_compare(ox, "ScatterND", [data, indices, updates], attrs, opset=opset)
    # whole rows, as Swin's shifted-window mask writes them
    rows = np.array([[0], [3]], "int64")
    convert_and_compare(ox, "ScatterND", [data, rows, randn(2, 3, 2)], attrs, opset=opset)


@pytest.mark.parametrize("batch_dims", [0, 1])
def test_onnx_gather_nd(ox, batch_dims):
    data = randn(2, 3, 4)
    indices = np.array([[[0, 1], [1, 2]], [[1, 3], [0, 0]]], "int64")
    if batch_dims == 0:
        indices = np.array([[[0, 1], [1, 2]], [[1, 0], [0, 2]]], "int64")
    convert_and_compare(ox, "GatherND", [data, indices], {"batch_dims": batch_dims},
                        initializers=(1,))


def test_onnx_nonzero_of_a_constant_is_a_constant(ox):
    x = np.array([[0, 1, 0], [3, 0, 5]], "float32")
    mod = convert_and_compare(ox, "NonZero", [x], initializers=(0,))
    assert isinstance(mod["main"].body, relay.Constant)


def test_onnx_nonzero_of_an_input_has_an_unknown_count(ox):
    x = np.array([[0, 1, 0], [3, 0, 5]], "float32")
    mod = convert_and_compare(ox, "NonZero", [x])
    assert mod["main"].body.checked_type.shape[0] == 2
    assert isinstance(mod["main"].body.checked_type.shape[1], Any)


EINSUM_ONNX = ["ij,jk->ik", "bij,bjk->bik", "ii->i", "ij->ji", "i,i", "...ii->...i",
               "bhqd,bhkd->bhqk", "ij, jk -> ik"]


@pytest.mark.parametrize("equation", EINSUM_ONNX)
def test_onnx_einsum(ox, equation):
    lhs = equation.replace(" ", "").split("->")[0]
    shapes = {"ij": (2, 3), "jk": (3, 4), "bij": (2, 3, 4), "bjk": (2, 4, 5), "ii": (3, 3),
              "i": (4,), "...ii": (2, 3, 3), "bhqd": (1, 2, 3, 4), "bhkd": (1, 2, 5, 4)}
    arrays = [randn(*shapes[t]) for t in lhs.split(",")]
    convert_and_compare(ox, "Einsum", arrays, {"equation": equation}, opset=12, rtol=1e-5,
                        atol=1e-5)


RESIZE = [
    # mode, coordinate_transformation_mode, nearest_mode, out size
    ("linear", "half_pixel", None, (7, 9)),
    ("linear", "half_pixel", None, (2, 3)),
    ("linear", "align_corners", None, (7, 5)),
    ("linear", "asymmetric", None, (8, 10)),
    ("linear", "pytorch_half_pixel", None, (1, 6)),
    ("nearest", "half_pixel", "round_prefer_floor", (7, 9)),
    ("nearest", "asymmetric", "floor", (8, 10)),
    ("nearest", "align_corners", "round_prefer_ceil", (5, 3)),
    ("nearest", "tf_half_pixel_for_nn", "ceil", (6, 7)),
    ("cubic", "half_pixel", None, (7, 9)),
    ("cubic", "align_corners", None, (3, 8)),
    ("cubic", "asymmetric", None, (8, 10)),
]


@pytest.mark.parametrize("mode, transform, nearest, size", RESIZE,
                         ids=[f"{r[0]}-{r[1]}-{r[2]}-{r[3]}" for r in RESIZE])
def test_onnx_resize_with_sizes(ox, mode, transform, nearest, size):
    x = randn(1, 2, 4, 5)
    attrs = {"mode": mode, "coordinate_transformation_mode": transform}
    if nearest:
        attrs["nearest_mode"] = nearest
    sizes = np.array([1, 2, *size], "int64")
    convert_and_compare(ox, "Resize", [x, None, None, sizes], attrs, opset=13,
                        initializers=(3,), rtol=1e-5, atol=1e-5)


def test_onnx_resize_cubic_exclude_outside_and_alpha(ox):
    x = randn(1, 1, 5, 4)
    attrs = {"mode": "cubic", "exclude_outside": 1, "cubic_coeff_a": -0.5}
    convert_and_compare(ox, "Resize", [x, None, np.array([1, 1, 2.0, 0.5], "float32")], attrs,
                        opset=13, initializers=(2,), rtol=1e-5, atol=1e-5)


def test_onnx_resize_scales_opset_10_and_11(ox):
    x = randn(1, 3, 4, 4)
    scales = np.array([1, 1, 2, 2], "float32")
    convert_and_compare(ox, "Resize", [x, scales], {"mode": "nearest"}, opset=10,
                        initializers=(1,))
    convert_and_compare(ox, "Resize", [x, np.array([], "float32"), scales],
                        {"mode": "linear"}, opset=11, initializers=(1, 2))


def test_onnx_resize_tf_crop_and_resize_extrapolates(ox):
    x = randn(1, 1, 4, 4)
    roi = np.array([0, 0, -0.2, 0.1, 1, 1, 0.9, 1.3], "float32")
    convert_and_compare(ox, "Resize", [x, roi, None, np.array([1, 1, 5, 6], "int64")],
                        {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize",
                         "extrapolation_value": 7.5}, opset=13, initializers=(1, 3),
                        rtol=1e-5, atol=1e-5)


def test_onnx_resize_axes_of_opset_18(ox):
    x = randn(1, 2, 3, 4)
    convert_and_compare(ox, "Resize", [x, None, None, np.array([6, 8], "int64")],
                        {"mode": "linear", "axes": [2, 3]}, opset=18, initializers=(3,),
                        rtol=1e-5, atol=1e-5)


def test_onnx_resize_unsupported_forms_say_why(ox):
    from relaypass.frontend import UnsupportedOperatorError, from_onnx

    x = randn(1, 1, 3, 3)
    cases = [
        ("not a whole number", [x, None, np.array([1, 1, 1.5, 1.5], "float32")],
         {"mode": "linear"}, 13, (2,)),
        ("antialias=1", [x, None, None, np.array([1, 1, 2, 2], "int64")],
         {"mode": "linear", "antialias": 1}, 18, (3,)),
        ("only 4-D inputs", [randn(1, 2, 3), None, None, np.array([1, 2, 6], "int64")],
         {"mode": "linear"}, 13, (3,)),
        ("half_pixel_symmetric", [x, None, None, np.array([1, 1, 4, 4], "int64")],
         {"coordinate_transformation_mode": "half_pixel_symmetric"}, 19, (3,)),
    ]
    for message, inputs, attrs, opset, inits in cases:
        model, _ = one_node_model("Resize", inputs, attrs, opset=opset, initializers=inits)
        with pytest.raises(UnsupportedOperatorError, match=message):
            from_onnx(model)


def test_constructors_live_where_tvm_has_them():
    for name in ("scatter_elements", "scatter_nd", "one_hot", "trilu", "cumsum", "cumprod",
                 "argwhere", "gather_nd"):
        assert getattr(relay.op.transform, name) is getattr(relay, name), name
    assert relay.op.tensor.einsum is relay.einsum
    assert relay.op.algorithm.topk is relay.topk
    assert relay.image.resize2d is relay.op.image.resize2d
    for name in TRIG:
        assert getattr(relay.op.tensor, name) is getattr(relay, name)
