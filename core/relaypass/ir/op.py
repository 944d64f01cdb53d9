"""Operators and their registry.

An :class:`Op` is the callee of a primitive call, a singleton per name.  What
the rest of relaypass needs to know about an operator is registered with it,
under Relay's attribute keys, so that type inference, the interpreter and
fusion look it up by key instead of knowing operators by name:

``FTypeRelation``
    ``relation(arg_types, attrs) -> Type``; called with the argument types once
    none is incomplete, returns the result type or raises
    :class:`~relaypass.errors.TypeRelationError`.
``FKernel``
    ``kernel(args, attrs) -> value``; the numpy implementation used by the
    interpreter (values are numpy arrays or tuples of values).
``TOpPattern``
    the fusion pattern, an :class:`OpPattern`.
``TOpIsStateful`` / ``TNonComputational``
    flags that keep constant folding away from the operator.
``FInferArgTypes`` (optional)
    ``infer(known_arg_types, attrs) -> list[Type | None]``: the argument types
    the operator determines (None where it does not say), given those known so
    far (None where unknown); how Relay's relations type unannotated inputs
    such as batch_norm's gamma and beta.

The standard operators (:mod:`relaypass.op`) and operators of installed
packages (entry point group ``relaypass.operators``) are loaded the first time
an unknown name is looked up, so importing the IR stays cheap.
"""

from __future__ import annotations

import difflib
import enum
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..errors import AttrsError, OpRegistrationError, UnknownOpError
from . import hooks
from .attrs import Attrs
from .dtype import canonical_dtype
from .expr import Call, Expr
from .fields import DATA, INFO, fields
from .node import _init
from .operator_packages import load_operator_packages
from .types import Type


class OpPattern(enum.IntEnum):
    """How an operator may be fused, with Relay's values."""

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    COMM_REDUCE = 3
    OUT_ELEMWISE_FUSABLE = 4
    TUPLE = 7
    OPAQUE = 8


REQUIRED = object()
"""Marks an attribute field that has no default and must be given."""


class AttrField:
    """One field of an attribute schema: its default, expected Python type and help."""

    __slots__ = ("name", "default", "type", "help")

    def __init__(self, name: str, default: Any = REQUIRED, type: Any = None, help: str = ""):
        self.name = name
        self.default = default
        self.type = type
        self.help = help


class AttrsSchema:
    """The attributes a call of an operator takes, by name, with defaults.

    Builds the :class:`Attrs` record of a call: unknown names and missing
    required fields are an :class:`AttrsError` that lists the valid fields.
    """

    __slots__ = ("type_key", "fields")

    def __init__(self, type_key: str, fields: Iterable[AttrField] | Mapping[str, Any]):
        self.type_key = type_key
        if isinstance(fields, Mapping):
            fields = [f if isinstance(f, AttrField) else AttrField(k, f) for k, f in fields.items()]
        self.fields = {f.name: f for f in fields}

    def build(self, op_name: str, values: Mapping[str, Any]) -> Attrs:
        if not self.fields.keys() >= values.keys():
            unknown = [k for k in values if k not in self.fields]
            raise AttrsError(
                f"operator {op_name!r} has no attribute {unknown[0]!r}; "
                f"valid attributes: {', '.join(self.fields) or 'none'}"
            )
        out: dict[str, Any] = {}
        for name, f in self.fields.items():
            if name in values:
                value = values[name]
                if value and (name == "dtype" or name.endswith("_dtype")):
                    # A data type, as TVM's DataType fields: "float" is float32, "uint1" bool
                    # (a name that is no data type is left for the type relation to reject).
                    try:
                        value = canonical_dtype(value)
                    except ValueError:
                        pass
                out[name] = value
            elif f.default is REQUIRED:
                raise AttrsError(f"operator {op_name!r} requires attribute {name!r}")
            else:
                out[name] = f.default
        return Attrs(out, self.type_key)


#: The level each attribute was registered at; those an operator set registers are at 10.
_ATTR_LEVELS: dict[tuple[str, str], int] = {}
DEFAULT_ATTR_LEVEL = 10


class Op(Expr):
    """A primitive operator, looked up by name with :meth:`Op.get`."""

    __slots__ = (
        "name", "num_inputs", "attrs_schema", "description", "_attrs", "arguments",
        "support_level", "attrs_type_key",
    )
    # The name identifies an operator; the rest is what the registry knows about it.
    _fields_ = fields(name=DATA, num_inputs=INFO, attrs_schema=INFO, description=INFO)
    _graph_node_ = False

    def __init__(self, name: str, num_inputs: int, attrs_schema: AttrsSchema | None, description: str):
        _init(self, "name", name)
        _init(self, "num_inputs", num_inputs)
        _init(self, "attrs_schema", attrs_schema)
        _init(self, "description", description)
        _init(self, "_attrs", {})
        _init(self, "arguments", ())
        _init(self, "support_level", 10)
        _init(self, "attrs_type_key", attrs_schema.type_key if attrs_schema is not None else "")
        _init(self, "span", None)
        _init(self, "_checked_type", None)

    def get_attr(self, key: str) -> Any:
        """The registered attribute ``key`` of this operator, or None."""
        return self._attrs.get(key)

    def has_attr(self, key: str) -> bool:
        return key in self._attrs

    def list_attr_keys(self) -> list[str]:
        """The keys of the attributes registered for this operator (``target.*`` among them)."""
        return list(self._attrs)

    @property
    def pattern(self) -> OpPattern:
        return self._attrs.get("TOpPattern", OpPattern.OPAQUE)

    # TVM's way of describing an operator step by step, after ``register(name)``.
    # An operator is a registry entry, not a node of any program: these set its
    # registry information in place, as TVM's do.

    def set_attr(self, attr_name: str, value: Any, plevel: int = DEFAULT_ATTR_LEVEL) -> None:
        """Register attribute ``attr_name`` (as :func:`register_op_attr`, at level ``plevel``)."""
        register_op_attr(self.name, attr_name, value, plevel)

    def reset_attr(self, attr_name: str) -> None:
        """Forget attribute ``attr_name``, so that it may be registered again at any level."""
        self._attrs.pop(attr_name, None)
        _ATTR_LEVELS.pop((self.name, attr_name), None)

    def set_num_inputs(self, n: int) -> None:
        """The number of arguments a call of this operator takes (-1: any)."""
        _init(self, "num_inputs", int(n))

    def add_argument(self, name: str, type: str, description: str) -> None:
        """Document one argument (TVM's ``add_argument``); shown in ``relaypass`` listings."""
        _init(self, "arguments", (*self.arguments, (name, type, description)))

    def set_support_level(self, level: int) -> None:
        """The support level TVM's documentation groups operators by."""
        _init(self, "support_level", int(level))

    def set_attrs_type_key(self, key: str) -> None:
        """The type key of this operator's attributes; ``"DictAttrs"``: any attributes."""
        _init(self, "attrs_type_key", key)
        if self.attrs_schema is not None and self.attrs_schema.type_key != key:
            _init(self, "attrs_schema", None)

    def add_type_rel(self, rel_name: str, type_rel_func: Callable[..., Any] | None = None) -> None:
        """Give the operator its type relation, by a relation's name or as a function.

        Without a function, ``rel_name`` names one of the relations every
        operator set may use (``"Identity"``, ``"Broadcast"``,
        ``"BroadcastComp"``...).  A function is called as Relay calls it,
        ``type_rel_func(arg_types, attrs)``, and returns the result type.
        """
        if type_rel_func is None:
            _load_operator_sets()
            make = _NAMED_RELATIONS.get(rel_name)
            if make is None:
                known = ", ".join(sorted(_NAMED_RELATIONS))
                raise OpRegistrationError(
                    f"operator {self.name!r}: no type relation is named {rel_name!r} "
                    f"(named relations: {known}); pass the relation as a function"
                )
            relation = make(self.name)
        elif callable(type_rel_func):
            relation = type_rel_func
            # As in TVM, the relation is then known by its name to later operators too.
            _NAMED_RELATIONS.setdefault(rel_name, lambda _op_name: type_rel_func)
        else:
            raise OpRegistrationError(
                f"operator {self.name!r}: the type relation {rel_name!r} must be a function "
                f"(arg_types, attrs) -> Type, not {type(type_rel_func).__name__}"
            )
        self._attrs["FTypeRelation"] = relation

    @staticmethod
    def get(name: str) -> Op:
        """The operator registered as ``name``; unknown names list near matches."""
        op = _REGISTRY.get(name)
        if op is not None:
            return op
        _load_operator_sets()
        op = _REGISTRY.get(name)
        if op is None:
            near = difflib.get_close_matches(name, list(_REGISTRY), n=4, cutoff=0.6)
            hint = f"; did you mean {', '.join(repr(n) for n in near)}?" if near else ""
            raise UnknownOpError(f"operator {name!r} is not registered{hint}")
        return op

    @staticmethod
    def is_registered(name: str) -> bool:
        """Whether an operator ``name`` is registered: for passes whose rewrites apply only
        once a plugin provides an operator (no exception, no did-you-mean search)."""
        if name in _REGISTRY:
            return True
        _load_operator_sets()
        return name in _REGISTRY

    @staticmethod
    def list_op_names() -> list[str]:
        """Every registered operator name, sorted."""
        _load_operator_sets()
        return sorted(_REGISTRY)

    def __reduce__(self) -> tuple[Callable[[str], Op], tuple[str]]:
        return (Op.get, (self.name,))


_REGISTRY: dict[str, Op] = {}
_LOAD_LOCK = threading.RLock()
_loaded = False


def _load_operator_sets() -> None:
    """Load the installed operator packages (the standard set first), once."""
    global _loaded
    if _loaded:
        return
    with _LOAD_LOCK:
        if _loaded:
            return
        _loaded = True
        load_operator_packages(_REGISTRY)


def register_op(
    name: str,
    *,
    num_inputs: int,
    type_relation: Callable[[Sequence[Type], Attrs | None], Type],
    kernel: Callable[[Sequence[Any], Attrs | None], Any] | None = None,
    pattern: OpPattern | int = OpPattern.OPAQUE,
    attrs: AttrsSchema | Mapping[str, Any] | None = None,
    attrs_type_key: str | None = None,
    stateful: bool = False,
    non_computational: bool = False,
    description: str = "",
    override: bool = False,
) -> Op:
    """Register an operator with everything relaypass needs to use it.

    ``num_inputs`` is the number of arguments (-1 for variadic); ``attrs`` is
    the attribute schema (a mapping from field name to default, with
    :data:`REQUIRED` for fields without one, or an :class:`AttrsSchema`).
    Registering a name twice is an error unless ``override`` is true, so two
    packages cannot silently replace each other's operators.
    """
    if name in _REGISTRY and not override:
        raise OpRegistrationError(
            f"operator {name!r} is already registered; pass override=True to replace it"
        )
    if attrs is not None and not isinstance(attrs, AttrsSchema):
        attrs = AttrsSchema(attrs_type_key or f"relay.attrs.{_camel(name)}Attrs", attrs)
    op = Op(name, num_inputs, attrs, description)
    op._attrs.update(
        {
            "FTypeRelation": type_relation,
            "TOpPattern": OpPattern(pattern),
            "TOpIsStateful": bool(stateful),
            "TNonComputational": bool(non_computational),
        }
    )
    if kernel is not None:
        op._attrs["FKernel"] = kernel
    _REGISTRY[name] = op
    return op


def register(op_name: str, describe: str = "") -> Op:
    """Register a new operator by name alone, to be described step by step (TVM's ``register``).

    The operator takes any number of arguments and has no type relation until
    ``set_num_inputs`` and ``add_type_rel`` say otherwise.  A name registered
    before is an error, as in TVM.
    """
    _load_operator_sets()
    if op_name in _REGISTRY:
        raise OpRegistrationError(f"operator {op_name} is registered before")
    op = Op(op_name, -1, None, describe)
    _REGISTRY[op_name] = op
    return op


#: Type relations an operator may ask for by name (``op.add_type_rel("Broadcast")``):
#: each makes the relation for the operator it is given the name of.
_NAMED_RELATIONS: dict[str, Callable[[str], Callable[..., Any]]] = {}


def register_type_relation(name: str, make: Callable[[str], Callable[..., Any]]) -> None:
    """Offer a relation by name to :meth:`Op.add_type_rel`; operator sets call this."""
    _NAMED_RELATIONS[name] = make


def register_stateful(op_name: str, stateful: bool, level: int = DEFAULT_ATTR_LEVEL) -> Any:
    """Whether calls of the operator have effects (TVM's ``register_stateful``)."""
    return register_op_attr(op_name, "TOpIsStateful", bool(stateful), level)




def register_op_attr(op_name: str, attr_key: str, value: Any = None, level: int = DEFAULT_ATTR_LEVEL) -> Any:
    """Attach attribute ``attr_key`` to a registered operator (TVM's ``register_op_attr``).

    As in TVM, each registration has a level: a higher one replaces the
    attribute, a lower one is ignored, and the same level twice is an error
    (the attributes the operator set registers are at level 10, so override
    one with ``level=11``).  Without ``value`` it is a decorator.
    """
    if value is None:
        def register(fn: Any) -> Any:
            register_op_attr(op_name, attr_key, fn, level)
            return fn
        return register
    op = Op.get(op_name)
    key = (op_name, attr_key)
    current = _ATTR_LEVELS.get(key, DEFAULT_ATTR_LEVEL if attr_key in op._attrs else None)
    if current == level:
        raise OpRegistrationError(
            f"attribute {attr_key!r} of operator {op_name!r} is already registered with the "
            f"same level {level}; register it with a higher level to replace it"
        )
    if current is None or level > current:
        op._attrs[attr_key] = value
        _ATTR_LEVELS[key] = level
    return value


def register_pattern(op_name: str, pattern: OpPattern | int, level: int = DEFAULT_ATTR_LEVEL) -> Any:
    """Set the fusion pattern of an operator (TVM's ``relay.op.register_pattern``)."""
    return register_op_attr(op_name, "TOpPattern", OpPattern(pattern), level)


def make_call(op_name: str, args: Sequence[Expr], **attrs: Any) -> Call:
    """A call of operator ``op_name`` with attributes checked against its schema."""
    op = Op.get(op_name)
    if op.num_inputs >= 0 and len(args) != op.num_inputs:
        raise AttrsError(f"operator {op_name!r} takes {op.num_inputs} arguments, got {len(args)}")
    schema = op.attrs_schema
    if schema is None:
        if attrs:
            raise AttrsError(f"operator {op_name!r} takes no attributes, got {', '.join(attrs)}")
        return Call(op, args)
    return Call(op, args, schema.build(op_name, attrs))


def _camel(name: str) -> str:
    base = name.rsplit(".", 1)[-1]
    return "".join(part.capitalize() for part in base.split("_"))


hooks.get_op = Op.get
hooks.make_call = make_call
