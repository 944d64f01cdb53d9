"""Relay's quantization configuration (``relay.quantize.qconfig``), without the quantizer.

Pass code written for TVM reads the quantization settings even when it does
not quantize: a pass that leaves the first convolution in float checks
``current_qconfig().skip_conv_layers``, a test opens ``with
relay.quantize.qconfig(nbit_input=8, ...)``.  So the configuration is
provided as Relay has it -- an immutable :class:`QConfig` with Relay's fields
and defaults, a thread-local stack of scopes, :func:`current_qconfig` -- while
the quantizer itself (:func:`quantize`, and the annotate, calibrate and
realize passes behind it) raises :class:`~relaypass.errors.RelayCompatError`:
it rewrites a model into integer kernels that only TVM's code generator runs.

Where TVM silently drops a keyword :func:`qconfig` does not know, relaypass
raises :class:`QConfigError` listing the fields, so a misspelt setting cannot
go unnoticed.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .._ffi.registry import register_object
from ..errors import RelayCompatError, RelayPassError

__all__ = [
    "QAnnotateKind", "QConfig", "QConfigError", "QuantizeOutOfScopeError", "current_qconfig",
    "kind2str", "out_of_scope", "qconfig", "quantize",
]


class QConfigError(RelayPassError, AttributeError):
    """A quantization setting that does not exist, or an attempt to change one."""


class QuantizeOutOfScopeError(RelayCompatError, AttributeError):
    """A part of Relay's quantizer (an AttributeError too, so ``hasattr`` says False)."""


class QAnnotateKind:
    """The kinds of value the quantizer annotates; each has its own bit width and dtype."""

    IDENTITY = 0
    INPUT = 1
    WEIGHT = 2
    ACTIVATION = 3


_KIND_NAMES = {
    QAnnotateKind.IDENTITY: "identity",
    QAnnotateKind.INPUT: "input",
    QAnnotateKind.WEIGHT: "weight",
    QAnnotateKind.ACTIVATION: "activation",
}


def kind2str(kind: int) -> str:
    """The name of a :class:`QAnnotateKind` (``"weight"``), as used in field names."""
    name = _KIND_NAMES.get(kind)
    if name is None:
        raise QConfigError(
            f"kind2str: {kind!r} is not a QAnnotateKind (expected one of "
            f"{', '.join(f'{v}={k}' for k, v in _KIND_NAMES.items())})"
        )
    return name


_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "nbit_input": 8,
    "nbit_weight": 8,
    "nbit_activation": 32,
    "dtype_input": "int8",
    "dtype_weight": "int8",
    "dtype_activation": "int32",
    "calibrate_mode": "global_scale",
    "global_scale": 8.0,
    "weight_scale": "power2",
    "skip_dense_layer": True,
    "skip_conv_layers": (0,),
    "do_simulation": False,
    "round_for_shift": True,
    "debug_enabled_ops": None,
    "rounding": "UPWARD",
    "calibrate_chunk_by": -1,
    "partition_conversions": "disabled",
})


def _frozen(value: Any) -> Any:
    # A list setting (skip_conv_layers, debug_enabled_ops) is kept as a tuple, the
    # Array TVM's node system would make of it, so a config cannot change after the fact.
    if isinstance(value, list):
        return tuple(value)
    return value


@register_object("relay.quantize.QConfig")
class QConfig:
    """The quantization settings in force: Relay's fields, immutable once built.

    Build one with :func:`qconfig` (or ``tvm.ir.make_node("relay.quantize.QConfig",
    ...)``); ``with config:`` makes it :func:`current_qconfig` for the block.
    """

    __slots__ = ("_values",)
    _node_defaults = _DEFAULTS

    def __init__(self, **fields: Any) -> None:
        unknown = sorted(set(fields) - set(_DEFAULTS))
        if unknown:
            raise QConfigError(
                f"qconfig: unknown setting{'s' if len(unknown) > 1 else ''} "
                f"{', '.join(unknown)}; the settings are {', '.join(_DEFAULTS)}"
            )
        values = {k: _frozen(fields.get(k, v)) for k, v in _DEFAULTS.items()}
        object.__setattr__(self, "_values", MappingProxyType(values))

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError(f"'QConfig' object has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise QConfigError(
            f"QConfig is immutable: cannot set {name!r}; build another with "
            f"relay.quantize.qconfig({name}=...)"
        )

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *_DEFAULTS})

    def guard(self, ref_call: Any) -> bool:
        """Whether the quantizer may rewrite ``ref_call``: its operator is among
        ``debug_enabled_ops``, or that setting is None (every operator)."""
        enabled = self.debug_enabled_ops
        if enabled is None:
            return True
        return ref_call.op.name in {getattr(x, "value", x) for x in enabled}

    def get_nbit_by_kind(self, kind: int) -> int:
        return getattr(self, "nbit_" + kind2str(kind))

    def get_dtype_by_kind(self, kind: int) -> str:
        return getattr(self, "dtype_" + kind2str(kind))

    def __enter__(self) -> QConfig:
        _scopes().append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _scopes().pop()

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self._values.items() if v != _DEFAULTS[k])
        return f"qconfig({shown})"


class _Scopes(threading.local):
    def __init__(self) -> None:
        self.stack: list[QConfig] = [QConfig()]


_SCOPES = _Scopes()


def _scopes() -> list[QConfig]:
    return _SCOPES.stack


def current_qconfig() -> QConfig:
    """The innermost ``with qconfig(...)`` of this thread, or Relay's defaults outside any."""
    return _scopes()[-1]


def qconfig(**kwargs: Any) -> QConfig:
    """A :class:`QConfig` with Relay's defaults, overridden by ``kwargs``.

    The settings are TVM's: ``nbit_input``, ``nbit_weight``, ``nbit_activation``,
    ``dtype_input``, ``dtype_weight``, ``dtype_activation``, ``calibrate_mode``,
    ``global_scale``, ``weight_scale``, ``skip_dense_layer``,
    ``skip_conv_layers``, ``do_simulation``, ``round_for_shift``,
    ``debug_enabled_ops``, ``rounding``, ``calibrate_chunk_by``,
    ``partition_conversions``.
    """
    return QConfig(**kwargs)


_WHY = ("automatic quantization rewrites a model into integer kernels that need TVM's code "
        "generator; relaypass provides the configuration (qconfig, current_qconfig, QConfig) only")


def quantize(mod: Any, params: Any = None, dataset: Any = None) -> Any:
    """Relay's quantizer: out of scope, raises :class:`QuantizeOutOfScopeError`."""
    raise QuantizeOutOfScopeError("relay.quantize.quantize", _WHY)


# Read by ``relaypass port``, which lists the name as out of scope without calling it.
quantize.__relaypass_out_of_scope__ = f"{_WHY} (see {RelayCompatError.DOC})"  # type: ignore[attr-defined]


# The rest of TVM's relay.quantize: the quantizer's passes and registration hooks.
_QUANTIZER_NAMES = frozenset({
    "annotate", "calibrate", "partition", "realize", "prerequisite_optimize",
    "partition_conversions", "register_annotate_function", "register_partition_function",
    "add_partition_function", "QuantizeContext", "quantize_context",
})


def out_of_scope(name: str) -> Any:
    """``relay.quantize``'s ``__getattr__``: the quantizer's parts raise, other names are missing."""
    if name in _QUANTIZER_NAMES:
        raise QuantizeOutOfScopeError(f"relay.quantize.{name}", _WHY)
    raise AttributeError(f"module 'relaypass.relay.quantize' has no attribute {name!r}")
