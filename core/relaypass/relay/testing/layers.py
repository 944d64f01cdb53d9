"""``relay.testing.layers``: the layer helpers the model builders use."""

from ...testing.workloads.layers import (
    batch_norm_infer,
    conv2d,
    conv2d_transpose,
    conv3d,
    conv_kernel_layout,
    dense_add_bias,
)

__all__ = [
    "batch_norm_infer", "conv2d", "conv2d_transpose", "conv3d", "conv_kernel_layout",
    "dense_add_bias",
]
