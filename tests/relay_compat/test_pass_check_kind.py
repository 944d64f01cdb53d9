"""relay.analysis.check_kind on the cases of TVM v0.18's test_pass_check_kind.py, as a TVM
user writes them.

The facts: a type variable, a global type variable has the kind it was made with; tuple,
function, reference and type-call types are of kind Type when their parts are Types (and a
function's constraints are Constraints); a type relation is a Constraint.  A shape variable,
a base type or a constraint where a Type belongs (a tuple field, a function's argument or
result, a reference's contents, a relation's argument, a type call's argument), a type call
of something that is not an ADT handle, or with the wrong number of arguments, is an error.

TVM marks the bad cases ``xfail(raises=TVMError)``; here they assert the error (relaypass's
``KindCheckError``, a ``tvm.error.TVMError``).  The relations of TVM's cases name registered
relation functions through ``tvm.ir.EnvFunc``, which is out of scope: the kind checker never
calls a relation, so these cases give ``None`` in its place.
"""
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.relay.analysis import KindCheckError, check_kind


def test_typevar_kind():
    tp1 = relay.TypeVar("tp1", relay.TypeKind.Type)
    tp2 = relay.TypeVar("tp2", relay.TypeKind.ShapeVar)
    tp3 = relay.TypeVar("tp3", relay.TypeKind.Constraint)
    assert check_kind(tp1) == relay.TypeKind.Type
    assert check_kind(tp2) == relay.TypeKind.ShapeVar
    assert check_kind(tp3) == relay.TypeKind.Constraint


def test_tuple_kind():
    tp = relay.TypeVar("tp", relay.TypeKind.Type)
    tt = relay.TensorType(tvm.runtime.convert([1, 2, 3]), "float32")
    tf = relay.FuncType(tvm.runtime.convert([]), tt, tvm.runtime.convert([]),
                        tvm.runtime.convert([]))
    tup_ty = relay.TupleType(tvm.runtime.convert([tp, tf, tt]))
    assert check_kind(tup_ty) == relay.TypeKind.Type


def test_func_kind():
    tp1 = relay.TypeVar("tp1", relay.TypeKind.Type)
    tp2 = relay.TypeVar("tp2", relay.TypeKind.Type)
    tensor_type = relay.TensorType(tvm.runtime.convert([1, 2, 3]), "float32")
    tr = relay.TypeRelation(None, tvm.runtime.convert([tensor_type, tp1]), 1, None)
    tf = relay.FuncType(tvm.runtime.convert([tp1, tensor_type]),
                        relay.TupleType(tvm.runtime.convert([tp2, tensor_type])),
                        tvm.runtime.convert([tp1, tp2]), tvm.runtime.convert([tr]))
    assert check_kind(tf) == relay.TypeKind.Type


def test_ref_kind():
    tt = relay.TensorType(tvm.runtime.convert([1, 2, 3]), "float32")
    ft = relay.FuncType(tvm.runtime.convert([]), tt, tvm.runtime.convert([]),
                        tvm.runtime.convert([]))
    rt1 = relay.RefType(tt)
    rt2 = relay.RefType(ft)
    assert check_kind(rt1) == relay.TypeKind.Type
    assert check_kind(rt2) == relay.TypeKind.Type
    assert check_kind(relay.RefType(relay.TupleType([rt1, rt2]))) == relay.TypeKind.Type


def test_relation_kind():
    tp = relay.TypeVar("tp", relay.TypeKind.Type)
    tt = relay.TensorType(tvm.runtime.convert([1, 2, 3]), "float32")
    tf = relay.FuncType(tvm.runtime.convert([]), tt, tvm.runtime.convert([]),
                        tvm.runtime.convert([]))
    tr = relay.TypeRelation(None, tvm.runtime.convert([tf, tt, tp]), 2, None)
    assert check_kind(tr) == relay.TypeKind.Constraint


def test_global_typevar_kind():
    v1 = relay.GlobalTypeVar("gtv1", relay.TypeKind.AdtHandle)
    v2 = relay.GlobalTypeVar("gtv2", relay.TypeKind.Type)
    assert check_kind(v1) == relay.TypeKind.AdtHandle
    assert check_kind(v2) == relay.TypeKind.Type


def test_typecall_kind():
    gtv = relay.GlobalTypeVar("gtv")
    mod = tvm.IRModule()
    mod[gtv] = relay.TypeData(gtv, [], [])
    assert check_kind(relay.TypeCall(gtv, []), mod) == relay.TypeKind.Type

    other = tvm.IRModule()
    tv = relay.TypeVar("tv")
    other[gtv] = relay.TypeData(gtv, [tv], [])
    assert check_kind(relay.TypeCall(gtv, [relay.TupleType([])]), other) == relay.TypeKind.Type


def test_invalid_tuple_kind():
    fields = [relay.TypeVar("tp1", relay.TypeKind.ShapeVar),
              relay.TypeVar("tp2", relay.TypeKind.BaseType),
              relay.TypeVar("tp3", relay.TypeKind.Constraint)]
    with pytest.raises(tvm.error.TVMError, match="tuple member: type tp1"):
        check_kind(relay.TupleType(tvm.runtime.convert(fields)))


def test_invalid_func_kind():
    tp1 = relay.TypeVar("tp1", relay.TypeKind.ShapeVar)
    tp2 = relay.TypeVar("tp2", relay.TypeKind.BaseType)
    tp3 = relay.TypeVar("tp3", relay.TypeKind.Constraint)
    tf = relay.FuncType(tvm.runtime.convert([tp1, tp2]), tp3,
                        tvm.runtime.convert([tp1, tp2, tp3]), tvm.runtime.convert([]))
    with pytest.raises(KindCheckError, match="function type parameter: type tp1 .* is of kind "
                                             "ShapeVar but was expected to be Type"):
        check_kind(tf)


def test_invalid_ref_kind():
    with pytest.raises(KindCheckError, match="ref contents"):
        check_kind(relay.RefType(relay.TypeVar("tp", relay.TypeKind.ShapeVar)))


def test_invalid_relation_kind():
    args = [relay.TypeVar("tp1", relay.TypeKind.ShapeVar),
            relay.TypeVar("tp2", relay.TypeKind.BaseType),
            relay.TypeVar("tp3", relay.TypeKind.Constraint)]
    with pytest.raises(KindCheckError, match="argument to type relation"):
        check_kind(relay.TypeRelation(None, tvm.runtime.convert(args), 2, None))


def test_typecall_invalid_callee():
    # the callee must be an ADT handle
    gtv = relay.GlobalTypeVar("v1", relay.TypeKind.Type)
    with pytest.raises(KindCheckError, match="type call function: type v1 .* is of kind Type "
                                             "but was expected to be AdtHandle"):
        check_kind(relay.TypeCall(gtv, []))


def test_typecall_invalid_args():
    # every argument must be a Type: a type definition is not one
    mod = tvm.IRModule()
    gtv = relay.GlobalTypeVar("v1")
    data = relay.TypeData(gtv, [], [])
    mod[gtv] = data
    with pytest.raises(KindCheckError, match="type call argument: .* is of kind TypeData"):
        check_kind(relay.TypeCall(gtv, [data]), mod)


def test_typecall_invalid_num_args():
    mod = tvm.IRModule()
    gtv = relay.GlobalTypeVar("v1")
    mod[gtv] = relay.TypeData(gtv, [relay.TypeVar("tv")], [])
    with pytest.raises(KindCheckError, match=r"expected 1 arguments for v1\[\]; got 0"):
        check_kind(relay.TypeCall(gtv, []), mod)


def test_typecall_of_an_undefined_type():
    gtv = relay.GlobalTypeVar("v1")
    with pytest.raises(KindCheckError, match="the type variable `v1` .* is undefined"):
        check_kind(relay.TypeCall(gtv, []))


def test_func_with_invalid_ret_type():
    tp1 = relay.TypeVar("tp1", relay.TypeKind.Type)
    tp2 = relay.TypeVar("tp2", relay.TypeKind.ShapeVar)
    tf = relay.FuncType(tvm.runtime.convert([tp1]), tp2, tvm.runtime.convert([tp1, tp2]),
                        tvm.runtime.convert([]))
    with pytest.raises(KindCheckError, match="function return type"):
        check_kind(tf)


def test_func_with_invalid_arg_types():
    tp1 = relay.TypeVar("tp1", relay.TypeKind.ShapeVar)
    tp2 = relay.TypeVar("tp2", relay.TypeKind.Type)
    tf = relay.FuncType(tvm.runtime.convert([tp1]), tp2, tvm.runtime.convert([tp1, tp2]),
                        tvm.runtime.convert([]))
    with pytest.raises(KindCheckError, match="function type parameter"):
        check_kind(tf)


def test_func_with_invalid_tuple():
    tp1 = relay.TypeVar("tp1", relay.TypeKind.ShapeVar)
    ret_type = relay.TupleType(tvm.runtime.convert([tp1, tp1, tp1]))
    tf = relay.FuncType(tvm.runtime.convert([]), ret_type, tvm.runtime.convert([tp1]),
                        tvm.runtime.convert([]))
    # the innermost problem is reported: the tuple's field, not the return type
    with pytest.raises(KindCheckError, match="tuple member: type tp1"):
        check_kind(tf)


def test_func_with_invalid_relation():
    tp1 = relay.TypeVar("tp1", relay.TypeKind.Type)
    tp2 = relay.TypeVar("tp2", relay.TypeKind.ShapeVar)
    tp3 = relay.TypeVar("tp3", relay.TypeKind.Constraint)
    tr = relay.TypeRelation(None, tvm.runtime.convert([tp2, tp3]), 1, None)
    tf = relay.FuncType(tvm.runtime.convert([tp1]), tp1, tvm.runtime.convert([tp1, tp2, tp3]),
                        tvm.runtime.convert([tr]))
    with pytest.raises(KindCheckError, match="argument to type relation: type tp2"):
        check_kind(tf)


def test_tuple_with_invalid_func():
    tensor_type = relay.TensorType(tvm.runtime.convert([1, 2, 3]), "float32")
    tp1 = relay.TypeVar("tp1", relay.TypeKind.ShapeVar)
    tf = relay.FuncType(tvm.runtime.convert([]), tp1, tvm.runtime.convert([tp1]),
                        tvm.runtime.convert([]))
    with pytest.raises(KindCheckError, match="function return type"):
        check_kind(relay.TupleType(tvm.runtime.convert([tensor_type, tf])))


def test_a_deeply_nested_type_is_checked_without_recursion():
    ty = relay.TensorType((2,), "float32")
    for _ in range(100_000):
        ty = relay.TupleType([ty])
    assert check_kind(ty) == relay.TypeKind.Type
    bad = relay.TypeVar("n", relay.TypeKind.ShapeVar)
    for _ in range(100_000):
        bad = relay.RefType(bad) if isinstance(bad, relay.TupleType) else relay.TupleType([bad])
    with pytest.raises(KindCheckError, match="tuple member: type n inside"):
        check_kind(bad)
