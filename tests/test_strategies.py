"""The program generators of relaypass.testing: well formed, well typed, varied, configurable."""

from __future__ import annotations

import collections

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relaypass.functor import post_order_visit
from relaypass.ir import (
    Call,
    Constant,
    Function,
    FuncType,
    GlobalVar,
    If,
    IRModule,
    Let,
    Op,
    RefCreate,
    RefRead,
    RefType,
    RefWrite,
    TensorType,
    Tuple,
    TupleGetItem,
    TupleType,
    Var,
)
from relaypass.relay.analysis import free_vars, well_formed
from relaypass.testing import random_inputs
from relaypass.testing.strategies import (
    DEFAULT_OP_USES,
    FEATURES,
    OpUse,
    available_op_uses,
    modules,
    programs,
)

BOOL_SCALAR = TensorType((), "bool")


class TypeCheck:
    """Computes every expression's type from annotations and the registered type relations.

    It fails (AssertionError) wherever a generated program's annotation, a branch,
    an argument or an operator relation disagrees with what the generator built.
    """

    def __init__(self, mod: IRModule | None = None) -> None:
        self.env: dict[Var, object] = {}
        self.memo: dict[int, object] = {}
        self.globals: dict[str, object] = {}
        if mod is not None:
            for gv, func in mod.items():
                self.globals[gv.name_hint] = self.check(func)

    def check(self, expr):
        # Let chains are walked in a loop; everything else nests only as deep as a small program.
        ty = self.memo.get(id(expr))
        if ty is not None:
            return ty
        if isinstance(expr, Let):
            lets = []
            node = expr
            while isinstance(node, Let):
                value_ty = self.check(node.value)
                self.bind(node.var, value_ty)
                lets.append(node)
                node = node.body
            ty = self.check(node)
            for let in lets:
                self.memo[id(let)] = ty
            return ty
        ty = self.compute(expr)
        self.memo[id(expr)] = ty
        return ty

    def bind(self, var: Var, ty) -> None:
        if var.type_annotation is not None:
            assert var.type_annotation == ty, f"%{var.name_hint}: annotated {var.type_annotation}, is {ty}"
        self.env[var] = ty

    def compute(self, expr):
        if isinstance(expr, Var):
            return self.env[expr]
        if isinstance(expr, GlobalVar):
            return self.globals[expr.name_hint]
        if isinstance(expr, Constant):
            return TensorType(expr.data.shape, str(expr.data.dtype))
        if isinstance(expr, Tuple):
            return TupleType([self.check(f) for f in expr.fields])
        if isinstance(expr, TupleGetItem):
            tup = self.check(expr.tuple_value)
            assert isinstance(tup, TupleType) and 0 <= expr.index < len(tup.fields)
            return tup.fields[expr.index]
        if isinstance(expr, Function):
            for p in expr.params:
                assert p.type_annotation is not None, f"parameter %{p.name_hint} is not annotated"
                self.env[p] = p.type_annotation
            body = self.check(expr.body)
            if expr.ret_type is not None:
                assert expr.ret_type == body, f"return type {expr.ret_type} but body has {body}"
            return FuncType([p.type_annotation for p in expr.params], body)
        if isinstance(expr, Call):
            args = [self.check(a) for a in expr.args]
            if isinstance(expr.op, Op):
                return expr.op.get_attr("FTypeRelation")(args, expr.attrs)
            fty = self.check(expr.op)
            assert isinstance(fty, FuncType) and list(fty.arg_types) == args, (fty, args)
            return fty.ret_type
        if isinstance(expr, If):
            assert self.check(expr.cond) == BOOL_SCALAR
            then, other = self.check(expr.true_branch), self.check(expr.false_branch)
            assert then == other, f"branches differ: {then} vs {other}"
            return then
        if isinstance(expr, RefCreate):
            return RefType(self.check(expr.value))
        if isinstance(expr, RefRead):
            ref = self.check(expr.ref)
            assert isinstance(ref, RefType)
            return ref.value
        if isinstance(expr, RefWrite):
            ref = self.check(expr.ref)
            assert isinstance(ref, RefType) and ref.value == self.check(expr.value)
            return TupleType([])
        raise AssertionError(f"unexpected node {type(expr).__name__}")


def node_kinds(expr) -> collections.Counter:
    kinds: collections.Counter = collections.Counter()

    def visit(node) -> None:
        kinds[type(node).__name__] += 1
        if isinstance(node, Call) and isinstance(node.op, Op):
            kinds["op:" + node.op.name] += 1
        if isinstance(node, Call) and isinstance(node.op, GlobalVar):
            kinds["global call"] += 1
        if isinstance(node, Call) and not isinstance(node.op, (Op, GlobalVar)):
            kinds["closure call"] += 1
        if isinstance(node, Var) and node.name_hint.startswith("x") and node.type_annotation is None:
            kinds["unannotated let"] += 1

    post_order_visit(expr, visit)
    return kinds


@settings(max_examples=60, deadline=None)
@given(programs(features=FEATURES))
def test_programs_are_closed_well_formed_and_well_typed(func):
    assert isinstance(func, Function)
    assert well_formed(func)
    assert free_vars(func) == []
    ty = TypeCheck().check(func)
    assert isinstance(ty, FuncType)
    names = [v.name_hint for v in _all_binders(func)]
    assert len(names) == len(set(names)), "generated names are unique"


@settings(max_examples=40, deadline=None)
@given(modules(features=FEATURES, size=(1, 12)))
def test_modules_are_well_formed_and_well_typed(mod):
    assert "main" in mod
    for _gv, func in mod.items():
        assert well_formed(func)
        assert free_vars(func) == []
    TypeCheck(mod)  # checks every function, globals in definition order


def _all_binders(func):
    out = []

    def visit(node):
        if isinstance(node, Function):
            out.extend(node.params)
        elif isinstance(node, Let):
            out.append(node.var)

    post_order_visit(func, visit)
    return out


def test_every_feature_appears():
    seen: collections.Counter = collections.Counter()

    @settings(max_examples=80, deadline=None, database=None)
    @given(modules(features=FEATURES, size=(5, 20)))
    def collect(mod):
        for _gv, func in mod.items():
            seen.update(node_kinds(func))
        seen[f"functions in a module: {len(mod)}"] += 1

    collect()
    for kind in ["Let", "If", "Tuple", "TupleGetItem", "Function", "Constant", "RefCreate",
                 "RefRead", "RefWrite", "global call", "closure call", "op:add", "op:concatenate",
                 "unannotated let"]:
        assert seen[kind] > 0, f"no {kind} in 80 generated modules: {seen}"
    assert any(k.startswith("functions in a module: ") and not k.endswith(": 1") for k in seen)


def test_shared_subexpressions_appear():
    shared = []

    @settings(max_examples=40, deadline=None, database=None)
    @given(programs(size=(10, 20), features=()))
    def collect(func):
        uses: collections.Counter = collections.Counter()

        def visit(node):
            if isinstance(node, Call):
                for arg in node.args:
                    if isinstance(arg, Call):
                        uses[id(arg)] += 1

        post_order_visit(func, visit)
        shared.append(any(n > 1 for n in uses.values()))

    collect()
    assert any(shared), "no program reused a call result"


def test_features_can_be_switched_off():
    @settings(max_examples=40, deadline=None, database=None)
    @given(modules(features=(), size=(5, 15), ops=["add", "multiply", "nn.relu", "negative"]))
    def check(mod):
        assert list(mod.functions) and len(mod) == 1
        kinds = node_kinds(mod["main"])
        for kind in ("Let", "If", "RefCreate", "TupleGetItem"):
            assert kinds[kind] == 0, kinds
        assert kinds["Function"] == 1

    check()


def test_operator_mix_is_a_parameter():
    @settings(max_examples=30, deadline=None, database=None)
    @given(programs(ops=["subtract", "nn.relu"], size=(3, 10), features={"let", "tuple"}))
    def check(func):
        ops = {k for k in node_kinds(func) if k.startswith("op:")}
        assert ops <= {"op:subtract", "op:nn.relu"}, ops
        TypeCheck().check(func)

    check()


def test_custom_op_use_is_honoured():
    # A use the defaults do not have: add with its second argument guarded (v * v + 1).
    use = OpUse("add", "binary", guard=(1,))

    def is_guard(e):
        return (isinstance(e, Call) and e.op.name == "add" and isinstance(e.args[0], Call)
                and e.args[0].op.name == "multiply" and e.args[0].args[0] is e.args[0].args[1]
                and isinstance(e.args[1], Constant) and e.args[1].data.numpy() == 1)

    adds = []

    @settings(max_examples=20, deadline=None, database=None)
    @given(programs(ops=[use], size=(1, 4), features=()))
    def check(func):
        TypeCheck().check(func)

        def visit(node):
            if not isinstance(node, Call) or is_guard(node):
                return
            if node.op.name == "multiply":  # the square inside a guard
                assert node.args[0] is node.args[1]
                return
            assert node.op.name == "add" and is_guard(node.args[1]), node
            adds.append(node)

        post_order_visit(func, visit)

    check()
    assert adds


def test_missing_operators_are_skipped_and_bad_arguments_rejected():
    names = {u.name for u in available_op_uses()}
    registered = set(Op.list_op_names())
    assert names <= registered
    assert {u.name for u in DEFAULT_OP_USES if u.name in registered} >= {"add", "nn.relu"}
    with pytest.raises(ValueError, match="no default use"):
        available_op_uses(["no_such_op"])
    with pytest.raises(ValueError, match="unknown feature"):
        programs(features={"loops"})
    with pytest.raises(ValueError, match="unknown kind"):
        OpUse("add", "ternary")
    with pytest.raises(ValueError, match="at least one registered binary or unary"):
        programs(ops=["concatenate"])
    with pytest.raises(ValueError, match="size"):
        programs(size=0)


@settings(max_examples=30, deadline=None)
@given(modules(size=(1, 8)), st.integers(0, 2**16))
def test_random_inputs_match_main_params(mod, seed):
    inputs = random_inputs(mod, seed)
    params = mod["main"].params
    assert len(inputs) == len(params)
    for value, param in zip(inputs, params):
        ty = param.type_annotation
        assert value.shape == ty.concrete_shape and str(value.dtype) == ty.dtype
    again = random_inputs(mod, seed)
    assert all(np.array_equal(a, b) for a, b in zip(inputs, again))


def test_random_inputs_needs_annotations():
    func = Function([Var("x")], Var("y"))
    with pytest.raises(TypeError, match="%x has no type annotation"):
        random_inputs(func)


@settings(max_examples=20, deadline=None)
@given(programs(dtype="int32", size=(1, 10)))
def test_other_dtypes(func):
    TypeCheck().check(func)
    for p in func.params:
        assert p.type_annotation.dtype in ("int32", "bool")


def _matches(value, ty):
    if isinstance(ty, TupleType):
        return isinstance(value, tuple) and len(value) == len(ty.fields) and all(
            _matches(v, t) for v, t in zip(value, ty.fields))
    return value.shape == ty.concrete_shape and str(value.dtype) == ty.dtype


@settings(max_examples=25, deadline=None)
@given(modules(features=FEATURES, size=(1, 15)))
def test_generated_modules_run_and_give_values_of_the_claimed_type(mod):
    from relaypass.interp import create_executor

    ret = TypeCheck(mod).globals["main"].ret_type
    with np.errstate(all="ignore"):
        out = create_executor(mod=mod).evaluate()(*random_inputs(mod, seed=1))
    assert _matches(out, ret)


@settings(max_examples=30, deadline=None)
@given(programs(max_rank=2, size=(5, 15), features=FEATURES))
def test_max_rank_bounds_every_tensor(func):
    checker = TypeCheck()
    checker.check(func)
    ranks = [len(t.shape) for t in checker.memo.values() if isinstance(t, TensorType)]
    assert ranks and max(ranks) <= 2
