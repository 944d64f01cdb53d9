"""TranslationValidator (and WellFormedChecker) stop a pipeline at the broken pass and name it."""

from __future__ import annotations

import numpy as np
import pytest
from test_check_pass import change_constant, drop_binding, drop_binding_for_zeros

import relaypass
from relaypass import relay
from relaypass.ir import Call, Constant, Function, Op
from relaypass.transform import (
    PassContext,
    PipelineError,
    Sequential,
    function_pass,
    get_instrument,
    get_pass,
    list_instruments,
    load_pipeline,
    module_pass,
    register_pass,
    unregister_pass,
)
from relaypass.transform.instrument import (  # built by the registry, with the manifest's defaults
    TranslationValidator,
    WellFormedChecker,
)
from relaypass_instruments import translation_validation
from relaypass_instruments.options import InstrumentOptionError
from relaypass_instruments.translation_validation import TranslationValidationError
from relaypass_instruments.well_formed import IllFormedModuleError

MODEL = """#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(4, 3), float32]) {
  let %h = nn.dense(%x, %w);
  %0 = add(%h, 1f);
  %1 = multiply(2f, 3f);
  %2 = nn.relu(multiply(%0, %1));
  %3 = (%2, subtract(%h, 0.5f));
  %4 = %3.1;
  add(%2, %4)
}
"""

STANDARD = ["InferType", "FoldConstant", "ToANormalForm", "DeadCodeElimination",
            "ToGraphNormalForm", "FuseOps"]


def model():
    return relaypass.parse(MODEL)


def pipeline_with(broken=None, at=2):
    passes = [get_pass(n) for n in STANDARD]
    if broken is not None:
        passes.insert(at, broken)
    return Sequential(passes, name="pipeline")


def run(seq, *instruments, mod=None):
    with PassContext(opt_level=3, instruments=list(instruments)):
        return seq(model() if mod is None else mod)


# --------------------------------------------------------------------------- caught and named


def test_a_changed_constant_is_blamed_on_the_pass_with_the_largest_difference():
    with pytest.raises(TranslationValidationError) as info:
        run(pipeline_with(change_constant), TranslationValidator())
    err = info.value
    # A function pass ends by running type inference (as in Relay), on the module it built:
    # the change is ChangeConstant's own, made before that inner pass started.
    assert err.pass_name == "ChangeConstant" and err.when == "during"
    assert err.output_index == 0 and len(err.element_index) == 2
    assert err.max_abs_diff == pytest.approx(abs(err.actual - err.expected))
    assert err.max_abs_diff > 1
    message = str(err)
    assert message.startswith("during pass ChangeConstant (in the module it handed to InferType): "
                              "@main's outputs changed")
    assert "largest absolute difference" in message and "rtol=1e-05, atol=1e-06" in message
    assert f"element [{err.element_index[0]}, {err.element_index[1]}]" in message


def test_the_reported_element_is_where_the_outputs_differ_most():
    before = relaypass.interp.Interpreter(model()).evaluate()(
        *relaypass.testing.random_inputs(model(), 0))
    with pytest.raises(TranslationValidationError) as info:
        run(Sequential([change_constant]), TranslationValidator())
    err = info.value
    after = relaypass.interp.Interpreter(change_constant(model())).evaluate()(
        *relaypass.testing.random_inputs(model(), 0))
    diff = np.abs(after - before)
    assert err.element_index == np.unravel_index(np.argmax(diff), diff.shape)
    assert err.max_abs_diff == pytest.approx(diff.max())
    assert err.expected == pytest.approx(before[err.element_index])


def test_a_dropped_binding_is_named_by_both_checkers():
    with pytest.raises(TranslationValidationError) as info:
        run(pipeline_with(drop_binding, at=0), TranslationValidator())
    assert info.value.pass_name == "DropBinding"
    assert "could be run before but not after" in str(info.value)
    with pytest.raises(IllFormedModuleError) as ill:
        run(pipeline_with(drop_binding, at=0), WellFormedChecker())
    assert ill.value.pass_name == "DropBinding" and "%h is free" in str(ill.value)


def test_a_binding_replaced_by_zeros_is_caught_after_its_required_infer_type():
    with pytest.raises(TranslationValidationError) as info:
        run(pipeline_with(drop_binding_for_zeros, at=3), WellFormedChecker(), TranslationValidator())
    assert info.value.pass_name == "DropBindingForZeros"


def test_the_standard_pipeline_passes_both_checkers():
    validator = TranslationValidator(inputs=3, seed=5)
    out = run(pipeline_with(), WellFormedChecker(), validator)
    assert validator.skipped == []
    assert "fn (" in out.astext()  # FuseOps did run


def test_edits_made_before_running_an_inner_pass_are_blamed_on_the_outer_pass():
    @module_pass(opt_level=0, name="EditThenFold")
    def edit_then_fold(mod, ctx):
        main = mod["main"]
        mod["main"] = Function(main.params, relay.add(main.body, relay.const(1.0)))
        return get_pass("FoldConstant")(mod)

    with pytest.raises(TranslationValidationError) as info:
        run(Sequential([get_pass("InferType"), edit_then_fold]), TranslationValidator())
    err = info.value
    assert (err.pass_name, err.when, err.next_pass) == ("EditThenFold", "during", "FoldConstant")
    assert str(err).startswith("during pass EditThenFold (in the module it handed to FoldConstant)")


def test_named_passes_are_validated_whole_and_the_others_not_at_all():
    validator = TranslationValidator(passes=["FoldConstant", "DeadCodeElimination"])
    run(pipeline_with(change_constant), validator)  # ChangeConstant is not checked
    with pytest.raises(TranslationValidationError) as info:
        run(Sequential([pipeline_with(change_constant)], name="outer"),
            TranslationValidator(passes=["pipeline"]))
    assert info.value.pass_name == "pipeline"


def test_tolerance():
    @function_pass(opt_level=0, name="Nudge")
    def nudge(func, mod, ctx):
        eps = Constant(np.full((), 1e-4, "float32"))
        return Function(func.params, Call(Op.get("add"), [func.body, eps]), func.ret_type)

    run(Sequential([nudge]), TranslationValidator(atol=1e-3, rtol=0.0))
    with pytest.raises(TranslationValidationError) as info:
        run(Sequential([nudge]), TranslationValidator(atol=1e-6, rtol=0.0))
    assert info.value.max_abs_diff == pytest.approx(1e-4, rel=1e-2)


# --------------------------------------------------------------------------- pipeline files


@pytest.fixture
def registered():
    names = []
    for p in (change_constant, drop_binding):
        register_pass(p)
        names.append(p.info.name)
    yield
    for n in names:
        unregister_pass(n)


def write_pipeline(tmp_path, passes, instruments):
    text = [f"passes = {passes!r}".replace("'", '"'), "opt_level = 3", ""]
    for name, options in instruments:
        text += ["[[instruments]]", f'name = "{name}"']
        if options:
            text.append("options = { " + ", ".join(f"{k} = {v}" for k, v in options.items()) + " }")
        text.append("")
    path = tmp_path / "pipeline.toml"
    path.write_text("\n".join(text))
    return path


def test_pipeline_file_with_the_validator_names_the_broken_pass(tmp_path, registered):
    path = write_pipeline(
        tmp_path, ["InferType", "FoldConstant", "ChangeConstant", "DeadCodeElimination"],
        [("TranslationValidator", {"seed": 3, "rtol": 1e-4, "inputs": 2})],
    )
    pipeline = load_pipeline(path)
    with pytest.raises(TranslationValidationError) as info:
        pipeline(model())
    assert info.value.pass_name == "ChangeConstant"
    assert info.value.seed == 3 and info.value.rtol == 1e-4


def test_pipeline_file_with_the_well_formed_checker_names_the_dropping_pass(tmp_path, registered):
    path = write_pipeline(tmp_path, ["DropBinding", "FoldConstant"],
                          [("WellFormedChecker", {}), ("TranslationValidator", {})])
    with pytest.raises(IllFormedModuleError) as info:
        load_pipeline(path)(model())
    assert info.value.pass_name == "DropBinding"


def test_pipeline_file_of_standard_passes_runs_clean(tmp_path):
    path = write_pipeline(tmp_path, STANDARD, [("TranslationValidator", {"passes": '["FuseOps"]'})])
    pipeline = load_pipeline(path)
    pipeline(model())
    assert pipeline.instruments[0].skipped == []


def test_option_types_are_checked_when_the_pipeline_is_read(tmp_path):
    path = write_pipeline(tmp_path, ["InferType"], [("TranslationValidator", {"rtol": '"big"'})])
    with pytest.raises(PipelineError, match="rtol"):
        load_pipeline(path)


@pytest.mark.parametrize("options, match", [
    ({"rtol": -1.0}, "rtol"), ({"atol": "x"}, "atol"), ({"inputs": 0}, "inputs"),
    ({"seed": -2}, "seed"), ({"passes": [3]}, "passes"),
])
def test_bad_options_are_rejected_when_built(options, match):
    with pytest.raises(InstrumentOptionError, match=match):
        TranslationValidator(**options)


def test_registered_with_its_options():
    spec = {s.name: s for s in list_instruments()}["TranslationValidator"]
    assert [o.name for o in spec.options] == ["seed", "rtol", "atol", "passes", "inputs"]
    assert isinstance(get_instrument("TranslationValidator", seed=1),
                      translation_validation.TranslationValidator)


# --------------------------------------------------------------------------- what can be compared


def test_tuples_and_references_are_compared_by_content():
    text = """#[version = "0.0.5"]
def @main(%x: Tensor[(3), float32]) {
  let %r = ref(add(%x, 1f));
  let %w = ref_write(%r, multiply(%x, 2f));
  (%x, %r)
}
"""
    with pytest.raises(TranslationValidationError) as info:
        run(Sequential([change_constant]), TranslationValidator(), mod=relaypass.parse(text))
    assert info.value.output_index == 1  # output 0 is %x, unchanged; output 1 is the ref's content


def test_modules_that_cannot_be_run_are_skipped_and_say_why():
    text = """#[version = "0.0.5"]
def @main(%f: fn (float32) -> float32, %x: float32) {
  %f(add(%x, 1f))
}
"""
    validator = TranslationValidator()
    run(Sequential([get_pass("InferType"), change_constant]), validator, mod=relaypass.parse(text))
    # The module given to the pipeline, then each version of it: none can be run (the last
    # one is ChangeConstant's, handed to the type inference that ends a function pass).
    assert [name for name, _ in validator.skipped] == [
        "sequential", "InferType", "ChangeConstant", "InferType",
    ]
    assert all("no random inputs" in reason and "%f" in reason for _, reason in validator.skipped)


def test_a_changed_signature_is_reported():
    @module_pass(opt_level=0, name="NewParam")
    def new_param(mod, ctx):
        main = mod["main"]
        extra = relay.var("extra", shape=(1,))
        mod["main"] = Function([*main.params, extra], main.body)
        return mod

    with pytest.raises(TranslationValidationError, match="parameters changed"):
        run(Sequential([new_param]), TranslationValidator())
