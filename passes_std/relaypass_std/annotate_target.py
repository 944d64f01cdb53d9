"""AnnotateTarget: mark which external compiler handles each operator (Relay's BYOC step 1).

For every call the pass picks a target, the first of ``targets`` that
supports it, else ``"default"`` (the host), and wraps each argument in
``compiler_end(arg, <its producer's target>)`` then
``compiler_begin(..., <this call's target>)``; the function's result gets a
``compiler_end``.  MergeCompilerRegions then joins neighbouring regions of
one target and PartitionGraph lifts them into functions.  This is Relay's
``annotate_target.cc``, result for result:

* an operator ``op`` is supported by target ``t`` when
  ``register_op_attr(op, "target." + t, fn)`` registered a predicate and
  ``fn(call)`` is true (the call is typed: the pass requires InferType);
  without such an attribute, the operator support a plugin declares for
  ``t`` in its manifest (``[[target]]``, :mod:`relaypass.transform.targets`)
  answers the same question;
* a call of a composite function (attribute ``Composite`` = ``"t.name"``,
  what MergeComposite builds) is supported by ``t`` when ``t`` is a target;
  the pass does not step into composite functions;
* tuples, projections, lets and references (``include_non_call_ops``, the
  default) take the target their operands agree on, else ``"default"``; with
  ``include_non_call_ops=False`` they stay outside every region;
* running the pass again keeps the annotations of other targets and replaces
  those of ``"default"``.

Dataflow is rewritten post-order without recursion (MixedModeMutator) and
let chains in a loop, so any length works.  Relay ends the pass with type
inference; here the pass manager does that, as for every function pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from relaypass.functor import MixedModeMutator
from relaypass.ir.expr import (
    Call,
    Expr,
    Function,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from relaypass.ir.fields import with_fields
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.op.annotation import compiler_begin, compiler_end
from relaypass.transform import pass_constructor
from relaypass.transform.errors import OptionError
from relaypass.transform.targets import Predicate, operator_support

__all__ = ["AnnotateTarget", "annotate_target"]

#: The target of whatever no listed target supports (Relay's ``default_target``).
DEFAULT_TARGET = "default"

_BEGIN = Op.get("annotation.compiler_begin")
_END = Op.get("annotation.compiler_end")


def _is_annotation(expr: Expr, op: Op) -> bool:
    return type(expr) is Call and expr.op is op


class _TargetAnnotator(MixedModeMutator):
    """Relay's AnnotateTargetRewriter: targets chosen post-order, annotations on each edge.

    ``_target_of`` maps each rewritten expression that has been placed on a
    target to that target; the arguments of a later node read it to decide
    which ``compiler_end`` closes them.
    """

    def __init__(self, targets: Sequence[str]) -> None:
        super().__init__()
        self.targets = tuple(targets)
        self._target_of: dict[Expr, str] = {}
        # What installed plugins declare, consulted when an operator has no target.* attribute.
        self._declared: dict[str, dict[str, Predicate]] = {t: operator_support(t) for t in targets}
        # The attributes of the annotations made so far, by operator and target: every
        # annotation of one target shares them, instead of checking and building its own.
        self._marker_attrs: dict[tuple[Op, str], object] = {}

    def _marker(self, op: Op, data: Expr, target: str) -> Call:
        """``compiler_begin(data, target)`` or ``compiler_end(data, target)`` (``op`` says which)."""
        attrs = self._marker_attrs.get((op, target))
        if attrs is None:
            call = (compiler_begin if op is _BEGIN else compiler_end)(data, target)
            self._marker_attrs[(op, target)] = call.attrs
            return call
        return Call(op, [data], attrs)

    # --- Relay's helpers ------------------------------------------------------
    def _annotate_args(self, args: Sequence[Expr], target: str = "") -> tuple[str, list[Expr]]:
        """Close each argument with its producer's target and open it for ``target``.

        Without ``target``, the arguments' common target (or ``"default"``
        when they disagree) is used and returned.  Arguments already opened
        for a real target are kept; an earlier run's ``"default"`` opening is
        replaced.
        """
        target_of = self._target_of
        ref_target = ""
        begins: list[Expr] = []
        ends: list[Expr] = []
        for arg in args:
            arg_target = DEFAULT_TARGET
            if _is_annotation(arg, _BEGIN):
                if arg.attrs.compiler != DEFAULT_TARGET:
                    begins.append(arg)
                else:
                    ends.append(arg.args[0])
                inner = arg.args[0]
                if _is_annotation(inner, _END):
                    arg_target = inner.attrs.compiler
            elif arg in target_of:
                arg_target = target_of[arg]
                # A call without arguments (zeros, ones, ...) is an input like a variable.
                if type(arg) is Call and not arg.args:
                    ends.append(arg)
                else:
                    ends.append(self._marker(_END, arg, arg_target))
            else:
                ends.append(arg)
            if ref_target == "":
                ref_target = arg_target
            elif ref_target != arg_target:
                ref_target = DEFAULT_TARGET
        op_target = ref_target if target == "" else target
        if ref_target == "":
            return op_target, list(args)
        begins.extend(self._marker(_BEGIN, end, op_target) for end in ends)
        return op_target, begins

    def _close(self, expr: Expr) -> Expr:
        """``expr`` followed by a ``compiler_end`` of its target, if it has one (Relay's
        InsertCompilerEndAndPropogateTarget); an earlier run's ``"default"`` end is redone."""
        target_of = self._target_of
        kind = type(expr)
        if expr in target_of:
            if (kind in (RefWrite, RefCreate, RefRead, TupleGetItem)
                    or (kind is Call and expr.args) or (kind is Tuple and expr.fields)):
                target = target_of[expr]
                expr = self._marker(_END, expr, target)
                target_of[expr] = target
        elif kind is Call and expr.op is _END and expr.attrs.compiler == DEFAULT_TARGET:
            inner = expr.args[0]
            target = target_of.setdefault(inner, "")
            expr = self._marker(_END, inner, target)
            target_of[expr] = target
        return expr

    def _supported_target(self, pre: Call) -> str:
        op = pre.op
        if type(op) is Op:
            for target in self.targets:
                check = op.get_attr("target." + target)
                if check is None:
                    check = self._declared[target].get(op.name)
                if check is not None and check(pre):
                    return target
        elif type(op) is Function:
            composite = op.attrs.get("Composite")
            if isinstance(composite, str) and "." in composite:
                prefix = composite[:composite.index(".")]
                if prefix in self.targets:
                    return prefix
        return DEFAULT_TARGET

    # --- calls ----------------------------------------------------------------
    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        op = pre.op
        if op is _BEGIN:  # an earlier run's annotation: handled by the call that uses it
            return post
        if op is _END:  # an earlier run's annotation: remember its target
            self._target_of.setdefault(post.args[0], post.attrs.compiler)
            return post
        if pre.args:
            first = pre.args[0]
            if _is_annotation(first, _BEGIN) and first.attrs.compiler != DEFAULT_TARGET:
                return post  # annotated for a real target by an earlier run
        target = self._supported_target(pre)
        if type(op) is Var:
            by_var = self._rewrite_var_call(post)
            if by_var is not None:
                return by_var
        _, args = self._annotate_args(post.args, target)
        new = Call(post.op, args, post.attrs, post.type_args, pre.span)
        self._target_of[new] = target
        return new

    def _rewrite_var_call(self, post: Call) -> Expr | None:
        """How a call of a variable is annotated, when not like an operator call (Relay's hook)."""
        return None

    # --- the other nodes ------------------------------------------------------
    def rewrite_tuple(self, pre: Tuple, post: Expr) -> Expr:
        target, fields = self._annotate_args(post.fields)
        new = with_fields(post, fields=tuple(fields))
        self._target_of[new] = target
        return new

    def rewrite_tuple_getitem(self, pre: TupleGetItem, post: Expr) -> Expr:
        target, (value,) = self._annotate_args([post.tuple_value])
        new = TupleGetItem(value, post.index)
        self._target_of[new] = target
        return new

    def visit_function(self, func: Function) -> Expr:
        if func.attrs.get("Composite") is not None:
            return func  # a composite function is one unit: not annotated inside
        post = super().visit_function(func)
        return with_fields(post, body=self._close(post.body))

    def visit_if(self, if_expr: If) -> Expr:
        post = super().visit_if(if_expr)
        return If(self._close(post.cond), self._close(post.true_branch),
                  self._close(post.false_branch))

    def visit_ref_create(self, ref: RefCreate) -> Expr:
        post = super().visit_ref_create(ref)
        target, (value,) = self._annotate_args([post.value])
        return self._placed(RefCreate(value), target)

    def visit_ref_read(self, ref: RefRead) -> Expr:
        post = super().visit_ref_read(ref)
        target, (value,) = self._annotate_args([post.ref])
        return self._placed(RefRead(value), target)

    def visit_ref_write(self, ref: RefWrite) -> Expr:
        post = super().visit_ref_write(ref)
        target, (cell, value) = self._annotate_args([post.ref, post.value])
        return self._placed(RefWrite(cell, value), target)

    def _placed(self, expr: Expr, target: str) -> Expr:
        self._target_of[expr] = target
        return expr

    def visit_let(self, let: Let) -> Expr:
        """A let chain, in a loop: variables and values outermost first, then rebuilt inside out."""
        memo = self.memo_map
        chain: list[tuple[Let, Expr, Expr]] = []
        node: Expr = let
        while type(node) is Let and (node is let or node not in memo):
            chain.append((node, self.visit(node.var), self.visit(node.value)))
            node = node.body
        body = self.visit(node)
        for old, var, value in reversed(chain):
            body = self._rewrite_let(var, value, body)
            memo[old] = body
        return body

    def _rewrite_let(self, var: Expr, value: Expr, body: Expr) -> Expr:
        body = self._close(body)
        if type(value) is not Function:  # a bound function literal is not annotated
            value = self._annotate_args([value])[1][0]
        return Let(var, value, body)


class _CallOnlyAnnotator(_TargetAnnotator):
    """``include_non_call_ops=False``: only calls join regions; everything else is closed.

    Relay's CallOpsTargetRewriter: tuples, projections, ifs and references
    take no target, so each operand that has one gets its ``compiler_end``.
    """

    def _rewrite_var_call(self, post: Call) -> Expr | None:
        return Call(post.op, [self._close(a) for a in post.args], post.attrs, post.type_args)

    def rewrite_tuple(self, pre: Tuple, post: Expr) -> Expr:
        return with_fields(post, fields=tuple(self._close(f) for f in post.fields))

    def rewrite_tuple_getitem(self, pre: TupleGetItem, post: Expr) -> Expr:
        return TupleGetItem(self._close(post.tuple_value), post.index)

    def visit_ref_create(self, ref: RefCreate) -> Expr:
        return RefCreate(self._close(self.visit(ref.value)))

    def visit_ref_read(self, ref: RefRead) -> Expr:
        return RefRead(self._close(self.visit(ref.ref)))

    def visit_ref_write(self, ref: RefWrite) -> Expr:
        return RefWrite(self._close(self.visit(ref.ref)), self._close(self.visit(ref.value)))


def annotate_target(expr: Expr, targets: str | Iterable[str], include_non_call_ops: bool = True) -> Expr:
    """``expr`` with compiler_begin/compiler_end annotations for ``targets`` (priority order)."""
    names = _target_names(targets)
    annotator = _TargetAnnotator(names) if include_non_call_ops else _CallOnlyAnnotator(names)
    return annotator.visit(expr)


def _target_names(targets: object) -> tuple[str, ...]:
    """``targets`` as a tuple of names: one string or an iterable of strings, as in Relay."""
    if isinstance(targets, str):
        return (targets,)
    try:
        names = tuple(targets)  # type: ignore[arg-type]
    except TypeError:
        raise OptionError(
            f"AnnotateTarget: targets must be a target name or a list of them, "
            f"got {type(targets).__name__} {targets!r}") from None
    for i, name in enumerate(names):
        if not isinstance(name, str):
            raise OptionError(
                f"AnnotateTarget: targets[{i}] must be a string (a compiler name), "
                f"got {type(name).__name__} {name!r}")
    return names


def _annotate_target_factory(
    *, targets: object, include_non_call_ops: bool,
) -> Callable[[Function, IRModule, object], Function]:
    """AnnotateTarget's transformation: the manifest's factory (options checked here, once)."""
    names = _target_names(targets)
    if not isinstance(include_non_call_ops, bool):
        raise OptionError(
            "AnnotateTarget: include_non_call_ops must be a bool, "
            f"got {type(include_non_call_ops).__name__} {include_non_call_ops!r}")

    def transform(func: Function, mod: IRModule, ctx: object) -> Function:
        return annotate_target(func, names, include_non_call_ops)

    return transform


#: The AnnotateTarget pass, the one ``relay.transform.AnnotateTarget`` builds
#: (``AnnotateTarget(targets, include_non_call_ops=True)``); its metadata is in
#: relaypass-plugin.toml.
AnnotateTarget = pass_constructor("AnnotateTarget")
