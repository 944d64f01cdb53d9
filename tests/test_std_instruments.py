"""The standard instruments of plugins/relaypass_instruments, driven by real pipelines.

Every test runs in-process passes built with ``module_pass`` under a
``PassContext(instruments=[...])``, so the instruments see exactly the
before/after sequence the pass manager produces (Sequentials with their
members nested inside).
"""

from __future__ import annotations

import io
import re

import pytest

import relaypass
from relaypass import relay, structural_equal
from relaypass.errors import RelayPassError
from relaypass.ir.expr import Function, Let, Var, set_checked_type
from relaypass.ir.module import IRModule
from relaypass.ir.types import TensorType
from relaypass.transform import (
    PassContext,
    Sequential,
    get_instrument,
    load_pipeline,
    module_pass,
    register_pass,
    unregister_pass,
)
from relaypass.transform.instrument import (  # built through the registry, as users build them
    DumpIR,
    PassInstrument,
    PassPrintingInstrument,
    PassTimingInstrument,
    PrintAfter,
    PrintAfterAll,
    PrintBefore,
    PrintBeforeAll,
    PrintChanged,
    WellFormedChecker,
)
from relaypass_instruments import print_around_passes
from relaypass_instruments.dump_ir import dump_file_name
from relaypass_instruments.options import InstrumentOptionError
from relaypass_instruments.well_formed import IllFormedModuleError

# --- programs and passes ------------------------------------------------------


def make_module() -> IRModule:
    x = relay.var("x", shape=(2,))
    return IRModule.from_expr(Function([x], relay.add(x, relay.const(1.0))))


def _replace_main(mod: IRModule, make_body) -> IRModule:
    main = mod["main"]
    out = mod.copy()
    out["main"] = Function(main.params, make_body(main), main.ret_type)
    return out


@module_pass(opt_level=0, name="Identity")
def identity(mod, ctx):
    return mod


@module_pass(opt_level=0, name="Negate")
def negate(mod, ctx):
    return _replace_main(mod, lambda f: relay.negative(f.body))


@module_pass(opt_level=0, name="Rebuild")
def rebuild(mod, ctx):
    """Builds a new but identical main: changes objects, not text."""
    return _replace_main(mod, lambda f: f.body)


@module_pass(opt_level=0, name="DuplicateBinding")
def duplicate_binding(mod, ctx):
    def body(f):
        t = Var("t")
        return Let(t, f.body, Let(t, relay.multiply(t, t), t))

    return _replace_main(mod, body)


@module_pass(opt_level=0, name="AddFreeVar")
def add_free_var(mod, ctx):
    return _replace_main(mod, lambda f: relay.add(f.body, relay.var("ghost", shape=(2,))))


def run(passes, instruments, mod=None, name="outer"):
    mod = make_module() if mod is None else mod
    with PassContext(opt_level=3, instruments=instruments):
        return Sequential(passes, name=name)(mod)


def timed(passes, timing, name="outer"):
    """Run under ``timing``; its records and table, read before the context exits clears them."""
    with PassContext(opt_level=3, instruments=[timing]):
        try:
            Sequential(passes, name=name)(make_module())
        finally:
            found = timing.records(), timing.render()
    return found


def test_standard_instruments_are_registered_plugins(tmp_path):
    out = io.StringIO()
    printer = get_instrument("PrintAfter", passes=["Negate"], file=out)
    assert isinstance(printer, print_around_passes.PrintAfter)
    run([negate], [printer])
    assert out.getvalue().startswith("// IR after pass Negate\n")

    register_pass(negate)
    try:
        path = tmp_path / "pipeline.toml"
        dumps = tmp_path / "dumps"
        path.write_text(
            'passes = ["Negate"]\n'
            "[[instruments]]\n"
            'name = "PassTimingInstrument"\n'
            "[[instruments]]\n"
            'name = "DumpIR"\n'
            'options = { dir = "dumps", passes = [] }\n'
        )
        # A pipeline file writes inside the output folder it is loaded for.
        pipeline = load_pipeline(str(path), out_dir=tmp_path)
        timing = pipeline.instruments[0]
        with pipeline.context():  # the profile is read before the context exits (as in TVM)
            pipeline.sequential(make_module())
            records = timing.records()
    finally:
        unregister_pass("Negate")
    assert [(r.name, r.depth) for r in records] == [("pipeline", 0), ("Negate", 1)]
    assert sorted(p.name for p in dumps.iterdir()) == ["000_input.relay", "001_Negate.relay"]


def test_instruments_are_pass_instruments():
    for inst in (
        PassTimingInstrument(), PrintBefore(passes=["Negate"]), PrintAfter(passes=["Negate"]), PrintBeforeAll(),
        PrintAfterAll(), PrintChanged(), DumpIR(dir="unused"), WellFormedChecker(),
    ):
        assert isinstance(inst, PassInstrument)


# --- timing ---------------------------------------------------------------------


def test_timing_records_follow_the_nesting_of_passes():
    timing = PassTimingInstrument()
    inner = Sequential([identity, negate], name="inner")
    records, _ = timed([identity, inner, negate], timing)
    assert [(r.name, r.depth) for r in records] == [
        ("outer", 0), ("Identity", 1), ("inner", 1), ("Identity", 2), ("Negate", 2), ("Negate", 1),
    ]
    assert [r.parent for r in records] == [None, 0, 0, 2, 2, 0]
    assert all(r.completed for r in records)
    for i, rec in enumerate(records):
        kids = [r for r in records if r.parent == i]
        assert rec.total_ms >= sum(k.total_ms for k in kids)
        assert rec.self_ms == pytest.approx(rec.total_ms - sum(k.total_ms for k in kids), abs=1e-6)
    assert sum(r.percent_of_parent for r in records if r.parent == 0) <= 100.0 + 1e-6


def test_timing_render_is_an_indented_table():
    timing = PassTimingInstrument()
    _, table = timed([Sequential([negate], name="inner")], timing)
    lines = table.splitlines()
    assert lines[0].startswith("Pass timing: 3 pass runs")
    assert lines[1].split() == ["pass", "total", "ms", "self", "ms", "%", "of", "parent"]
    labels = [re.match(r"^ *\S+", row).group(0) for row in lines[2:]]
    assert labels == ["outer", "  inner", "    Negate"]
    assert all(len(row.split()) == 4 for row in lines[2:])
    assert lines[2].endswith("100.0%")


def test_timing_prints_on_exit_and_clears():
    out = io.StringIO()
    timing = PassTimingInstrument(print_on_exit=True, file=out)
    _, table = timed([negate], timing)
    assert out.getvalue() == table + "\n"
    assert "Negate" in out.getvalue()
    # Exiting the context cleared the profile, as TVM's does.
    assert timing.records() == [] and timing.render() == ""


def test_timing_clear_forgets_the_profile():
    timing = PassTimingInstrument()
    with PassContext(instruments=[timing]):
        negate(make_module())
        assert [r.name for r in timing.records()] == ["Negate"]
        timing.clear()
        assert timing.records() == [] and timing.render() == ""


def test_timing_starts_a_fresh_profile_per_context():
    timing = PassTimingInstrument()
    run([negate], [timing])
    records, _ = timed([identity], timing)
    assert [r.name for r in records] == ["outer", "Identity"]


def test_timing_marks_a_pass_that_raised():
    @module_pass(opt_level=0, name="Boom")
    def boom(mod, ctx):
        raise ValueError("boom")

    out = io.StringIO()
    timing = PassTimingInstrument(print_on_exit=True, file=out)
    with pytest.raises(ValueError, match="boom"):
        run([identity, boom], [timing])
    # Written on exit: the passes still running then (the one that raised and the
    # Sequential around it) are marked, their clocks stopped at exit.
    rows = [line.split()[0] for line in out.getvalue().splitlines()[2:]]
    assert rows == ["outer", "Identity", "Boom"]
    assert "outer (did not finish)" in out.getvalue() and "Boom (did not finish)" in out.getvalue()
    assert "Identity (did not finish)" not in out.getvalue()


def test_timing_option_is_checked():
    with pytest.raises(InstrumentOptionError, match="print_on_exit"):
        PassTimingInstrument(print_on_exit="yes")


# --- printing ---------------------------------------------------------------------


def test_print_before_and_after_named_passes():
    mod = make_module()
    before, after = io.StringIO(), io.StringIO()
    result = run(
        [identity, negate, identity],
        [PrintBefore(passes=["Negate"], file=before), PrintAfter(passes="Negate", file=after)],
        mod=mod,
    )
    assert before.getvalue() == f"// IR before pass Negate\n{mod.astext().rstrip()}\n\n"
    assert after.getvalue() == f"// IR after pass Negate\n{result.astext().rstrip()}\n\n"
    assert "negative(" in after.getvalue() and "negative(" not in before.getvalue()
    assert structural_equal(relaypass.parse(after.getvalue()), result)  # the header is a comment


def test_print_before_all_and_after_all_include_sequentials():
    before, after = io.StringIO(), io.StringIO()
    run([identity, negate], [PrintBeforeAll(file=before), PrintAfterAll(file=after)])
    headers = [line for line in before.getvalue().splitlines() if line.startswith("// IR")]
    assert headers == [
        "// IR before pass outer", "// IR before pass Identity", "// IR before pass Negate",
    ]
    headers = [line for line in after.getvalue().splitlines() if line.startswith("// IR")]
    assert headers == [
        "// IR after pass Identity", "// IR after pass Negate", "// IR after pass outer",
    ]


def test_print_defaults_to_stdout(capsys):
    run([negate], [PrintAfter(passes=["Negate"])])
    assert capsys.readouterr().out.startswith("// IR after pass Negate\n")


def test_print_to_a_file_path_appends(tmp_path):
    path = tmp_path / "ir.txt"
    run([negate], [PrintAfter(passes=["Negate"], file=str(path))])
    run([negate], [PrintAfter(passes=["Negate"], file=path)])
    assert path.read_text().count("// IR after pass Negate") == 2


def test_tvm_pass_printing_instrument():
    out = io.StringIO()
    mod = make_module()
    result = run([identity, negate], [PassPrintingInstrument(["Identity"], ["Negate"], file=out)],
                 mod=mod)
    # TVM's text: a header, the module, two blank lines.
    assert out.getvalue() == (f"Print IR before: Identity\n{mod}\n\n\n"
                              f"Print IR after: Negate\n{result}\n\n\n")


def test_print_options_are_checked():
    with pytest.raises(InstrumentOptionError, match="PrintBefore: option 'passes'"):
        PrintBefore(passes=[3])
    with pytest.raises(InstrumentOptionError, match="PrintAfterAll: option 'file'"):
        PrintAfterAll(file=42)
    assert issubclass(InstrumentOptionError, RelayPassError)


# --- diff -----------------------------------------------------------------------------


def test_diff_prints_only_passes_that_changed_the_module():
    out = io.StringIO()
    run([identity, negate, rebuild], [PrintChanged(file=out)])
    text = out.getvalue()
    assert text.splitlines()[0] == "// Negate changed the module"
    assert text.count("changed the module") == 1  # not Identity, Rebuild nor the Sequential
    assert "--- before Negate" in text and "+++ after Negate" in text
    changed = [line for line in text.splitlines() if line.startswith(("+", "-"))]
    assert any(line.startswith("+") and "negative(" in line for line in changed[2:])
    assert any(line.startswith("-") and "add(" in line for line in changed[2:])


def test_diff_reports_each_change_once_under_the_innermost_pass():
    @module_pass(opt_level=0, name="Outer")
    def outer(mod, ctx):
        edited = _replace_main(mod, lambda f: relay.subtract(f.body, relay.const(2.0)))
        return negate(edited)

    out = io.StringIO()
    run([Sequential([outer], name="inner")], [PrintChanged(file=out)])
    text = out.getvalue()
    assert [line for line in text.splitlines() if line.startswith("//")] == [
        "// Outer changed the module", "// Negate changed the module",
    ]
    first, second = text.split("// Negate changed the module")
    assert "+++ before Negate" in first and "subtract(" in first and "negative(" not in first
    assert "--- before Negate" in second and "+++ after Negate" in second


def test_diff_context_option():
    wide, narrow = io.StringIO(), io.StringIO()
    run([negate], [PrintChanged(file=wide), PrintChanged(file=narrow, context=0)])
    body = [line for line in narrow.getvalue().splitlines()[3:] if line]
    assert all(line.startswith(("+", "-", "@@")) for line in body)
    assert len(wide.getvalue()) > len(narrow.getvalue())
    with pytest.raises(InstrumentOptionError, match="context"):
        PrintChanged(context=-1)


# --- dump -----------------------------------------------------------------------------


def test_dump_writes_numbered_files_with_the_module_after_each_pass(tmp_path):
    folder = tmp_path / "dumps" / "run1"
    mod = make_module()
    with PassContext(opt_level=3, instruments=[DumpIR(dir=str(folder))]):
        after_identity = identity(mod)
        result = Sequential([negate, Sequential([identity], name="nested")], name="outer")(
            after_identity
        )
    files = sorted(p.name for p in folder.iterdir())
    assert files == [
        "000_input.relay", "001_Identity.relay", "002_Negate.relay", "003_Identity.relay",
    ]
    assert (folder / "000_input.relay").read_text().rstrip() == mod.astext().rstrip()
    assert (folder / "002_Negate.relay").read_text().rstrip() == result.astext().rstrip()
    assert structural_equal(relaypass.parse((folder / "002_Negate.relay").read_text()), result)
    assert "negative(" not in (folder / "001_Identity.relay").read_text()


def test_dump_named_passes_only_and_sanitized_names(tmp_path):
    @module_pass(opt_level=0, name="my/odd pass:1")
    def odd(mod, ctx):
        return mod

    run([identity, odd, negate], [DumpIR(dir=tmp_path, passes=["my/odd pass:1", "Negate"])])
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "000_input.relay", "001_my_odd_pass_1.relay", "002_Negate.relay",
    ]
    assert dump_file_name(1234, "../..") == "1234_pass.relay"


def test_dump_with_an_empty_pass_list_dumps_every_pass(tmp_path):
    run([identity, negate], [DumpIR(dir=tmp_path, passes=[])])
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "000_input.relay", "001_Identity.relay", "002_Negate.relay",
    ]


def test_dump_keeps_a_sequential_that_changed_the_module_itself(tmp_path):
    @module_pass(opt_level=0, name="Outer")
    def outer(mod, ctx):
        return _replace_main(identity(mod), lambda f: relay.subtract(f.body, relay.const(2.0)))

    run([outer], [DumpIR(dir=tmp_path)], name="seq")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "000_input.relay", "001_Identity.relay", "002_Outer.relay",
    ]


def test_dump_removes_stale_dumps_but_nothing_else(tmp_path):
    (tmp_path / "007_Old.relay").write_text("stale")
    (tmp_path / "notes.txt").write_text("mine")
    run([negate], [DumpIR(dir=tmp_path)])
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "000_input.relay", "001_Negate.relay", "notes.txt",
    ]
    (tmp_path / "007_Old.relay").write_text("stale")
    run([negate], [DumpIR(dir=tmp_path, clean=False)])
    assert "007_Old.relay" in {p.name for p in tmp_path.iterdir()}


def test_dump_numbering_continues_across_contexts(tmp_path):
    dump = DumpIR(dir=tmp_path)
    run([negate], [dump])
    run([identity], [dump])
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "000_input.relay", "001_Negate.relay", "002_input.relay", "003_Identity.relay",
    ]


def test_dump_dir_must_be_a_folder(tmp_path):
    path = tmp_path / "file"
    path.write_text("x")
    with pytest.raises(InstrumentOptionError, match="names a file"):
        DumpIR(dir=path)


# --- well-formedness -------------------------------------------------------------------


def test_checker_accepts_healthy_pipelines():
    result = run([identity, negate, rebuild], [WellFormedChecker()])
    assert "negative(" in result.astext()


def test_checker_names_the_pass_that_duplicates_a_binding():
    with pytest.raises(IllFormedModuleError) as err:
        run([identity, duplicate_binding, negate], [WellFormedChecker()])
    e = err.value
    assert (e.pass_name, e.when, e.function) == ("DuplicateBinding", "after", "main")
    assert "%t is bound more than once" in e.reason
    assert isinstance(e.expr, Let) and e.expr_text.startswith("let %t = multiply(")
    assert str(e).startswith("after pass DuplicateBinding: @main is ill formed:")


def test_checker_names_the_pass_that_introduces_a_free_variable():
    with pytest.raises(IllFormedModuleError) as err:
        run([negate, add_free_var], [WellFormedChecker()])
    e = err.value
    assert e.pass_name == "AddFreeVar"
    assert "%ghost is free" in e.reason
    assert "%ghost" in e.expr_text and "add(" in e.expr_text


def test_checker_catches_a_use_outside_the_binding_scope():
    @module_pass(opt_level=0, name="LeakScope")
    def leak(mod, ctx):
        def body(f):
            t = Var("t")
            return relay.Tuple([Let(t, f.body, t), relay.negative(t)])

        return _replace_main(mod, body)

    with pytest.raises(IllFormedModuleError, match="after pass LeakScope") as err:
        run([leak], [WellFormedChecker()])
    assert "negative(%t)" in err.value.expr_text


def test_checker_catches_a_call_to_a_removed_global():
    @module_pass(opt_level=0, name="DropHelper")
    def drop(mod, ctx):
        out = mod.copy()
        out.remove("helper")
        return out

    y = relay.var("y", shape=(2,))
    x = relay.var("x", shape=(2,))
    mod = IRModule({"helper": Function([y], relay.negative(y))})
    mod["main"] = Function([x], relay.Call(mod.get_global_var("helper"), [x]))
    run([identity], [WellFormedChecker()], mod=mod)
    with pytest.raises(IllFormedModuleError, match="refers to @helper") as err:
        run([drop], [WellFormedChecker()], mod=mod)
    assert err.value.pass_name == "DropHelper"
    assert "@helper(%x)" in err.value.expr_text


def test_checker_compares_checked_types():
    t2, t3 = TensorType((2,), "float32"), TensorType((3,), "float32")

    @module_pass(opt_level=0, name="WrongRetType")
    def wrong(mod, ctx):
        main = mod["main"]
        body = set_checked_type(relay.negative(main.body), t2)
        out = mod.copy()
        out["main"] = Function(main.params, body, t3)
        return out

    with pytest.raises(IllFormedModuleError, match="return type") as err:
        run([wrong], [WellFormedChecker()])
    assert err.value.pass_name == "WrongRetType"
    run([wrong], [WellFormedChecker(check_types=False)])


def test_checker_blames_an_ill_formed_input_on_nobody_but_the_input():
    x = relay.var("x", shape=(2,))
    mod = IRModule.from_expr(Function([x], relay.add(x, relay.var("ghost", shape=(2,)))))
    with pytest.raises(IllFormedModuleError) as err:
        run([identity], [WellFormedChecker()], mod=mod)
    assert (err.value.when, err.value.pass_name, err.value.next_pass) == ("before", None, "outer")
    assert str(err.value).startswith("before pass outer (the module was ill formed before any")
    with pytest.raises(IllFormedModuleError) as err:
        run([identity], [WellFormedChecker(check_input=False)], mod=mod)
    assert (err.value.when, err.value.pass_name) == ("after", "Identity")


def test_checker_blames_a_pass_for_what_it_hands_to_an_inner_pass():
    @module_pass(opt_level=0, name="Outer")
    def outer(mod, ctx):
        ghost = relay.var("ghost", shape=(2,))
        return identity(_replace_main(mod, lambda f: relay.add(f.body, ghost)))

    with pytest.raises(IllFormedModuleError) as err:
        run([outer], [WellFormedChecker()])
    e = err.value
    assert (e.when, e.pass_name, e.next_pass) == ("during", "Outer", "Identity")
    assert str(e).startswith("during pass Outer (in the module it handed to Identity): @main")


def test_checker_can_be_called_directly():
    checker = WellFormedChecker()
    checker.check(make_module(), "Anything")
    x = relay.var("x", shape=(2,))
    broken = IRModule.from_expr(Function([x], relay.add(x, relay.var("y", shape=(2,)))))
    with pytest.raises(IllFormedModuleError, match="after pass Suspect: @main is ill formed"):
        checker.check(broken, "Suspect")
