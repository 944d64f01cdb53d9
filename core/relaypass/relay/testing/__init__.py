"""``relay.testing``: Relay's model builders and test helpers.

Re-exports of :mod:`relaypass.testing.workloads`: the model modules
(``resnet``, ``mobilenet``, ``mlp``, ``lstm``, ``squeezenet``,
``inception_v3``, ``vgg``, ``densenet``, ``dcgan``, ``dqn``, ``synthetic``),
``init`` and ``layers``, and ``create_workload``, ``run_opt_pass``,
``run_infer_type``, ``count_ops`` and ``rand``; the ``nat`` helpers ``count``,
``make_nat_value`` and ``make_nat_expr``.  The pass-author kit
(``check_pass``, random programs) is :mod:`relaypass.testing`.
"""

from ...testing.nat import count, make_nat_expr, make_nat_value
from ...testing.workloads.common import (
    count_ops,
    create_workload,
    rand,
    run_infer_type,
    run_opt_pass,
)
from . import (
    dcgan,
    densenet,
    dqn,
    inception_v3,
    init,
    layers,
    lstm,
    mlp,
    mobilenet,
    resnet,
    squeezenet,
    synthetic,
    vgg,
)

__all__ = [
    "count", "count_ops", "create_workload", "dcgan", "densenet", "dqn", "inception_v3", "init", "layers",
    "lstm", "mlp", "mobilenet", "rand", "resnet", "run_infer_type", "run_opt_pass", "squeezenet",
    "synthetic", "vgg", "make_nat_expr", "make_nat_value",
]
