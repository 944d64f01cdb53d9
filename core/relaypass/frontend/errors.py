"""The errors an importer raises: a model it cannot read, or an operator it does not support.

They derive from :class:`~relaypass.errors.RelayPassError`, so the CLI prints
them as one line: a model that cannot be imported is bad input, not a bug.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import RelayPassError

INSTALL_HINT = "pip install 'relaypass[onnx]'"


class OnnxImportError(RelayPassError):
    """An ONNX model could not be turned into a Relay module; the message says which node and why."""


class OnnxNotInstalledError(OnnxImportError, ImportError):
    """The optional ``onnx`` extra (the onnx package) is not installed."""

    def __init__(self, cause: str = "") -> None:
        detail = f" ({cause})" if cause else ""
        super().__init__(
            f"importing ONNX models needs the onnx package, which is not installed{detail}; "
            f"install the extra with: {INSTALL_HINT}"
        )


class UnsupportedOperatorError(OnnxImportError):
    """The model uses operators (or forms of them) that the importer cannot convert.

    ``operators`` maps each unsupported operator, as ``domain.OpType`` for
    operators outside the default domain, to the number of nodes using it;
    ``opset`` is the model's opset.  The whole model is scanned before
    anything is converted, so one error lists every unsupported operator.
    """

    def __init__(self, message: str, operators: Mapping[str, int], opset: int) -> None:
        self.operators = dict(operators)
        self.opset = opset
        super().__init__(message)


class ExportError(RelayPassError):
    """A Relay module could not be written as ONNX; the message lists every reason at once.

    The whole module is converted in memory before anything is written, so
    one error names every operator (or form of one) without an ONNX mapping,
    every dtype ONNX cannot hold and an opset out of range.  ``operators``
    maps each unsupported Relay operator (with the reason, when it is a form
    of a supported operator) to the number of calls; ``dtypes`` lists the
    dtypes; ``opset`` is the opset asked for.
    """

    def __init__(self, message: str, operators: Mapping[str, int] | None = None,
                 dtypes: tuple[str, ...] = (), opset: int | None = None) -> None:
        self.operators = dict(operators or {})
        self.dtypes = tuple(dtypes)
        self.opset = opset
        super().__init__(message)


class OnnxExportNotInstalledError(ExportError, ImportError):
    """Exporting needs the optional ``onnx`` extra (the onnx package), which is not installed."""

    def __init__(self, cause: str = "") -> None:
        detail = f" ({cause})" if cause else ""
        super().__init__(f"exporting ONNX models needs the onnx package, which is not "
                         f"installed{detail}; install the extra with: {INSTALL_HINT}")
