"""The model builders of Relay's ``relay.testing``: ResNet, MobileNet, an MLP, an LSTM, ...

Each model module has ``get_workload(...)``, returning ``(mod, params)``
(a typed module and initial values for the parameters, from
:func:`~relaypass.testing.workloads.common.create_workload`), and most have
``get_net(...)``, returning the bare function.  The graphs are Relay's: the
same operators in the same order, with the same attributes and parameter
names and shapes, so a pass that counts or rewrites layers gives TVM's
answer.  Users reach them as ``relaypass.relay.testing.resnet`` and so on.

A builder that needs an operator no installed operator set registers raises
:class:`~relaypass.testing.workloads.common.MissingOperatorError` naming it
(``synthetic`` needs ``reshape_like``).
"""

from . import (
    common,
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
from .common import (
    MissingOperatorError,
    NotProvidedError,
    count_ops,
    create_workload,
    rand,
    run_infer_type,
    run_opt_pass,
)

__all__ = [
    "MissingOperatorError", "NotProvidedError", "common", "count_ops", "create_workload",
    "dcgan", "densenet", "dqn", "inception_v3", "init", "layers", "lstm", "mlp", "mobilenet",
    "rand", "resnet", "run_infer_type", "run_opt_pass", "squeezenet", "synthetic", "vgg",
]
