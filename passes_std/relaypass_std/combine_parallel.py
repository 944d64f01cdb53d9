"""CombineParallelConv2D, CombineParallelDense, CombineParallelBatchMatmul: one big op for many small.

Models often apply several convolutions (or dense layers, or batch matmuls)
to the same input side by side: Inception's branches, the query/key/value
projections of attention.  One call over the concatenated weights does the
same work with one kernel launch; slices of its result replace the old
outputs.  This is Relay's ``combine_parallel_*.cc``, decision for decision:

* **Branches.**  For every value, the calls of the operator that take it as
  their first argument (and are supported: conv2d without groups) each start
  a *branch*, extended through the call's only consumer as long as that is an
  elementwise or broadcast operator.  Branches of one input are grouped when
  their operators are compatible (same attributes and kernel size for conv2d,
  same output dtype and reduction size for dense, ...); a group with at least
  ``min_num_branches`` branches is combined.
* **Combining.**  The combined call takes the concatenated weights (or, for
  dense with ``to_batch``, the stacked inputs and weights of a batch_matmul).
  Level by level the branches' following operators are combined too while
  they are the same operator with equal attributes, fed from the previous
  level, with compatible other operands (concatenated, or stacked); the last
  combined level's result is sliced back (``strided_slice`` in size mode, or
  ``split`` + ``squeeze``) and each slice replaces its branch's call there.

The substitution is done once for all groups, also inside the replacements,
as Relay's ExprSubst does, and without recursion.  The pass keeps Relay's
option names, defaults and opt_level (4); its PassInfo name is the manifest's
(Relay names the conv2d pass ``CombineParallelConv2d``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from relaypass.ir.expr import Call, Expr, Function, TupleGetItem
from relaypass.ir.fields import children, map_children
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op, OpPattern
from relaypass.ir.structural import structural_equal
from relaypass.ir.traversal import post_order
from relaypass.op import concatenate, expand_dims, repeat, split, squeeze, stack, strided_slice
from relaypass.op.layout import Layout
from relaypass.op.nn import batch_matmul
from relaypass.transform import pass_constructor
from relaypass.transform.errors import OptionError

__all__ = ["CombineParallelBatchMatmul", "CombineParallelConv2D", "CombineParallelDense",
           "combine_parallel"]

Branch = list[Call]
Group = list[Branch]


def _dims(expr: Expr) -> tuple:
    return tuple(expr.checked_type.shape)


def _dtype(expr: Expr) -> str:
    return str(expr.checked_type.dtype)


def _ops_equal(a: Call, b: Call) -> bool:
    return a.op is b.op and structural_equal(a.attrs, b.attrs) and len(a.args) == len(b.args)


class _Combiner:
    """Relay's ParallelOpCombiner: finding the groups, combining each level, slicing back.

    Subclasses say which calls are supported and compatible, how the first
    call is combined, how a later level's other operands are merged, and how
    the result is cut back into the branches.
    """

    op_name = ""

    def __init__(self, min_num_branches: int) -> None:
        self.op = Op.get(self.op_name)
        self.min_num_branches = min_num_branches

    # --- what subclasses decide -----------------------------------------------------------
    def supported(self, call: Call) -> bool:
        return True

    def compatible(self, a: Call, b: Call) -> bool:
        raise NotImplementedError

    def combined_op(self, group: Group) -> Call:
        raise NotImplementedError

    def arg_compatible(self, a: Call, b: Call, index: int) -> bool:
        raise NotImplementedError

    def combined_following(self, data: Expr, group: Group, depth: int, parent: int) -> Call:
        raise NotImplementedError

    def outputs(self, data: Expr, group: Group, depth: int) -> list[Expr]:
        """What replaces ``branch[depth]`` of each branch, in order."""
        raise NotImplementedError

    # --- the algorithm ----------------------------------------------------------------------
    def combine(self, func: Function) -> Function:
        subst: dict[Expr, Expr] = {}
        for group in self._groups(func):
            if len(group) >= self.min_num_branches:
                self._combine_group(group, subst)
        return _substitute(func, subst) if subst else func

    def _groups(self, root: Expr) -> list[Group]:
        consumers: dict[Expr, list[Call]] = {}
        roots: dict[Expr, None] = {}  # the inputs of supported calls, in the order met
        for node in post_order(root):
            if type(node) is not Call:
                continue
            if node.op is self.op and self.supported(node):
                roots.setdefault(node.args[0])
                consumers.setdefault(node.args[0], []).append(node)
            else:
                for arg in node.args:
                    consumers.setdefault(arg, []).append(node)
        groups: list[Group] = []
        for value in roots:
            first = len(groups)
            for call in consumers[value]:
                if call.op is not self.op:
                    continue
                branch = self._branch(call, consumers)
                for group in groups[first:]:
                    if self.compatible(call, group[0][0]):
                        group.append(branch)
                        break
                else:
                    groups.append([branch])
        return groups

    @staticmethod
    def _branch(call: Call, consumers: dict[Expr, list[Call]]) -> Branch:
        """``call`` and then its sole consumers while they are elementwise or broadcast operators."""
        branch = [call]
        following = consumers.get(call)
        while following is not None and len(following) == 1:
            nxt = following[0]
            if not isinstance(nxt.op, Op) or nxt.op.pattern > OpPattern.BROADCAST:
                break
            branch.append(nxt)
            following = consumers.get(nxt)
        return branch

    def _combine_group(self, group: Group, subst: dict[Expr, Expr]) -> None:
        combined: Expr = self.combined_op(group)
        depth = min(len(b) for b in group)
        level = 1
        while level < depth:
            call = group[0][level]
            parent = next(i for i, a in enumerate(call.args) if a is group[0][level - 1])
            if not self._level_combinable(group, level, parent):
                break
            combined = self.combined_following(combined, group, level, parent)
            level += 1
        for branch, out in zip(group, self.outputs(combined, group, level - 1)):
            subst[branch[level - 1]] = out

    def _level_combinable(self, group: Group, depth: int, parent: int) -> bool:
        call = group[0][depth]
        for branch in group[1:]:
            other = branch[depth]
            if not _ops_equal(other, call) or other.args[parent] is not branch[depth - 1]:
                return False
            for i in range(len(call.args)):
                if i != parent and not self.arg_compatible(call, other, i):
                    return False
        return True


def _channel_slices(data: Expr, sizes: Sequence[int], axis: int) -> list[Expr]:
    """``data`` cut along ``axis`` into consecutive pieces of ``sizes`` (strided_slice, size mode)."""
    out = []
    start = 0
    for size in sizes:
        begin = [0] * axis + [start]
        end = [-1] * axis + [size]
        out.append(strided_slice(data, begin=begin, end=end, strides=[1] * (axis + 1),
                                 slice_mode="size"))
        start += size
    return out


class _Conv2DCombiner(_Combiner):
    """Relay's ParallelConv2DCombiner: concatenated filters, slices along the output channels."""

    op_name = "nn.conv2d"

    def supported(self, call: Call) -> bool:
        return call.attrs.groups == 1

    @staticmethod
    def _kernel_hw(call: Call) -> tuple:
        layout = Layout(call.attrs.kernel_layout, "nn.conv2d", "kernel_layout")
        shape = _dims(call.args[1])
        return shape[layout.index("H")], shape[layout.index("W")]

    def compatible(self, a: Call, b: Call) -> bool:
        x, y = a.attrs, b.attrs
        same = all(structural_equal(getattr(x, f), getattr(y, f)) for f in (
            "strides", "padding", "dilation", "groups", "data_layout", "kernel_layout",
            "out_dtype", "out_layout"))
        return same and self._kernel_hw(a) == self._kernel_hw(b)

    @staticmethod
    def _filters(call: Call) -> int:
        return int(_dims(call.args[1])[call.attrs.kernel_layout.index("O")])

    def combined_op(self, group: Group) -> Call:
        first = group[0][0]
        attrs = first.attrs
        weight = concatenate([b[0].args[1] for b in group], axis=attrs.kernel_layout.index("O"))
        channels = sum(self._filters(b[0]) for b in group)
        self.channel_pos = (attrs.out_layout or attrs.data_layout).index("C")
        return Call(first.op, [first.args[0], weight],
                    attrs.with_fields(channels=channels), [])

    def arg_compatible(self, a: Call, b: Call, index: int) -> bool:
        ta, tb = a.args[index].checked_type, b.args[index].checked_type
        if str(ta.dtype) != str(tb.dtype) or len(ta.shape) != len(tb.shape):
            return False
        pos = self.channel_pos - len(a.checked_type.shape) + len(ta.shape)
        if pos < 0 or ta.shape[pos] != a.checked_type.shape[self.channel_pos] \
                or tb.shape[pos] != b.checked_type.shape[self.channel_pos]:
            return False
        return all(ta.shape[i] == tb.shape[i] for i in range(len(ta.shape)) if i != pos)

    def combined_following(self, data: Expr, group: Group, depth: int, parent: int) -> Call:
        call = group[0][depth]
        ndim = len(call.checked_type.shape)
        args: list[Expr] = []
        for i, arg in enumerate(call.args):
            if i == parent:
                args.append(data)
                continue
            axis = self.channel_pos - ndim + len(_dims(arg))
            args.append(concatenate([b[depth].args[i] for b in group], axis=axis))
        return Call(call.op, args, call.attrs, [])

    def outputs(self, data: Expr, group: Group, depth: int) -> list[Expr]:
        return _channel_slices(data, [self._filters(b[0]) for b in group], self.channel_pos)


class _DenseCombiner(_Combiner):
    """Relay's ParallelDenseToDenseCombiner: concatenated units, slices along the last axis."""

    op_name = "nn.dense"

    def compatible(self, a: Call, b: Call) -> bool:
        return (a.attrs.out_dtype == b.attrs.out_dtype
                and _dims(a.args[1])[1] == _dims(b.args[1])[1])

    def combined_op(self, group: Group) -> Call:
        first = group[0][0]
        weight = concatenate([b[0].args[1] for b in group], axis=0)
        units = sum(int(_dims(b[0].args[1])[0]) for b in group)
        return Call(first.op, [first.args[0], weight],
                    first.attrs.with_fields(units=units), [])

    def arg_compatible(self, a: Call, b: Call, index: int) -> bool:
        ta, tb = a.args[index].checked_type, b.args[index].checked_type
        if str(ta.dtype) != str(tb.dtype) or len(ta.shape) != len(tb.shape):
            return False
        if len(a.checked_type.shape) < len(ta.shape) or len(b.checked_type.shape) < len(tb.shape):
            return False
        return all(ta.shape[i] == tb.shape[i] for i in range(len(ta.shape) - 1))

    def combined_following(self, data: Expr, group: Group, depth: int, parent: int) -> Call:
        call = group[0][depth]
        args: list[Expr] = []
        for i, arg in enumerate(call.args):
            if i == parent:
                args.append(data)
                continue
            ndim = len(_dims(arg))
            axis = 0 if ndim == 0 else ndim - 1
            pieces = []
            for branch in group:
                out_dim = int(_dims(branch[depth].args[parent])[-1])
                piece = branch[depth].args[i]
                widen = ndim == 0
                if widen:
                    piece = expand_dims(piece, -1, 1)
                elif out_dim > 1 and int(_dims(piece)[-1]) == 1:
                    widen = True
                if widen:
                    piece = repeat(piece, out_dim, axis)
                pieces.append(piece)
            args.append(concatenate(pieces, axis=axis))
        return Call(call.op, args, call.attrs, [])

    def outputs(self, data: Expr, group: Group, depth: int) -> list[Expr]:
        out: list[Expr] = []
        start = 0
        for branch in group:
            shape = _dims(branch[depth])
            units = int(_dims(branch[0])[1])
            axis = max(i for i in range(len(shape)) if int(shape[i]) == units)
            begin, end = [0] * len(shape), [-1] * len(shape)
            begin[axis], end[axis] = start, units
            out.append(strided_slice(data, begin=begin, end=end, strides=[1] * len(shape),
                                     slice_mode="size"))
            start += units
        return out


class _DenseToBatchCombiner(_Combiner):
    """Relay's ParallelDenseToBatchCombiner: the denses stacked into one batch_matmul.

    Later levels stack their other operands too (a vector gets a leading unit
    axis first), and the result is split and squeezed back into the branches.
    """

    op_name = "nn.dense"

    def compatible(self, a: Call, b: Call) -> bool:
        return (a.attrs.out_dtype == b.attrs.out_dtype
                and _dims(a.args[1])[:2] == _dims(b.args[1])[:2])

    def combined_op(self, group: Group) -> Call:
        data, weight = (stack([b[0].args[i] for b in group], axis=0) for i in range(2))
        return batch_matmul(data, weight, group[0][0].attrs.out_dtype, False, True)

    def arg_compatible(self, a: Call, b: Call, index: int) -> bool:
        x, y = a.args[index], b.args[index]
        return _dtype(x) == _dtype(y) and _dims(x) == _dims(y)

    def combined_following(self, data: Expr, group: Group, depth: int, parent: int) -> Call:
        call = group[0][depth]
        args: list[Expr] = []
        for i in range(len(call.args)):
            if i == parent:
                args.append(data)
                continue
            pieces = [expand_dims(b[depth].args[i], 0, 1) if len(_dims(b[depth].args[i])) == 1
                      else b[depth].args[i] for b in group]
            args.append(stack(pieces, axis=0))
        return Call(call.op, args, call.attrs, [])

    def outputs(self, data: Expr, group: Group, depth: int) -> list[Expr]:
        parts = split(data, len(group), 0).astuple()
        return [squeeze(TupleGetItem(parts, i), [0]) for i in range(len(group))]


class _BatchMatmulCombiner(_Combiner):
    """Relay's ParallelBatchMatmulCombiner: weights concatenated along their row axis."""

    op_name = "nn.batch_matmul"

    def compatible(self, a: Call, b: Call) -> bool:
        x, y = a.attrs, b.attrs
        if (x.transpose_a, x.transpose_b, y.transpose_a, y.transpose_b) != (False, True, False, True):
            return False  # Relay combines only this form, for legacy reasons
        ra, rb = a.args[1].checked_type, b.args[1].checked_type
        return (str(ra.dtype) == str(rb.dtype) and _dtype(a) == _dtype(b)
                and len(ra.shape) == 3 and len(rb.shape) == 3 and ra.shape[0] == rb.shape[0]
                and x.out_dtype == y.out_dtype)

    def combined_op(self, group: Group) -> Call:
        first = group[0][0]
        weight = concatenate([b[0].args[1] for b in group], axis=1)
        attrs = first.attrs
        return batch_matmul(first.args[0], weight, attrs.out_dtype, attrs.transpose_a,
                            attrs.transpose_b)

    def arg_compatible(self, a: Call, b: Call, index: int) -> bool:
        return True

    def combined_following(self, data: Expr, group: Group, depth: int, parent: int) -> Call:
        call = group[0][depth]
        args = [data if i == parent else concatenate([b[depth].args[i] for b in group], axis=-1)
                for i in range(len(call.args))]
        return Call(call.op, args, call.attrs, [])

    def outputs(self, data: Expr, group: Group, depth: int) -> list[Expr]:
        return _channel_slices(data, [int(_dims(b[0].args[1])[1]) for b in group], 2)


def _substitute(root: Expr, subst: dict[Expr, Expr]) -> Expr:
    """``root`` with every occurrence of a key of ``subst`` replaced, inside replacements too.

    Relay's ExprSubst: a key's replacement is itself rewritten, so a
    combined call whose input was another group's output reads that group's
    slice.  Explicit stack, each node rewritten once.
    """
    out: dict[Expr, Expr] = {}
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if node in out and not ready:
            continue
        target = subst.get(node, node)
        if ready:
            out[node] = map_children(target, out.__getitem__) if children(target) else target
            continue
        stack.append((node, True))
        stack.extend((kid, False) for kid in reversed(children(target)) if kid not in out)
    return out[root]


def combine_parallel(func: Function, combiner: _Combiner) -> Function:
    """``func`` with the parallel groups ``combiner`` finds combined."""
    return combiner.combine(func)


def _min_branches(value: Any, pass_name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OptionError(f"{pass_name}: min_num_branches must be a positive integer, "
                          f"got {type(value).__name__} {value!r}")
    return value


def _transformation_of(make: Callable[[], _Combiner]) -> Callable[[Function, IRModule, object], Function]:
    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return make().combine(func)

    return transform


def _conv2d_factory(*, min_num_branches: int) -> Callable[[Function, IRModule, object], Function]:
    """CombineParallelConv2D's transformation: the manifest's factory."""
    n = _min_branches(min_num_branches, "CombineParallelConv2D")
    return _transformation_of(lambda: _Conv2DCombiner(n))


def _dense_factory(*, min_num_branches: int, to_batch: bool
                   ) -> Callable[[Function, IRModule, object], Function]:
    """CombineParallelDense's transformation: the manifest's factory."""
    n = _min_branches(min_num_branches, "CombineParallelDense")
    if not isinstance(to_batch, bool):
        raise OptionError(f"CombineParallelDense: to_batch must be a bool, got "
                          f"{type(to_batch).__name__} {to_batch!r}")
    return _transformation_of(lambda: _DenseToBatchCombiner(n) if to_batch else _DenseCombiner(n))


def _batch_matmul_factory(*, min_num_branches: int
                          ) -> Callable[[Function, IRModule, object], Function]:
    """CombineParallelBatchMatmul's transformation: the manifest's factory."""
    n = _min_branches(min_num_branches, "CombineParallelBatchMatmul")
    return _transformation_of(lambda: _BatchMatmulCombiner(n))


#: The passes ``relay.transform.CombineParallelConv2D(min_num_branches=3)``,
#: ``CombineParallelDense(min_num_branches=3, to_batch=True)`` and
#: ``CombineParallelBatchMatmul(min_num_branches=3)`` build; metadata in relaypass-plugin.toml.
CombineParallelConv2D = pass_constructor("CombineParallelConv2D")
CombineParallelDense = pass_constructor("CombineParallelDense")
CombineParallelBatchMatmul = pass_constructor("CombineParallelBatchMatmul")
