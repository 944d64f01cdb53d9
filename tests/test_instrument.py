"""Pass instruments: call order and the failure rules of Relay's pass infrastructure, one test each."""

from __future__ import annotations

import pytest

from relaypass import relay
from relaypass.ir import IRModule
from relaypass.transform import (
    PassContext,
    Sequential,
    module_pass,
    register_pass,
    unregister_pass,
)
from relaypass.transform.instrument import PassInstrument, pass_instrument


def _module() -> IRModule:
    x = relay.var("x", shape=(3,))
    return IRModule.from_expr(relay.Function([x], relay.add(x, x)))


def _noop(name: str, events: list[str] | None = None, opt_level: int = 0, required=()):
    @module_pass(opt_level=opt_level, name=name, required=list(required))
    def run(mod, ctx):
        if events is not None:
            events.append(f"    {name} pass")
        return mod

    return run


def _instrument(label: str, events: list[str], should_run: bool = True, fail_in: str = ""):
    @pass_instrument
    class PI:
        def enter_pass_ctx(self):
            events.append(f"{label} enter ctx")
            if fail_in == "enter":
                raise RuntimeError(f"{label} cannot enter")

        def exit_pass_ctx(self):
            events.append(f"{label} exit ctx")
            if fail_in == "exit":
                raise RuntimeError(f"{label} cannot exit")

        def should_run(self, mod, info):
            events.append(f"  {label} should run {info.name}")
            return should_run

        def run_before_pass(self, mod, info):
            events.append(f"  {label} run before {info.name}")
            if fail_in == "before":
                raise RuntimeError(f"{label} fails before")

        def run_after_pass(self, mod, info):
            events.append(f"  {label} run after {info.name}")
            if fail_in == "after":
                raise RuntimeError(f"{label} fails after")

    return PI()


def test_instruments_are_called_in_list_order_around_each_pass():
    events: list[str] = []
    mod = _module()
    with PassContext(instruments=[_instrument("%1", events), _instrument("%2", events)]):
        _noop("transform1", events)(mod)
        _noop("transform2", events)(mod)
    assert events == [
        "%1 enter ctx", "%2 enter ctx",
        "  %1 should run transform1", "  %2 should run transform1",
        "  %1 run before transform1", "  %2 run before transform1",
        "    transform1 pass",
        "  %1 run after transform1", "  %2 run after transform1",
        "  %1 should run transform2", "  %2 should run transform2",
        "  %1 run before transform2", "  %2 run before transform2",
        "    transform2 pass",
        "  %1 run after transform2", "  %2 run after transform2",
        "%1 exit ctx", "%2 exit ctx",
    ]


def test_subclassing_pass_instrument_works_and_keeps_default_hooks():
    class CountBefore(PassInstrument):
        def __init__(self):
            self.count = 0

        def run_before_pass(self, mod, info):
            self.count += 1

    pi = CountBefore()
    with PassContext(instruments=[pi]):
        Sequential([_noop("a"), _noop("b")])(_module())
    assert pi.count == 3  # the Sequential and its two members
    assert pi.should_run(None, None) is True and pi.name == "CountBefore"


def test_pass_instrument_decorator_makes_instances_pass_instruments():
    @pass_instrument
    class OnlyAfter:
        """Counts passes that ran."""

        def __init__(self, start):
            self.seen = start

        def run_after_pass(self, mod, info):
            self.seen += 1

    pi = OnlyAfter(10)
    assert isinstance(pi, PassInstrument) and OnlyAfter.__doc__ == "Counts passes that ran."
    with PassContext(instruments=[pi]):
        _noop("a")(_module())
    assert pi.seen == 11 and pi.name == "OnlyAfter"
    with pytest.raises(TypeError):
        pass_instrument(lambda: None)


def test_context_accepts_only_instruments():
    with pytest.raises(TypeError, match="PassInstrument"):
        PassContext(instruments=[object()])


def test_enter_failure_exits_those_that_entered_and_clears_the_list():
    events: list[str] = []
    ctx = PassContext(instruments=[
        _instrument("%1", events), _instrument("%2", events, fail_in="enter"),
        _instrument("%3", events),
    ])
    with pytest.raises(RuntimeError, match="%2 cannot enter"):
        with ctx:
            events.append("body")
    assert events == ["%1 enter ctx", "%2 enter ctx", "%1 exit ctx"]
    assert ctx.instruments == []
    assert PassContext.current() is not ctx


def test_exit_failure_clears_the_list_and_skips_the_rest():
    events: list[str] = []
    ctx = PassContext(instruments=[
        _instrument("%1", events), _instrument("%2", events, fail_in="exit"),
        _instrument("%3", events),
    ])
    with pytest.raises(RuntimeError, match="%2 cannot exit"):
        with ctx:
            pass
    assert events == ["%1 enter ctx", "%2 enter ctx", "%3 enter ctx", "%1 exit ctx", "%2 exit ctx"]
    assert ctx.instruments == []
    assert PassContext.current() is not ctx


def test_instruments_exit_when_a_pass_raises():
    events: list[str] = []

    @module_pass(opt_level=0)
    def broken(mod, ctx):
        raise ValueError("dummy error")

    with pytest.raises(ValueError, match="dummy error"):
        with PassContext(instruments=[_instrument("%1", events)]):
            broken(_module())
    assert events[0] == "%1 enter ctx" and events[-1] == "%1 exit ctx"
    assert "  %1 run after broken" not in events


def test_override_instruments_exits_the_old_and_enters_the_new():
    events: list[str] = []
    old, new = _instrument("old", events), _instrument("new", events)
    with PassContext(instruments=[old]) as ctx:
        ctx.override_instruments([new])
        _noop("p")(_module())
    assert events == [
        "old enter ctx", "old exit ctx", "new enter ctx",
        "  new should run p", "  new run before p", "  new run after p",
        "new exit ctx",
    ]


def test_override_instruments_on_the_default_context():
    events: list[str] = []
    ctx = PassContext.current()
    ctx.override_instruments([_instrument("%1", events)])
    try:
        _noop("p")(_module())
    finally:
        ctx.override_instruments(None)
    assert events == [
        "%1 enter ctx", "  %1 should run p", "  %1 run before p", "  %1 run after p",
        "%1 exit ctx",
    ]
    assert ctx.instruments == []


def test_required_passes_are_not_asked_should_run():
    events: list[str] = []
    with PassContext(required_pass=["needed"], instruments=[_instrument("%1", events, should_run=False)]):
        _noop("needed", events)(_module())
    assert "  %1 should run needed" not in events
    assert "    needed pass" in events and "  %1 run before needed" in events


def test_refused_pass_is_neither_run_nor_reported_and_every_instrument_is_asked():
    events: list[str] = []
    pis = [_instrument("%1", events, should_run=False), _instrument("%2", events)]
    with PassContext(instruments=pis):
        _noop("refused", events)(_module())
    assert events == [
        "%1 enter ctx", "%2 enter ctx",
        "  %1 should run refused", "  %2 should run refused",
        "%1 exit ctx", "%2 exit ctx",
    ]


def test_error_in_run_before_pass_propagates_and_the_context_still_exits():
    events: list[str] = []
    with pytest.raises(RuntimeError, match="fails before"):
        with PassContext(instruments=[_instrument("%1", events, fail_in="before")]):
            _noop("p", events)(_module())
    assert "    p pass" not in events
    assert events[-1] == "%1 exit ctx"


def test_error_in_run_after_pass_propagates_and_the_context_still_exits():
    events: list[str] = []
    with pytest.raises(RuntimeError, match="fails after"):
        with PassContext(instruments=[_instrument("%1", events, fail_in="after")]):
            _noop("p", events)(_module())
    assert "    p pass" in events and events[-1] == "%1 exit ctx"


def test_sequential_is_reported_with_its_members_and_added_required_passes_inside():
    events: list[str] = []
    register_pass(_noop("Base", events))
    try:
        seq = Sequential([_noop("first", events), _noop("user", events, required=["Base"])],
                         name="outer")

        @pass_instrument
        class Trace:
            def run_before_pass(self, mod, info):
                events.append(f"before {info.name}")

            def run_after_pass(self, mod, info):
                events.append(f"after {info.name}")

        with PassContext(instruments=[Trace()]):
            seq(_module())
    finally:
        unregister_pass("Base")
    assert [e for e in events if not e.startswith("    ")] == [
        "before outer",
        "before first", "after first",
        "before Base", "after Base",
        "before user", "after user",
        "after outer",
    ]


def test_passes_left_out_by_the_enabled_rule_are_not_reported():
    events: list[str] = []
    with PassContext(opt_level=1, disabled_pass=["off"],
                     instruments=[_instrument("%1", events)]):
        Sequential([_noop("off"), _noop("high", opt_level=3)], name="seq")(_module())
    assert [e for e in events if "run before" in e] == ["  %1 run before seq"]


def test_instruments_see_the_module_before_and_after():
    seen = {}

    @pass_instrument
    class Watch:
        def run_before_pass(self, mod, info):
            seen["before"] = mod

        def run_after_pass(self, mod, info):
            seen["after"] = mod

    mod = _module()
    with PassContext(instruments=[Watch()]):
        out = _noop("p")(mod)
    assert seen["before"] is mod and seen["after"] is out


def test_registered_instruments_are_attributes_of_the_instrument_module():
    import relaypass.transform.instrument as instrument_module
    from relaypass.transform.instrument import PassTimingInstrument

    timing = PassTimingInstrument()
    assert isinstance(timing, PassInstrument)
    with pytest.raises(AttributeError, match="no instrument of that name"):
        instrument_module.NoSuchInstrument  # noqa: B018
