"""RemoveIdentities, built from the installed manifest as users build it (``pip install -e .``).

Two kinds of tests: before/after cases on small programs in the text format,
compared structurally, and the pass-author kit's ``check_pass``, which runs
the pass on random well-typed programs and checks that it keeps their
outputs, types and well-formedness, leaves its input alone and is
deterministic.
"""

from inspect import signature

import pytest
from relaypass import assert_structural_equal, parse, relay
from relaypass.testing import OpUse, check_pass
from relaypass.transform import PassContext, get_pass, list_passes, plugin_errors

from relaypass_example.remove_identities import (
    SIGNED_ZEROS,
    RemoveIdentities,
    _remove_identities_factory,
)

X = "%x: Tensor[(2, 3), float32]"


def program(body, params=X):
    """A module whose @main has ``params`` and ``body`` (lines separated by "; ")."""
    return parse(f'#[version = "0.0.5"]\ndef @main({params}) {{\n  {body}\n}}\n')


def run(before, *, config=None, **options):
    with PassContext(config=config or {}):
        return get_pass("RemoveIdentities", **options)(before)


def assert_rewrites(before, expected, **kwargs):
    after = run(before, **kwargs)
    # Compare with the expected program after type inference, as the pass's output has types.
    assert_structural_equal(after, relay.transform.InferType()(expected))


# --- before and after ---------------------------------------------------------------------

ZEROS = "const([0, 0, 0, 0, 0, 0], Tensor[(2, 3), float32])"
NOT_IDENTITIES = "%0 = subtract(0f, %x); %1 = divide(1f, %0); %2 = multiply(%1, 2f); add(%2, 1f)"

# name: (@main's parameters, body before, body expected after)
CASES = {
    "add zero, either side": (X, "%0 = add(%x, 0f); add(0f, %0)", "%x"),
    "subtract zero": (X, "subtract(%x, 0f)", "%x"),
    "multiply by one, either side": (X, "%0 = multiply(1f, %x); multiply(%0, 1f)", "%x"),
    "divide by one": (X, "divide(%x, 1f)", "%x"),
    "tensor constants": (
        X, f"%0 = add(%x, {ZEROS}); multiply(const([1, 1, 1], Tensor[(3), float32]), %0)", "%x"),
    "inside other calls": (X, "%0 = add(%x, 0f); %1 = nn.relu(%0); divide(%1, 1f)", "nn.relu(%x)"),
    "double negative": (X, "%0 = negative(%x); negative(%0)", "%x"),
    "triple negative": (X, "%0 = negative(%x); %1 = negative(%0); negative(%1)", "negative(%x)"),
    "integers": ("%x: Tensor[(4), int32]", "%0 = add(%x, 0); multiply(%0, 1)", "%x"),
    "not identities": (X, NOT_IDENTITIES, NOT_IDENTITIES),
    # x has shape (3,): adding zeros of shape (2, 3) broadcasts it, so the call stays.
    "a constant that broadcasts": (
        "%x: Tensor[(3), float32]", f"add({ZEROS}, %x)", f"add({ZEROS}, %x)"),
}


@pytest.mark.parametrize("case", CASES)
def test_rewrites(case):
    params, before, expected = CASES[case]
    assert_rewrites(program(before, params), program(expected, params))


def test_option_double_negative_false_keeps_double_negation():
    before = program("%0 = negative(%x); %1 = negative(%0); multiply(%1, 1f)")
    expected = program("%0 = negative(%x); negative(%0)")
    assert_rewrites(before, expected, double_negative=False)


def test_config_signed_zeros_keeps_the_inexact_float_identities():
    config = {SIGNED_ZEROS: True}
    before = program(
        "%0 = add(%x, 0f); %1 = subtract(%0, -0f); %2 = add(%1, -0f); subtract(%2, 0f)")
    expected = program("%0 = add(%x, 0f); subtract(%0, -0f)")
    assert_rewrites(before, expected, config=config)
    # Integers have no signed zeros.
    params = "%x: Tensor[(4), int32]"
    assert_rewrites(program("add(%x, 0)", params), program("%x", params), config=config)


def test_a_chain_of_100000_calls():
    # MixedModeMutator walks dataflow without recursion: any length works.
    x = relay.var("x", shape=(2,))
    y = x
    for _ in range(50_000):
        y = relay.negative(relay.add(y, relay.const(0.0)))
    after = run(relay.IRModule.from_expr(relay.Function([x], y)))
    assert after["main"].body is after["main"].params[0]


# --- the pass-author kit: random programs -------------------------------------------------

# The operators the pass looks at, often, and a few around them.
OPS = [
    OpUse("add", "binary", weight=4),
    OpUse("multiply", "binary", weight=4),
    OpUse("subtract", "binary", weight=2),
    OpUse("divide", "binary", weight=2, guard=(1,)),
    OpUse("negative", "unary", weight=4),
    "nn.relu",
    "exp",
]


def test_check_pass():
    check_pass("RemoveIdentities", examples=100, ops=OPS, size=(1, 16))


def test_check_pass_on_every_operator_and_construct():
    check_pass("RemoveIdentities", examples=50)


def test_check_pass_without_double_negative():
    check_pass("RemoveIdentities", examples=50, ops=OPS, pass_options={"double_negative": False})


def test_check_pass_with_signed_zeros():
    check_pass("RemoveIdentities", examples=50, ops=OPS, config={SIGNED_ZEROS: True})


# --- the manifest entry -------------------------------------------------------------------

def test_the_manifest_is_installed_and_is_the_only_declaration():
    [spec] = [s for s in list_passes() if s.name == "RemoveIdentities"]
    assert spec.distribution == "relaypass-example-plugin"
    assert not plugin_errors()
    # The exported constructor, relay.transform's and get_pass all build the pass the
    # manifest entry describes: name, opt_level and required are written there only.
    for p in (RemoveIdentities(), relay.transform.RemoveIdentities(), get_pass("RemoveIdentities")):
        assert (p.info.name, p.info.opt_level, set(p.info.required)) == (
            spec.name, spec.opt_level, set(spec.required))
    # So are the options' defaults: the factory takes every declared option, without
    # defaults, and the registry gives it the manifest's default of each one not given.
    parameters = signature(_remove_identities_factory).parameters.values()
    assert {p.name for p in parameters} == {o.name for o in spec.options}
    assert all(p.default is p.empty for p in parameters)
