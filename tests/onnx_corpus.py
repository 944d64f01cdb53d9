"""A corpus of ONNX models shaped the way exporters write transformers and CNNs, without torch.

Each builder returns an ``onnx.ModelProto`` (opset 17, seeded random
weights) whose graph follows what ``torch.onnx.export`` (the TorchScript
exporter) emits for the model classes of transformers and torchvision:

* ``bert_layer``: token, position and segment embeddings (the position ids
  sliced from a buffer up to the sequence length read with ``Shape``), the
  extended attention mask ``(1 - mask) * -10000``, multi-head attention whose
  head split is a ``Reshape`` to a target concatenated from ``Shape`` ->
  ``Gather`` -> ``Unsqueeze``, ``LayerNormalization``, and a feed-forward
  network with GELU written with ``Erf``.
* ``gpt2_block``: pre-norm layers, a fused QKV projection through
  ``Reshape`` -> ``Gemm`` -> ``Reshape`` split in three, a causal mask
  sliced from a constant lower-triangular buffer and applied with ``Where``,
  position ids from ``Range``, and the tanh approximation of GELU.
* ``gpt2_kv_cache``: one decoding step of the same attention with a KV
  cache: past keys and values are inputs, concatenated with the new ones on
  the sequence axis, and returned as present outputs.
* ``llama_block``: RMSNorm (ReduceMean, Sqrt, Reciprocal: ONNX has no
  operator for it before opset 23), rotary position embedding (``Range`` ->
  ``MatMul`` with the inverse frequencies -> ``Cos``/``Sin``,
  rotate-half with ``Slice``, ``Neg`` and ``Concat``), a causal mask built
  from ``Range`` comparisons, a KV cache, and a SwiGLU feed-forward network.
* ``vit_embed``: patches by a strided ``Conv``, a ``Reshape`` and ``Transpose``,
  a class token concatenated, position embeddings, ``LayerNormalization``.
* ``resnet_block`` and ``mobilenet_block``: convolutions with
  ``BatchNormalization``, ``Relu``/``Clip`` (ReLU6), a depthwise convolution,
  a residual sum, global pooling and a classifier ``Gemm``.

:func:`export_transformer` exports the real model classes of transformers
(BERT, GPT-2, DistilBERT, LLaMA, the T5 encoder; small random configurations)
with dynamic batch and sequence axes, with torch's TorchScript exporter or
its dynamo one, where torch and transformers are installed (the tests skip
it otherwise).

Every transformer comes with fixed shapes (``dynamic=False``: batch 2,
sequence 8) and with dynamic batch and sequence axes (``dynamic=True``:
``batch`` and ``sequence`` as dim params), as exporters write them with
``dynamic_axes``.  :data:`CORPUS` maps ``name`` or ``name:dynamic`` to a
builder; :func:`feeds` makes seeded inputs (token ids within the
vocabulary, masks of 0 and 1, past keys of the cache's length).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

__all__ = ["BATCH", "CORPUS", "NEEDS", "SEQ", "TRANSFORMER_CLASSES", "export_transformer", "feeds"]

BATCH, SEQ, PAST = 2, 8, 5
HIDDEN, HEADS, FFN, VOCAB, MAX_POS = 32, 4, 64, 50, 64
HEAD = HIDDEN // HEADS
OPSET = 17


class _Graph:
    """A graph under construction: nodes, initializers, unique names, seeded weights."""

    def __init__(self, name: str, seed: int) -> None:
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes: list = []
        self.inits: list = []
        self.count = 0

    def _name(self, hint: str) -> str:
        self.count += 1
        return f"{hint}_{self.count}"

    def const(self, array, hint: str = "const") -> str:
        name = self._name(hint)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def ints(self, values: Sequence[int]) -> str:
        return self.const(np.asarray(values, dtype=np.int64), "ints")

    def weight(self, shape: Sequence[int], scale: float | None = None, hint: str = "w") -> str:
        fan_in = shape[0] if len(shape) == 2 else int(np.prod(shape[1:])) if shape else 1
        scale = scale if scale is not None else 1.0 / math.sqrt(max(fan_in, 1))
        return self.const((self.rng.standard_normal(shape) * scale).astype(np.float32), hint)

    def op(self, op_type: str, inputs: Sequence[str], outputs: int = 1, **attrs):
        names = [self._name(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), names, **attrs))
        return names[0] if outputs == 1 else names

    def model(self, inputs: list, outputs: list, rename: dict[str, str]) -> onnx.ModelProto:
        """The model; ``rename`` maps internal value names to the graph outputs' names."""
        for node in self.nodes:
            node.output[:] = [rename.get(o, o) for o in node.output]
            node.input[:] = [rename.get(i, i) for i in node.input]
        graph = helper.make_graph(self.nodes, self.name, inputs, outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="relaypass-tests")
        model.ir_version = 8
        onnx.checker.check_model(model)
        return model

    # --- layers as exporters write them ---------------------------------------------------------
    def linear(self, x: str, n_in: int, n_out: int) -> str:
        return self.op("Add", [self.op("MatMul", [x, self.weight((n_in, n_out))]),
                               self.weight((n_out,), 0.02, "b")])

    def dims(self, x: str, axes: Sequence[int]) -> list[str]:
        """Each extent of ``x`` along ``axes`` as a 1-D tensor: Shape -> Gather -> Unsqueeze."""
        shape = self.op("Shape", [x])
        return [self.op("Unsqueeze", [self.op("Gather", [shape, self.const(np.array(a, np.int64))],
                                              axis=0), self.ints([0])]) for a in axes]

    def split_heads(self, x: str, transpose_key: bool = False) -> str:
        b, s = self.dims(x, (0, 1))
        target = self.op("Concat", [b, s, self.ints([HEADS]), self.ints([HEAD])], axis=0)
        heads = self.op("Reshape", [x, target])
        return self.op("Transpose", [heads], perm=[0, 2, 3, 1] if transpose_key else [0, 2, 1, 3])

    def merge_heads(self, x: str) -> str:
        t = self.op("Transpose", [x], perm=[0, 2, 1, 3])
        b, s = self.dims(t, (0, 1))
        return self.op("Reshape", [t, self.op("Concat", [b, s, self.ints([HIDDEN])], axis=0)])

    def gamma(self) -> str:
        """A normalization's scale: trained values near 1."""
        return self.const(self.rng.uniform(0.8, 1.2, HIDDEN).astype(np.float32), "gamma")

    def layer_norm(self, x: str) -> str:
        return self.op("LayerNormalization", [x, self.gamma(),
                                              self.weight((HIDDEN,), 0.02, "ln_b")],
                       axis=-1, epsilon=1e-12)

    def gelu_erf(self, x: str) -> str:
        inner = self.op("Erf", [self.op("Div", [x, self.const(np.float32(math.sqrt(2.0)))])])
        return self.op("Mul", [self.op("Mul", [x, self.op("Add", [inner, self.const(
            np.float32(1.0))])]), self.const(np.float32(0.5))])

    def gelu_tanh(self, x: str) -> str:
        cube = self.op("Pow", [x, self.const(np.float32(3.0))])
        inner = self.op("Add", [x, self.op("Mul", [self.const(np.float32(0.044715)), cube])])
        t = self.op("Tanh", [self.op("Mul", [self.const(np.float32(math.sqrt(2 / math.pi))),
                                             inner])])
        return self.op("Mul", [self.op("Mul", [self.const(np.float32(0.5)), x]),
                               self.op("Add", [self.const(np.float32(1.0)), t])])

    def attention(self, q: str, k_t: str, v: str, bias: str | None) -> str:
        scores = self.op("Div", [self.op("MatMul", [q, k_t]),
                                 self.const(np.float32(math.sqrt(HEAD)))])
        if bias is not None:
            scores = self.op("Add", [scores, bias])
        return self.op("MatMul", [self.op("Softmax", [scores], axis=-1), v])


def _dims(dynamic: bool, batch: str = "batch", seq: str = "sequence") -> tuple:
    return (batch if dynamic else BATCH, seq if dynamic else SEQ)


def _info(name: str, elem: int, shape: Sequence) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, list(shape))


# --- the models -----------------------------------------------------------------------------------


def bert_layer(dynamic: bool = False) -> onnx.ModelProto:
    g = _Graph("bert_layer", 1)
    b, s = _dims(dynamic)
    ids, mask, types = "input_ids", "attention_mask", "token_type_ids"
    (seq_len,) = g.dims(ids, (1,))
    positions = g.op("Slice", [g.const(np.arange(MAX_POS, dtype=np.int64)[None], "position_ids"),
                               g.ints([0]), seq_len, g.ints([1])])
    emb = g.op("Add", [g.op("Gather", [g.weight((VOCAB, HIDDEN), 0.5), ids]),
                       g.op("Gather", [g.weight((2, HIDDEN), 0.5), types])])
    emb = g.op("Add", [emb, g.op("Gather", [g.weight((MAX_POS, HIDDEN), 0.5), positions])])
    x = g.layer_norm(emb)
    ext = g.op("Cast", [g.op("Unsqueeze", [mask, g.ints([1, 2])])], to=TensorProto.FLOAT)
    bias = g.op("Mul", [g.op("Sub", [g.const(np.float32(1.0)), ext]),
                        g.const(np.float32(-10000.0))])
    q = g.split_heads(g.linear(x, HIDDEN, HIDDEN))
    k = g.split_heads(g.linear(x, HIDDEN, HIDDEN), transpose_key=True)
    v = g.split_heads(g.linear(x, HIDDEN, HIDDEN))
    ctx = g.merge_heads(g.attention(q, k, v, bias))
    x = g.layer_norm(g.op("Add", [g.linear(ctx, HIDDEN, HIDDEN), x]))
    ff = g.linear(g.gelu_erf(g.linear(x, HIDDEN, FFN)), FFN, HIDDEN)
    out = g.layer_norm(g.op("Add", [ff, x]))
    inputs = [_info(ids, TensorProto.INT64, (b, s)), _info(mask, TensorProto.INT64, (b, s)),
              _info(types, TensorProto.INT64, (b, s))]
    outputs = [_info("last_hidden_state", TensorProto.FLOAT, (b, s, HIDDEN))]
    return g.model(inputs, outputs, {out: "last_hidden_state"})


def _causal_bias_from_buffer(g: _Graph, q_len: str, k_len: str) -> str:
    """GPT-2's mask: rows k_len - q_len .. k_len of a lower-triangular buffer, then Where."""
    buffer = g.const(np.tril(np.ones((MAX_POS, MAX_POS), dtype=bool))[None, None], "causal")
    start = g.op("Sub", [k_len, q_len])
    rows = g.op("Slice", [buffer, start, k_len, g.ints([2])])
    return g.op("Slice", [rows, g.ints([0]), k_len, g.ints([3])])


def _gpt2_attention(g: _Graph, x: str, past: tuple[str, str] | None) -> tuple[str, str, str]:
    b, s = g.dims(x, (0, 1))
    flat = g.op("Reshape", [x, g.ints([-1, HIDDEN])])
    qkv = g.op("Gemm", [flat, g.weight((HIDDEN, 3 * HIDDEN)), g.weight((3 * HIDDEN,), 0.02)])
    qkv = g.op("Reshape", [qkv, g.op("Concat", [b, s, g.ints([3 * HIDDEN])], axis=0)])
    q, k, v = g.op("Split", [qkv, g.ints([HIDDEN] * 3)], outputs=3, axis=2)
    q, k, v = g.split_heads(q), g.split_heads(k), g.split_heads(v)
    if past is not None:
        k = g.op("Concat", [past[0], k], axis=2)
        v = g.op("Concat", [past[1], v], axis=2)
    (q_len,) = g.dims(q, (2,))
    (k_len,) = g.dims(k, (2,))
    scores = g.op("Div", [g.op("MatMul", [q, g.op("Transpose", [k], perm=[0, 1, 3, 2])]),
                          g.const(np.float32(math.sqrt(HEAD)))])
    allowed = _causal_bias_from_buffer(g, q_len, k_len)
    scores = g.op("Where", [allowed, scores, g.const(np.float32(-3.4028234663852886e38))])
    ctx = g.merge_heads(g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v]))
    flat = g.op("Reshape", [ctx, g.ints([-1, HIDDEN])])
    out = g.op("Gemm", [flat, g.weight((HIDDEN, HIDDEN)), g.weight((HIDDEN,), 0.02)])
    return g.op("Reshape", [out, g.op("Concat", [b, s, g.ints([HIDDEN])], axis=0)]), k, v


def _gpt2(name: str, dynamic: bool, cache: bool) -> onnx.ModelProto:
    g = _Graph(name, 2 if cache else 3)
    b, s = _dims(dynamic)
    ids = "input_ids"
    inputs = [_info(ids, TensorProto.INT64, (b, s))]
    past = None
    p = "past_sequence" if dynamic else PAST
    if cache:
        past = ("past_key", "past_value")
        inputs += [_info(n, TensorProto.FLOAT, (b, HEADS, p, HEAD)) for n in past]
        (past_len,) = g.dims(past[0], (2,))
    else:
        past_len = g.ints([0])
    (seq_len,) = g.dims(ids, (1,))
    start = g.op("Squeeze", [past_len, g.ints([0])])
    limit = g.op("Squeeze", [g.op("Add", [past_len, seq_len]), g.ints([0])])
    positions = g.op("Unsqueeze", [g.op("Range", [start, limit, g.const(np.int64(1))]),
                                   g.ints([0])])
    x = g.op("Add", [g.op("Gather", [g.weight((VOCAB, HIDDEN), 0.5), ids]),
                     g.op("Gather", [g.weight((MAX_POS, HIDDEN), 0.5), positions])])
    attn, k, v = _gpt2_attention(g, g.layer_norm(x), past)
    x = g.op("Add", [x, attn])
    ff = g.linear(g.gelu_tanh(g.linear(g.layer_norm(x), HIDDEN, FFN)), FFN, HIDDEN)
    out = g.layer_norm(g.op("Add", [x, ff]))
    total = "total_sequence" if dynamic else PAST + SEQ if cache else SEQ
    outputs = [_info("logits", TensorProto.FLOAT, (b, s, HIDDEN))]
    rename = {out: "logits"}
    if cache:
        outputs += [_info(n, TensorProto.FLOAT, (b, HEADS, total, HEAD))
                    for n in ("present_key", "present_value")]
        rename.update({k: "present_key", v: "present_value"})
    return g.model(inputs, outputs, rename)


def gpt2_block(dynamic: bool = False) -> onnx.ModelProto:
    return _gpt2("gpt2_block", dynamic, cache=False)


def gpt2_kv_cache(dynamic: bool = False) -> onnx.ModelProto:
    return _gpt2("gpt2_kv_cache", dynamic, cache=True)


def _rms_norm(g: _Graph, x: str) -> str:
    var = g.op("ReduceMean", [g.op("Pow", [x, g.const(np.float32(2.0))])], axes=[-1])
    inv = g.op("Reciprocal", [g.op("Sqrt", [g.op("Add", [var, g.const(np.float32(1e-6))])])])
    return g.op("Mul", [g.gamma(), g.op("Mul", [x, inv])])


def _rotate_half(g: _Graph, x: str) -> str:
    half = HEAD // 2
    x1 = g.op("Slice", [x, g.ints([0]), g.ints([half]), g.ints([-1])])
    x2 = g.op("Slice", [x, g.ints([half]), g.ints([2**62]), g.ints([-1])])
    return g.op("Concat", [g.op("Neg", [x2]), x1], axis=-1)


def llama_block(dynamic: bool = False) -> onnx.ModelProto:
    g = _Graph("llama_block", 4)
    b, s = _dims(dynamic)
    p = "past_sequence" if dynamic else PAST
    x_in, pk, pv = "inputs_embeds", "past_key", "past_value"
    (past_len,) = g.dims(pk, (2,))
    (seq_len,) = g.dims(x_in, (1,))
    total = g.op("Add", [past_len, seq_len])
    positions = g.op("Cast", [g.op("Range", [g.op("Squeeze", [past_len, g.ints([0])]),
                                             g.op("Squeeze", [total, g.ints([0])]),
                                             g.const(np.int64(1))])], to=TensorProto.FLOAT)
    inv_freq = (1.0 / 10000 ** (np.arange(0, HEAD, 2, dtype=np.float32) / HEAD))[None]
    freqs = g.op("MatMul", [g.op("Unsqueeze", [positions, g.ints([1])]),
                            g.const(inv_freq.astype(np.float32), "inv_freq")])
    emb = g.op("Concat", [freqs, freqs], axis=-1)
    cos, sin = g.op("Cos", [emb]), g.op("Sin", [emb])
    h = _rms_norm(g, x_in)

    def rope(t: str) -> str:
        return g.op("Add", [g.op("Mul", [t, cos]), g.op("Mul", [_rotate_half(g, t), sin])])

    q = rope(g.split_heads(g.op("MatMul", [h, g.weight((HIDDEN, HIDDEN))])))
    k = rope(g.split_heads(g.op("MatMul", [h, g.weight((HIDDEN, HIDDEN))])))
    v = g.split_heads(g.op("MatMul", [h, g.weight((HIDDEN, HIDDEN))]))
    k = g.op("Concat", [pk, k], axis=2)
    v = g.op("Concat", [pv, v], axis=2)
    # causal: query i (at position past + i) sees keys j <= past + i
    rows = g.op("Range", [g.op("Squeeze", [past_len, g.ints([0])]),
                          g.op("Squeeze", [total, g.ints([0])]), g.const(np.int64(1))])
    cols = g.op("Range", [g.const(np.int64(0)), g.op("Squeeze", [total, g.ints([0])]),
                          g.const(np.int64(1))])
    blocked = g.op("Greater", [g.op("Unsqueeze", [cols, g.ints([0])]),
                               g.op("Unsqueeze", [rows, g.ints([1])])])
    bias = g.op("Where", [blocked, g.const(np.float32(-1e9)), g.const(np.float32(0.0))])
    attn = g.attention(q, g.op("Transpose", [k], perm=[0, 1, 3, 2]), v, bias)
    x = g.op("Add", [x_in, g.op("MatMul", [g.merge_heads(attn), g.weight((HIDDEN, HIDDEN))])])
    h = _rms_norm(g, x)
    gate = g.op("MatMul", [h, g.weight((HIDDEN, FFN))])
    up = g.op("MatMul", [h, g.weight((HIDDEN, FFN))])
    silu = g.op("Mul", [gate, g.op("Sigmoid", [gate])])
    out = g.op("Add", [x, g.op("MatMul", [g.op("Mul", [silu, up]), g.weight((FFN, HIDDEN))])])
    total_dim = "total_sequence" if dynamic else PAST + SEQ
    inputs = [_info(x_in, TensorProto.FLOAT, (b, s, HIDDEN)),
              _info(pk, TensorProto.FLOAT, (b, HEADS, p, HEAD)),
              _info(pv, TensorProto.FLOAT, (b, HEADS, p, HEAD))]
    outputs = [_info("hidden_states", TensorProto.FLOAT, (b, s, HIDDEN)),
               _info("present_key", TensorProto.FLOAT, (b, HEADS, total_dim, HEAD)),
               _info("present_value", TensorProto.FLOAT, (b, HEADS, total_dim, HEAD))]
    return g.model(inputs, outputs, {out: "hidden_states", k: "present_key", v: "present_value"})


def vit_embed(dynamic: bool = False) -> onnx.ModelProto:
    g = _Graph("vit_embed", 5)
    batch = "batch" if dynamic else BATCH
    patch, image = 4, 16
    n = (image // patch) ** 2
    pixels = "pixel_values"
    conv = g.op("Conv", [pixels, g.weight((HIDDEN, 3, patch, patch)), g.weight((HIDDEN,), 0.02)],
                kernel_shape=[patch, patch], strides=[patch, patch])
    flat = g.op("Reshape", [conv, g.op("Concat", [*g.dims(conv, (0, 1)), g.ints([-1])], axis=0)])
    tokens = g.op("Transpose", [flat], perm=[0, 2, 1])
    (b,) = g.dims(pixels, (0,))
    cls = g.op("Expand", [g.weight((1, 1, HIDDEN), 0.5), g.op(
        "Concat", [b, g.ints([1, 1])], axis=0)])
    x = g.op("Add", [g.op("Concat", [cls, tokens], axis=1), g.weight((1, n + 1, HIDDEN), 0.5)])
    out = g.layer_norm(x)
    inputs = [_info(pixels, TensorProto.FLOAT, (batch, 3, image, image))]
    outputs = [_info("embeddings", TensorProto.FLOAT, (batch, n + 1, HIDDEN))]
    return g.model(inputs, outputs, {out: "embeddings"})


def _conv_bn(g: _Graph, x: str, c_in: int, c_out: int, k: int, stride: int = 1,
             group: int = 1) -> str:
    w = g.weight((c_out, c_in // group, k, k), math.sqrt(2.0 / (c_in // group * k * k)))
    y = g.op("Conv", [x, w], kernel_shape=[k, k], strides=[stride, stride],
             pads=[k // 2] * 4, group=group)
    return g.op("BatchNormalization", [
        y, g.const(g.rng.uniform(0.5, 1.0, c_out).astype(np.float32)),
        g.const(g.rng.uniform(-0.1, 0.1, c_out).astype(np.float32)),
        g.const(g.rng.uniform(-0.1, 0.1, c_out).astype(np.float32)),
        g.const(g.rng.uniform(0.5, 1.5, c_out).astype(np.float32))], epsilon=1e-5)


def resnet_block(dynamic: bool = False) -> onnx.ModelProto:
    g = _Graph("resnet_block", 6)
    batch = "batch" if dynamic else BATCH
    x = g.op("Relu", [_conv_bn(g, "image", 3, 16, 3, 2)])
    x = g.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    y = g.op("Relu", [_conv_bn(g, x, 16, 16, 3)])
    y = _conv_bn(g, y, 16, 16, 3)
    x = g.op("Relu", [g.op("Add", [x, y])])
    pooled = g.op("Flatten", [g.op("GlobalAveragePool", [x])], axis=1)
    logits = g.op("Gemm", [pooled, g.weight((10, 16)), g.weight((10,), 0.02)], transB=1)
    out = g.op("Softmax", [logits], axis=-1)
    return g.model([_info("image", TensorProto.FLOAT, (batch, 3, 32, 32))],
                   [_info("probabilities", TensorProto.FLOAT, (batch, 10))],
                   {out: "probabilities"})


def mobilenet_block(dynamic: bool = False) -> onnx.ModelProto:
    g = _Graph("mobilenet_block", 7)
    batch = "batch" if dynamic else BATCH
    six = g.const(np.float32(6.0))
    zero = g.const(np.float32(0.0))
    x = g.op("Clip", [_conv_bn(g, "image", 3, 16, 3, 2), zero, six])
    y = g.op("Clip", [_conv_bn(g, x, 16, 32, 1), zero, six])
    y = g.op("Clip", [_conv_bn(g, y, 32, 32, 3, group=32), zero, six])
    y = _conv_bn(g, y, 32, 16, 1)
    x = g.op("Add", [x, y])
    x = g.op("HardSwish", [x])
    pooled = g.op("Flatten", [g.op("GlobalAveragePool", [x])], axis=1)
    out = g.op("Gemm", [pooled, g.weight((10, 16)), g.weight((10,), 0.02)], transB=1)
    return g.model([_info("image", TensorProto.FLOAT, (batch, 3, 32, 32))],
                   [_info("logits", TensorProto.FLOAT, (batch, 10))], {out: "logits"})


_BUILDERS: dict[str, Callable[..., onnx.ModelProto]] = {
    "bert_layer": bert_layer, "gpt2_block": gpt2_block, "gpt2_kv_cache": gpt2_kv_cache,
    "llama_block": llama_block, "vit_embed": vit_embed, "resnet_block": resnet_block,
    "mobilenet_block": mobilenet_block,
}

CORPUS: dict[str, Callable[[], onnx.ModelProto]] = {}
"""``name`` (fixed shapes) and ``name:dynamic`` (dynamic batch and sequence axes) -> builder."""
for _name, _build in _BUILDERS.items():
    CORPUS[_name] = (lambda f=_build: f(False))
    CORPUS[f"{_name}:dynamic"] = (lambda f=_build: f(True))

NEEDS: dict[str, tuple[str, ...]] = {"llama_block": ("Sin", "Cos")}
"""ONNX operators a corpus model uses that an importer may lack (the tests say so, not fail)."""


def fixed_shapes(model: onnx.ModelProto) -> dict[str, tuple[int, ...]]:
    """The corpus's fixed sizes for every input of a model with dynamic axes."""
    sizes = {"batch": BATCH, "sequence": SEQ, "past_sequence": PAST}
    out = {}
    for vi in model.graph.input:
        dims = vi.type.tensor_type.shape.dim
        out[vi.name] = tuple(sizes[d.dim_param] if d.dim_param else d.dim_value for d in dims)
    return out


def feeds(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded inputs for a corpus model: token ids below the vocabulary, 0/1 masks with every
    row starting with 1, normal floats."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in fixed_shapes(model).items():
        if name == "input_ids":
            out[name] = rng.integers(0, VOCAB, shape, dtype=np.int64)
        elif name == "token_type_ids":
            out[name] = rng.integers(0, 2, shape, dtype=np.int64)
        elif name == "attention_mask":
            mask = rng.integers(0, 2, shape, dtype=np.int64)
            mask[:, 0] = 1
            out[name] = mask
        else:
            out[name] = rng.standard_normal(shape).astype(np.float32)
    return out


# --- real model classes, exported by torch (optional) -------------------------------------------

TRANSFORMER_CLASSES: dict[str, tuple[str, str, dict, tuple[str, ...]]] = {
    "bert": ("BertModel", "BertConfig", dict(
        vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=2, num_attention_heads=HEADS,
        intermediate_size=FFN, max_position_embeddings=MAX_POS),
        ("input_ids", "attention_mask", "token_type_ids")),
    "gpt2": ("GPT2Model", "GPT2Config", dict(
        vocab_size=VOCAB, n_embd=HIDDEN, n_layer=2, n_head=HEADS, n_positions=MAX_POS,
        bos_token_id=0, eos_token_id=0), ("input_ids", "attention_mask")),
    "distilbert": ("DistilBertModel", "DistilBertConfig", dict(
        vocab_size=VOCAB, dim=HIDDEN, n_layers=2, n_heads=HEADS, hidden_dim=FFN,
        max_position_embeddings=MAX_POS), ("input_ids", "attention_mask")),
    "llama": ("LlamaModel", "LlamaConfig", dict(
        vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=2, num_attention_heads=HEADS,
        num_key_value_heads=HEADS // 2, intermediate_size=FFN, max_position_embeddings=MAX_POS),
        ("input_ids", "attention_mask")),
    "t5_encoder": ("T5EncoderModel", "T5Config", dict(
        vocab_size=VOCAB, d_model=HIDDEN, d_kv=HEAD, d_ff=FFN, num_layers=2, num_heads=HEADS),
        ("input_ids", "attention_mask")),
}
"""Model name -> (transformers model class, its config class, a small config, input names)."""


def export_transformer(name: str, path, dynamo: bool = False) -> onnx.ModelProto:
    """Export a transformers model class of :data:`TRANSFORMER_CLASSES` (seeded random weights,
    eager attention) to ``path`` with dynamic ``batch`` and ``sequence`` axes on every input
    and on ``last_hidden_state``, as users do; returns the loaded model.  Needs torch and
    transformers (and onnxscript for ``dynamo=True``)."""
    import torch
    import transformers

    model_cls, config_cls, config, names = TRANSFORMER_CLASSES[name]
    torch.manual_seed(0)
    model = getattr(transformers, model_cls)(getattr(transformers, config_cls)(**config))
    model.config._attn_implementation = "eager"
    model.eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *args):
            return self.model(**dict(zip(names, args))).last_hidden_state

    args = tuple(torch.randint(1, VOCAB, (BATCH, SEQ)) if n == "input_ids"
                 else torch.ones(BATCH, SEQ, dtype=torch.long) if n == "attention_mask"
                 else torch.zeros(BATCH, SEQ, dtype=torch.long) for n in names)
    if dynamo:
        batch, seq = torch.export.Dim("batch"), torch.export.Dim("sequence", max=MAX_POS)
        torch.onnx.export(LastHiddenState(), args, str(path), input_names=list(names),
                          output_names=["last_hidden_state"], dynamo=True, opset_version=18,
                          dynamic_shapes=(tuple({0: batch, 1: seq} for _ in names),))
    else:
        torch.onnx.export(LastHiddenState(), args, str(path), input_names=list(names),
                          output_names=["last_hidden_state"], dynamo=False, opset_version=OPSET,
                          dynamic_axes={n: {0: "batch", 1: "sequence"}
                                        for n in (*names, "last_hidden_state")})
    return onnx.load(str(path))
