"""relay.transform.EtaExpand on the cases of TVM v0.18's test_pass_eta_expand.py, written as a TVM user.

The fact ported: with ``expand_global_var`` a global function used as a
value becomes a function literal taking its parameters and calling it.
With ``expand_constructor`` a constructor used as a value becomes a
polymorphic function literal applying it.  Also checked: as in Relay, a
global in callee position is expanded too, an applied constructor is not,
and the pass demands at least one of its two options.
"""
import numpy as np
import pytest

import relaypass as tvm
import relaypass.relay.transform as _transform
from relaypass import relay
from relaypass.relay.prelude import Prelude


def test_eta_expand_global_var():
    mod = tvm.relay.fromtext(
        r"""
        #[version = "0.0.5"]
        def @aux(%x: Tensor[(), int32]) -> Tensor[(), int32] {
            %x
        }
        def @main() -> fn(Tensor[(), int32]) -> Tensor[(), int32] {
            @aux
        }
    """
    )
    seq = tvm.transform.Sequential([_transform.EtaExpand(expand_global_var=True)])
    with tvm.transform.PassContext(opt_level=3):
        mod = seq(mod)
    expected = tvm.relay.fromtext(
        r"""
        #[version = "0.0.5"]
        def @aux(%x: Tensor[(), int32]) -> Tensor[(), int32] {
            %x
        }
        def @main() -> fn(Tensor[(), int32]) -> Tensor[(), int32] {
            fn (%y: Tensor[(), int32]) -> Tensor[(), int32] {
                @aux(%y)
            }
        }
    """
    )
    tvm.ir.assert_structural_equal(mod["main"], expected["main"], map_free_vars=True)


def test_a_called_global_is_expanded_too_and_computes_the_same():
    mod = tvm.relay.fromtext(
        r"""
        #[version = "0.0.5"]
        def @double(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
            add(%x, %x)
        }
        def @main(%a: Tensor[(2), float32]) -> Tensor[(2), float32] {
            @double(%a)
        }
    """
    )
    out = _transform.EtaExpand(expand_global_var=True)(mod)
    call = out["main"].body
    assert isinstance(call.op, relay.Function)
    assert isinstance(call.op.body.op, relay.GlobalVar)
    a = np.array([1.0, 2.5], "float32")
    result = relay.create_executor(mod=_transform.InferType()(out)).evaluate()(a)
    np.testing.assert_allclose(result.numpy(), 2 * a)


def test_at_least_one_feature_must_be_expanded():
    mod = tvm.relay.fromtext('#[version = "0.0.5"]\ndef @main() { 1f }')
    with pytest.raises(tvm.error.TVMError, match="at least one"):
        _transform.EtaExpand()(mod)


def test_eta_expand_constructor():
    mod = tvm.relay.fromtext(
        r"""
        #[version = "0.0.5"]
        type List[A] {
            Cons(A, List[A]),
            Nil,
        }
        def @main[A]() -> fn(A, List[A]) -> List[A] {
            Cons
        }
    """
    )
    seq = tvm.transform.Sequential(
        [_transform.EtaExpand(expand_constructor=True), _transform.InferType()]
    )
    with tvm.transform.PassContext(opt_level=3):
        mod = seq(mod)
    expected = tvm.relay.fromtext(
        r"""
        #[version = "0.0.5"]
        type List[A] {
            Cons(A, List[A]),
            Nil,
        }
        def @main[A]() -> fn(A, List[A]) -> List[A] {
            fn [B](%head: B, %tail: List[B]) -> List[B] {
                Cons(%head, %tail)
            }
        }
    """
    )
    tvm.ir.assert_structural_equal(mod["main"], expected["main"], map_free_vars=True)


def test_an_applied_constructor_stays():
    mod = tvm.IRModule()
    p = Prelude(mod)
    _, cons, nil = p.mod.get_type("List")
    x = relay.var("x", shape=(), dtype="int32")
    mod["main"] = relay.Function([x], relay.Tuple([cons(x, nil()), nil]))
    out = _transform.EtaExpand(expand_constructor=True)(mod)
    applied, value = out["main"].body.fields
    assert applied.op is cons and applied.args[1].op is nil
    # The constructor used as a value becomes a function of no parameters building it.
    assert isinstance(value, relay.Function) and not value.params and value.body.op is nil
