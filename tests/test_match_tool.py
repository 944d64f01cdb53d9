"""``relaypass match``: where a pattern matches in a module, and the closest miss."""
import subprocess
import sys

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.dataflow_pattern.text import PatternSyntaxError
from relaypass.tools.match import PatternFileError, match_module, read_pattern


def conv_net():
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))
    b = relay.const(np.zeros(4, "float32"))
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(x, w, padding=(1, 1)), b))
    z = relay.nn.relu(relay.nn.conv2d(y, relay.var("w2", shape=(4, 4, 3, 3)), padding=(1, 1)))
    return tvm.IRModule.from_expr(relay.Function(relay.analysis.free_vars(z), z))


def test_every_matching_node_is_reported():
    report = match_module(read_pattern("nn.relu(nn.conv2d(*, *) | nn.bias_add(nn.conv2d(*, *), *))"),
                          conv_net())
    assert [name for name, _ in report.matches] == ["main", "main"]
    assert all(node.op.name == "nn.relu" for _, node in report.matches)
    assert report.closest is None


def test_no_match_explains_the_deepest_miss():
    report = match_module(read_pattern("nn.relu(nn.bias_add(nn.conv2d(*, *), const).has_dtype('int8'))"),
                          conv_net())
    assert report.matches == []
    name, why = report.closest
    assert name == "main" and why.kind == "dtype"
    assert "int8" in str(why)


def test_a_pattern_file_with_comments(tmp_path):
    path = tmp_path / "relu.pat"
    path.write_text("# a convolution then relu\nnn.relu(\n  nn.conv2d(*, *)\n)\n")
    assert len(match_module(read_pattern(str(path)), conv_net()).matches) == 1


def test_bad_pattern_files_are_named_errors(tmp_path):
    binary = tmp_path / "bad.pat"
    binary.write_bytes(b"nn.relu(\xff)")
    with pytest.raises(PatternFileError, match="not UTF-8"):
        read_pattern(str(binary))
    broken = tmp_path / "broken.pat"
    broken.write_text("nn.relu(")
    with pytest.raises(PatternSyntaxError):
        read_pattern(str(broken))


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "relaypass", *args], capture_output=True,
                          text=True, timeout=300)


def test_the_command(tmp_path):
    model = tmp_path / "net.relay"
    model.write_text(conv_net().astext())
    out = _cli("match", "nn.relu(nn.conv2d(*, *))", str(model))
    assert out.returncode == 0, out.stderr
    assert "1 match" in out.stdout and "nn.relu" in out.stdout
    miss = _cli("match", "nn.relu(nn.dense(*, *))", str(model))
    assert miss.returncode == 1
    assert "no match" in miss.stdout and "expected a call of nn.dense" in miss.stdout
    bad = _cli("match", "nn.relu(", str(model))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
