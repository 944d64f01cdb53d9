"""OpCounter, built by name from the installed manifest as pipelines build it."""

from inspect import signature

from relaypass import parse
from relaypass.transform import PassContext, Sequential, get_instrument, get_pass, list_instruments

from relaypass_example.op_counter import OpCounter

BEFORE = parse('''#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = multiply(%x, 1f);
  %1 = add(%0, 0f);
  nn.relu(%1)
}
''')


def test_counts_each_pass_and_the_passes_it_requires(capsys):
    counter = get_instrument("OpCounter")
    with PassContext(instruments=[counter]):
        get_pass("RemoveIdentities")(BEFORE)
    # InferType, which RemoveIdentities requires, is reported just before it; as a function
    # pass, RemoveIdentities ends by typing its result (as in Relay): InferType again.
    assert [(r.name, sum(r.before.values()), sum(r.after.values())) for r in counter.records] == [
        ("InferType", 3, 3), ("RemoveIdentities", 3, 1), ("InferType", 1, 1)]
    assert counter.records[1].changes() == {"add": -1, "multiply": -1}
    assert capsys.readouterr().out == (
        "operator calls: 3 passes\n"
        "  InferType         3 -> 3\n"
        "  RemoveIdentities  3 -> 1  (add -1, multiply -1)\n"
        "  InferType         1 -> 1\n"
    )


def test_nested_passes_and_the_label_option(capsys):
    counter = get_instrument("OpCounter", label="ops")
    with PassContext(instruments=[counter]):
        Sequential([get_pass("RemoveIdentities")])(BEFORE)
    # The Sequential is reported first, with its members inside it.
    assert [r.name for r in counter.records] == [
        "sequential", "InferType", "RemoveIdentities", "InferType"]
    assert capsys.readouterr().out.startswith("ops: 4 passes\n")


def test_the_label_default_is_written_in_the_manifest_only():
    [spec] = [s for s in list_instruments() if s.name == "OpCounter"]
    parameters = signature(OpCounter).parameters.values()
    assert {p.name for p in parameters} == {o.name for o in spec.options}
    assert all(p.default is p.empty for p in parameters)
