"""The generator of DCGAN (Radford et al., 2015), as Relay's ``relay.testing.dcgan``.

A dense projection of the random code to a 4x4 map, then transposed
convolutions doubling the map to 64x64, with batch norm and relu between
them and tanh at the end.
"""

from __future__ import annotations

from ...ir.expr import Expr, Function
from ...ir.expr_builders import var
from ...ir.variables import free_vars
from ...op import nn, reshape, tanh
from . import layers
from .common import create_workload

__all__ = ["deconv2d", "deconv2d_bn_relu", "get_net", "get_workload"]

_DECONV_KERNEL_LAYOUTS = {"NCHW": "IOHW", "NHWC": "HWOI"}


def deconv2d(data: Expr, ishape, oshape, kshape, layout: str, name: str,
             stride=(2, 2)) -> Expr:
    """A transposed convolution enlarging the map to ``oshape``'s (height, width)."""
    if layout not in _DECONV_KERNEL_LAYOUTS:
        raise ValueError(f"dcgan: unknown layout {layout!r}: use 'NCHW' or 'NHWC'")
    target = (oshape[-2], oshape[-1])
    pad = tuple((k - 1) // 2 for k in kshape[:2])
    adjust = tuple((t + 2 * p - k) % s for t, p, k, s in zip(target, pad, kshape, stride))
    return layers.conv2d_transpose(
        data,
        kernel_size=kshape,
        strides=stride,
        channels=oshape[0],
        padding=pad,
        output_padding=adjust,
        data_layout=layout,
        kernel_layout=_DECONV_KERNEL_LAYOUTS[layout],
        name=name,
    )


def deconv2d_bn_relu(data: Expr, prefix: str, **kwargs) -> Expr:
    """:func:`deconv2d` ``<prefix>_deconv``, batch norm ``<prefix>_batch_norm`` (no scale), relu."""
    body = deconv2d(data, name=f"{prefix}_deconv", **kwargs)
    bn_axis = kwargs.get("layout", "NCHW").index("C")
    body = layers.batch_norm_infer(body, epsilon=1e-5 + 1e-12, scale=False, axis=bn_axis,
                                   name=f"{prefix}_batch_norm")
    return nn.relu(body)


def get_net(
    batch_size: int,
    random_len: int = 100,
    oshape=(3, 64, 64),
    ngf: int = 128,
    code: Expr | None = None,
    layout: str = "NCHW",
    dtype: str = "float32",
) -> Function:
    """The generator function for 64x64 images of ``oshape`` (channels, height, width)."""
    if tuple(oshape[-2:]) != (64, 64):
        raise ValueError(f"dcgan: only 64x64 images are supported, not {tuple(oshape[-2:])}")
    if code is None:
        code = var("data", dtype=dtype, shape=(batch_size, random_len))
    body = nn.relu(nn.dense(code, weight=var("dense_weight"), units=4 * 4 * ngf * 8))
    if layout == "NCHW":
        body = reshape(body, newshape=(-1, ngf * 8, 4, 4))
    elif layout == "NHWC":
        body = reshape(body, newshape=(-1, 4, 4, ngf * 8))
    else:
        raise ValueError(f"dcgan: unknown layout {layout!r}: use 'NCHW' or 'NHWC'")
    # 4x4 → 8x8 → 16x16 → 32x32, halving the channels.
    for prefix, width, size in (("g2", 8, 4), ("g3", 4, 8), ("g4", 2, 16)):
        body = deconv2d_bn_relu(
            body,
            ishape=(ngf * width, size, size),
            oshape=(ngf * width // 2, size * 2, size * 2),
            kshape=(4, 4),
            layout=layout,
            prefix=prefix,
        )
    body = deconv2d(body, ishape=(ngf, 32, 32), oshape=oshape[-3:], kshape=(4, 4),
                    layout=layout, name="g5_deconv")
    out = tanh(body)
    return Function(free_vars(out), out)


def get_workload(
    batch_size: int,
    oshape=(3, 64, 64),
    ngf: int = 128,
    random_len: int = 100,
    layout: str = "NCHW",
    dtype: str = "float32",
):
    """``(mod, params)`` for the DCGAN generator, parameters Xavier-initialized."""
    net = get_net(batch_size, random_len, oshape=oshape, ngf=ngf, layout=layout, dtype=dtype)
    return create_workload(net)
