"""``check_pass``: property-test a pass on random well-typed programs.

A pass author's unit tests cover the programs the author thought of; the
bugs are in the others.  ``check_pass`` runs the pass on programs drawn by
:mod:`relaypass.testing.strategies` and checks the properties every pass owes
its users, whatever it does:

``raises``
    it runs without raising on a valid program;
``input_unchanged``
    it leaves the module it was given as it was: same global variables bound
    to the same function objects, and every node structurally what it was
    (compared with a copy made, through the text format, before the pass ran);
    and no module pass (the pass itself, a member of a Sequential, a pass it
    requires) edits the module the pass manager hands it.  The manager hands
    each module pass a copy, so such an edit cannot reach the caller here;
    but the same code changes its caller's module wherever nothing makes
    that copy (TVM's pass manager, a direct call of ``pass_func``), so it is
    reported all the same;
``well_formed``
    it returns a module (a function, for a function input) in which every
    variable is bound once and used in its scope, nothing is free, and every
    global function referred to is defined;
``well_typed``
    the type-inference pass (the registered pass with ``role =
    "type-inference"``, InferType among the standard passes) accepts what it
    returns, and ``@main`` keeps its type;
``outputs``
    the interpreter gives the same outputs, within ``rtol``/``atol``, on
    seeded random inputs;
``deterministic``
    a second run on the same input gives the same output, structurally and
    in text (so names too: a pass whose output depends on a process-wide
    counter makes IR dumps and diffs differ from run to run).

On a failure hypothesis shrinks the program, and :class:`PassCheckError`
reports the smallest program found, in text form, with the pass's output and
what went wrong.  Runs are derandomized unless a ``seed`` is given, so a
test suite sees the same programs every time.
"""

from __future__ import annotations

import difflib
import traceback
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from ..analysis import free_vars, ill_formed_reason
from ..functor import post_order_visit
from ..interp import Interpreter
from ..ir.expr import Function, GlobalVar
from ..ir.module import IRModule
from ..ir.structural import assert_structural_equal
from ..ir.text.parser import parse
from ..transform.context import PassContext
from ..transform.pass_info import PassInfo
from ..transform.passes import watch_handed_modules
from ..transform.registry import get_pass, get_registry
from ..transform.specs import TYPE_INFERENCE
from .compare import compare_outputs, flatten_outputs
from .inputs import random_inputs

__all__ = ["PROPERTIES", "PassCheckError", "check_pass"]

PROPERTIES: dict[str, str] = {
    "raises": "must run without raising on a valid program",
    "input_unchanged": "must leave its input unchanged",
    "well_formed": "must return a well-formed program",
    "well_typed": "must return a well-typed program of the same type",
    "outputs": "must keep the program's outputs",
    "deterministic": "must give the same output when run twice",
}
"""The properties checked, in the order they are checked, with what each demands of a pass."""

_INPUT_KINDS = ("module", "function")
_FRAMES = 4


class PassCheckError(AssertionError):
    """A pass broke one of the :data:`PROPERTIES` on a generated program.

    ``property``: the key of the broken property; ``pass_name``; ``reason``:
    what went wrong; ``program``: the (shrunk) program the pass was given, an
    IRModule or a Function; ``output``: what the pass returned (None when it
    raised); ``details``: the rest of the report (differences, diffs).  The
    message shows all of them, programs in text form.
    """

    def __init__(
        self,
        property: str,
        pass_name: str,
        reason: str,
        program: Any,
        output: Any = None,
        details: str = "",
        note: str = "",
    ) -> None:
        self.property = property
        self.pass_name = pass_name
        self.reason = reason
        self.program = program
        self.output = output
        self.details = details
        self.note = note
        super().__init__(self._message())

    def _message(self) -> str:
        promise = PROPERTIES.get(self.property, self.property)
        parts = [
            f"pass {self.pass_name} breaks property {self.property!r} "
            f"(a pass {promise}): {self.reason}",
        ]
        parts.append(f"--- program given to {self.pass_name} (shrunk){self.note}:\n"
                     f"{_text(self.program).rstrip()}")
        if self.output is not None:
            parts.append(f"--- output of {self.pass_name}:\n{_text(self.output).rstrip()}")
        if self.details:
            parts.append(self.details.rstrip())
        return "\n".join(parts)

    def _args(self) -> tuple[Any, ...]:
        return (self.property, self.pass_name, self.reason, self.program, self.output,
                self.details, self.note)

    def __reduce__(self) -> Any:
        return (PassCheckError, self._args())

    def copy(self) -> PassCheckError:
        """The same error, without the traceback, chain and notes the original collected."""
        return PassCheckError(*self._args())


def _text(value: Any) -> str:
    astext = getattr(value, "astext", None)
    if astext is None:
        return repr(value)
    try:
        return astext()
    except Exception as exc:  # a broken output may not even print
        return f"(cannot be printed: {type(exc).__name__}: {exc})\n{value!r}"


def check_pass(
    pass_or_name: Any,
    examples: int = 100,
    *,
    pass_options: Mapping[str, Any] | None = None,
    size: int | tuple[int, int] = (1, 12),
    ops: Iterable[Any] | None = None,
    features: Iterable[str] | None = None,
    dtype: str = "float32",
    max_rank: int = 4,
    max_dim: int = 4,
    max_depth: int = 2,
    num_functions: int | tuple[int, int] = (1, 3),
    input_kind: str = "module",
    rtol: float = 1e-5,
    atol: float = 1e-6,
    inputs: int = 2,
    seed: int | None = None,
    infer_types: bool | None = None,
    opt_level: int | None = None,
    config: Mapping[str, Any] | None = None,
) -> int:
    """Check ``pass_or_name`` on ``examples`` random programs; raise :class:`PassCheckError` if it fails.

    ``pass_or_name`` is a registered pass's name (built with ``get_pass(name,
    **pass_options)``, so the passes it requires run first, as in a pipeline),
    a :class:`~relaypass.transform.Pass`, or any callable taking and returning
    a module.  Returns the number of programs checked.

    Programs: ``size``, ``ops``, ``features``, ``dtype``, ``max_rank``,
    ``max_dim``, ``max_depth`` and ``num_functions`` are passed to
    :func:`~relaypass.testing.strategies.modules` (``input_kind="module"``,
    the default) or :func:`~relaypass.testing.strategies.programs`
    (``input_kind="function"``: the pass is called on a bare Function, the
    old-style way, and must return one).

    Outputs are compared on ``inputs`` sets of random arguments
    (``random_inputs(program, seed + k)``), under
    ``|out - ref| <= atol + rtol * |ref|``.

    ``seed``: None (the default) runs derandomized, the same programs on
    every run; an int draws other programs, reproducibly.  ``infer_types``:
    run the type-inference pass (found by its role, e.g. InferType) on each
    program before the pass; None means "when the pass requires it" (directly
    or through its dependencies), so that a pass called outside the pass
    manager sees typed programs too.  ``opt_level``
    and ``config``: when either is given the pass runs under
    ``PassContext(opt_level, config=config)``, otherwise under the current
    context.
    """
    try:
        from hypothesis import HealthCheck, Phase, Verbosity, given, settings
        from hypothesis import seed as hypothesis_seed
        from hypothesis.errors import Flaky
    except ImportError as exc:  # pragma: no cover - the test extra is missing
        raise ImportError(
            "check_pass needs hypothesis: pip install 'relaypass[test]'"
        ) from exc
    from . import strategies

    if isinstance(examples, bool) or not isinstance(examples, int) or examples < 1:
        raise ValueError(f"examples must be a positive integer, not {examples!r}")
    if input_kind not in _INPUT_KINDS:
        raise ValueError(f"input_kind must be one of {', '.join(_INPUT_KINDS)}, not {input_kind!r}")
    if isinstance(inputs, bool) or not isinstance(inputs, int) or inputs < 1:
        raise ValueError(f"inputs must be a positive integer, not {inputs!r}")
    if rtol < 0 or atol < 0:
        raise ValueError(f"rtol and atol must not be negative, got rtol={rtol!r}, atol={atol!r}")

    typer, typer_name = _type_inference()
    run, name, needs_types = _resolve(pass_or_name, pass_options, typer_name)
    checker = _Checker(
        run, name, needs_types if infer_types is None else bool(infer_types), rtol, atol, inputs,
        0 if seed is None else seed, _context_factory(opt_level, config), typer, typer_name,
    )
    if input_kind == "module":
        strategy = strategies.modules(size, ops, features, dtype, max_rank, max_dim, max_depth,
                                      num_functions)
    else:
        strategy = strategies.programs(size, ops, features, dtype, max_rank, max_dim, max_depth)

    failures: list[PassCheckError] = []
    checked = [0]

    def prop(program: Any) -> None:
        checked[0] += 1
        try:
            checker.check(program)
        except PassCheckError as err:
            failures.append(err)
            raise

    suppressed = [getattr(HealthCheck, n) for n in (
        "too_slow", "data_too_large", "filter_too_much", "large_base_example", "nested_given",
    ) if hasattr(HealthCheck, n)]
    test = given(strategy)(prop)
    test = settings(
        max_examples=examples, deadline=None, database=None, derandomize=seed is None,
        suppress_health_check=suppressed, report_multiple_bugs=False, verbosity=Verbosity.quiet,
        print_blob=False, phases=(Phase.explicit, Phase.generate, Phase.shrink),
    )(test)
    if seed is not None:
        test = hypothesis_seed(seed)(test)
    try:
        test()
    except (PassCheckError, Flaky):
        # The last failure recorded is the shrunk program's: hypothesis replays it
        # last (for a nondeterministic pass the replay may pass, which hypothesis
        # calls flaky).  A fresh copy drops hypothesis's notes and the chain.
        if not failures:
            raise
        raise failures[-1].copy() from None
    return checked[0]


def _type_inference() -> tuple[Any, str]:
    """The registered type-inference pass, found by its role (never by a name), and its name."""
    registry = get_registry()
    spec = registry.pass_for_role(TYPE_INFERENCE)
    if spec is None:
        raise registry.role_not_found(TYPE_INFERENCE)
    return registry.build_pass(spec.name, {}), spec.name


def _resolve(
    pass_or_name: Any, pass_options: Mapping[str, Any] | None, typer_name: str
) -> tuple[Callable[[Any], Any], str, bool]:
    """The callable to run, its name for reports, and whether it requires the typing pass."""
    if isinstance(pass_or_name, str):
        p: Any = get_pass(pass_or_name, **dict(pass_options or {}))
    else:
        if pass_options:
            raise TypeError("pass_options only applies to a pass given by name; "
                            "build the pass with its options yourself")
        if not callable(pass_or_name):
            raise TypeError(f"check_pass takes a pass, a pass name or a callable, "
                            f"not {type(pass_or_name).__name__}")
        p = pass_or_name
    info = getattr(p, "info", None)
    if isinstance(info, PassInfo):
        name = info.name
        needs = bool(info.required) and typer_name in get_registry().dependency_plan(
            info, getattr(p, "origin", ""))
    else:
        name = getattr(p, "__name__", None) or type(p).__name__
        needs = False
    return p, name, needs


def _context_factory(
    opt_level: int | None, config: Mapping[str, Any] | None
) -> Callable[[], Any] | None:
    if opt_level is None and config is None:
        return None

    level = 2 if opt_level is None else opt_level
    PassContext(opt_level=level, config=config)  # bad keys fail now, not inside hypothesis
    return lambda: PassContext(opt_level=level, config=config)


class _Checker:
    """Checks every property on one program; raises PassCheckError at the first broken one."""

    def __init__(self, run: Callable[[Any], Any], name: str, infer_first: bool, rtol: float,
                 atol: float, inputs: int, seed: int, context: Callable[[], Any] | None,
                 infer: Callable[[Any], Any], infer_name: str) -> None:
        self.run = run
        self.name = name
        self.infer_first = infer_first
        self.rtol = rtol
        self.atol = atol
        self.inputs = inputs
        self.seed = seed
        self.context = context
        self.infer = infer
        self.infer_name = infer_name

    def call(self, program: Any) -> Any:
        if self.context is None:
            return self.run(program)
        with self.context():
            return self.run(program)

    def check(self, generated: Any) -> None:
        program = self.infer(generated) if self.infer_first else generated
        note = f" ({self.infer_name} ran on it first)" if self.infer_first else ""

        def fail(prop: str, reason: str, output: Any = None, details: str = "") -> PassCheckError:
            return PassCheckError(prop, self.name, reason, generated, output, details, note)

        program_mod = _as_module(program)
        try:
            typed_input = self.infer(program_mod)
            arguments = [_random_args(program_mod, self.seed + k) for k in range(self.inputs)]
            reference = [_evaluate(program_mod, args) for args in arguments]
        except Exception as exc:
            raise RuntimeError(
                "check_pass: a generated program could not be typed or evaluated before the pass "
                "ran (a problem of the generator or the interpreter, not of the pass): "
                f"{type(exc).__name__}: {exc}\n{_text(generated)}"
            ) from exc
        snapshot = _Snapshot(program_mod)

        try:
            with watch_handed_modules() as handed:
                out = self.call(program)
        except Exception as exc:
            raise fail("raises", f"it raised {type(exc).__name__}: {exc}",
                       details=_where_raised(exc)) from exc

        changed = snapshot.difference(program_mod)
        if changed:
            # Show the program as it was; the changed one is shown as a detail.
            was = snapshot.copy if isinstance(program, IRModule) else snapshot.copy["main"]
            raise PassCheckError("input_unchanged", self.name, changed, was, out,
                                 f"--- the program given, as the pass left it:\n{_text(program)}",
                                 note)
        edits = handed.edits()
        if edits:
            editor, what = edits[0]
            raise fail("input_unchanged", _edit_reason(editor, what), out)

        out_mod = self._output_module(program, out, fail)
        problem = _ill_formed(out_mod)
        if problem:
            raise fail("well_formed", problem, out)

        try:
            typed_out = self.infer(out_mod)
        except Exception as exc:
            raise fail("well_typed", f"{self.infer_name} rejects the output: "
                       f"{type(exc).__name__}: {exc}", out) from exc
        before_ty, after_ty = typed_input["main"].checked_type, typed_out["main"].checked_type
        if before_ty != after_ty:
            raise fail("well_typed", f"@main had type {before_ty.astext()} and now has type "
                       f"{after_ty.astext()}", out)


        for k, args in enumerate(arguments):
            where = f"on random_inputs(program, seed={self.seed + k})"
            try:
                actual = _evaluate(out_mod, args)
            except Exception as exc:
                raise fail("outputs", f"the output cannot be evaluated {where}: "
                           f"{type(exc).__name__}: {exc}", out) from exc
            result = compare_outputs(flatten_outputs(actual), flatten_outputs(reference[k]),
                                     self.rtol, self.atol)
            if not result.ok:
                raise fail("outputs", f"{result.summary('the input program')}, {where}", out)

        try:
            again = self.call(program)
        except Exception as exc:
            raise fail("deterministic", f"the first run succeeded but the second raised "
                       f"{type(exc).__name__}: {exc}", out) from exc
        difference = _run_difference(out, again)
        if difference:
            raise fail("deterministic", difference[0], out, difference[1])

    def _output_module(self, program: Any, out: Any, fail: Callable[..., PassCheckError]) -> IRModule:
        if isinstance(program, IRModule):
            if not isinstance(out, IRModule):
                raise fail("well_formed", f"it returned {type(out).__name__}, not an IRModule", out)
            if "main" not in out:
                raise fail("well_formed", "its output has no @main", out)
            return out
        if not isinstance(out, Function):
            raise fail("well_formed", f"given a Function, it returned {type(out).__name__}", out)
        return IRModule.from_expr(out)


def _as_module(program: Any) -> IRModule:
    return program if isinstance(program, IRModule) else IRModule.from_expr(program)


def _random_args(mod: IRModule, seed: int) -> list[Any]:
    return random_inputs(mod, seed)


def _evaluate(mod: IRModule, args: list[Any]) -> Any:
    with np.errstate(all="ignore"):  # random programs overflow now and then, on both sides alike
        return Interpreter(mod).evaluate()(*args)


def _where_raised(exc: BaseException) -> str:
    """The innermost frames of ``exc``'s traceback, and its notes: enough to find the bug."""
    frames = traceback.format_tb(exc.__traceback__)[-_FRAMES:]
    notes = [str(n) for n in getattr(exc, "__notes__", None) or ()]
    return "\n".join(["--- where it raised (innermost last):", *(f.rstrip() for f in frames), *notes])


class _Snapshot:
    """What a module was before a pass ran: its bindings by identity, and a deep copy.

    The copy comes from printing and parsing the module, which rebuilds every
    node and every constant's array, so a pass that edits a node in place
    (``object.__setattr__``, a constant's array made writeable) is caught as
    well as one that rebinds ``mod["main"]``.
    """

    def __init__(self, mod: IRModule) -> None:
        self.bindings = list(mod.items())
        self.attrs = mod.attrs
        self.text = mod.astext()
        self.copy = parse(self.text)

    def difference(self, mod: IRModule) -> str:
        """What changed in ``mod`` since the snapshot ('' when nothing did)."""
        now = list(mod.items())
        before = dict(self.bindings)
        after = dict(now)
        gone = [gv.name_hint for gv in before if gv not in after]
        added = [gv.name_hint for gv in after if gv not in before]
        if gone or added:
            what = []
            if gone:
                what.append(f"@{', @'.join(gone)} removed")
            if added:
                what.append(f"@{', @'.join(added)} added")
            return f"it changed the module it was given: {'; '.join(what)}"
        for gv, func in self.bindings:
            if after[gv] is not func:
                return (f"it changed the module it was given: @{gv.name_hint} is bound to "
                        "another function object")
        if mod.attrs is not self.attrs:
            return "it changed the module it was given: its attrs were replaced"
        try:
            assert_structural_equal(self.copy, mod)
        except AssertionError as exc:
            return f"it changed the nodes of the module it was given in place: {exc}"
        return ""


def _edit_reason(editor: Any, what: str) -> str:
    """Why a module pass that edited the module it was handed fails ``input_unchanged``."""
    return (
        f"module pass {editor.info.name!r} edits the module it is handed ({what}); the pass "
        "manager handed it a copy, so the caller's module is intact here, but the same code "
        "changes its caller's module wherever nothing copies it first (TVM's pass manager, a "
        "direct call of its pass_func): start from a copy (mod.shallow_copy()) or build a new "
        "IRModule, and return that"
    )


def _ill_formed(mod: IRModule) -> str:
    """Why ``mod`` is ill formed, or '' when it is well formed."""
    for gv, func in mod.items():
        if not isinstance(func, Function):
            continue
        reason = ill_formed_reason(func)
        if reason is not None:
            return f"@{gv.name_hint}: {reason}"
        free = free_vars(func)
        if free:
            names = ", ".join("%" + v.name_hint for v in free)
            return f"@{gv.name_hint} has free variable(s) {names} (neither parameters nor let-bound)"
        missing: list[str] = []

        def visit(node: Any, missing: list[str] = missing) -> None:
            if type(node) is GlobalVar and node not in mod and node.name_hint not in missing:
                missing.append(node.name_hint)

        post_order_visit(func, visit)
        if missing:
            return f"@{gv.name_hint} refers to @{', @'.join(missing)}, which the module does not define"
    return ""


def _run_difference(first: Any, second: Any) -> tuple[str, str] | None:
    """How two runs' outputs differ: (reason, details), or None when they agree."""
    a, b = _text(first), _text(second)
    try:
        assert_structural_equal(first, second)
    except AssertionError as exc:
        return ("two runs on the same program gave structurally different outputs: "
                f"{exc}", _diff(a, b))
    if a != b:
        return ("two runs on the same program gave outputs that are structurally equal but "
                "print differently (variable names differ between runs)", _diff(a, b))
    return None


def _diff(a: str, b: str) -> str:
    lines = difflib.unified_diff(a.splitlines(), b.splitlines(), "first run", "second run",
                                 lineterm="")
    return "--- difference between the two runs:\n" + "\n".join(lines)
