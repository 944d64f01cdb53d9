"""What the tests of passes on random programs share: running a module, comparing results.

Imported by the tests as ``from program_helpers import ...`` (pytest puts this
folder on ``sys.path`` for the test files in it).
"""

from __future__ import annotations

import warnings

import numpy as np

from relaypass.interp import create_executor


def run_quietly(mod, args):
    """``@main`` of ``mod`` on ``args``; random inputs overflow, so numpy's warnings are off."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_executor(mod=mod).evaluate()(*args)


def assert_same_values(a, b, rtol=1e-5, atol=1e-5):
    """Two results agree: same tuple structure, shapes and dtypes, values within tolerance.

    NaN equals NaN: a pass may move where a NaN is computed, not whether.
    """
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_same_values(x, y, rtol, atol)
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
