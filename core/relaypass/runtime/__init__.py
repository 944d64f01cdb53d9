"""``tvm.runtime`` as Relay code uses it: NDArray, Device, the device constructors, ``ndarray``.

Re-exports only: arrays and devices are defined in :mod:`relaypass.ir.ndarray`,
the tuple container in :mod:`relaypass.interp.container`.
"""

from ..ir.ndarray import (
    Device,
    NDArray,
    cl,
    cpu,
    cuda,
    device,
    ext_dev,
    gpu,
    hexagon,
    metal,
    mtl,
    opencl,
    rocm,
    vpi,
    vulkan,
    webgpu,
)
from ..ir.object_api import convert  # tvm.runtime.convert: lists to Arrays, dicts to Maps
from . import container, ndarray

__all__ = [
    "Device", "NDArray", "cl", "container", "convert", "cpu", "cuda", "device", "ext_dev", "gpu",
    "hexagon", "metal", "mtl", "ndarray", "opencl", "rocm", "vpi", "vulkan", "webgpu",
]
