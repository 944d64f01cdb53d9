"""FoldScaleAxis: fold per-channel multiplications into the weights of conv2d and dense.

After SimplifyInference a batch norm is ``x * scale + shift`` with one scale
per channel.  When a convolution (or dense layer) consumes or produces that
channel axis, the multiplication can move into its weight, where FoldConstant
then folds it away: one elementwise pass over the activation less per layer.
This is Relay's ``fold_scale_axis.cc``, decision for decision, so that the
result matches Relay's structurally:

**Backward** (``BackwardFoldScaleAxis``): ``multiply(conv2d(x, w), s)`` with
``s`` constant along the output-channel axis becomes ``conv2d(x, w * s')``.
A first walk, children first, records on every call whose value could
absorb such a scale the axes it could take (a "message"): conv2d and dense
can (their output-channel axis); relu and leaky_relu pass their input's
message on, asking for a non-negative scale; add, subtract and bias_add pass
it on when the other operand broadcasts along those axes (the other operand
is then multiplied by the scale too).  Only a call used exactly once carries
a message.  The rewrite then replaces each multiply whose operand has a
message and whose other operand matches those axes (and is a constant of
non-negative values where a relu asked for that) by that operand rewritten
with the scale pushed into it.

**Forward** (``ForwardFoldScaleAxis``): ``conv2d(multiply(x, s), w)`` with
``s`` along the input-channel axis becomes ``conv2d(x, w * s')``.  The
messages now go from consumers to producers (conv2d and dense ask for their
input-channel axis; relu, add and subtract pass the request on), a node's
message being the intersection of its consumers' requests, so one consumer
that cannot take a scale stops the fold.  The rewrite carries a scaled value
(the value, the axes, the scale) forward from the multiply to the consumer
that absorbs it; an add or subtract on the way divides its other operand by
the scale, which it does only for a constant scale without zeros (Relay
divides by any scale, and a zero, or a variable that holds one, turns the
result into infinities; here the scale is multiplied back before the add).  Tuples, lets, ifs and function bodies stop every message.

``FoldScaleAxis`` is the two followed by FoldConstant, as in Relay.  Both
walks and both rewrites run without recursion, so any depth of chain works.
Where Relay would abort on an inconsistent request (an axis set that became
empty, a scaled value no consumer absorbs), the pass keeps the program as
it was at that point instead: it multiplies the scale back.

Dense layers take the scale on their data's last axis (forward) or their
output's last axis (backward); Relay says axis 1, which is the same for 2-D
data and wrong for the 3-D inputs transformers give dense.

Layouts: simple ones (``NCHW``/``OIHW`` and their permutations) and Relay's
blocked ones (``NCHW4c`` with ``OIHW2i4o``) are handled as in Relay, for full
and depthwise convolutions; other grouped convolutions are left alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from relaypass.ir.expr import Call, Constant, Expr, Function, If, Let, Tuple, TupleGetItem
from relaypass.ir.fields import children, map_children
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.ir.traversal import post_order
from relaypass.op import divide, expand_dims, multiply, repeat, reshape, squeeze
from relaypass.op.layout import Layout
from relaypass.transform import Pass, get_pass, pass_constructor

__all__ = ["BackwardFoldScaleAxis", "FoldScaleAxis", "ForwardFoldScaleAxis",
           "backward_fold_scale_axis", "forward_fold_scale_axis"]


@dataclass(frozen=True)
class _Message:
    """The axes along which a value may be scaled, and whether the scale must be non-negative."""

    axes: tuple[int, ...]
    require_positive: bool


def _intersect(lhs: _Message | None, rhs: _Message | None) -> _Message | None:
    """Both requests at once: the common axes; None (no fold) when either is None or none is common."""
    if lhs is None or rhs is None:
        return None
    axes = tuple(sorted(set(lhs.axes) & set(rhs.axes)))
    return _Message(axes, lhs.require_positive or rhs.require_positive) if axes else None


# --- shapes and scales -------------------------------------------------------------------
def _shape(expr: Expr) -> tuple:
    return tuple(expr.checked_type.shape)


def _match_broadcast_to_left_axes(lhs_shape: tuple, rhs_shape: tuple, lhs_axes: Sequence[int],
                                  rhs: Expr | None = None) -> tuple[bool, Expr | None]:
    """Whether ``rhs`` broadcast against ``lhs`` varies only along ``lhs_axes`` (Relay's check).

    With ``rhs`` given, also returns it reshaped to hold one value per
    position of those axes: its unit dimensions squeezed, or a scalar
    expanded and repeated to the axes' extents.
    """
    if len(lhs_shape) < len(rhs_shape):
        return False, rhs
    if not rhs_shape and rhs is not None and lhs_axes:
        rhs = expand_dims(rhs, 0, len(lhs_axes))
        for i, axis in enumerate(lhs_axes):
            rhs = repeat(rhs, int(lhs_shape[axis]), i)
        return True, rhs
    base = len(lhs_shape) - len(rhs_shape)
    wanted = set(lhs_axes)
    unit_axes = []
    for i, extent in enumerate(lhs_shape):
        if i in wanted:
            if i < base or extent != rhs_shape[i - base]:
                return False, rhs
        elif i >= base:
            if rhs_shape[i - base] != 1:
                return False, rhs
            unit_axes.append(i - base)
    if rhs is not None and unit_axes:
        rhs = squeeze(rhs, unit_axes)
    return True, rhs


def _expand_to_axes(scale: Expr, ndim: int, axes: Sequence[int]) -> Expr:
    """``scale`` (one dimension per axis) with unit dimensions added so it broadcasts to rank ``ndim``."""
    for i in range(len(axes), 0, -1):
        if i == len(axes):
            pad = ndim - axes[i - 1] - 1
        else:
            pad = axes[i] - axes[i - 1]
        if pad > 0:
            scale = expand_dims(scale, i, pad)
    return scale


def _reshape_to_axes(scale: Expr, shape: tuple, axes: Sequence[int]) -> Expr | None:
    """``scale`` reshaped to ``shape``'s extents on ``axes`` and 1 elsewhere; None for a non-static extent."""
    wanted = set(axes)
    new_shape = []
    for i, extent in enumerate(shape):
        if i in wanted:
            if not isinstance(extent, (int, np.integer)):
                return None
            new_shape.append(int(extent))
        else:
            new_shape.append(1)
    return reshape(scale, new_shape)


def _scale_for(scale: Expr, shape: tuple, axes: Sequence[int]) -> Expr | None:
    """``scale`` shaped to broadcast against a tensor of ``shape`` along ``axes``."""
    if len(axes) > 1:
        return _reshape_to_axes(scale, shape, axes)
    return _expand_to_axes(scale, len(shape), axes)


_PEELED = ("expand_dims", "reshape", "transpose", "squeeze", "repeat")
_NON_NEGATIVE_DTYPES = ("float32", "float64", "int8", "int32", "uint8", "uint32")


def _is_all_positive_constant(expr: Expr) -> bool:
    """Whether ``expr`` is a constant (possibly reshaped) of values that are all >= 0 (Relay's test)."""
    while type(expr) is Call and isinstance(expr.op, Op) and expr.op.name in _PEELED:
        expr = expr.args[0]
    if type(expr) is not Constant:
        return False
    data = expr.data.numpy()
    return str(data.dtype) in _NON_NEGATIVE_DTYPES and bool((data >= 0).all())


def _is_nonzero_constant(expr: Expr) -> bool:
    """Whether ``expr`` is a constant (possibly reshaped) with no zero: one an add may divide by."""
    while type(expr) is Call and isinstance(expr.op, Op) and expr.op.name in _PEELED:
        expr = expr.args[0]
    return type(expr) is Constant and bool((expr.data.numpy() != 0).all())


# --- convolution layouts ------------------------------------------------------------------
@dataclass(frozen=True)
class _ConvAxes:
    """Where the channels are in a convolution's layouts (-1 where absent)."""

    c_big: int
    c_small: int
    o_big: int
    o_small: int
    i_big: int
    i_small: int
    kernel_ndim: int
    depthwise: bool
    foldable: bool  # full or depthwise convolution, in a simple or a fully blocked layout


def _conv_axes(call: Call, channel_layout: str) -> _ConvAxes:
    op_name = call.op.name
    attrs = call.attrs
    channels = Layout(channel_layout, op_name, "layout")
    kernel = Layout(attrs.kernel_layout, op_name, "kernel_layout")
    c_big, c_small = channels.index("C"), channels.index("c")
    o_big, o_small = kernel.index("O"), kernel.index("o")
    i_big, i_small = kernel.index("I"), kernel.index("i")
    wshape = _shape(call.args[1])

    def extent(big: int, small: int) -> object:
        if big < 0:
            return None
        value = wshape[big]
        return value * wshape[small] if small >= 0 else value

    depthwise = extent(o_big, o_small) == attrs.groups and extent(i_big, i_small) == 1
    simple = o_small < 0 and i_small < 0 and c_small < 0
    blocked = o_small >= 0 and i_small >= 0 and c_small >= 0
    foldable = c_big >= 0 and (attrs.groups == 1 or depthwise) and (simple or blocked)
    return _ConvAxes(c_big, c_small, o_big, o_small, i_big, i_small, len(kernel), depthwise, foldable)


def _channel_message(axes: _ConvAxes) -> _Message:
    return _Message((axes.c_big,) if axes.c_small < 0 else (axes.c_big, axes.c_small), False)


def _weight_scale(scale: Expr, weight_shape: tuple, axes: _ConvAxes, big: int, small: int) -> Expr | None:
    """The scale shaped for the weight's ``big`` (and, blocked, ``small``) channel axis."""
    if axes.o_small < 0 and axes.i_small < 0:
        return _expand_to_axes(scale, axes.kernel_ndim, (big,))
    return _reshape_to_axes(scale, weight_shape, (big, small))


_CONVS = ("nn.conv2d", "nn.conv3d")
_RELUS = ("nn.relu", "nn.leaky_relu")
_ADD_SUB = ("add", "subtract")


def _op_name(call: Call) -> str:
    op = call.op
    return op.name if isinstance(op, Op) else ""


def _rebuild(call: Call, args: Sequence[Expr]) -> Call:
    return Call(call.op, list(args), call.attrs, call.type_args)


# --- forward ------------------------------------------------------------------------------
def _forward_request(call: Call, out: _Message | None) -> list[_Message | None]:
    """The messages a call sends to its arguments, given the one its consumers sent it."""
    name = _op_name(call)
    none: list[_Message | None] = [None] * len(call.args)
    if name in _RELUS:
        return [_Message(out.axes, True) if out is not None else None]
    if name in _ADD_SUB:
        if out is not None:
            lhs, rhs = _shape(call.args[0]), _shape(call.args[1])
            if _match_broadcast_to_left_axes(lhs, rhs, out.axes)[0]:
                return [out, None]
            if _match_broadcast_to_left_axes(rhs, lhs, out.axes)[0]:
                return [None, out]
        return none
    if name in _CONVS:
        axes = _conv_axes(call, call.attrs.data_layout)
        return [_channel_message(axes), None] if axes.foldable else none
    if name == "nn.dense":
        # The reduced axis: the last (Relay says axis 1, the same for 2-D data; a 3-D input's
        # axis 1 would not be the one the weight multiplies).
        return [_Message((len(_shape(call.args[0])) - 1,), False), None]
    return none


def _forward_messages(root: Expr) -> dict[Expr, _Message | None]:
    """Each node's message: the intersection of what its consumers request (Relay's ForwardPrep)."""
    messages: dict[Expr, _Message | None] = {root: None}

    def update(node: Expr, message: _Message | None) -> None:
        messages[node] = _intersect(messages[node], message) if node in messages else message

    # Children before parents, so in reverse every consumer has spoken before its producer.
    for node in reversed(post_order(root)):
        kind = type(node)
        if kind is Call:
            for arg, message in zip(node.args, _forward_request(node, messages.get(node))):
                update(arg, message)
        elif kind is Tuple:
            for field in node.fields:
                update(field, None)
        elif kind is If:
            for part in (node.cond, node.true_branch, node.false_branch):
                update(part, None)
        elif kind is Let:
            update(node.value, None)
            update(node.body, None)
        elif kind is Function:
            update(node.body, None)
    return messages


@dataclass(frozen=True)
class _Scaled:
    """A value still to be multiplied by ``scale`` along ``axes`` (Relay's ScaledExpr)."""

    value: Expr
    axes: tuple[int, ...]
    scale: Expr
    shape: tuple  # the shape of the scaled value, to multiply the scale back if nobody absorbs it


def _realize(post: Expr | _Scaled) -> Expr:
    if type(post) is not _Scaled:
        return post
    return multiply(post.value, _scale_for(post.scale, post.shape, post.axes))


def _forward_rewrite(call: Call, args: list, message: _Message | None) -> Expr | _Scaled | None:
    """Relay's FScaleAxisForwardRewrite for ``call`` over its rewritten ``args``; None: no rewrite."""
    name = _op_name(call)
    if name in _RELUS:
        (arg,) = args
        if type(arg) is not _Scaled:
            return None
        return _Scaled(_rebuild(call, [arg.value]), arg.axes, arg.scale, _shape(call))
    if name in _ADD_SUB:
        lhs, rhs = args
        scaled = lhs if type(lhs) is _Scaled else rhs
        if type(scaled) is _Scaled and not _is_nonzero_constant(scaled.scale):
            return None  # ``x * s + b`` is ``(x + b / s) * s`` only where no ``s`` is zero
        if type(lhs) is _Scaled and type(rhs) is not _Scaled:
            scale = _scale_for(lhs.scale, _shape(call.args[0]), lhs.axes)
            if scale is None:
                return None
            return _Scaled(_rebuild(call, [lhs.value, divide(rhs, scale)]), lhs.axes, lhs.scale,
                           _shape(call))
        if type(rhs) is _Scaled and type(lhs) is not _Scaled:
            scale = _scale_for(rhs.scale, _shape(call.args[1]), rhs.axes)
            if scale is None:
                return None
            return _Scaled(_rebuild(call, [divide(lhs, scale), rhs.value]), rhs.axes, rhs.scale,
                           _shape(call))
        return None
    if name == "multiply":
        if message is None or any(type(a) is _Scaled for a in args):
            return None
        lhs, rhs = args
        lhs_shape, rhs_shape = _shape(call.args[0]), _shape(call.args[1])
        ok, scale = _match_broadcast_to_left_axes(lhs_shape, rhs_shape, message.axes, rhs)
        if ok and (not message.require_positive or _is_all_positive_constant(scale)):
            return _Scaled(lhs, message.axes, scale, lhs_shape)
        ok, scale = _match_broadcast_to_left_axes(rhs_shape, lhs_shape, message.axes, lhs)
        if ok and (not message.require_positive or _is_all_positive_constant(scale)):
            return _Scaled(rhs, message.axes, scale, rhs_shape)
        return None
    if name in _CONVS:
        data, weight = args
        if type(data) is not _Scaled or type(weight) is _Scaled:
            return None
        axes = _conv_axes(call, call.attrs.data_layout)
        if not axes.foldable:
            return None
        big, small = (axes.o_big, axes.o_small) if axes.depthwise else (axes.i_big, axes.i_small)
        wscale = _weight_scale(data.scale, _shape(call.args[1]), axes, big, small)
        if wscale is None:
            return None
        return _rebuild(call, [data.value, multiply(weight, wscale)])
    if name == "nn.dense":
        data, weight = args
        if type(data) is not _Scaled or type(weight) is _Scaled:
            return None
        return _rebuild(call, [data.value, multiply(weight, data.scale)])
    return None


def forward_fold_scale_axis(func: Function) -> Function:
    """``func`` with input-channel scales folded into the convolutions and dense layers that follow."""
    messages = _forward_messages(func)
    if not any(m is not None for m in messages.values()):
        return func
    post: dict[Expr, Expr | _Scaled] = {}
    for node in post_order(func):
        kind = type(node)
        if kind is Call:
            args = [post[a] for a in node.args]
            new_op = _realize(post[node.op]) if type(node.op) is Function else node.op
            result = None
            if isinstance(new_op, Op):
                result = _forward_rewrite(node, args, messages.get(node))
            if result is None:
                realized = [_realize(a) for a in args]
                unchanged = new_op is node.op and all(r is a for r, a in zip(realized, node.args))
                result = node if unchanged else Call(new_op, realized, node.attrs, node.type_args,
                                                     node.span)
            post[node] = result
        elif kind is TupleGetItem:
            tup = post[node.tuple_value]
            if type(tup) is Tuple:  # Relay's forward rewriter projects literal tuples
                post[node] = tup.fields[node.index]
            else:
                post[node] = map_children(node, lambda k: _realize(post[k]))
        elif children(node):
            post[node] = map_children(node, lambda k: _realize(post[k]))
        else:
            post[node] = node
    return _realize(post[func])


# --- backward -----------------------------------------------------------------------------
def _use_counts(root: Expr) -> dict[Expr, int]:
    """How many times each node is used as an operand (the root once), as Relay's GetExprRefCount."""
    counts: dict[Expr, int] = {root: 1}
    for node in post_order(root):
        for kid in children(node):
            counts[kid] = counts.get(kid, 0) + 1
    return counts


def _backward_message(call: Call, inputs: list[_Message | None]) -> _Message | None:
    """Relay's FScaleAxisBackwardPrep: what scale the call's value could absorb."""
    name = _op_name(call)
    if name in _RELUS:
        return _Message(inputs[0].axes, True) if inputs[0] is not None else None
    if name in _ADD_SUB:
        lhs, rhs = _shape(call.args[0]), _shape(call.args[1])
        if inputs[0] is not None and _match_broadcast_to_left_axes(lhs, rhs, inputs[0].axes)[0]:
            return inputs[0]
        if inputs[1] is not None and _match_broadcast_to_left_axes(rhs, lhs, inputs[1].axes)[0]:
            return inputs[1]
        if (inputs[0] is not None and inputs[1] is not None
                and inputs[0].axes == inputs[1].axes and lhs == rhs):
            return inputs[0]
        return None
    if name in _CONVS:
        axes = _conv_axes(call, call.attrs.out_layout or call.attrs.data_layout)
        return _channel_message(axes) if axes.foldable else None
    if name == "nn.bias_add":
        message = inputs[0]
        if message is not None and message.axes == (call.attrs.axis,):
            return message
        return None
    if name == "nn.dense":
        return _Message((len(_shape(call)) - 1,), False)  # the units axis: last (Relay: 1)
    return None


def _backward_messages(root: Expr) -> dict[Expr, _Message]:
    """The message of every call used once whose value could absorb a scale (Relay's BackwardPrep)."""
    counts = _use_counts(root)
    messages: dict[Expr, _Message] = {}
    for node in post_order(root):
        if type(node) is not Call or counts.get(node) != 1 or not isinstance(node.op, Op):
            continue
        message = _backward_message(node, [messages.get(a) for a in node.args])
        if message is not None:
            messages[node] = message
    return messages


class _BackwardFolder:
    """Relay's BackwardTransformer: multiplies pushed down into what produced their operand."""

    def __init__(self, messages: dict[Expr, _Message]) -> None:
        self.messages = messages
        self.out: dict[Expr, Expr] = {}

    def fold(self, func: Function) -> Function:
        out = self.out
        for node in post_order(func):
            if type(node) is Call and _op_name(node) == "multiply":
                out[node] = self._multiply(node)
            elif children(node):
                out[node] = map_children(node, out.__getitem__)
            else:
                out[node] = node
        return out[func]

    def _multiply(self, call: Call) -> Expr:
        lhs, rhs = call.args
        lhs_message, rhs_message = self.messages.get(lhs), self.messages.get(rhs)
        lhs_shape, rhs_shape = _shape(lhs), _shape(rhs)
        if lhs_message is not None:
            ok, scale = _match_broadcast_to_left_axes(lhs_shape, rhs_shape, lhs_message.axes, rhs)
            if ok and (not lhs_message.require_positive or _is_all_positive_constant(scale)):
                return self._scaled(lhs, lhs_message, scale)
        elif rhs_message is not None:
            ok, scale = _match_broadcast_to_left_axes(rhs_shape, lhs_shape, rhs_message.axes, lhs)
            if ok and (not rhs_message.require_positive or _is_all_positive_constant(scale)):
                return self._scaled(rhs, rhs_message, scale)
        return map_children(call, self.out.__getitem__)

    def _plan(self, call: Call, message: _Message, scale: Expr
              ) -> tuple[list[Expr | None], Callable[[list[Expr]], Expr]] | None:
        """How ``call`` takes ``scale``: which arguments take it too (None: as they are), and the build.

        None when the call cannot take it after all (a shape that is not static).
        """
        name = _op_name(call)
        out = self.out
        if name in _RELUS:
            return [call.args[0]], lambda a: _rebuild(call, a)
        if name in _ADD_SUB:
            lhs, rhs = call.args
            lhs_scaled, rhs_scaled = lhs in self.messages, rhs in self.messages
            if lhs_scaled and rhs_scaled:
                return [lhs, rhs], lambda a: _rebuild(call, a)
            if lhs_scaled:
                other = _scale_for(scale, _shape(lhs), message.axes)
                if other is None:
                    return None
                return [lhs, None], lambda a: _rebuild(call, [a[0], multiply(out[rhs], other)])
            other = _scale_for(scale, _shape(rhs), message.axes)
            if other is None:
                return None
            return [None, rhs], lambda a: _rebuild(call, [multiply(out[lhs], other), a[1]])
        if name == "nn.bias_add":
            lhs, rhs = call.args
            return [lhs, None], lambda a: _rebuild(call, [a[0], multiply(out[rhs], scale)])
        data, weight = call.args
        if name in _CONVS:
            axes = _conv_axes(call, call.attrs.out_layout or call.attrs.data_layout)
            wscale = _weight_scale(scale, _shape(weight), axes, axes.o_big, axes.o_small)
        else:  # nn.dense
            wscale = _expand_to_axes(scale, 2, (0,))
        if wscale is None:
            return None
        return [None, None], lambda a: _rebuild(call, [out[data], multiply(out[weight], wscale)])

    def _scaled(self, expr: Expr, message: _Message, scale: Expr) -> Expr:
        """``expr`` rewritten to compute its value times ``scale`` along the message's axes.

        The scaled path goes down through relus, adds and bias_adds to the
        convolutions or dense layers that take the scale; it is walked with an
        explicit stack.  Every node on it is used once, so its plain rewrite
        is replaced, as Relay's memo is.
        """
        out = self.out
        # Frames: (call, plan, built arguments).  A call that cannot take the scale after
        # all is rebuilt as it was and multiplied (Relay keeps its plain rewrite there).
        stack: list[tuple[Call, tuple | None, list[Expr]]] = []
        node: Expr | None = expr
        result: Expr | None = None
        while True:
            if node is not None:
                plan = self._plan(node, message, scale)
                stack.append((node, plan, []))
                node = None
            call, plan, built = stack[-1]
            if result is not None:
                built.append(result)
                result = None
            if plan is None:
                stack.pop()
                result = multiply(out[call], _scale_for(scale, _shape(call), message.axes))
            else:
                targets, build = plan
                while len(built) < len(targets) and targets[len(built)] is None:
                    built.append(None)
                if len(built) < len(targets):
                    node = targets[len(built)]
                    continue
                stack.pop()
                result = out[call] = build(built)
            if not stack:
                return result


def backward_fold_scale_axis(func: Function) -> Function:
    """``func`` with output-channel scales folded into the convolutions and dense layers before them."""
    messages = _backward_messages(func)
    if not messages:
        return func
    return _BackwardFolder(messages).fold(func)


def _forward_factory() -> Callable[[Function, IRModule, object], Function]:
    """ForwardFoldScaleAxis's transformation: the manifest's factory."""

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return forward_fold_scale_axis(func)

    return transform


def _backward_factory() -> Callable[[Function, IRModule, object], Function]:
    """BackwardFoldScaleAxis's transformation: the manifest's factory."""

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return backward_fold_scale_axis(func)

    return transform


def _fold_scale_axis_factory() -> list[Pass]:
    """FoldScaleAxis's members: backward, then forward, then FoldConstant, as Relay composes it."""
    return [get_pass("BackwardFoldScaleAxis"), get_pass("ForwardFoldScaleAxis"),
            get_pass("FoldConstant")]


#: The passes ``relay.transform.ForwardFoldScaleAxis()``, ``BackwardFoldScaleAxis()`` and
#: ``FoldScaleAxis()`` build; their metadata is in relaypass-plugin.toml.
ForwardFoldScaleAxis = pass_constructor("ForwardFoldScaleAxis")
BackwardFoldScaleAxis = pass_constructor("BackwardFoldScaleAxis")
FoldScaleAxis = pass_constructor("FoldScaleAxis")
