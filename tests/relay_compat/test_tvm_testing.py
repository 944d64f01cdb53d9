"""tvm.testing for pass authors' test suites: assert_allclose, parameters, fixtures, targets, features.

Facts from TVM (python/tvm/testing/utils.py and plugin.py): assert_allclose
defaults to rtol = atol = 1e-7 and checks the shapes first; ``parameter``
makes a parametrized fixture (every combination when a test takes several),
``parameters`` ties values together, ``fixture(cache_return_value=True)``
computes once per parameter and hands each test a copy; ``parametrize_targets``
gives ``target`` and ``dev``; ``requires_*`` skip what the environment lacks;
``main()`` runs pytest on the calling file.  The pytest behaviour is checked by
running pytest on small test files in a subprocess.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import relaypass as tvm
import relaypass.testing

# --- assert_allclose -------------------------------------------------------------------------


def test_assert_allclose_uses_tvms_tolerances():
    tvm.testing.assert_allclose(np.float32(1.0), 1.0 + 5e-8)
    with pytest.raises(AssertionError):
        tvm.testing.assert_allclose(np.array([1.0]), np.array([1.0 + 1e-6]))
    tvm.testing.assert_allclose(np.array([1.0]), np.array([1.0 + 1e-6]), rtol=1e-5)


def test_assert_allclose_checks_shapes_before_broadcasting():
    with pytest.raises(AssertionError):
        tvm.testing.assert_allclose(np.ones(3), np.ones((1, 3)))
    with pytest.raises(AssertionError):
        tvm.testing.assert_allclose(np.ones(3), 1.0)


def test_assert_allclose_takes_ndarrays():
    nd = tvm.nd.array(np.array([1.0, 2.0], "float32"))
    tvm.testing.assert_allclose(nd, np.array([1.0, 2.0]))
    tvm.testing.assert_allclose(nd.numpy(), nd)


# --- targets and features, directly ----------------------------------------------------------


def test_the_interpreter_is_the_one_enabled_target():
    assert tvm.testing.enabled_targets() == [("llvm", tvm.cpu(0))]
    assert tvm.testing.device_enabled("llvm")
    assert tvm.testing.device_enabled("llvm -mcpu=skylake")
    assert not tvm.testing.device_enabled("cuda")


def test_requires_llvm_changes_nothing():
    def test_x():
        pass

    assert tvm.testing.requires_llvm(test_x) is test_x
    assert not getattr(test_x, "pytestmark", [])
    assert tvm.testing.uses_gpu(test_x) is test_x


def test_other_features_skip_with_the_reason():
    @tvm.testing.requires_cuda
    def test_x():
        pass

    (mark,) = test_x.pytestmark
    assert mark.name == "skip" and "requires CUDA" in mark.kwargs["reason"]
    assert "out of scope" in mark.kwargs["reason"]

    @tvm.testing.requires_gpu(support_required="compile-only")
    def test_y():
        pass

    assert [m.name for m in test_y.pytestmark] == ["skip"]
    assert tvm.testing.Feature.require("vulkan").__name__ == "wrapper"


def test_importing_the_helpers_does_not_import_pytest():
    code = (
        "import sys, relaypass.testing as t, relaypass.testing.utils; "
        "t.assert_allclose([1.0], [1.0]); t.enabled_targets(); t.requires_cuda; t.uses_gpu; "
        "print('pytest' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- the pytest helpers, run by pytest -----------------------------------------------------


def _run(tmp_path, source, conftest=None, name="test_sample.py"):
    """Run pytest on ``source``; {test name: outcome ("passed", "skipped: reason", "failed")}."""
    (tmp_path / name).write_text(textwrap.dedent(source), encoding="utf-8")
    if conftest is not None:
        (tmp_path / "conftest.py").write_text(textwrap.dedent(conftest), encoding="utf-8")
    report = tmp_path / "report.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", name, "-p", "no:xdist", "-p", "no:cacheprovider",
         "-p", "no:benchmark", f"--junitxml={report}", "-q"],
        cwd=tmp_path, capture_output=True, text=True,
    )
    if not report.exists():
        raise AssertionError(proc.stdout + proc.stderr)
    outcomes = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        skipped = case.find("skipped")
        if case.find("failure") is not None or case.find("error") is not None:
            outcomes[case.get("name")] = "failed"
        elif skipped is not None:
            outcomes[case.get("name")] = "skipped: " + skipped.get("message", "")
        else:
            outcomes[case.get("name")] = "passed"
    assert "failed" not in outcomes.values(), proc.stdout + proc.stderr
    return outcomes


def test_parameter_runs_a_test_per_value_and_per_combination(tmp_path):
    outcomes = _run(tmp_path, """
        import relaypass as tvm
        import relaypass.testing

        size = tvm.testing.parameter(1, 10)
        dtype = tvm.testing.parameter("float32", "int8")
        shape = tvm.testing.parameter((2, 3), (4,), ids=["matrix", "vector"])
        layout = tvm.testing.parameter(by_dict={"nchw": "NCHW", "nhwc": "NHWC"})

        def test_size(size):
            assert size in (1, 10)

        def test_both(size, dtype):
            assert (size, dtype) in [(1, "float32"), (1, "int8"), (10, "float32"), (10, "int8")]

        def test_ids(shape, layout):
            assert layout in ("NCHW", "NHWC")
        """)
    assert sorted(outcomes) == sorted([
        "test_size[1]", "test_size[10]",
        "test_both[1-float32]", "test_both[1-int8]", "test_both[10-float32]", "test_both[10-int8]",
        "test_ids[matrix-nchw]", "test_ids[matrix-nhwc]", "test_ids[vector-nchw]",
        "test_ids[vector-nhwc]",
    ])


def test_parameters_tie_values_together(tmp_path):
    outcomes = _run(tmp_path, """
        import relaypass as tvm
        import relaypass.testing

        size, dtype = tvm.testing.parameters((16, "float32"), (512, "float16"))

        def test_pairs(size, dtype):
            assert (size, dtype) in [(16, "float32"), (512, "float16")]

        def test_one(dtype):
            assert dtype in ("float32", "float16")
        """)
    assert sorted(outcomes) == ["test_one[16-float32]", "test_one[512-float16]",
                                "test_pairs[16-float32]", "test_pairs[512-float16]"]
    assert set(outcomes.values()) == {"passed"}


def test_fixture_with_a_cached_value_runs_once_per_parameter(tmp_path):
    outcomes = _run(tmp_path, """
        import relaypass as tvm
        import relaypass.testing

        CALLS = []
        n = tvm.testing.parameter(1, 2)

        @tvm.testing.fixture
        def cheap(n):
            return 5 * n

        @tvm.testing.fixture(cache_return_value=True)
        def expensive(n):
            CALLS.append(n)
            return [n] * 3

        def test_cheap(cheap, n):
            assert cheap == 5 * n

        def test_first(expensive, n):
            assert expensive == [n] * 3
            expensive.append("changed")  # a copy: the next test does not see this

        def test_second(expensive, n):
            assert expensive == [n] * 3

        def test_calls():
            assert sorted(CALLS) == [1, 2]
        """)
    assert len(outcomes) == 7 and set(outcomes.values()) == {"passed"}


def test_parametrize_targets_gives_target_and_dev(tmp_path):
    outcomes = _run(tmp_path, """
        import relaypass as tvm
        import relaypass.testing

        @tvm.testing.parametrize_targets("llvm", "cuda")
        def test_explicit(target, dev):
            assert target == "llvm" and dev == tvm.cpu(0)

        @tvm.testing.parametrize_targets
        def test_bare(target, dev):
            assert (target, dev) == ("llvm", tvm.cpu(0))

        @tvm.testing.parametrize_targets("llvm")
        def test_target_only(target):
            assert target == "llvm"

        @tvm.testing.parametrize_targets
        @tvm.testing.exclude_targets("llvm")
        def test_excluded(target):
            raise AssertionError("llvm was excluded")

        @tvm.testing.parametrize_targets("llvm")
        @tvm.testing.known_failing_targets("llvm")
        def test_known_failing(target):
            raise AssertionError("expected to fail")
        """)
    assert outcomes["test_explicit[llvm]"] == "passed"
    assert outcomes["test_explicit[cuda]"].startswith("skipped: target 'cuda' is out of scope")
    assert outcomes["test_bare[llvm]"] == "passed"
    assert outcomes["test_target_only[llvm]"] == "passed"
    assert outcomes["test_known_failing[llvm]"].startswith("skipped: ")  # an xfail
    assert not any(name.startswith("test_excluded[llvm") for name in outcomes)


def test_requires_marks_under_pytest(tmp_path):
    outcomes = _run(tmp_path, """
        import relaypass as tvm
        import relaypass.testing

        @tvm.testing.requires_llvm
        def test_llvm():
            pass

        @tvm.testing.requires_cuda
        def test_cuda():
            raise AssertionError("must not run")

        @tvm.testing.requires_gpu
        def test_gpu():
            raise AssertionError("must not run")

        @tvm.testing.uses_gpu
        def test_uses_gpu():
            pass

        @tvm.testing.requires_package("numpy")
        def test_numpy():
            pass

        @tvm.testing.requires_package("surely_not_a_package_xyz")
        def test_missing():
            raise AssertionError("must not run")
        """)
    assert outcomes["test_llvm"] == outcomes["test_uses_gpu"] == outcomes["test_numpy"] == "passed"
    assert outcomes["test_cuda"].startswith("skipped: requires CUDA")
    assert outcomes["test_gpu"].startswith("skipped: requires a GPU")
    assert outcomes["test_missing"] == "skipped: Cannot import 'surely_not_a_package_xyz'"


def test_the_plugin_parametrizes_target_and_dev(tmp_path):
    outcomes = _run(tmp_path, """
        import relaypass as tvm
        import relaypass.testing

        def test_auto(target, dev):
            assert target == "llvm" and dev == tvm.cpu(0)

        @tvm.testing.exclude_targets("llvm")
        def test_excluded(target):
            raise AssertionError("llvm was excluded")

        @tvm.testing.parametrize_targets("llvm", "vulkan")
        def test_explicit(target, dev):
            assert target == "llvm"
        """, conftest='pytest_plugins = ["relaypass.testing.plugin"]\n')
    assert outcomes["test_auto[llvm]"] == "passed"
    assert outcomes["test_explicit[llvm]"] == "passed"
    assert outcomes["test_explicit[vulkan]"].startswith("skipped:")
    assert not any(name.startswith("test_excluded[llvm") for name in outcomes)


def test_main_runs_pytest_on_the_calling_file(tmp_path):
    path = tmp_path / "test_main_sample.py"
    path.write_text(textwrap.dedent("""
        import relaypass as tvm
        import relaypass.testing

        value = tvm.testing.parameter(1, 2, 3)

        def test_value(value):
            assert value in (1, 2, 3)

        if __name__ == "__main__":
            tvm.testing.main()
        """), encoding="utf-8")
    proc = subprocess.run([sys.executable, str(path), "-p", "no:xdist", "-p", "no:cacheprovider",
                           "-p", "no:benchmark"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed" in proc.stdout
