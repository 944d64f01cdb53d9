"""Pass instruments on the cases of TVM v0.18's tests/python/relay/test_pass_instrument.py.

Written as a TVM user writes them; only the import lines differ.  The facts
carried over: PassTimingInstrument profiles the passes while it is attached
and forgets them when its context exits (``override_instruments(None)``
included), so ``render()`` is empty then; custom instruments, by decorator or
by subclass, see enter/before/after/exit in that order; ``should_run``
refusing a pass skips it, every instrument is asked, and a pass in
``required_pass`` is not asked about; the failure rules: an instrument that
fails to enter makes the ones already entered exit and clears the list, one
that fails to exit clears it and the rest are not exited, and an error in a
pass or in a pass hook propagates while the context still exits its
instruments; ``list_configs`` gives each key's TVM type.

Out of scope: ``tvm.relay.build`` in ``test_instrument_pass_counts`` (code
generation), replaced by a Sequential of standard passes; the
``relay.backend.use_auto_scheduler`` key of ``test_list_pass_configs`` (a
backend's), replaced by ``relay.FuseOps.max_depth``, which TVM declares too.
"""
import pytest

import relaypass as tvm
import relaypass.relay
import relaypass.testing
from relaypass.ir.instrument import PassTimingInstrument, pass_instrument
from relaypass.relay import op


def get_test_model():
    x, y, z = [tvm.relay.var(c, shape=(3, 4), dtype="float32") for c in "xyz"]
    e1 = op.add(x, y)
    e2 = op.subtract(x, z)
    e3 = op.multiply(e1, e1 / e2)
    return tvm.IRModule.from_expr(e3 + e2)


def test_pass_timing_instrument():
    pass_timing = PassTimingInstrument()
    tvm.transform.PassContext.current().override_instruments([pass_timing])

    mod = get_test_model()
    mod = tvm.relay.transform.AnnotateSpans()(mod)
    mod = tvm.relay.transform.ToANormalForm()(mod)
    mod = tvm.relay.transform.InferType()(mod)
    profiles = pass_timing.render()
    assert "AnnotateSpans" in profiles
    assert "ToANormalForm" in profiles
    assert "InferType" in profiles

    # Taking the instrument off the context ends its profile.
    tvm.transform.PassContext.current().override_instruments(None)
    mod = get_test_model()
    mod = tvm.relay.transform.AnnotateSpans()(mod)
    mod = tvm.relay.transform.ToANormalForm()(mod)
    mod = tvm.relay.transform.InferType()(mod)
    assert pass_timing.render() == ""


def test_pass_timing_instrument_forgets_its_profile_when_the_context_exits():
    pass_timing = PassTimingInstrument()
    with tvm.transform.PassContext(instruments=[pass_timing]):
        tvm.relay.transform.InferType()(get_test_model())
        assert "InferType" in pass_timing.render()
    assert pass_timing.render() == ""


instrument_definition_type = tvm.testing.parameter("decorator", "subclass")


def test_custom_instrument(instrument_definition_type):
    class BaseTest:
        def __init__(self):
            self.events = []

        def enter_pass_ctx(self):
            self.events.append("enter ctx")

        def exit_pass_ctx(self):
            self.events.append("exit ctx")

        def run_before_pass(self, mod, info):
            self.events.append("run before " + info.name)

        def run_after_pass(self, mod, info):
            self.events.append("run after " + info.name)

    if instrument_definition_type == "decorator":
        MyTest = pass_instrument(BaseTest)
    else:

        class MyTest(BaseTest, tvm.ir.instrument.PassInstrument):
            def __init__(self):
                BaseTest.__init__(self)
                tvm.ir.instrument.PassInstrument.__init__(self)

    my_test = MyTest()
    with tvm.transform.PassContext(instruments=[my_test]):
        tvm.relay.transform.InferType()(get_test_model())
    assert my_test.events == ["enter ctx", "run before InferType", "run after InferType",
                              "exit ctx"]


def test_disable_pass():
    @pass_instrument
    class CustomPI:
        def __init__(self):
            self.events = []

        def should_run(self, mod, info):
            return "InferType" in info.name  # only passes named like InferType run

        def run_before_pass(self, mod, info):
            self.events.append(info.name)

    custom_pi = CustomPI()
    with tvm.transform.PassContext(instruments=[custom_pi]):
        mod = tvm.relay.transform.AnnotateSpans()(get_test_model())
        mod = tvm.relay.transform.ToANormalForm()(mod)
        mod = tvm.relay.transform.InferType()(mod)
    assert custom_pi.events == ["InferType"]


def test_multiple_instrument():
    @pass_instrument
    class SkipPass:
        def __init__(self, skip_pass_name):
            self.skip_pass_name = skip_pass_name

        def should_run(self, mod, info):
            return self.skip_pass_name not in info.name

    @pass_instrument
    class PrintPassName:
        def __init__(self):
            self.events = []

        def run_before_pass(self, mod, info):
            self.events.append(info.name)

    print_pass_name = PrintPassName()
    instruments = [SkipPass("AnnotateSpans"), SkipPass("ToANormalForm"), print_pass_name]
    with tvm.transform.PassContext(instruments=instruments):
        mod = tvm.relay.transform.AnnotateSpans()(get_test_model())
        mod = tvm.relay.transform.ToANormalForm()(mod)
        mod = tvm.relay.transform.InferType()(mod)
    assert print_pass_name.events == ["InferType"]


def test_instrument_pass_counts():
    @pass_instrument
    class PassesCounter:
        def __init__(self):
            self.run_before_count = 0
            self.run_after_count = 0

        def __clear(self):
            self.run_before_count = 0
            self.run_after_count = 0

        def enter_pass_ctx(self):
            self.__clear()

        def exit_pass_ctx(self):
            self.__clear()

        def run_before_pass(self, mod, info):
            self.run_before_count += 1

        def run_after_pass(self, mod, info):
            self.run_after_count += 1

    passes_counter = PassesCounter()
    pipeline = tvm.transform.Sequential([
        tvm.relay.transform.SimplifyInference(),
        tvm.relay.transform.FoldConstant(),
        tvm.relay.transform.FuseOps(),
    ])
    with tvm.transform.PassContext(opt_level=3, instruments=[passes_counter]):
        pipeline(get_test_model())
        assert passes_counter.run_after_count != 0
        assert passes_counter.run_after_count == passes_counter.run_before_count
    assert passes_counter.run_before_count == 0
    assert passes_counter.run_after_count == 0


def test_list_pass_configs():
    configs = tvm.transform.PassContext.list_configs()
    assert len(configs) > 0
    assert "relay.FuseOps.max_depth" in configs.keys()
    assert configs["relay.FuseOps.max_depth"]["type"] == "IntImm"


def test_enter_pass_ctx_exception():
    events = []

    @pass_instrument
    class PI:
        def __init__(self, id):
            self.id = id

        def enter_pass_ctx(self):
            events.append(self.id + " enter ctx")

        def exit_pass_ctx(self):
            events.append(self.id + " exit ctx")

    @pass_instrument
    class PIBroken(PI):
        def enter_pass_ctx(self):
            events.append(self.id + " enter ctx")
            raise RuntimeError("Just a dummy error")

    pass_ctx = tvm.transform.PassContext(instruments=[PI("%1"), PIBroken("%2"), PI("%3")])
    with pytest.raises(RuntimeError, match="Just a dummy error"):
        with pass_ctx:
            pass
    assert events == ["%1 enter ctx", "%2 enter ctx", "%1 exit ctx"]
    cur_pass_ctx = tvm.transform.PassContext.current()
    assert pass_ctx != cur_pass_ctx
    assert not cur_pass_ctx.instruments


def test_enter_pass_ctx_exception_exits_the_entered_ones_last_first():
    events = []

    @pass_instrument
    class PI:
        def __init__(self, id, broken=False):
            self.id, self.broken = id, broken

        def enter_pass_ctx(self):
            events.append(self.id + " enter ctx")
            if self.broken:
                raise RuntimeError("Just a dummy error")

        def exit_pass_ctx(self):
            events.append(self.id + " exit ctx")

    pass_ctx = tvm.transform.PassContext(instruments=[PI("%1"), PI("%2"), PI("%3", True)])
    with pytest.raises(RuntimeError):
        with pass_ctx:
            pass
    assert events == ["%1 enter ctx", "%2 enter ctx", "%3 enter ctx", "%2 exit ctx", "%1 exit ctx"]
    assert not pass_ctx.instruments


def test_enter_pass_ctx_exception_global():
    @pass_instrument
    class PIBroken:
        def enter_pass_ctx(self):
            raise RuntimeError("Just a dummy error")

    cur_pass_ctx = tvm.transform.PassContext.current()
    with pytest.raises(RuntimeError, match="Just a dummy error"):
        cur_pass_ctx.override_instruments([PIBroken()])
    assert not cur_pass_ctx.instruments


def test_exit_pass_ctx_exception():
    events = []

    @pass_instrument
    class PI:
        def __init__(self, id):
            self.id = id

        def exit_pass_ctx(self):
            events.append(self.id + " exit ctx")

    @pass_instrument
    class PIBroken(PI):
        def exit_pass_ctx(self):
            events.append(self.id + " exit ctx")
            raise RuntimeError("Just a dummy error")

    pass_ctx = tvm.transform.PassContext(instruments=[PI("%1"), PIBroken("%2"), PI("%3")])
    with pytest.raises(RuntimeError, match="Just a dummy error"):
        with pass_ctx:
            pass
    assert events == ["%1 exit ctx", "%2 exit ctx"]
    cur_pass_ctx = tvm.transform.PassContext.current()
    assert pass_ctx != cur_pass_ctx
    assert not cur_pass_ctx.instruments


def test_exit_pass_ctx_exception_global():
    @pass_instrument
    class PIBroken:
        def exit_pass_ctx(self):
            raise RuntimeError("Just a dummy error")

    cur_pass_ctx = tvm.transform.PassContext.current()
    with pytest.raises(RuntimeError, match="Just a dummy error"):
        cur_pass_ctx.override_instruments([PIBroken()])
        cur_pass_ctx.override_instruments([PIBroken()])
    assert not cur_pass_ctx.instruments


def test_pass_exception():
    events = []

    @pass_instrument
    class PI:
        def enter_pass_ctx(self):
            events.append("enter_pass_ctx")

        def exit_pass_ctx(self):
            events.append("exit_pass_ctx")

        def should_run(self, mod, info):
            events.append("should_run")
            return True

        def run_before_pass(self, mod, info):
            events.append("run_before_pass")

        def run_after_pass(self, mod, info):
            events.append("run_after_pass")

    @tvm.transform.module_pass(opt_level=2)
    def transform(mod, ctx):
        events.append("transform pass")
        raise RuntimeError("Just a dummy error")

    mod = get_test_model()
    with pytest.raises(RuntimeError, match="Just a dummy error"):
        with tvm.transform.PassContext(instruments=[PI()]):
            mod = transform(mod)
    assert events == ["enter_pass_ctx", "should_run", "run_before_pass", "transform pass",
                      "exit_pass_ctx"]


def _tracing_instrument(events, fail_in=""):
    @pass_instrument
    class PI:
        def __init__(self, id):
            self.id = id

        def enter_pass_ctx(self):
            events.append(self.id + " enter_pass_ctx")

        def exit_pass_ctx(self):
            events.append(self.id + " exit_pass_ctx")

        def should_run(self, mod, info):
            events.append("  " + self.id + " should_run")
            if fail_in == "should_run":
                raise RuntimeError("Just a dummy error")
            return True

        def run_before_pass(self, mod, info):
            events.append("  " + self.id + " run_before_pass")
            if fail_in == "run_before_pass":
                raise RuntimeError("Just a dummy error")

        def run_after_pass(self, mod, info):
            events.append("  " + self.id + " run_after_pass")
            if fail_in == "run_after_pass":
                raise RuntimeError("Just a dummy error")

    return PI


def _recording_pass(events, name):
    @tvm.transform.module_pass(opt_level=2, name=name)
    def transform(mod, ctx):
        events.append("    " + name + " pass")
        return mod

    return transform


def test_should_run_exception():
    events = []
    PI = _tracing_instrument(events, "should_run")
    with pytest.raises(RuntimeError, match="Just a dummy error"):
        with tvm.transform.PassContext(instruments=[PI("%1"), PI("%2")]):
            _recording_pass(events, "transform")(get_test_model())
    assert events == ["%1 enter_pass_ctx", "%2 enter_pass_ctx", "  %1 should_run",
                      "%1 exit_pass_ctx", "%2 exit_pass_ctx"]


def test_run_before_exception():
    events = []
    PI = _tracing_instrument(events, "run_before_pass")
    with pytest.raises(RuntimeError, match="Just a dummy error"):
        with tvm.transform.PassContext(instruments=[PI("%1"), PI("%2")]):
            _recording_pass(events, "transform")(get_test_model())
    assert events == ["%1 enter_pass_ctx", "%2 enter_pass_ctx", "  %1 should_run",
                      "  %2 should_run", "  %1 run_before_pass", "%1 exit_pass_ctx",
                      "%2 exit_pass_ctx"]


def test_run_after_exception():
    events = []
    PI = _tracing_instrument(events, "run_after_pass")
    x, y = [tvm.relay.var(c, shape=(3, 4), dtype="float32") for c in "xy"]
    mod = tvm.IRModule.from_expr(tvm.relay.add(x, y))
    with pytest.raises(RuntimeError, match="Just a dummy error"):
        with tvm.transform.PassContext(instruments=[PI("%1"), PI("%2")]):
            _recording_pass(events, "transform")(mod)
    assert events == ["%1 enter_pass_ctx", "%2 enter_pass_ctx", "  %1 should_run",
                      "  %2 should_run", "  %1 run_before_pass", "  %2 run_before_pass",
                      "    transform pass", "  %1 run_after_pass", "%1 exit_pass_ctx",
                      "%2 exit_pass_ctx"]


def test_instrument_call_sequence():
    events = []
    PI = _tracing_instrument(events)
    mod = get_test_model()
    with tvm.transform.PassContext(instruments=[PI("%1"), PI("%2")]):
        mod = _recording_pass(events, "transform1")(mod)
        mod = _recording_pass(events, "transform2")(mod)
    around = ["  %1 should_run", "  %2 should_run", "  %1 run_before_pass", "  %2 run_before_pass"]
    after = ["  %1 run_after_pass", "  %2 run_after_pass"]
    assert events == [
        "%1 enter_pass_ctx", "%2 enter_pass_ctx",
        *around, "    transform1 pass", *after,
        *around, "    transform2 pass", *after,
        "%1 exit_pass_ctx", "%2 exit_pass_ctx",
    ]


def test_a_function_pass_reports_the_type_inference_it_ends_with():
    events = []

    @pass_instrument
    class Trace:
        def run_before_pass(self, mod, info):
            events.append("before " + info.name)

        def run_after_pass(self, mod, info):
            events.append("after " + info.name)

    with tvm.transform.PassContext(instruments=[Trace()]):
        tvm.relay.transform.FoldConstant()(get_test_model())
    assert events == ["before FoldConstant", "before InferType", "after InferType",
                      "after FoldConstant"]


def test_pass_printing_instrument(capsys):
    printer = tvm.ir.instrument.PassPrintingInstrument(["InferType"], ["FoldConstant"])
    with tvm.transform.PassContext(instruments=[printer]):
        mod = tvm.relay.transform.InferType()(get_test_model())
    assert capsys.readouterr().out == f"Print IR before: InferType\n{get_test_model()}\n\n\n"
    with tvm.transform.PassContext(instruments=[printer]):
        out = tvm.relay.transform.FoldConstant()(mod)
    printed = capsys.readouterr().out
    assert printed.startswith("Print IR before: InferType\n")  # the one FoldConstant ends with
    assert printed.endswith(f"Print IR after: FoldConstant\n{out}\n\n\n")
