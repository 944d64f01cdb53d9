"""The benchmark scripts still produce their figures.

The benchmarks are never timed in the tests, but a script that silently
reports nothing (an instrument read after its context cleared it, say) is a
broken measuring tool: these tests run each figure-collecting function once,
on the smallest input, and check that every figure is there and positive.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module", autouse=True)
def _benchmarks_on_path():
    sys.path.insert(0, str(BENCHMARKS))
    yield
    sys.path.remove(str(BENCHMARKS))


def test_model_bench_times_every_pass_of_the_o3_pipeline():
    pytest.importorskip("onnx")
    import model_bench

    (row,) = model_bench.collect(["squeezenet"], repeat=1)
    names = [name for name, _ms in row["passes"]]
    assert {"InferType", "FoldConstant", "FuseOps"} <= set(names)
    assert all(ms >= 0 for _name, ms in row["passes"])
    assert row["total_ms"] > 0 and row["import_ms"] > 0
    assert row["total_ms"] >= max(ms for _name, ms in row["passes"])
    assert row["nodes"] > 100
