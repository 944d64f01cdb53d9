"""TVM's runtime array and device, over numpy: ``tvm.nd.NDArray``, ``tvm.cpu()``, ``tvm.nd.array``.

Relay code reads a constant's value as ``const.data.numpy()`` and builds
arrays with ``tvm.nd.array(x)``; this module gives those names TVM's
behaviour without a runtime library.  An :class:`NDArray` wraps a numpy
array: ``numpy()`` returns a copy (as TVM's does), ``shape`` is a tuple,
``dtype`` a string, ``device`` the CPU, and ``__array__`` lets numpy
functions read it without a copy.

The data of a :class:`~relaypass.ir.expr.Constant` is a *read-only* NDArray
over the constant's read-only numpy array (``const.array``): nodes are
immutable, so writing into it (``copyfrom``, ``nd[:] = ...``) raises
:class:`ReadOnlyArrayError` instead of changing every program that shares
the constant.

relaypass runs programs on numpy only, so the CPU is the one device that
exists; the other devices can be named and compared (``tvm.cuda(0)``), and
placing an array on one raises :class:`~relaypass.errors.RelayCompatError`.

The names follow ``tvm.runtime.ndarray``; ``relaypass.nd`` and
``relaypass.runtime.ndarray`` re-export them.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..errors import RelayCompatError, RelayPassError

__all__ = [
    "Device", "NDArray", "ReadOnlyArrayError", "array", "cl", "cpu", "cuda", "device", "empty",
    "ext_dev", "from_dlpack", "gpu", "hexagon", "metal", "mtl", "opencl", "rocm", "vpi",
    "vulkan", "webgpu",
]


class ReadOnlyArrayError(RelayPassError, ValueError):
    """A write into an NDArray that is the data of a Constant (constants are immutable)."""


class Device:
    """A device as TVM names it: ``device_type`` (DLPack's code) and ``device_id``.

    ``tvm.cpu(0) == tvm.device("cpu")``, ``repr`` is ``cpu(0)``.  Only the CPU
    ``exist``s here; the others can be named, compared and printed.
    """

    __slots__ = ("device_type", "device_id")

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLAOCL = 32
    kDLSDAccel = 33
    kOpenGL = 34
    kDLMicroDev = 35

    MASK2STR = {
        1: "cpu", 2: "cuda", 3: "cuda_host", 13: "cuda_managed", 4: "opencl", 7: "vulkan",
        8: "metal", 9: "vpi", 10: "rocm", 11: "rocm_host", 12: "ext_dev", 14: "oneapi",
        15: "webgpu", 16: "hexagon", 32: "aocl", 33: "sdaccel", 34: "opengl", 35: "microdev",
    }
    """The name of each device type, as ``repr`` prints it."""

    STR2MASK = {
        "llvm": 1, "stackvm": 1, "cpu": 1, "c": 1, "test": 1, "hybrid": 1, "composite": 1,
        "cuda": 2, "nvptx": 2, "cl": 4, "opencl": 4, "sdaccel": 4, "aocl": 32,
        "aocl_sw_emu": 32, "vulkan": 7, "metal": 8, "vpi": 9, "rocm": 10, "ext_dev": 12,
        "hexagon": 16, "webgpu": 15,
    }
    """The device type of each target or device name ``tvm.device`` accepts."""

    def __init__(self, device_type: int, device_id: int = 0) -> None:
        self.device_type = int(device_type)
        self.device_id = int(device_id)

    @property
    def exist(self) -> bool:
        """Whether the device exists: only the CPU does (relaypass computes with numpy)."""
        return self.device_type == Device.kDLCPU

    def sync(self, stream: Any = None) -> None:
        """Wait for the device's work to finish: numpy is synchronous, so nothing to wait for."""

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Device)
            and self.device_type == other.device_type
            and self.device_id == other.device_id
        )

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def __repr__(self) -> str:
        name = Device.MASK2STR.get(self.device_type, f"device_type_{self.device_type}")
        return f"{name}({self.device_id})"


def device(dev_type: int | str | Device, dev_id: int = 0) -> Device:
    """A device by type code or name: ``device("cpu")``, ``device("llvm")``, ``device("cuda:1")``."""
    if isinstance(dev_type, Device):
        return dev_type
    if not isinstance(dev_id, int):
        raise ValueError(f"Invalid device id: {dev_id}")
    if isinstance(dev_type, str):
        name = dev_type.split()[0] if dev_type.split() else dev_type
        if name.count(":") == 1:
            name, id_text = name.split(":")
            if not id_text.isdigit():
                raise ValueError(f"Invalid device id: {id_text}")
            dev_id = int(id_text)
        elif name.count(":") > 1:
            raise ValueError(f"Invalid device string: {dev_type}")
        if name not in Device.STR2MASK:
            raise ValueError(f"Unknown device type: {name}")
        return Device(Device.STR2MASK[name], dev_id)
    return Device(dev_type, dev_id)


def cpu(dev_id: int = 0) -> Device:
    """The CPU: where relaypass's arrays live and its programs run."""
    return Device(Device.kDLCPU, dev_id)


def cuda(dev_id: int = 0) -> Device:
    """A CUDA GPU (named only: it does not ``exist`` for relaypass)."""
    return Device(Device.kDLCUDA, dev_id)


def gpu(dev_id: int = 0) -> Device:
    """``cuda``, under the name TVM deprecated."""
    warnings.warn(
        "Please use tvm.cuda() instead of tvm.gpu(). tvm.gpu() is going to be deprecated in 0.9.0",
        stacklevel=2,
    )
    return Device(Device.kDLCUDA, dev_id)


def rocm(dev_id: int = 0) -> Device:
    """A ROCm GPU (named only)."""
    return Device(Device.kDLROCM, dev_id)


def opencl(dev_id: int = 0) -> Device:
    """An OpenCL device (named only)."""
    return Device(Device.kDLOpenCL, dev_id)


def metal(dev_id: int = 0) -> Device:
    """A Metal device (named only)."""
    return Device(Device.kDLMetal, dev_id)


def vpi(dev_id: int = 0) -> Device:
    """A VPI simulated device (named only)."""
    return Device(Device.kDLVPI, dev_id)


def vulkan(dev_id: int = 0) -> Device:
    """A Vulkan device (named only)."""
    return Device(Device.kDLVulkan, dev_id)


def ext_dev(dev_id: int = 0) -> Device:
    """An extension device (named only)."""
    return Device(Device.kDLExtDev, dev_id)


def hexagon(dev_id: int = 0) -> Device:
    """A Hexagon device (named only)."""
    return Device(Device.kDLHexagon, dev_id)


def webgpu(dev_id: int = 0) -> Device:
    """A WebGPU device (named only)."""
    return Device(Device.kDLWebGPU, dev_id)


cl = opencl
mtl = metal

_CPU = cpu(0)

_DTYPE_NAMES: dict[np.dtype, str] = {}
"""``str(dtype)`` of each numpy dtype seen: computing it takes microseconds."""


def _on_cpu(dev: Any, construct: str) -> Device:
    """``dev`` as a Device, which must be the CPU: arrays elsewhere are out of scope."""
    dev = device(dev) if isinstance(dev, (str, int)) else dev
    if not isinstance(dev, Device):
        raise TypeError(f"{construct}: expected a device such as tvm.cpu(0), got {type(dev).__name__}")
    if dev.device_type != Device.kDLCPU:
        raise RelayCompatError(
            f"{construct} on {dev!r}", "relaypass keeps arrays in numpy, on the CPU only"
        )
    return dev


class NDArray:
    """TVM's runtime array, holding a numpy array.

    Make one with :func:`array` (a copy of its argument) or :func:`empty`; a
    constant's ``data`` is a read-only one.  As in TVM, ``==`` is identity
    (``same_as``), and there is no arithmetic: ``numpy()`` gives a copy to
    compute with, and numpy functions accept an NDArray directly
    (``np.testing.assert_allclose(out, expected)``).  The constructor wraps
    ``arr`` without copying it.
    """

    __slots__ = ("_array", "_device", "__weakref__")

    def __init__(self, arr: np.ndarray, device: Device | None = None) -> None:
        self._array = arr if type(arr) is np.ndarray else np.asarray(arr)
        self._device = _CPU if device is None else device

    # --- what the array is ---------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The shape, a tuple of ints."""
        return self._array.shape

    @property
    def dtype(self) -> str:
        """The element type as a string: ``"float32"``, ``"int64"``, ``"bool"``."""
        dt = self._array.dtype
        name = _DTYPE_NAMES.get(dt)
        if name is None:
            name = _DTYPE_NAMES[dt] = str(dt)
        return name

    @property
    def device(self) -> Device:
        """Where the array lives: always ``cpu(0)`` here."""
        return self._device

    @property
    def _frozen(self) -> bool:
        """Whether this array is read-only: the data of a constant."""
        return not self._array.flags.writeable

    # --- reading -----------------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A new, writable numpy array with this array's values."""
        return np.array(self._array, copy=True, order="C")

    def asnumpy(self) -> np.ndarray:
        """``numpy()``, under the name TVM deprecated (it warns, as TVM's does)."""
        warnings.warn(
            "NDArray.asnumpy() will be deprecated in TVM v0.8 release. "
            "Please use NDArray.numpy() instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.numpy()

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        # numpy's protocol: no copy unless asked for (read-only for a constant's data).
        arr = self._array
        if dtype is not None and np.dtype(dtype) != arr.dtype:
            return arr.astype(dtype)
        return arr.copy() if copy else arr

    def __dlpack__(self, stream: Any = None) -> Any:
        return self._array.__dlpack__()

    def __dlpack_device__(self) -> tuple[int, int]:
        return (self._device.device_type, self._device.device_id)

    # --- writing -------------------------------------------------------------------------
    def _writable(self, construct: str) -> np.ndarray:
        arr = self._array
        if not arr.flags.writeable:
            raise ReadOnlyArrayError(
                f"{construct}: this NDArray is the data of a Constant, and constants are "
                "immutable; build a new constant (relay.const(...)) from a copy "
                "(.numpy() or tvm.nd.array(...)) instead"
            )
        return arr

    def copyfrom(self, source_array: Any) -> NDArray:
        """Copy ``source_array`` (same shape; converted to this dtype) into this array; returns self."""
        target = self._writable("NDArray.copyfrom")
        if isinstance(source_array, NDArray):
            source = source_array._array
        elif isinstance(source_array, np.ndarray):
            source = source_array
        else:
            try:
                source = np.array(source_array, dtype=target.dtype)
            except Exception:
                raise TypeError(
                    f"array must be an array_like data, type {type(source_array)} is not supported"
                ) from None
        if source.shape != target.shape:
            raise ValueError(
                f"array shape do not match the shape of NDArray {source.shape} vs {target.shape}"
            )
        np.copyto(target, source, casting="unsafe")
        return self

    def copyto(self, target: NDArray | Device, mem_scope: str | None = None) -> NDArray:
        """Copy into ``target`` (an NDArray of the same shape) or onto a device (a new array)."""
        if isinstance(target, NDArray):
            return target.copyfrom(self)
        if isinstance(target, Device):
            return NDArray(self.numpy(), _on_cpu(target, "NDArray.copyto"))
        raise ValueError(f"Unsupported target type {type(target)}")

    def __setitem__(self, in_slice: Any, value: Any) -> None:
        """``nd[:] = value``: the whole array only, as in TVM."""
        if not isinstance(in_slice, slice) or in_slice.start is not None or in_slice.stop is not None:
            raise ValueError("Array only support set from numpy array")
        if isinstance(value, NDArray):
            if value._array is not self._array:
                value.copyto(self)
        elif isinstance(value, (np.ndarray, np.generic)):
            self.copyfrom(value)
        else:
            raise TypeError(f"type {type(value)} not supported")

    # --- identity, as TVM's ----------------------------------------------------------
    def same_as(self, other: object) -> bool:
        """Whether ``other`` is an NDArray over the same memory."""
        return isinstance(other, NDArray) and other._array is self._array

    def __eq__(self, other: object) -> bool:
        return self.same_as(other)

    def __ne__(self, other: object) -> bool:
        return not self.same_as(other)

    def __hash__(self) -> int:
        return id(self._array)

    # --- copies and pickles --------------------------------------------------------------
    def __copy__(self) -> NDArray:
        return self

    def __deepcopy__(self, memo: dict) -> NDArray:
        # A constant's data never changes, so it can be shared; any other array is copied.
        return self if self._frozen else NDArray(self.numpy(), self._device)

    def __reduce__(self) -> tuple:
        return (_rebuild, (self.numpy(), self._frozen))

    # --- printing ------------------------------------------------------------------------
    def __repr__(self) -> str:
        return f"<relaypass.nd.NDArray shape={self.shape}, {self._device}>\n{self._array!r}"

    def __str__(self) -> str:
        return str(self._array)


def _rebuild(arr: np.ndarray, read_only: bool) -> NDArray:
    if read_only:
        arr.flags.writeable = False
    return NDArray(arr)


def read_only(value: Any) -> tuple[NDArray, np.ndarray]:
    """A read-only NDArray of ``value`` and its read-only numpy array, for a Constant.

    A read-only NDArray or numpy array is used as is; anything else is copied
    (so later writes to the caller's array do not change the constant).
    """
    if type(value) is NDArray:
        arr = value._array
        if not arr.flags.writeable:
            return value, arr
    else:
        arr = value if type(value) is np.ndarray else np.asarray(value)
    if arr.flags.writeable:
        arr = arr.copy()
        arr.flags.writeable = False
    return NDArray(arr), arr


def array(arr: Any, device: Device = _CPU, mem_scope: str | None = None) -> NDArray:
    """A new (writable) NDArray with a copy of ``arr``: a numpy array, an NDArray or a list."""
    dev = _on_cpu(device, "tvm.nd.array")
    if isinstance(arr, NDArray):
        arr = arr._array
    return NDArray(np.array(arr, copy=True, order="C"), dev)


def empty(
    shape: Any, dtype: Any = "float32", device: Device = _CPU, mem_scope: str | None = None
) -> NDArray:
    """A new array of ``shape`` and ``dtype`` (filled with zeros)."""
    dev = _on_cpu(device, "tvm.nd.empty")
    return NDArray(np.zeros(tuple(int(d) for d in shape), dtype=np.dtype(str(dtype))), dev)


def from_dlpack(dltensor: Any) -> NDArray:
    """An NDArray over the memory of an object with ``__dlpack__`` (no copy)."""
    if not hasattr(dltensor, "__dlpack__"):
        raise AttributeError("Required attribute __dlpack__ not found")
    return NDArray(np.from_dlpack(dltensor))
