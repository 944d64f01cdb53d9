"""PartitionGraph: lift each annotated region into a global function (Relay's BYOC step 3).

Relay's ``partition_graph.cc``, in its four steps:

1. a ``compiler_end`` of a tuple becomes a tuple of ``compiler_end``\\ s (so
   a region with several outputs never returns a tuple of tuples);
2. the annotations of the ``"default"`` target are removed (those operators
   stay in the caller);
3. each remaining region (:mod:`relaypass.analysis.annotated_regions`)
   becomes a global function ``<target>_<function>_<region id>`` whose
   parameters are the region's distinct inputs and whose result is its
   output, or a tuple of its outputs, with the attributes ``Primitive=1``,
   ``Inline=1``, ``Compiler=<target>`` and ``global_symbol``; the caller
   calls it (a projection per output when there are several).  Constant
   inputs are written into the function when ``bind_constants`` is true;
4. every function with a ``Compiler`` attribute is renamed
   ``tvmgen_<mod_name>_<name>`` (``tvmgen_default_ccompiler_main_0``), its
   ``global_symbol`` too, and calls follow.

The result is typed, as Relay's pipeline ends with InferType.  A function
marked ``Compiler`` runs on the interpreter like any other, so a
partitioned module computes what the annotated one did.  Relay's per-target
hook ``relay.ext.<target>.optimize`` belongs to a code generator and is not
called.

The rewrites are post-order without recursion on dataflow.  Building a
region's function visits its other outputs from within the rewrite of its
first output (Relay's order, which fixes the parameter order); that nests
only when those outputs reach regions not seen yet, never along a chain of
single-output regions, and nesting deeper than a few dozen regions continues
on a worker thread with a large stack (:mod:`relaypass.deep_recursion`).

One difference from Relay: a region without any ``compiler_end`` (what
AnnotateTarget leaves around the value of a ``let``) is not lifted and its
``compiler_begin`` calls are dropped; Relay replaces them by parameters of a
function it never builds, leaving free variables in the caller.
"""

from __future__ import annotations

from collections.abc import Callable

from relaypass.analysis.annotated_regions import AnnotatedRegion, AnnotatedRegionSet
from relaypass.analysis.substitution import bind
from relaypass.deep_recursion import run_deep
from relaypass.deep_recursion import state as deep_state
from relaypass.functor import MixedModeMutator
from relaypass.ir.expr import Call, Constant, Expr, Function, GlobalVar, Tuple, TupleGetItem, Var
from relaypass.ir.fields import with_fields
from relaypass.ir.module import IRModule
from relaypass.ir.op import Op
from relaypass.op.annotation import compiler_end
from relaypass.transform import get_pass_by_role, pass_constructor
from relaypass.transform.errors import OptionError

__all__ = ["PartitionGraph", "partition_graph"]

_BEGIN = Op.get("annotation.compiler_begin")
_END = Op.get("annotation.compiler_end")
_DEFAULT = "default"
#: Region functions built one inside the other on the calling thread before the
#: rest moves to a worker thread with a large stack (relaypass.deep_recursion).
_SHALLOW_NESTING = 32


def _typed(mod: IRModule) -> IRModule:
    return get_pass_by_role("type-inference")(mod)


def _map_functions(mod: IRModule, rewrite: Callable[[Expr], Expr]) -> IRModule:
    """A copy of ``mod`` with ``rewrite`` applied to the body of every Relay function."""
    out = mod.copy()
    for gv, func in mod.items():
        if isinstance(func, Function):
            body = rewrite(func.body)
            if body is not func.body:
                out[gv] = with_fields(func, body=body)
    return out


class _TupleEndFlattener(MixedModeMutator):
    """``compiler_end((a, b), t)`` -> ``(compiler_end(a, t), compiler_end(b, t))``."""

    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        if pre.op is _END:
            inner = post.args[0]
            if type(inner) is Tuple:
                target = pre.attrs.compiler
                return with_fields(inner, fields=tuple(compiler_end(f, target) for f in inner.fields))
        return post


class _DefaultRemover(MixedModeMutator):
    """Drops the annotations of the ``"default"`` target: those operators stay with the caller."""

    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        if (pre.op is _BEGIN or pre.op is _END) and pre.attrs.compiler == _DEFAULT:
            return post.args[0]
        return post


class _RegionFunction:
    """What is known about one region's function while the caller is rewritten."""

    __slots__ = ("call", "args", "inputs", "outputs", "arg_index")

    def __init__(self, region: AnnotatedRegion) -> None:
        self.call: Call | None = None
        # Each input's position in the region's inputs: the suffix of its parameter's name.
        self.arg_index = {begin: i for i, begin in enumerate(region.args)}
        self.args: list[tuple[Var, Expr]] = []  # parameter, argument of the call
        self.inputs: dict[Expr, Var] = {}  # producer outside the region -> parameter
        self.outputs: dict[Expr, Expr] = {}  # value inside the region -> its use in the caller


class _Partitioner(MixedModeMutator):
    """Relay's Partitioner, for the body of one function of the module being built."""

    def __init__(self, module: IRModule, regions: AnnotatedRegionSet, bind_constants: bool) -> None:
        super().__init__()
        self.module = module
        self.regions = regions
        self.bind_constants = bind_constants
        self.meta: dict[AnnotatedRegion, _RegionFunction] = {}
        self.nesting = 0  # region functions being built, one inside the other

    def _meta(self, region: AnnotatedRegion) -> _RegionFunction:
        meta = self.meta.get(region)
        if meta is None:
            meta = self.meta[region] = _RegionFunction(region)
        return meta

    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        if pre.op is _BEGIN:
            return self._region_input(pre, post)
        if pre.op is _END:
            region = self.regions.get_region(pre)
            meta = self._meta(region)
            if meta.call is None:  # the region's first output reached: build its function
                self._create_function(region, pre)
            return meta.outputs[pre.args[0]]
        return post

    def _region_input(self, pre: Call, post: Call) -> Expr:
        # The producer, past any further annotations, identifies the input.
        parent = pre.args[0]
        while type(parent) is Call and (parent.op is _BEGIN or parent.op is _END):
            parent = parent.args[0]
        region = self.regions.get_region(pre)
        if not region.rets:
            # Nothing leaves the region (AnnotateTarget opens a let's value this way):
            # no function is built, so the input stays the value it was.  Relay
            # leaves a free parameter variable here.
            return post.args[0]
        meta = self._meta(region)
        var = meta.inputs.get(parent)
        if var is None:
            var = Var(f"{pre.attrs.compiler}_{region.id}_i{meta.arg_index[pre]}", pre.checked_type)
            meta.args.append((var, post.args[0]))
            meta.inputs[parent] = var
        return var

    def _create_function(self, region: AnnotatedRegion, end: Call) -> None:
        meta = self._meta(region)
        fields: list[Expr] = []
        index_of: dict[Expr, int] = {}
        for out in region.rets:
            value = out.args[0]
            if value not in index_of:
                index_of[value] = len(fields)
                fields.append(self._visit_output(value))
        call = self._region_call(region, fields, end)
        if len(index_of) == 1:
            meta.outputs[next(iter(index_of))] = call
        else:
            for value, index in index_of.items():
                meta.outputs[value] = TupleGetItem(call, index)

    def _visit_output(self, value: Expr) -> Expr:
        """``self.visit(value)`` from within a rewrite: nested, so moved to a large stack when deep."""
        if value in self.memo_map:
            return self.memo_map[value]
        self.nesting += 1
        try:
            if self.nesting > _SHALLOW_NESTING and not deep_state.worker:
                return run_deep(self.visit, value)
            return self.visit(value)
        finally:
            self.nesting -= 1

    def _region_call(self, region: AnnotatedRegion, fields: list[Expr], end: Call) -> Call:
        meta = self._meta(region)
        params = [var for var, _ in meta.args]
        bound: dict[Var, Expr] = {}
        call_args: list[Expr] = []
        for var, arg in meta.args:
            if self.bind_constants and _is_constant(arg):
                bound[var] = arg
            else:
                call_args.append(arg)
        if len(fields) == 1:
            func = Function(params, fields[0], end.args[0].checked_type)
        else:
            func = Function(params, Tuple(fields))
        if bound:
            func = bind(func, bound)
        target = end.attrs.compiler
        name = f"{target}_{region.name}_{region.id}"
        func = func.with_attrs({"global_symbol": name, "Primitive": 1, "Compiler": target,
                                "Inline": 1})
        gv = GlobalVar(_fresh_name(self.module, name))
        self.module[gv] = func
        call = Call(gv, call_args)
        meta.call = call
        return call


def _is_constant(expr: Expr) -> bool:
    if type(expr) is Constant:
        return True
    return type(expr) is Tuple and all(type(f) is Constant for f in expr.fields)


def _fresh_name(mod: IRModule, name: str) -> str:
    fresh, n = name, 0
    while fresh in mod:
        n += 1
        fresh = f"{name}_{n}"
    return fresh


def _sanitize(name: str) -> str:
    """Relay's SanitizeName: every character that is not a letter or digit becomes ``_``."""
    return "".join(c if c.isascii() and c.isalnum() else "_" for c in name)


class _CalleeRenamer(MixedModeMutator):
    def __init__(self, renamed: dict[GlobalVar, GlobalVar]) -> None:
        super().__init__()
        self.renamed = renamed

    def rewrite_call(self, pre: Call, post: Expr) -> Expr:
        new = self.renamed.get(post.op) if type(post.op) is GlobalVar else None
        return post if new is None else with_fields(post, op=new)


def _mangle_names(mod: IRModule, prefix: str) -> IRModule:
    """Rename each function that has a ``Compiler`` attribute ``<prefix>_<name>`` (Relay's
    NameMangleExtFuncs), its ``global_symbol`` and its calls too."""
    renamed = {
        gv: GlobalVar(_sanitize(f"{prefix}_{gv.name_hint}"))
        for gv, func in mod.items()
        if isinstance(func, Function) and func.attrs.get("Compiler") is not None
    }
    # The type definitions stay: functions that take a List apart need them to type.
    out = IRModule(type_definitions=mod.type_definitions, attrs=mod.attrs)
    renamer = _CalleeRenamer(renamed)
    for gv, func in mod.items():
        if not isinstance(func, Function):
            out[gv] = func
            continue
        func = with_fields(func, body=renamer.visit(func.body))
        new_gv = renamed.get(gv)
        if new_gv is not None:
            func = func.with_attr("global_symbol", new_gv.name_hint)
        out[new_gv or gv] = func
    return out


def partition_graph(mod: IRModule, mod_name: str | None = _DEFAULT, bind_constants: bool = True) -> IRModule:
    """A new module in which every annotated region of ``mod`` is a global function."""
    prefix = _module_prefix(mod_name)
    work = _typed(_map_functions(mod, _TupleEndFlattener().visit))
    work = _typed(_map_functions(work, _DefaultRemover().visit))
    region_sets = {
        gv: AnnotatedRegionSet(func, _BEGIN, _END, gv.name_hint)
        for gv, func in work.items() if isinstance(func, Function)
    }
    for gv, regions in region_sets.items():
        func = work[gv]
        body = _Partitioner(work, regions, bind_constants).visit(func.body)
        if body is not func.body:
            work[gv] = with_fields(func, body=body)
    return _typed(_mangle_names(work, prefix))


def _module_prefix(mod_name: object) -> str:
    """Relay's mangle_module_name: ``tvmgen_<mod_name>``, or ``tvmgen`` without a name."""
    if mod_name is None or mod_name == "":
        return "tvmgen"
    if not isinstance(mod_name, str) or not mod_name.isascii():
        raise OptionError(
            f"PartitionGraph: mod_name must be an ASCII string, got {type(mod_name).__name__} "
            f"{mod_name!r}")
    return "tvmgen_" + mod_name


def _partition_graph_factory(
    *, mod_name: str | None, bind_constants: bool,
) -> Callable[[IRModule, object], IRModule]:
    """PartitionGraph's transformation: the manifest's factory (options checked here, once)."""
    _module_prefix(mod_name)
    if not isinstance(bind_constants, bool):
        raise OptionError(
            f"PartitionGraph: bind_constants must be a bool, got {type(bind_constants).__name__} "
            f"{bind_constants!r}")

    def transform(mod: IRModule, ctx: object) -> IRModule:
        return partition_graph(mod, mod_name, bind_constants)

    return transform


#: The PartitionGraph pass, the one ``relay.transform.PartitionGraph`` builds
#: (``PartitionGraph(mod_name="default", bind_constants=True)``); its metadata
#: is in relaypass-plugin.toml.
PartitionGraph = pass_constructor("PartitionGraph")
