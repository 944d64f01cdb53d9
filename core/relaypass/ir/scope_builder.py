"""ScopeBuilder: write let-bound, branching programs in straight-line Python, as in Relay."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .expr import Expr, If, Let, Var
from .types import Type


class _Scope:
    __slots__ = ("bindings", "ret")

    def __init__(self) -> None:
        self.bindings: list[tuple[Var, Expr]] = []
        self.ret: Expr | None = None


class ScopeBuilder:
    """Builds nested lets and ifs.

    ``sb.let(name, value)`` binds a value and returns its variable;
    ``with sb.if_scope(cond): ... sb.ret(x)`` and ``with sb.else_scope(): ...``
    build an If; ``sb.ret(value)`` ends the current scope; ``sb.get()``
    returns the whole expression.
    """

    def __init__(self) -> None:
        self._scopes: list[_Scope] = [_Scope()]
        self._pending_if: tuple[Expr, Expr] | None = None

    def let(self, var: str | Var | tuple[str, Type], value: Expr) -> Var:
        """Bind ``value`` to a new variable (a name, a (name, type) pair or a Var)."""
        if isinstance(var, str):
            var = Var(var)
        elif isinstance(var, tuple):
            var = Var(var[0], var[1])
        self._scopes[-1].bindings.append((var, value))
        return var

    @contextmanager
    def if_scope(self, cond: Expr) -> Iterator[None]:
        """The true branch of an If on ``cond``; must be followed by ``else_scope``."""
        if self._scopes[-1].ret is not None:
            raise RuntimeError("the scope's result was already set before this if_scope")
        self._scopes.append(_Scope())
        yield
        then = self._close("if_scope")
        self._pending_if = (cond, then)

    @contextmanager
    def else_scope(self) -> Iterator[None]:
        """The false branch of the If opened by the preceding ``if_scope``."""
        if self._pending_if is None:
            raise RuntimeError("else_scope must directly follow an if_scope")
        cond, then = self._pending_if
        self._pending_if = None
        self._scopes.append(_Scope())
        yield
        other = self._close("else_scope")
        # As in Relay, the If becomes the result of the enclosing scope.
        self._scopes[-1].ret = If(cond, then, other)

    def _close(self, what: str) -> Expr:
        scope = self._scopes.pop()
        if scope.ret is None:
            raise RuntimeError(f"{what} did not call ret()")
        return _wrap(scope.bindings, scope.ret)

    def ret(self, value: Expr) -> None:
        """Set the value of the current scope."""
        scope = self._scopes[-1]
        if scope.ret is not None:
            raise RuntimeError("the result of this scope was already set (by ret() or an if/else)")
        scope.ret = value

    def get(self) -> Expr:
        """The whole expression: the bindings of the outer scope around its result."""
        if len(self._scopes) != 1:
            raise RuntimeError("get() called inside an open if_scope or else_scope")
        scope = self._scopes[0]
        if scope.ret is None:
            raise RuntimeError("ret() was never called")
        return _wrap(scope.bindings, scope.ret)


def _wrap(bindings: list[tuple[Var, Expr]], body: Expr) -> Expr:
    for var, value in reversed(bindings):
        body = Let(var, value, body)
    return body
