"""The graph-level passes Relay deployment pipelines ran, checked with the pass-author kit.

Each pass runs on 300 random well-typed programs (``relaypass.testing.check_pass``:
lets, ifs, tuples, local and global functions) whose operator mix holds what
it rewrites, drawn with the pattern uses of ``strategies.PATTERN_OP_USES``
(per-channel constant scales, parallel branches of one input, pads before
convolutions and pools, widening casts).  It must keep each program's
outputs, never change its input, return a well-formed and well-typed program
of the same type, and do the same twice.  So that a mix that stops producing
the patterns fails too, each test also asserts that the pass rewrote a fair
share of the programs.  Small shapes and one set of inputs per program keep
the whole file within about a minute on one core.
"""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings

from relaypass import relay
from relaypass.functor import post_order_visit
from relaypass.interp import Interpreter
from relaypass.ir.structural import structural_equal
from relaypass.relay.testing.temp_op_attr import TempOpAttr
from relaypass.testing import check_pass, random_inputs
from relaypass.testing.strategies import PATTERN_OP_USES, modules
from relaypass.transform import get_pass

EXAMPLES = 300
SMALL = {"size": (1, 6), "max_dim": 3, "inputs": 1, "opt_level": 4}
KEEP_DTYPE = {"relay.ToMixedPrecision.keep_orig_output_dtype": True}


def patterns(*kinds, weight=None):
    """The pattern uses of the given kinds, ``weight`` times as frequent as they are by default."""
    return [u if weight is None else dataclasses.replace(u, weight=u.weight * weight)
            for u in PATTERN_OP_USES if u.kind in kinds]


AROUND = ["add", "subtract", "multiply", "nn.relu", "concatenate", "transpose", "sum"]
SCALE_OPS = ["nn.conv2d", "nn.dense", "nn.bias_add", "nn.leaky_relu", *AROUND,
             *patterns("channel_scale", "parallel_conv2d"),
             *patterns("scaled_conv2d", "scaled_dense", weight=2)]
MIXED_PRECISION_OPS = ["nn.conv2d", "nn.dense", "nn.batch_matmul", "nn.batch_norm", "exp",
                       "nn.softmax", "mean", "clip", "where", "take", "cast", "tanh", *AROUND,
                       *patterns("parallel_conv2d", "parallel_dense")]
PAD_OPS = ["nn.relu", "add", "multiply",
           *patterns("pad_window1d", "pad_window2d", "pad_window3d", weight=2)]
LAYOUT_OPS = ["nn.conv2d", "nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d",
              "nn.batch_norm", "nn.bias_add", *AROUND,
              *patterns("channel_scale", "parallel_conv2d", "pad_window2d")]


def parallel_ops(kind):
    """Parallel branches of one kind, frequent, among elementwise operators and scales."""
    return [*AROUND, *patterns("channel_scale"), *patterns(kind, weight=6)]


@pytest.mark.parametrize("use", PATTERN_OP_USES, ids=lambda u: f"{u.kind}-{u.name}")
def test_each_pattern_use_builds_well_typed_programs_holding_its_operator(use):
    # Let variables carry the types the generator claims now and then, so InferType checks
    # them; the interpreter gives values of the inferred types.
    found = []

    @settings(max_examples=15, deadline=None, database=None)
    @given(modules(size=(1, 3), ops=["add", dataclasses.replace(use, weight=20)], max_rank=5,
                   max_dim=3))
    def generated(mod):
        typed = relay.transform.InferType()(mod)
        with np.errstate(all="ignore"):
            out = Interpreter(typed).evaluate()(*random_inputs(typed, 0))
        ret = typed["main"].checked_type.ret_type
        if isinstance(ret, relay.TensorType):
            assert np.shape(out) == tuple(ret.concrete_shape)
        for func in typed.functions.values():
            post_order_visit(func, lambda e: found.append(e.op.name)
                             if isinstance(e, relay.Call) and hasattr(e.op, "name") else None)

    generated()
    assert use.name in found


class Counting:
    """A pass run by name that counts the runs in which it changed the program it was given."""

    def __init__(self, name, **options):
        self.pass_ = get_pass(name, **options)
        self.__name__ = name
        self.runs = self.rewrites = 0

    def __call__(self, mod):
        out = self.pass_(mod)
        self.runs += 1
        self.rewrites += not structural_equal(out, mod)
        return out

    def check(self, least, **kw):
        """check_pass on EXAMPLES programs; at least ``least`` of the runs must rewrite something."""
        settings = {**SMALL, **kw}
        assert check_pass(self, EXAMPLES, infer_types=True, **settings) == EXAMPLES
        share = self.rewrites / self.runs
        assert share >= least, f"{self.__name__} rewrote only {share:.0%} of the programs"


@pytest.mark.parametrize("dtype, tolerance", [("float32", 1e-6), ("float16", 1e-2),
                                              ("bfloat16", 5e-2)])
def test_to_mixed_precision(dtype, tolerance):
    # float16 computes within 1e-2 of float32 on these small programs, bfloat16 (8 bits of
    # mantissa) within 5e-2; the result keeps its dtype (the config key), as check_pass
    # wants @main's type unchanged.
    if dtype == "bfloat16":
        pytest.importorskip("ml_dtypes", reason="bfloat16 data needs the bf16 extra "
                            "(pip install 'relaypass[bf16]')")
    run = Counting("ToMixedPrecision", mixed_precision_type=dtype)
    run.check(0.0 if dtype == "float32" else 0.5, ops=MIXED_PRECISION_OPS, rtol=tolerance,
              atol=tolerance, config=KEEP_DTYPE)


@pytest.mark.parametrize("name, least", [("FoldScaleAxis", 0.1), ("ForwardFoldScaleAxis", 0.05),
                                         ("BackwardFoldScaleAxis", 0.05)])
def test_fold_scale_axis(name, least):
    Counting(name).check(least, ops=SCALE_OPS, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name, options, kind", [
    ("CombineParallelConv2D", {}, "parallel_conv2d"),
    ("CombineParallelDense", {}, "parallel_dense"),
    ("CombineParallelDense", {"to_batch": False}, "parallel_dense"),
    ("CombineParallelBatchMatmul", {}, "parallel_batch_matmul"),
], ids=["conv2d", "dense-to-batch", "dense-flat", "batch-matmul"])
def test_combine_parallel(name, options, kind):
    Counting(name, min_num_branches=2, **options).check(0.1, ops=parallel_ops(kind), rtol=1e-4,
                                                       atol=1e-5)


def test_canonicalize_ops():
    Counting("CanonicalizeOps").check(0.1, ops=["nn.bias_add", "nn.dense", "nn.conv2d", *AROUND])


def test_canonicalize_cast():
    ops = ["cast", "exp", "nn.relu", "add", "multiply", "maximum",
           *patterns("widening_cast", weight=4)]
    Counting("CanonicalizeCast").check(0.1, ops=ops)


def test_fast_math():
    # The fast kernels are TVM's approximations: close, not equal.
    ops = ["exp", "tanh", "erf", "nn.softmax", "add", "multiply", "nn.relu", "sum"]
    Counting("FastMath").check(0.25, ops=ops, rtol=1e-3, atol=1e-4)


def test_div_to_mul():
    ops = ["divide", "add", "multiply", "sqrt", "nn.relu", "sum"]
    Counting("DivToMul").check(0.15, ops=ops, rtol=1e-5)


def test_fold_explicit_padding():
    Counting("FoldExplicitPadding").check(0.1, ops=PAD_OPS, max_rank=5)


def _dense_as_matmul(attrs, inputs, types):
    data, weight = inputs
    return relay.nn.matmul(data, relay.transpose(weight))


def _bias_add_as_add(attrs, inputs, types):
    data, bias = inputs
    axis = attrs.axis % len(types[0].shape)
    trailing = len(types[0].shape) - axis - 1
    return relay.add(data, relay.expand_dims(bias, 1, trailing) if trailing else bias)


def test_legalize():
    # Nothing is legalized by default; the legalizations here are exact rewrites.
    with TempOpAttr("nn.dense", "FTVMLegalize", _dense_as_matmul), \
            TempOpAttr("nn.bias_add", "FTVMLegalize", _bias_add_as_add):
        Counting("Legalize").check(0.2, ops=["nn.dense", "nn.bias_add", *AROUND,
                                             *patterns("parallel_dense")])


def test_convert_layout():
    desired = {"nn.conv2d": ["NHWC", "default"], "nn.max_pool2d": ["NHWC"],
               "nn.avg_pool2d": ["NHWC"]}
    Counting("ConvertLayout", desired_layouts=desired).check(0.3, ops=LAYOUT_OPS)


def _conv2d_to_nhwc(attrs, inputs, tinfos, out_type):
    if attrs.data_layout != "NCHW":
        return None
    return relay.nn.conv2d(*inputs, **dict(attrs, data_layout="NHWC", kernel_layout="OHWI"))


def test_alter_op_layout():
    with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", _conv2d_to_nhwc):
        Counting("AlterOpLayout").check(0.2, ops=LAYOUT_OPS)
