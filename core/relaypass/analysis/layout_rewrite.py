"""Rewriting a function's operators into other layouts: what ConvertLayout and AlterOpLayout share.

This is Relay's ``transform_layout.h`` with ``ForwardRewrite``.  Both passes
walk the function children first.  At each operator call, a pass-specific
hook (:class:`LayoutRewriter`'s ``call_with_new_layouts``) may replace the
call by one in other layouts (ConvertLayout: the desired layouts; AlterOpLayout:
what ``FTVMAlterOpLayout`` says), and every operator's ``FInferCorrectLayout``
(:mod:`relaypass.op.infer_layout_utils`) is asked twice: which layouts it
takes and gives as the program stands, and which it takes and gives once its
inputs arrive in their producers' new layouts.  A ``layout_transform`` is
inserted where an input's layout differs from the one wanted (an
``expand_dims`` first for a broadcast operand of lower rank).  A result
remembers its original and its new layout, so the next operator can follow
it; wherever a result is used by something that does not follow (a function
result, an operator without a layout rule, a let binding), it is transformed
back to its original layout.  The same transform of the same value is built
once, so two consumers share it, and two inverse transforms never meet: the
second operator of a chain follows the first instead of transforming back.

The walk is the mixed-mode mutator's, so no chain is too long.  A result in
a new layout is first represented by a marker call (an operator no program
can name) that knows both layouts; a second walk replaces every marker left
by its value in the original layout.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..errors import RelayPassError
from ..functor import MixedModeMutator
from ..ir.attrs import Attrs
from ..ir.expr import Call, Expr, Function, Tuple, TupleGetItem
from ..ir.op import Op
from ..ir.op_hooks import ALTER_OP_LAYOUT, INFER_CORRECT_LAYOUT
from ..ir.summary import short_text
from ..ir.types import Any as AnyDim
from ..ir.types import TensorType, TupleType, Type
from ..op.data_layout import Layout
from ..op.infer_layout_utils import InferCorrectLayoutOutput
from ..op.transform import expand_dims, layout_transform

__all__ = ["LayoutRewriteError", "LayoutRewriter", "argument_types"]

#: ``call_with_new_layouts(ref_call, new_attrs, new_args) -> Call``: the pass's choice of call.
CallWithNewLayouts = Callable[[Call, Any, list], Call]

# Marks a result in a new layout until every use of it is settled; never leaves the rewriter.
_MARKER = Op("relaypass.layout_rewrite.marker", 1, None, "a value in a new layout")
_LAYOUT_TRANSFORM = Op.get("layout_transform")


class LayoutRewriteError(RelayPassError):
    """A layout hook answered something a layout pass cannot use."""


def argument_types(call: Call) -> list[Type]:
    """The types of ``call``'s arguments, a tuple argument's fields one by one (Relay's ``tinfos``)."""
    out: list[Type] = []
    for arg in call.args:
        ty = arg.checked_type
        out.extend(ty.fields if isinstance(ty, TupleType) else (ty,))
    return out


class LayoutRewriter(MixedModeMutator):
    """Rewrites one function (``rewrite``), with the pass's ``call_with_new_layouts``.

    ``hook`` names the operator attribute behind ``call_with_new_layouts``, for
    the error when what it gives is not a call.
    """

    def __init__(self, call_with_new_layouts: CallWithNewLayouts, hook: str):
        super().__init__()
        self.call_with_new_layouts = call_with_new_layouts
        self.hook = hook
        #: marker call -> (value, old layout, new layout)
        self.markers: dict[Call, tuple[Expr, Layout | None, Layout | None]] = {}
        self._transforms: dict[tuple[Expr, str, str], Expr] = {}

    def rewrite(self, func: Function) -> Function:
        """``func`` with its operators in their new layouts and transforms where layouts meet."""
        return _Realizer(self).visit(self.visit(func))

    # --- layout transforms -----------------------------------------------------------------------

    def transform(self, raw: Expr, src: Layout | None, dst: Layout | None) -> Expr:
        """``raw`` (in layout ``src``) in layout ``dst``; built once per value and pair of layouts."""
        if src == dst:
            return raw
        if src is None or dst is None:
            raise LayoutRewriteError(
                f"cannot transform {short_text(raw)} from layout {_name(src)} to {_name(dst)}: "
                f"a layout rule left a layout unknown")
        key = (raw, src.name, dst.name)
        out = self._transforms.get(key)
        if out is None:
            out = self._transforms[key] = self._build_transform(raw, src, dst)
        return out

    @staticmethod
    def _build_transform(raw: Expr, src: Layout, dst: Layout) -> Expr:
        if (type(raw) is Call and raw.op is _LAYOUT_TRANSFORM and raw.attrs.src_layout == dst.name
                and raw.attrs.dst_layout == src.name):
            return raw.args[0]  # undoes a layout_transform of the program: no round trip
        expr = raw
        if src.ndim_primal < dst.ndim_primal:
            # A broadcast operand of lower rank: a single value (every extent 1, as Relay's
            # IsScalar) broadcasts as it is, anything else gets dst's missing axes in front,
            # then moves.
            ty = raw._checked_type
            if isinstance(ty, TensorType) and all(type(d) is not AnyDim and d == 1 for d in ty.shape):
                return raw
            expr = expand_dims(expr, 0, dst.ndim_primal - src.ndim_primal)
            src = src.expand_primal(dst)
            if src == dst:
                return expr
        if sorted(a for a, f in src.axes if f is None) != sorted(a for a, f in dst.axes if f is None):
            raise LayoutRewriteError(
                f"cannot insert a layout_transform from {src.name!r} to {dst.name!r} for "
                f"{short_text(raw)}: the layouts have different axes")
        return layout_transform(expr, src.name, dst.name)

    def _mark(self, value: Expr, old: Layout | None, new: Layout | None) -> Call:
        marker = Call(_MARKER, (value,))
        self.markers[marker] = (value, old, new)
        return marker

    # --- the walk --------------------------------------------------------------------------------

    def visit_tuple_getitem(self, tgi: TupleGetItem) -> Expr:
        # Relay's forward rewrite takes a field of a tuple expression directly, so that a
        # field in a new layout goes on in it.
        tup = self.visit(tgi.tuple_value)
        if type(tup) is Tuple:
            return tup.fields[tgi.index]
        if tup is tgi.tuple_value:
            return tgi
        return TupleGetItem(tup, tgi.index, tgi.span)

    def visit_call(self, call: Call) -> Expr:
        op = self.visit(call.op)
        args = [self.visit(arg) for arg in call.args]
        if op is _LAYOUT_TRANSFORM and args[0] in self.markers:
            # A layout_transform of the program, on a value the pass moved to where the
            # program then moves it: the value as it is, not a round trip.  (Between other
            # layouts the value goes back and the program's transform stays, as in Relay.)
            value, old, new = self.markers[args[0]]
            if (old is not None and new is not None and old.name == call.attrs.src_layout
                    and new.name == call.attrs.dst_layout):
                return value
        if type(op) is Op:
            out = self._rewrite_call(call, args)
            if out is not None:
                return out
        if op is call.op and all(a is b for a, b in zip(args, call.args)):
            return call
        return Call(op, args, call.attrs, call.type_args, call.span)

    def _rewrite_call(self, ref: Call, new_args: list[Expr]) -> Expr | None:
        """Relay's LayoutRewriter for one operator call; None keeps the call in its layouts."""
        old_prd: list[Layout | None] = []
        new_prd: list[Layout | None] = []

        def unwrap(arg: Expr) -> Expr:
            info = self.markers.get(arg) if type(arg) is Call else None
            if info is None:
                old_prd.append(None)
                new_prd.append(None)
                return arg
            old_prd.append(info[1])
            new_prd.append(info[2])
            return info[0]

        args: list[Expr] = []
        for arg in new_args:
            if type(arg) is Tuple:
                fields = [unwrap(f) for f in arg.fields]
                same = all(a is b for a, b in zip(fields, arg.fields))
                args.append(arg if same else Tuple(fields, arg.span))
            else:
                args.append(unwrap(arg))
        op: Op = ref.op
        infer = op.get_attr(INFER_CORRECT_LAYOUT)
        if infer is None and op.get_attr(ALTER_OP_LAYOUT) is not None:
            # Relay lets an operator with an alter hook and no layout rule handle its
            # inputs as they come.
            return self._checked_call(ref, self.call_with_new_layouts(ref, ref.attrs, args))
        types = [arg.checked_type for arg in ref.args]
        first = _infer(op, ref.attrs, None, old_prd, types)
        if first is None:
            return None
        old_cur, old_out = first.input_layouts, first.output_layouts
        ref_type = ref.checked_type
        if len(old_cur) != len(new_prd):
            raise LayoutRewriteError(
                f"the FInferCorrectLayout function of {op.name!r} gave {len(old_cur)} input "
                f"layouts for {len(new_prd)} inputs")
        outputs = ref_type.fields if isinstance(ref_type, TupleType) else (ref_type,)
        if not (_describes(old_out, outputs) and _describes(old_cur, argument_types(ref))):
            # A rule that misses an output, or gives a 4-D tensor a 2-D layout (Relay's NC
            # for a dense of 4-D data), cannot be followed: the call keeps its layouts.
            return None
        new_prd_inferred = [n if n is not None else c for n, c in zip(new_prd, old_cur)]
        old_prd_inferred = [o if o is not None else c for o, c in zip(old_prd, old_cur)]
        new_call = self._checked_call(ref, self.call_with_new_layouts(ref, first.new_attrs, args))
        if type(new_call.op) is not Op:
            return None
        second = _infer(new_call.op, new_call.attrs, new_prd_inferred, old_prd_inferred, types)
        if second is None:
            return None
        new_cur, new_out = second.input_layouts, second.output_layouts
        if len(new_out) != len(old_out) or len(new_cur) != len(new_prd):
            raise LayoutRewriteError(
                f"the FInferCorrectLayout function of {new_call.op.name!r} changed the number of "
                f"inputs or outputs between its two answers")
        pt = 0

        def move(arg: Expr) -> Expr:
            nonlocal pt
            o_prd, o_cur, n_prd, n_cur = old_prd[pt], old_cur[pt], new_prd[pt], new_cur[pt]
            pt += 1
            if o_cur == o_prd:  # the producer's change and ours compose into one transform
                return self.transform(arg, n_prd, n_cur)
            if o_prd is not None:
                arg = self.transform(arg, n_prd, o_prd)
            return self.transform(arg, o_cur, n_cur)

        moved: list[Expr] = []
        for arg in new_call.args:
            if type(arg) is Tuple:
                moved.append(Tuple([move(f) for f in arg.fields], arg.span))
            else:
                moved.append(move(arg))
        if pt != len(new_prd):
            raise LayoutRewriteError(
                f"the call that replaced {op.name!r} takes {pt} inputs where the original took "
                f"{len(new_prd)}; a layout hook must keep the inputs")
        attrs = second.new_attrs
        if isinstance(ref_type, TupleType):
            whole = Call(new_call.op, moved, attrs)
            return Tuple([self._mark(TupleGetItem(whole, i), o, n)
                          for i, (o, n) in enumerate(zip(old_out, new_out))])
        return self._mark(Call(new_call.op, moved, attrs, None, ref.span), old_out[0], new_out[0])

    def _checked_call(self, ref: Call, value: Any) -> Call:
        if not isinstance(value, Call):
            raise LayoutRewriteError(
                f"the {self.hook} function of {ref.op.name!r} returned {type(value).__name__}; "
                f"it must return a call (or None to keep the call)")
        return value


def _describes(layouts: Sequence[Layout], types: Sequence[Type]) -> bool:
    """Whether there is a layout for each type, with as many axes as each tensor."""
    return len(layouts) == len(types) and all(
        not isinstance(t, TensorType) or len(x) == len(t.shape) for x, t in zip(layouts, types))


def _name(x: Layout | None) -> str:
    return "(unknown)" if x is None else repr(x.name)


def _infer(op: Op, attrs: Attrs | None, new: Sequence[Layout | None] | None,
           old: Sequence[Layout | None], types: Sequence[Type]) -> InferCorrectLayoutOutput | None:
    """The operator's layout rule's answer; None when it has none or leaves a layout unknown."""
    rule = op.get_attr(INFER_CORRECT_LAYOUT)
    if rule is None:
        return None
    out = rule(attrs, None if new is None else list(new), list(old), list(types))
    if not isinstance(out, InferCorrectLayoutOutput):
        raise LayoutRewriteError(
            f"the FInferCorrectLayout function of {op.name!r} returned {type(out).__name__}; it "
            f"must return an InferCorrectLayoutOutput(input_layouts, output_layouts, new_attrs)")
    if any(x is None for x in out.input_layouts) or any(x is None for x in out.output_layouts):
        return None
    return out


class _Realizer(MixedModeMutator):
    """Replaces every marker left by its value transformed back to the original layout."""

    def __init__(self, rewriter: LayoutRewriter):
        super().__init__()
        self.rewriter = rewriter

    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        if pre.op is not _MARKER:
            return post
        _, old, new = self.rewriter.markers[pre]
        return self.rewriter.transform(post.args[0], new, old)
