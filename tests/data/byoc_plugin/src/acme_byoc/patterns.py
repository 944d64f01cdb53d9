"""The operator groups the acme accelerator runs as one kernel each.

Imported only when a pipeline (or ``get_pattern_table("acme")``) first asks
for the table; the manifest names :func:`pattern_table` as its factory.
"""

from relaypass.relay.dataflow_pattern import is_op, wildcard


def conv2d_bias_relu():
    conv = is_op("nn.conv2d")(wildcard(), wildcard())
    return is_op("nn.relu")(is_op("nn.bias_add")(conv, wildcard()))


def _nchw_only(root):
    # acme's convolution kernel reads NCHW data: other layouts stay on the host.
    # root is the relu; its argument the bias_add, whose first argument the conv2d.
    return root.args[0].args[0].attrs.data_layout == "NCHW"


def dense_add():
    return is_op("add")(is_op("nn.dense")(wildcard(), wildcard()), wildcard())


def pattern_table():
    """acme's table; its order is MergeComposite's priority."""
    return [
        ("acme.conv2d_bias_relu", conv2d_bias_relu(), _nchw_only),
        ("acme.dense_add", dense_add()),
    ]
