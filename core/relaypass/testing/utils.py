"""TVM's ``tvm.testing`` helpers for pass authors' test suites, over plain pytest.

A test file written for TVM keeps working with its imports changed:

* ``assert_allclose(actual, desired, rtol=1e-7, atol=1e-7)``: numpy's, with
  TVM's defaults and TVM's check that the shapes agree first;
* ``parameter``, ``parameters`` and ``fixture`` (``cache_return_value=True``
  too) define pytest fixtures from module-level assignments, as in TVM;
* targets: the numpy interpreter is the one target, ``("llvm", cpu(0))``.
  ``enabled_targets()`` lists it, ``parametrize_targets`` parametrizes a test
  over ``target`` (and ``dev``, when the test takes it), and a test asking for
  another target (``"cuda"``) is skipped, with the reason;
* ``requires_llvm`` lets a test run; ``requires_cuda``, ``requires_gpu`` and
  the other ``requires_*`` features skip it (they need a code generator or a
  device); ``uses_gpu`` changes nothing;
* ``main()`` runs pytest on the calling file (``if __name__ == "__main__":
  tvm.testing.main()``).

What TVM does in its pytest plugin (a test taking ``target``/``dev`` with no
decorator is run for every enabled target) needs
``pytest_plugins = ["relaypass.testing.plugin"]`` in a ``conftest.py``; the
rest works without it.  pytest is imported when a helper that needs it is
called, so importing this module never requires pytest.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import inspect
import os
import pickle
import sys
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..ir.ndarray import Device, cpu, device

__all__ = [
    "Feature", "IS_IN_CI", "SKIP_SLOW_TESTS", "assert_allclose", "device_enabled",
    "enabled_targets", "exclude_targets", "fixture", "known_failing_targets", "main", "parameter",
    "parameters", "parametrize_targets", "requires_cuda_compute_version", "requires_nvcc_version",
    "requires_package", "skip_if_32bit", "slow", "uses_gpu", "uses_multi_gpu",
    "requires_aarch64", "requires_aarch64_sme", "requires_aarch64_sve", "requires_aprofile_aem_fvp",
    "requires_arm_dot", "requires_arm_fp16", "requires_cmsisnn", "requires_corstone300",
    "requires_cublas", "requires_cuda", "requires_cudagraph", "requires_cudnn", "requires_cutlass",
    "requires_ethosn", "requires_ethosu", "requires_gpu", "requires_hexagon", "requires_hipblas",
    "requires_libtorch", "requires_llvm", "requires_matrixcore", "requires_metal",
    "requires_micro", "requires_mrvl", "requires_multi_gpu", "requires_nccl", "requires_nnapi",
    "requires_nvptx", "requires_opencl", "requires_openclml", "requires_rocm", "requires_rpc",
    "requires_tensorcore", "requires_vitis_ai", "requires_vulkan", "requires_x86",
    "requires_x86_amx", "requires_x86_avx512", "requires_x86_vnni",
]

SKIP_SLOW_TESTS = os.getenv("SKIP_SLOW_TESTS", "").lower() in {"true", "1", "yes"}
IS_IN_CI = os.getenv("CI", "") == "true"

CPU_TARGET = "llvm"
"""The one target tests run on: the numpy interpreter, on ``cpu(0)``."""

_WHY = (
    "relaypass runs Relay programs on its numpy interpreter, on the CPU (target llvm); "
    "see relaypass help coming-from-relay#out-of-scope"
)


def _pytest() -> Any:
    import pytest

    return pytest


# --- comparing results --------------------------------------------------------------------
def assert_allclose(actual: Any, desired: Any, rtol: float = 1e-7, atol: float = 1e-7) -> None:
    """``numpy.testing.assert_allclose`` with TVM's tolerances, after checking the shapes agree.

    ``actual`` and ``desired`` are arrays, NDArrays or numbers; as in numpy
    the test is ``|actual - desired| <= atol + rtol * |desired|``.
    """
    actual = np.asanyarray(actual)
    desired = np.asanyarray(desired)
    np.testing.assert_allclose(actual.shape, desired.shape)
    np.testing.assert_allclose(actual, desired, rtol=rtol, atol=atol, verbose=True)


# --- parametrized fixtures ----------------------------------------------------------------
def parameter(*values: Any, ids: Iterable[str] | None = None,
              by_dict: dict[str, Any] | None = None) -> Any:
    """A fixture taking each of ``values`` in turn: ``size = tvm.testing.parameter(1, 10)``.

    A test taking ``size`` runs once per value (a test taking two parameters,
    once per combination).  ``by_dict={"small": 1, "large": 10}`` gives the
    values with their test ids.
    """
    pytest = _pytest()
    if by_dict is not None:
        if values or ids:
            raise RuntimeError(
                "Use of the by_dict parameter cannot be used alongside positional arguments"
            )
        ids, values = zip(*by_dict.items())

    @pytest.fixture(params=list(values), ids=None if ids is None else list(ids), scope="session")
    def as_fixture(*_cls: Any, request: Any) -> Any:
        return request.param

    return as_fixture


_groups = 0


def parameters(*value_sets: tuple, ids: Iterable[str] | None = None) -> list[Any]:
    """Fixtures that take their values together: ``size, dtype = parameters((16, "f32"), (8, "f16"))``.

    A test taking ``size`` and ``dtype`` runs once per set, not once per
    combination.  Call it at module level, as in TVM: the fixtures share a
    parametrized fixture that is added to the calling module.
    """
    global _groups
    pytest = _pytest()
    group_name = f"_tvm_testing_parameters_{_groups}"
    _groups += 1
    ids = [_set_id(i, s) for i, s in enumerate(value_sets)] if ids is None else list(ids)

    @pytest.fixture(params=list(value_sets), ids=ids)
    def group(*_cls: Any, request: Any) -> Any:
        return request.param

    sys._getframe(1).f_globals[group_name] = group
    width = len(value_sets[0]) if value_sets else 0
    return [pytest.fixture(_field_of(group_name, i)) for i in range(width)]


def _set_id(position: int, values: tuple) -> str:
    """A test id for one set of values, as pytest spells ids: ``16-float32``."""
    if all(v is None or isinstance(v, (str, int, float, bool)) for v in values):
        return "-".join(str(v) for v in values)
    return f"set{position}"


def _field_of(group_name: str, index: int) -> Callable[..., Any]:
    """A fixture function taking the group fixture (by its name) and returning field ``index``."""

    def field(**kwargs: Any) -> Any:
        return kwargs[group_name][index]

    field.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(group_name, inspect.Parameter.KEYWORD_ONLY)]
    )
    field.__name__ = f"{group_name}_{index}"
    return field


def fixture(func: Callable[..., Any] | None = None, *, cache_return_value: bool = False) -> Any:
    """A pytest fixture (run for each test), as ``@tvm.testing.fixture``.

    With ``cache_return_value=True`` the function runs once per distinct set
    of arguments (per parameter value) and each test gets a deep copy of that
    value.  ``TVM_TEST_DISABLE_CACHE=1`` turns the cache off.
    """
    pytest = _pytest()
    disabled = bool(int(os.environ.get("TVM_TEST_DISABLE_CACHE", "0")))
    cache = cache_return_value and not disabled

    def wraps(func: Callable[..., Any]) -> Any:
        if cache:
            func = _fixture_cache(func)
        return pytest.fixture(func, scope="function")

    return wraps if func is None else wraps(func)


def _fixture_cache(func: Callable[..., Any]) -> Callable[..., Any]:
    cache: dict[Any, Any] = {}

    def key_of(args: tuple, kwargs: dict) -> Any:
        try:
            hash((args, tuple(sorted(kwargs.items()))))
            return (args, tuple(sorted(kwargs.items())))
        except TypeError:
            pass
        try:
            return pickle.dumps((args, kwargs))
        except Exception as exc:
            raise TypeError(
                "caching a fixture's value needs its arguments to be hashable or picklable"
            ) from exc

    @functools.wraps(func)  # pytest reads the fixture's arguments through __wrapped__
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        key = key_of(args, kwargs)
        if key not in cache:
            cache[key] = func(*args, **kwargs)
        yield copy.deepcopy(cache[key])

    return wrapper


# --- targets ----------------------------------------------------------------------------
def _kind(target: Any) -> str:
    name = getattr(getattr(target, "kind", None), "name", None)
    if name is not None:
        return str(name)
    text = str(target).split()
    return text[0] if text else ""


def enabled_targets() -> list[tuple[str, Device]]:
    """The targets tests run on, with their devices: ``[("llvm", cpu(0))]``."""
    return [(CPU_TARGET, cpu(0))]


def device_enabled(target: str) -> bool:
    """Whether tests run on ``target``: true for ``"llvm"`` only."""
    if not isinstance(target, str):
        raise TypeError("device_enabled requires a target as a string")
    return _kind(target) == CPU_TARGET


def target_device(target: Any) -> Device | None:
    """The device of ``target`` (``cpu(0)`` for llvm), None for a name TVM does not know."""
    try:
        return device(_kind(target))
    except ValueError:
        return None


def _target_marks(target: Any, func: Callable[..., Any]) -> list[Any]:
    """Marks for one target of a parametrized test: a skip off the CPU, an xfail if known to fail."""
    pytest = _pytest()
    kind = _kind(target)
    marks = []
    if kind != CPU_TARGET:
        marks.append(pytest.mark.skip(reason=f"target {kind!r} is out of scope: {_WHY}"))
    if kind in getattr(func, "tvm_known_failing_targets", ()):
        marks.append(pytest.mark.xfail(reason=f'Known failing test for target "{kind}"'))
    return marks


def target_params(func: Callable[..., Any], targets: Iterable[Any] | None,
                  with_dev: bool) -> list[Any]:
    """The ``pytest.param`` of each target (with its device when ``with_dev``), marked."""
    pytest = _pytest()
    if targets is None:
        excluded = getattr(func, "tvm_excluded_targets", ())
        targets = [t for t, _ in enabled_targets() if _kind(t) not in excluded]
    params = []
    for t in targets:
        values = (t, target_device(t)) if with_dev else (t,)
        params.append(pytest.param(*values, marks=_target_marks(t, func), id=str(t)))
    return params


def _parametrized_over_target(func: Callable[..., Any]) -> bool:
    for mark in getattr(func, "pytestmark", ()):
        if mark.name == "parametrize" and mark.args:
            names = mark.args[0]
            names = names.split(",") if isinstance(names, str) else names
            if "target" in [n.strip() for n in names]:
                return True
    return False


def parametrize_targets(*args: Any) -> Any:
    """Run a test for each target: ``@parametrize_targets("llvm", "cuda")`` or bare.

    The test receives ``target`` (and ``dev``, its device, when it takes
    one); targets other than llvm are skipped, with the reason.  Bare, it
    runs for every enabled target (llvm) except those in ``exclude_targets``.
    """
    if len(args) == 1 and callable(args[0]):
        func = args[0]
        if "target" not in _argnames(func) or _parametrized_over_target(func):
            return func
        return _parametrize(func, None)

    def decorate(func: Callable[..., Any]) -> Any:
        return _parametrize(func, list(args))

    return decorate


def _argnames(func: Callable[..., Any]) -> list[str]:
    try:
        return list(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return []


def _parametrize(func: Callable[..., Any], targets: list[Any] | None) -> Any:
    pytest = _pytest()
    with_dev = "dev" in _argnames(func)
    names = "target,dev" if with_dev else "target"
    return pytest.mark.parametrize(names, target_params(func, targets, with_dev))(func)


def exclude_targets(*args: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Leave these targets out of the test's automatic targets (the plugin or a bare parametrize_targets)."""

    def wraps(func: Callable[..., Any]) -> Callable[..., Any]:
        func.tvm_excluded_targets = args  # type: ignore[attr-defined]
        return func

    return wraps


def known_failing_targets(*args: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark the test as expected to fail (xfail) on these targets."""

    def wraps(func: Callable[..., Any]) -> Callable[..., Any]:
        func.tvm_known_failing_targets = args  # type: ignore[attr-defined]
        return func

    return wraps


# --- features -----------------------------------------------------------------------------
class Feature:
    """Something a test needs, as TVM's ``tvm.testing.Feature``: ``@requires_llvm``, ``@requires_cuda``.

    Only ``llvm`` (the CPU the interpreter runs on) is available; a test that
    requires any other feature is skipped, saying why.  Used bare or with
    ``support_required=`` ("compile-and-run", "compile-only", "optional":
    an optional feature never skips).
    """

    _all_features: dict[str, Feature] = {}

    def __init__(self, name: str, long_name: str | None = None, available: bool = False) -> None:
        self.name = name
        self.long_name = long_name or name
        self.available = available
        self._all_features[name] = self

    def marks(self, support_required: str = "compile-and-run") -> list[Any]:
        """The pytest marks of a test needing this feature: a skip, unless it is available."""
        if support_required not in ("compile-and-run", "compile-only", "optional"):
            raise ValueError(f"Unknown feature support type: {support_required}")
        if self.available or support_required == "optional":
            return []
        return [_pytest().mark.skip(reason=f"requires {self.long_name}, which is out of scope: {_WHY}")]

    def __call__(self, func: Callable[..., Any] | None = None, *,
                 support_required: str = "compile-and-run") -> Any:
        marks = self.marks(support_required)

        def wrapper(func: Callable[..., Any]) -> Callable[..., Any]:
            for mark in marks:
                func = mark(func)
            return func

        return wrapper if func is None else wrapper(func)

    @classmethod
    def require(cls, name: str, support_required: str = "compile-and-run") -> Any:
        """A decorator requiring the feature called ``name``."""
        return cls._all_features[name](support_required=support_required)

    def __repr__(self) -> str:
        return f"Feature({self.name!r}, available={self.available})"


# TVM's features; only llvm (the CPU the interpreter runs on) is available.
requires_llvm = Feature("llvm", "LLVM", available=True)
requires_gpu = Feature("gpu", "a GPU")
requires_multi_gpu = Feature("multi_gpu", "several GPUs")
requires_x86 = Feature("x86", "x86 Architecture")
requires_aarch64 = Feature("aarch64", "AArch64 Architecture")
requires_cuda = Feature("cuda", "CUDA")
requires_tensorcore = Feature("tensorcore", "NVIDIA Tensor Core")
requires_cudnn = Feature("cudnn", "cuDNN")
requires_cublas = Feature("cublas", "cuBLAS")
requires_nccl = Feature("nccl", "NCCL")
requires_nvptx = Feature("nvptx", "NVPTX")
requires_cudagraph = Feature("cudagraph", "CUDA Graph")
requires_opencl = Feature("opencl", "OpenCL")
requires_rocm = Feature("rocm", "ROCm")
requires_matrixcore = Feature("matrixcore", "AMD Matrix Core")
requires_hipblas = Feature("hipblas", "hipBLAS")
requires_metal = Feature("metal", "Metal")
requires_vulkan = Feature("vulkan", "Vulkan")
requires_openclml = Feature("OpenCLML", "CLML")
requires_nnapi = Feature("NNAPI", "NNAPI")
requires_micro = Feature("micro", "MicroTVM")
requires_cutlass = Feature("cutlass", "CUTLASS")
requires_rpc = Feature("rpc", "RPC")
requires_ethosn = Feature("ethosn", "Arm(R) Ethos(TM)-N")
requires_ethosu = Feature("ethosu", "Arm(R) Ethos(TM)-U")
requires_libtorch = Feature("libtorch", "LibTorch")
requires_mrvl = Feature("mrvl", "Marvell")
requires_hexagon = Feature("hexagon", "Hexagon")
requires_cmsisnn = Feature("cmsisnn", "CMSIS NN")
requires_corstone300 = Feature("corstone300", "Corstone-300")
requires_aprofile_aem_fvp = Feature("aprofile-aem-fvp", "AProfile AEM FVP")
requires_vitis_ai = Feature("vitis_ai", "Vitis AI")
requires_arm_dot = Feature("arm_dot", "ARM dot product")
requires_arm_fp16 = Feature("arm_fp16", "Arm(R) Neon(TM) instructions for FP16")
requires_aarch64_sve = Feature("arm_sve", "AArch64 SVE")
requires_aarch64_sme = Feature("arm_sme", "AArch64 SME")
requires_x86_vnni = Feature("x86_vnni", "x86 VNNI Extensions")
requires_x86_avx512 = Feature("x86_avx512", "x86 AVX512 Extensions")
requires_x86_amx = Feature("x86_amx", "x86 AMX Extensions")

uses_gpu = requires_gpu(support_required="optional")
"""A test that uses a GPU when there is one: it runs (on the CPU)."""
uses_multi_gpu = requires_multi_gpu(support_required="optional")


def slow(func: Callable[..., Any]) -> Any:
    """Skip the test when ``SKIP_SLOW_TESTS`` is set."""
    return _pytest().mark.skipif(
        SKIP_SLOW_TESTS,
        reason="Skipping slow test since the SKIP_SLOW_TESTS environment variable is 'true'",
    )(func)


def requires_package(*packages: str) -> Callable[[Callable[..., Any]], Any]:
    """Skip the test unless every one of ``packages`` can be imported."""
    missing = [p for p in packages if importlib.util.find_spec(p) is None]

    def wrapper(func: Callable[..., Any]) -> Any:
        if not missing:
            return func
        return _pytest().mark.skip(reason=f"Cannot import '{missing[0]}'")(func)

    return wrapper


def skip_if_32bit(reason: str) -> Callable[[Callable[..., Any]], Any]:
    """Skip the test on a 32-bit Python."""

    def decorator(func: Callable[..., Any]) -> Any:
        return _pytest().mark.skipif(sys.maxsize <= 2**32, reason=reason)(func)

    return decorator


def requires_nvcc_version(major_version: int, minor_version: int = 0,
                          release_version: int = 0) -> Callable[[Callable[..., Any]], Any]:
    """Skip the test: it needs CUDA's compiler."""
    return requires_cuda()


def requires_cuda_compute_version(major_version: int,
                                  minor_version: int = 0) -> Callable[[Callable[..., Any]], Any]:
    """Skip the test: it needs a CUDA device."""
    return requires_cuda()


# --- running a test file ----------------------------------------------------------------
def main() -> None:
    """Run pytest on the file that calls this (``if __name__ == "__main__": tvm.testing.main()``)."""
    test_file = inspect.getsourcefile(sys._getframe(1))
    sys.exit(_pytest().main([test_file, *sys.argv[1:]]))
