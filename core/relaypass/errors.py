"""The exception hierarchy shared by every part of relaypass.

Every error that bad input can cause derives from :class:`RelayPassError`, so
that the CLI can turn exactly these into one line and exit status 2 while a
genuine bug still shows its traceback.  Subsystems define their specific
errors next to the code that raises them, deriving from the classes here.
"""

from __future__ import annotations


class RelayPassError(Exception):
    """Base class of every error caused by input: IR, pipelines, plugins."""


TVMError = RelayPassError
"""TVM's name for the base of its errors (``tvm.error.TVMError``), for ported ``except`` clauses."""


class DiagnosticError(RelayPassError):
    """An error reported at a place in a source text (TVM's ``tvm.error.DiagnosticError``)."""


class ParseError(DiagnosticError):
    """The text form of a module or expression could not be parsed.

    Carries where (``source_name``, ``line``, ``column``, 1-based), the text
    found there and what the parser expected, so tools can point at it.
    """

    def __init__(
        self,
        message: str,
        *,
        source_name: str = "<string>",
        line: int = 0,
        column: int = 0,
        found: str = "",
        expected: str = "",
    ) -> None:
        self.source_name = source_name
        self.line = line
        self.column = column
        self.found = found
        self.expected = expected
        self.message = message
        super().__init__(f"{source_name}:{line}:{column}: {message}")


class TypeInferenceError(RelayPassError):
    """A program does not type-check; the message shows the offending expression."""


class TypeRelationError(TypeInferenceError):
    """An operator's type relation rejects its argument types or attributes.

    Raised by type relations with a message about the operator only; type
    inference adds the expression and its location.
    """


class UncheckedTypeError(RelayPassError, ValueError):
    """``checked_type`` was read before type inference filled it."""


class UnknownOpError(RelayPassError, LookupError):
    """``Op.get`` was asked for an operator that is not registered."""


class OpRegistrationError(RelayPassError, ValueError):
    """An operator or one of its attributes is registered twice, or with an unknown relation."""


class AttrsError(RelayPassError, TypeError):
    """A call's attributes do not match its operator's attribute schema."""


class ModuleError(RelayPassError, LookupError):
    """A module lookup failed (unknown global name) or an update conflicts."""


class EvaluationError(RelayPassError):
    """The interpreter could not evaluate an expression."""


class RelayCompatError(RelayPassError, NotImplementedError):
    """A TVM construct relaypass does not provide: it needs a code generator or a device.

    Raised where such a construct is used (``create_executor(kind="aot")``, a
    ``"cuda"`` target, an array on a GPU device...); the message names the
    construct and points to the "Out of scope" section of the guide, through
    ``relaypass help`` (a checkout's docs/ path would mean nothing to an
    installed user).  Nothing out of scope ever runs silently.
    """

    DOC = "relaypass help coming-from-relay#out-of-scope"

    def __init__(self, construct: str, why: str = "relaypass generates no code") -> None:
        self.construct = construct
        super().__init__(f"{construct} is out of scope for relaypass: {why} (see {self.DOC})")
