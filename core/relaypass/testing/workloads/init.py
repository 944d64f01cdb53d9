"""Parameter initializers for the model builders, as ``relay.testing.init`` has them.

An initializer is called with a parameter's name and a numpy array to fill in
place; the suffix of the name chooses the rule (``..._weight``, ``..._bias``,
``..._gamma``, ``..._beta``, ``..._mean``, ``..._var``).  Random draws come from
numpy's global generator, which :func:`~relaypass.testing.workloads.common.create_workload`
seeds, so a seed gives the values Relay's builders give.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["Constant", "Initializer", "Xavier"]

_SUFFIX_RULES = (
    ("weight", "_init_weight"),
    ("bias", "_init_bias"),
    ("gamma", "_init_gamma"),
    ("beta", "_init_beta"),
    ("mean", "_init_mean"),
    ("var", "_init_var"),
)


class Initializer:
    """Fills parameter arrays by name; subclasses say how weights are drawn.

    Biases, betas and running means start at 0, gammas and running variances
    at 1.  A name with none of the known suffixes is an error.
    """

    def __init__(self, **kwargs: Any):
        self._kwargs = kwargs

    def __call__(self, desc: str, arr: np.ndarray) -> None:
        """Initialize ``arr`` (in place) as the parameter named ``desc``."""
        for suffix, method in _SUFFIX_RULES:
            if desc.endswith(suffix):
                getattr(self, method)(desc, arr)
                return
        self._init_default(desc, arr)

    def _init_bias(self, _: str, arr: np.ndarray) -> None:
        arr[:] = 0.0

    def _init_gamma(self, _: str, arr: np.ndarray) -> None:
        arr[:] = 1.0

    def _init_beta(self, _: str, arr: np.ndarray) -> None:
        arr[:] = 0.0

    def _init_mean(self, _: str, arr: np.ndarray) -> None:
        arr[:] = 0.0

    def _init_var(self, _: str, arr: np.ndarray) -> None:
        arr[:] = 1.0

    def _init_weight(self, name: str, arr: np.ndarray) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not say how to initialize weights")

    def _init_default(self, name: str, _: np.ndarray) -> None:
        raise ValueError(
            f"no initialization rule for the parameter {name!r}: its name must end in "
            "'weight', 'bias', 'gamma', 'beta', 'mean' or 'var'"
        )


class Xavier(Initializer):
    """Glorot ("Xavier") initialization of weights: uniform in ``±sqrt(magnitude / factor)``.

    ``factor_type`` picks the factor: the mean of fan-in and fan-out
    (``"avg"``), fan-in (``"in"``) or fan-out (``"out"``), where the fans are
    the weight's first two extents times the product of the others.  Weights
    whose name contains ``"depthwise"`` use that product alone.  Only
    ``rnd_type="uniform"`` is supported.
    """

    def __init__(self, rnd_type: str = "uniform", factor_type: str = "avg", magnitude: float = 3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name: str, arr: np.ndarray) -> None:
        shape = arr.shape
        if len(shape) < 2:
            raise ValueError(
                f"Xavier initialization needs a weight of two or more dimensions; "
                f"{name!r} has shape {tuple(shape)}"
            )
        hw_scale = np.prod(shape[2:]) if len(shape) > 2 else 1.0
        fan_in = shape[1] * hw_scale
        fan_out = shape[0] * hw_scale
        factors = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}
        if self.factor_type not in factors:
            raise ValueError(
                f"unknown Xavier factor_type {self.factor_type!r}: use 'avg', 'in' or 'out'"
            )
        factor = factors[self.factor_type]
        if "depthwise" in name:
            # A depthwise filter sees one channel: only its window counts.
            factor = hw_scale
        scale = np.sqrt(self.magnitude / factor)
        if self.rnd_type != "uniform":
            raise ValueError(f"unknown Xavier rnd_type {self.rnd_type!r}: only 'uniform' is supported")
        arr[:] = np.random.uniform(-scale, scale, size=arr.shape)


class Constant(Initializer):
    """Every weight element is ``1 / size``, so each weight sums to one."""

    def _init_weight(self, name: str, arr: np.ndarray) -> None:
        arr[:] = 1.0 / int(np.prod(arr.shape))
