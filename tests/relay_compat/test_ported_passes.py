"""The porting promise, end to end: three passes written for TVM v0.18 port by their imports.

tests/relay_compat/ported_passes/ holds the passes as a TVM user wrote them
(``import tvm``, ``from tvm import relay``): a function pass built on an
ExprMutator, an ExprVisitor analysis, and a module pass that binds a model's
parameters and runs a Sequential of Relay's passes.  Each is ported with
``relaypass port`` (the command, in a subprocess, and the function), which
must change its import lines and nothing else and find every name it uses;
then the ported file is imported and run, and its results are checked
against facts worked out here independently: numpy references, and operator
counts derived by hand from how ``relay.testing`` builds the models.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.tools import port

PORTED = Path(__file__).resolve().parent / "ported_passes"
FILES = ["strength_reduce.py", "op_profile.py", "bind_and_simplify.py"]


def ported_line(line: str) -> str:
    """The porting rule of docs/coming-from-relay.md, applied to one import line by hand."""
    m = re.fullmatch(r"(\s*)import tvm(\.[\w.]+)?(\s*)", line)
    if m:
        indent, sub, end = m.groups()
        if sub is None:
            return f"{indent}import relaypass as tvm{end}"
        return f"{indent}import relaypass as tvm, relaypass{sub}{end}"
    m = re.fullmatch(r"(\s*)from tvm((?:\.[\w.]+)?) import (.*)", line, re.S)
    if m:
        indent, sub, names = m.groups()
        return f"{indent}from relaypass{sub} import {names}"
    return line


def test_the_files_are_tvm_code():
    # The originals import TVM and nothing of relaypass: what a TVM user has.
    for name in FILES:
        text = (PORTED / name).read_text()
        assert "relaypass" not in text.replace("relaypass port", "")
        assert re.search(r"^import tvm$", text, re.M)
        assert re.search(r"^from tvm import relay$", text, re.M)


@pytest.mark.parametrize("name", FILES)
def test_port_command_changes_only_the_import_lines(name, tmp_path):
    path = tmp_path / name
    shutil.copy(PORTED / name, path)
    proc = subprocess.run(
        [sys.executable, "-m", "relaypass.tools.cli", "port", str(path)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().endswith("0 names not provided by relaypass"), proc.stderr

    # The output is the diff and nothing else (a finding would be a line of its own).
    lines = proc.stdout.splitlines(keepends=True)
    assert lines[0].startswith("--- a/") and lines[1].startswith("+++ b/")
    removed = [ln[1:] for ln in lines[2:] if ln.startswith("-")]
    added = [ln[1:] for ln in lines[2:] if ln.startswith("+")]
    assert all(ln[:1] in " -+@" for ln in lines[2:]), proc.stdout
    original = path.read_text().splitlines(keepends=True)
    tvm_imports = [ln for ln in original if re.match(r"\s*(import|from) tvm\b", ln)]
    assert removed == tvm_imports
    assert added == [ported_line(ln) for ln in tvm_imports]

    # The function behind the command says the same, for the whole file.
    result = port.port_file(str(path))
    assert result.problems == []
    assert result.new.splitlines(keepends=True) == [ported_line(ln) for ln in original]

    # Written, the port is stable: a second port finds nothing to change and nothing missing.
    subprocess.run([sys.executable, "-m", "relaypass.tools.cli", "port", "--write", str(path)],
                   check=True, capture_output=True, timeout=120)
    assert path.read_text() == result.new
    again = subprocess.run(
        [sys.executable, "-m", "relaypass.tools.cli", "port", "--check", str(path)],
        capture_output=True, text=True, timeout=120,
    )
    assert again.returncode == 0 and again.stdout == "", again.stdout + again.stderr


@pytest.fixture(scope="module")
def ported(tmp_path_factory):
    """Imports the port of a file of ported_passes/ (written by ``port.write_result``)."""
    folder = tmp_path_factory.mktemp("ported")
    modules = {}

    def load(name):
        if name not in modules:
            path = folder / name
            shutil.copy(PORTED / name, path)
            result = port.port_file(str(path))
            assert result.problems == []
            port.write_result(result)
            spec = importlib.util.spec_from_file_location(f"ported_{path.stem}", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            modules[name] = module
        return modules[name]

    return load


# --- (a) StrengthReduce: an ExprMutator in a function pass ------------------------------------
def test_strength_reduce_rewrites_what_it_should(ported):
    sr = ported("strength_reduce.py")
    result = sr.run_example()
    # multiply(x, 2) and multiply(2, .) reduced; the (1, 1) two that widens %b kept; the
    # reshape chain of plain sizes folded, the one ending in 0 (copy a dim) kept.
    assert result["counts"] == {"multiply": 2, "reshape": 1}

    x = relay.var("x", shape=(2, 6))
    b = relay.var("b", shape=())
    twice = relay.add(x, x)
    four_times = relay.add(twice, twice)
    times12 = relay.multiply(four_times, relay.const(3.0))
    widened = relay.multiply(b, relay.const(np.full((1, 1), 2.0, "float32")))
    kept = relay.reshape(relay.reshape(widened, newshape=(1,)), newshape=(0, 1))
    body = relay.Tuple([relay.reshape(times12, newshape=(4, -1)), kept])
    expected = relay.transform.InferType()(tvm.IRModule.from_expr(relay.Function([x, b], body)))
    tvm.ir.assert_structural_equal(result["module"], expected)


def test_strength_reduce_keeps_the_values(ported):
    sr = ported("strength_reduce.py")
    result = sr.run_example()
    x = np.arange(12, dtype="float32").reshape(2, 6)
    reference = [(x * 2 * 2 * 3).reshape(4, 3), np.full((1, 1), 1.5 * 2, "float32")]
    for before, after, want in zip(result["before"], result["after"], reference):
        np.testing.assert_array_equal(before, want)
        np.testing.assert_array_equal(after, want)


def test_strength_reduce_is_a_function_pass_that_leaves_its_input_alone(ported):
    sr = ported("strength_reduce.py")
    mod = sr.example_module()
    untouched = sr.example_module()
    reduce_pass = sr.StrengthReduce(fold_reshapes=False)
    assert isinstance(reduce_pass, tvm.transform.FunctionPass)
    assert reduce_pass.info.name == "StrengthReduce" and reduce_pass.info.opt_level == 1
    new_mod = reduce_pass(mod)
    assert reduce_pass.counts == {"multiply": 2, "reshape": 0}
    tvm.ir.assert_structural_equal(mod, untouched)
    assert not tvm.ir.structural_equal(new_mod, mod)


# --- (b) OpProfile: an ExprVisitor analysis ---------------------------------------------------
def resnet18_by_hand():
    """ResNet-18 (224x224, batch 1) as relay.testing.resnet builds it, counted by hand.

    The stem: batch_norm on the data (bn_data), conv0 7x7/2 (3 -> 64, 112x112),
    bn0, relu, max_pool 3x3/2 (56x56).  Four stages of two pre-activation units
    each; a unit is bn1, relu, conv1 3x3, bn2, relu, conv2 3x3 and an add with
    the shortcut, which is a 1x1 convolution (of the first relu's output) in
    the first unit of every stage -- dim_match is False there, stage 1
    included.  Then bn1, relu, global_avg_pool, batch_flatten, dense
    (512 -> 1000), bias_add, softmax.  TVM's ExprVisitor reaches every call
    node once (it memoizes), so the relu feeding both conv1 and the shortcut
    counts once: these are the numbers TVM's visitor gives.
    """
    calls = {
        "nn.conv2d": 1 + 4 * 2 * 2 + 4,
        "nn.batch_norm": 2 + 4 * 2 * 2 + 1,
        "nn.relu": 1 + 4 * 2 * 2 + 1,
        "add": 4 * 2,
        "nn.max_pool2d": 1, "nn.global_avg_pool2d": 1, "nn.batch_flatten": 1,
        "nn.dense": 1, "nn.bias_add": 1, "nn.softmax": 1,
    }
    conv_macs = 112 * 112 * 64 * (3 * 7 * 7)
    stages = [(56, 64, 64), (28, 64, 128), (14, 128, 256), (7, 256, 512)]  # (size, in, out)
    for size, cin, cout in stages:
        pixels = size * size
        conv_macs += pixels * cout * cin * 9        # unit 1, conv1 (stride 2 but stage 1)
        conv_macs += 3 * pixels * cout * cout * 9   # unit 1 conv2, unit 2 conv1 and conv2
        conv_macs += pixels * cout * cin            # unit 1, the 1x1 shortcut
    return calls, {"nn.conv2d": conv_macs, "nn.dense": 512 * 1000}


def test_op_profile_of_resnet18(ported):
    profile = ported("op_profile.py")
    calls, macs = profile.profile_resnet()
    assert isinstance(calls, tvm.ir.Map) and isinstance(macs, tvm.ir.Map)
    want_calls, want_macs = resnet18_by_hand()
    assert dict(calls.items()) == want_calls
    assert dict(macs.items()) == want_macs


def test_op_profile_counts_groups(ported):
    profile = ported("op_profile.py")
    calls, macs = profile.profile_grouped_conv()
    assert dict(calls.items()) == {"nn.conv2d": 1, "nn.relu": 1, "nn.batch_flatten": 1,
                                   "nn.dense": 1}
    # conv: a (2, 6, 6, 6) output, each value sums 4/2 channels x 3 x 3; dense: 2 x 5 x 216.
    assert dict(macs.items()) == {"nn.conv2d": 2 * 6 * 6 * 6 * 2 * 9, "nn.dense": 2 * 5 * 216}


# --- (c) BindAndSimplify: a module pass over relay.testing workloads -------------------------
def test_bind_and_simplify_mlp_against_numpy(ported):
    bs = ported("bind_and_simplify.py")
    params, optimized, data, out = bs.compare_mlp(batch_size=2)
    main = optimized["main"]
    assert [p.name_hint for p in main.params] == ["data"]
    # Nothing of the MLP folds (every layer depends on the data): the six parameter arrays
    # become the six constants, 784*128 + 128 + 128*64 + 64 + 64*10 + 10 scalars.
    assert bs.constant_stats(main) == {
        "constants": 6, "elements": 784 * 128 + 128 + 128 * 64 + 64 + 64 * 10 + 10,
    }

    def p(name):
        return params[name].numpy()

    h = data.reshape(2, -1)
    h = np.maximum(h @ p("fc1_weight").T + p("fc1_bias"), 0)
    h = np.maximum(h @ p("fc2_weight").T + p("fc2_bias"), 0)
    logits = h @ p("fc3_weight").T + p("fc3_bias")
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_bind_and_simplify_resnet(ported):
    bs = ported("bind_and_simplify.py")
    mod, optimized, data, out = bs.compare_resnet()
    main = optimized["main"]
    assert [p.name_hint for p in main.params] == ["data"]
    calls = {}

    def count(node):
        if isinstance(node, relay.Call) and isinstance(node.op, tvm.ir.Op):
            calls[node.op.name] = calls.get(node.op.name, 0) + 1

    relay.analysis.post_order_visit(main, count)
    # A 32x32 input gives the small stem (one 3x3 conv, no bn0, no pooling), then four
    # stages: 18 batch norms (bn_data, 2 per unit, bn1), each now x * scale + shift.
    assert "nn.batch_norm" not in calls
    assert calls["multiply"] == 18
    assert calls["add"] == 18 + 8  # the shifts, then the 8 residual adds
    assert calls["nn.conv2d"] == 1 + 16 + 4
    # Constants: 21 conv weights, a scale and a shift per batch norm, the dense weight and bias.
    assert bs.constant_stats(main)["constants"] == 21 + 2 * 18 + 2
    assert out.shape == (1, 10)
    np.testing.assert_allclose(out.sum(), 1.0, rtol=1e-5)
    # The pass did not touch the module it was given.
    assert len(mod["main"].params) > 1 and "nn.batch_norm" in bs.op_names(mod["main"])


# --- names and glue the ported passes lean on ------------------------------------------------
def test_relay_expr_and_function_modules_name_the_same_classes():
    from relaypass.relay.expr import Call, Constant, ExprWithOp, RelayExpr, TupleWrapper, Var
    from relaypass.relay.function import Function

    assert (Call, Constant, Var, Function) == (relay.Call, relay.Constant, relay.Var,
                                               relay.Function)
    assert ExprWithOp is RelayExpr is relay.Expr
    assert isinstance(relay.split(relay.var("s", shape=(4,)), 2), TupleWrapper)
    x = relay.expr.var("x", shape=(2,))
    y = relay.expr.var("y", shape=(2,))
    bound = relay.expr.bind(relay.add(x, y), {y: relay.expr.const([1.0, 2.0])})
    assert relay.analysis.free_vars(bound) == [x]


def test_make_node_fills_an_operators_attribute_defaults():
    attrs = tvm.ir.make_node("relay.attrs.ReshapeAttrs", newshape=[4, -1])
    assert [int(d) for d in attrs.newshape] == [4, -1] and attrs.allowzero is False
    with pytest.raises(tvm.RelayPassError, match="no attribute 'bogus'"):
        tvm.ir.make_node("relay.attrs.ReshapeAttrs", newshape=[4], bogus=1)
    # A key no operator uses is a record of what it was given.
    assert dict(tvm.ir.make_node("relay.attrs.MyPassAttrs", depth=3).items()) == {"depth": 3}


def test_text_format_dtype_shorthands():
    mod = relay.fromtext("""
    #[version = "0.0.5"]
    def @main(%a: int, %b: Tensor[(2), float], %c: uint) {
      (%a, %b, %c)
    }
    """)
    assert [p.type_annotation for p in mod["main"].params] == [
        relay.TensorType((), "int32"), relay.TensorType((2,), "float32"),
        relay.TensorType((), "uint32"),
    ]
