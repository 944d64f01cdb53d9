"""SimplifyInference: spell out inference-time normalization as elementwise arithmetic.

At inference the statistics of ``nn.batch_norm`` are constants and
``nn.dropout`` lets its data through, so both can become plain arithmetic that
FoldConstant folds and FuseOps fuses.  This follows Relay's
``simplify_inference.cc`` node for node, so that the result matches Relay's
structurally:

* ``nn.batch_norm(x, gamma, beta, mean, var)[0]`` becomes
  ``x * scale + shift`` with ``scale = 1 / sqrt(var + eps)`` (times ``gamma``
  when ``scale=True``) and ``shift = -mean * scale`` (plus ``beta`` when
  ``center=True``), both expanded to the axis with ``expand_dims``.  Only the
  projection 0 of the call is rewritten; the call itself stays while the
  statistics (projections 1 and 2) are used.
* ``nn.dropout(x)[0]`` becomes ``x``.
* ``nn.layer_norm(x, gamma, beta)`` becomes
  ``(x - mean(x)) / sqrt(variance(x, mean(x)) + eps) * gamma + beta`` over
  its axis.
* ``nn.instance_norm(x, gamma, beta)`` becomes the same arithmetic over
  every axis but the batch axis 0 and the channel axis.
* ``nn.l2_normalize(x)`` becomes ``x / sqrt(maximum(sum(x * x), eps))``
  over its axes (all of them when it names none).

Relay also expands ``nn.group_norm``, which is not part of the standard set.
Two calls Relay expands are left to their kernels, where Relay's expansion
would be wrong: an ``nn.l2_normalize`` whose data is not float32 (Relay's
``eps`` constant is always float32, so ``maximum`` does not type), and an
``nn.instance_norm`` of rank-2 data (nothing is left to reduce, and Relay's
empty axis list means "every axis" to ``mean``, which would change the
values).  As in Relay, a projection of a let-bound
batch_norm (``let %b = nn.batch_norm(...); %b.0``) is left alone, since the
rewrite looks at the projected expression itself.

The rank (and, for l2_normalize, the dtype) of the data is read from the
``checked_type`` of the original call's first argument, which is why the
input must be typed.  Epsilon and the constant one are float32 values stored
in the data's dtype, as Relay's ``MakeConstantScalar`` makes them (in
float32 always for l2_normalize, as in Relay).  Dataflow is rewritten
post-order without recursion (:class:`~relaypass.functor.MixedModeMutator`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from relaypass.errors import UncheckedTypeError
from relaypass.functor import MixedModeMutator
from relaypass.ir.expr import Call, Constant, Expr, Function, TupleGetItem
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op, make_call
from relaypass.ir.types import TensorType
from relaypass.transform import pass_constructor

__all__ = ["SimplifyInference", "simplify_inference"]


def _scalar(dtype: str, value: float) -> Constant:
    """Relay's ``MakeConstantScalar(dtype, static_cast<float>(value))``."""
    data = np.asarray(np.float32(value)).astype(dtype)
    data.flags.writeable = False
    return Constant(data)


def _data_type(call: Call) -> TensorType:
    data = call.args[0]
    ty = data._checked_type
    if ty is None:
        raise UncheckedTypeError(
            f"SimplifyInference: the data argument of {call.op.name} has no checked_type; "
            "run InferType first (the pass requires it)"
        )
    if not isinstance(ty, TensorType):
        raise UncheckedTypeError(
            f"SimplifyInference: the data argument of {call.op.name} has type {ty}, "
            "not a tensor type"
        )
    return ty


def _expand_to_axis(vector: Expr, ndim: int, axis: int) -> Expr:
    """Relay's ``ExpandBiasToMatchAxis`` for one axis: trailing unit axes after ``axis``."""
    pad = ndim - axis - 1
    if pad > 0:
        return make_call("expand_dims", [vector], axis=1, num_newaxis=pad)
    return vector


def batch_norm_to_arithmetic(call: Call, data_type: TensorType) -> Expr:
    """Output 0 of a ``nn.batch_norm`` call as ``data * scale + shift``."""
    data, gamma, beta, moving_mean, moving_var = call.args
    attrs = call.attrs
    dtype = data_type.dtype
    scale: Expr = make_call(
        "divide",
        [_scalar(dtype, 1.0),
         make_call("sqrt", [make_call("add", [moving_var, _scalar(dtype, attrs.epsilon)])])],
    )
    if attrs.scale:
        scale = make_call("multiply", [scale, gamma])
    shift: Expr = make_call("multiply", [make_call("negative", [moving_mean]), scale])
    if attrs.center:
        shift = make_call("add", [shift, beta])
    ndim = len(data_type.shape)
    axis = attrs.axis + ndim if attrs.axis < 0 else attrs.axis
    scale = _expand_to_axis(scale, ndim, axis)
    shift = _expand_to_axis(shift, ndim, axis)
    return make_call("add", [make_call("multiply", [data, scale]), shift])


def _normalized(data: Expr, gamma: Expr, beta: Expr, attrs, data_type: TensorType,
                reduced: tuple[int, ...], axis: int) -> Expr:
    """``(data - mean) / sqrt(variance + eps)`` over ``reduced``, then scaled by ``gamma``
    and shifted by ``beta`` along ``axis`` as ``attrs`` ask: the part layer norm and
    instance norm share in Relay (they differ only in the axes they reduce)."""
    mean = make_call("mean", [data], axis=reduced, keepdims=True, exclude=False)
    var = make_call("variance", [data, mean], axis=reduced, keepdims=True, exclude=False,
                    unbiased=False)
    denom = make_call("sqrt", [make_call("add", [var, _scalar(data_type.dtype, attrs.epsilon)])])
    out: Expr = make_call("divide", [make_call("subtract", [data, mean]), denom])
    ndim = len(data_type.shape)
    if attrs.scale:
        out = make_call("multiply", [out, _expand_to_axis(gamma, ndim, axis)])
    if attrs.center:
        out = make_call("add", [out, _expand_to_axis(beta, ndim, axis)])
    return out


def layer_norm_to_arithmetic(call: Call, data_type: TensorType) -> Expr:
    """A ``nn.layer_norm`` call as reductions and elementwise arithmetic."""
    data, gamma, beta = call.args
    attrs = call.attrs
    ndim = len(data_type.shape)
    # Relay reduces over the axis as written (negative or not), and expands by the normalized one.
    axis = attrs.axis + ndim if attrs.axis < 0 else attrs.axis
    return _normalized(data, gamma, beta, attrs, data_type, (attrs.axis,), axis)


def instance_norm_to_arithmetic(call: Call, data_type: TensorType) -> Expr | None:
    """A ``nn.instance_norm`` call as reductions and elementwise arithmetic, or None for
    rank-2 data (no axis to reduce: Relay's empty axis list would mean all of them)."""
    data, gamma, beta = call.args
    attrs = call.attrs
    ndim = len(data_type.shape)
    axis = attrs.axis + ndim if attrs.axis < 0 else attrs.axis
    reduced = tuple(i for i in range(1, ndim) if i != axis)
    if not reduced:
        return None
    return _normalized(data, gamma, beta, attrs, data_type, reduced, axis)


def l2_normalize_to_arithmetic(call: Call, data_type: TensorType) -> Expr | None:
    """A ``nn.l2_normalize`` call as ``data / sqrt(maximum(sum(data * data), eps))``, or
    None when the data is not float32 (Relay's float32 ``eps`` would not type there)."""
    if data_type.dtype != "float32":
        return None
    data = call.args[0]
    attrs = call.attrs
    # An l2_normalize naming no axis sums over all of them, as a sum without an axis does.
    axis = tuple(attrs.axis) or None
    total = make_call("sum", [make_call("multiply", [data, data])], axis=axis, keepdims=True,
                      exclude=False)
    norm = make_call("sqrt", [make_call("maximum", [total, _scalar("float32", attrs.eps)])])
    return make_call("divide", [data, norm])


class _InferenceSimplifier(MixedModeMutator):
    def __init__(self) -> None:
        super().__init__()
        self.batch_norm = Op.get("nn.batch_norm")
        self.dropout = Op.get("nn.dropout")
        # The calls rewritten whole, each by its expansion (None leaves the call as it is).
        self.expansions: dict[Op, Callable[[Call, TensorType], Expr | None]] = {
            Op.get("nn.layer_norm"): layer_norm_to_arithmetic,
            Op.get("nn.instance_norm"): instance_norm_to_arithmetic,
            Op.get("nn.l2_normalize"): l2_normalize_to_arithmetic,
        }

    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        expand = self.expansions.get(pre.op)
        if expand is None:
            return post
        # The type comes from the original call: the rewritten data has none yet.
        out = expand(post, _data_type(pre))
        return post if out is None else out

    def rewrite_tuple_getitem(self, pre: TupleGetItem, post: Expr) -> Expr:
        if post.index != 0:
            return post
        call = post.tuple_value
        if type(call) is not Call:
            return post
        if call.op is self.batch_norm:
            # The rank comes from the original call: the rewritten data has no type yet.
            return batch_norm_to_arithmetic(call, _data_type(pre.tuple_value))
        if call.op is self.dropout:
            return call.args[0]
        return post


def simplify_inference(expr: Expr) -> Expr:
    """``expr`` with batch_norm, dropout, layer_norm, instance_norm and l2_normalize
    rewritten for inference.

    ``expr`` must be typed (InferType): the data of each rewritten call needs
    its ``checked_type``.
    """
    return _InferenceSimplifier().visit(expr)


def _simplify_inference_factory() -> Callable[[Function, IRModule, object], Function]:
    """SimplifyInference's transformation: the manifest's factory.

    The pass is :data:`SimplifyInference`.
    """

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return simplify_inference(func)

    return transform


#: The SimplifyInference pass, the one ``relay.transform.SimplifyInference`` builds;
#: everything about it is declared in relaypass-plugin.toml.
SimplifyInference = pass_constructor("SimplifyInference")
