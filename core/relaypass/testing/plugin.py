"""A pytest plugin for test files written for TVM: ``target`` and ``dev`` as TVM's plugin gives them.

Enable it from a ``conftest.py``, as TVM's test suites enable theirs::

    pytest_plugins = ["relaypass.testing.plugin"]

A test that takes ``target`` and is not parametrized over it then runs for
each enabled target (the numpy interpreter, ``"llvm"``), minus those named by
``@tvm.testing.exclude_targets``; ``dev`` is the device of ``target``.
Everything else in :mod:`relaypass.testing.utils` works without the plugin.
"""

from __future__ import annotations

from typing import Any

import pytest

from ..ir.ndarray import Device
from .utils import target_device, target_params


def pytest_generate_tests(metafunc: Any) -> None:
    """Parametrize over the enabled targets a test that takes ``target`` without saying which."""
    if "target" not in metafunc.fixturenames:
        return
    func = metafunc.function
    explicit = any(
        "target" in [n.strip() for n in (m.args[0].split(",") if isinstance(m.args[0], str)
                                          else m.args[0])]
        for m in metafunc.definition.iter_markers("parametrize") if m.args
    )
    if explicit:
        return
    metafunc.parametrize("target", target_params(func, None, with_dev=False))


@pytest.fixture
def dev(target: Any) -> Device | None:
    """The device of the test's target: ``cpu(0)`` for llvm."""
    return target_device(target)
