"""ToGraphNormalForm on the cases of TVM v0.18's test_pass_to_graph_normal_form.py.

Written as a TVM user writes them; only the import lines differ.  TVM checks
for lets with ``detect_feature``; :func:`has_let` checks the same fact by a
walk of its own, and one test asks ``detect_feature`` itself.
"""
import numpy as np

import relaypass as tvm
import relaypass.testing  # noqa: F401
from relaypass import relay
from relaypass.relay import create_executor, op, transform


def run_opt_pass(expr, opt_pass):
    mod = tvm.IRModule.from_expr(expr)
    mod = opt_pass(mod)
    entry = mod["main"]
    return entry if isinstance(expr, relay.Function) else entry.body


def check_eval(expr, args, expected_result, mod=None, rtol=1e-07):
    if mod is None:
        mod = tvm.IRModule()
    dev = tvm.device("llvm", 0)
    result = create_executor(mod=mod, device=dev, target="llvm").evaluate(expr)(*args)
    np.testing.assert_allclose(result.numpy(), expected_result, rtol=rtol)


def has_let(expr):
    """What ``Feature.fLet in detect_feature(expr)`` tells in TVM."""
    found = []
    relay.analysis.post_order_visit(expr, lambda e: found.append(isinstance(e, relay.Let)))
    return any(found)


def shared_lets():
    """fn () { let x = 1; let y = x + x; let z = y + y; z + z }: 8, with sharing by name."""
    x, y, z = relay.Var("x"), relay.Var("y"), relay.Var("z")
    body = relay.Let(z, op.add(y, y), op.add(z, z))
    body = relay.Let(y, op.add(x, x), body)
    return relay.Function([], relay.Let(x, relay.const(1), body))


def test_implicit_share():
    f = shared_lets()
    g = run_opt_pass(f, transform.ToGraphNormalForm())
    assert has_let(f)
    assert not has_let(g)
    check_eval(f, [], 8.0)
    check_eval(g, [], 8.0)


def test_implicit_share_keeps_sharing_as_graph_edges():
    # The bound values become shared nodes: y + y with both arguments the same node.
    g = run_opt_pass(shared_lets(), transform.ToGraphNormalForm())
    z = g.body.args[0]
    assert g.body.args[1] is z
    assert z.args[0] is z.args[1]


def test_round_trip():
    f = shared_lets()
    g = run_opt_pass(f, transform.ToGraphNormalForm())
    h = run_opt_pass(g, transform.ToANormalForm())
    assert has_let(f)
    assert not has_let(g)
    assert has_let(h)
    check_eval(f, [], 8.0)
    check_eval(g, [], 8.0)
    check_eval(h, [], 8.0)


def test_implicit_share_with_detect_feature():
    from relaypass.relay.analysis import Feature, detect_feature

    f = shared_lets()
    g = run_opt_pass(f, transform.ToGraphNormalForm())
    assert Feature.fLet in detect_feature(f)
    assert Feature.fLet not in detect_feature(g)


def test_pass_info_as_tvm_declares_it():
    gnf = transform.ToGraphNormalForm()
    assert isinstance(gnf, tvm.transform.FunctionPass)
    assert gnf.info.opt_level == 1
    assert list(gnf.info.required) == []


if __name__ == "__main__":
    tvm.testing.main()
