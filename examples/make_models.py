"""Regenerate the bundled example models: ``python examples/make_models.py``.

The models are committed, so that the quick start and the tests need nothing
but a checkout; this script is how they were made.  The seed is fixed, so
running it again writes the same files, byte for byte.

- ``models/mlp.relay``: a two-layer perceptron (dense, bias_add, relu, softmax);
- ``models/convnet.relay``: a small image classifier (conv2d, batch_norm, relu,
  max_pool2d, global_avg_pool2d, dense, softmax).

Weights are constants in the files' metadata sections.  The batch-norm
statistics are those of a trained network (variances positive, means near
zero), so that passes folding or simplifying them meet realistic values.
"""

from __future__ import annotations

import os

import numpy as np

from relaypass import relay, save

SEED = 20240607
HERE = os.path.dirname(os.path.abspath(__file__))


def _weights(rng: np.random.Generator, shape: tuple[int, ...], fan_in: int) -> relay.Constant:
    scale = np.sqrt(2.0 / fan_in)  # He initialisation: activations keep their scale
    return relay.const((rng.standard_normal(shape) * scale).astype("float32"))


def _vector(rng: np.random.Generator, n: int, low: float, high: float) -> relay.Constant:
    return relay.const(rng.uniform(low, high, size=n).astype("float32"))


def mlp(rng: np.random.Generator) -> relay.IRModule:
    """x: (1, 32) -> dense 64 -> relu -> dense 10 -> softmax."""
    x = relay.var("x", shape=(1, 32), dtype="float32")
    h = relay.nn.dense(x, _weights(rng, (64, 32), 32))
    h = relay.nn.relu(relay.nn.bias_add(h, _vector(rng, 64, -0.1, 0.1)))
    y = relay.nn.dense(h, _weights(rng, (10, 64), 64))
    y = relay.nn.bias_add(y, _vector(rng, 10, -0.1, 0.1))
    return relay.IRModule.from_expr(relay.Function([x], relay.nn.softmax(y)))


def _conv_bn_relu(rng: np.random.Generator, x: relay.Expr, cin: int, cout: int) -> relay.Expr:
    w = _weights(rng, (cout, cin, 3, 3), cin * 9)
    y = relay.nn.conv2d(x, w, padding=(1, 1), channels=cout, kernel_size=(3, 3))
    gamma = _vector(rng, cout, 0.5, 1.5)
    beta = _vector(rng, cout, -0.1, 0.1)
    mean = _vector(rng, cout, -0.1, 0.1)
    var = _vector(rng, cout, 0.5, 1.5)
    y = relay.nn.batch_norm(y, gamma, beta, mean, var)[0]
    return relay.nn.relu(y)


def convnet(rng: np.random.Generator) -> relay.IRModule:
    """data: (1, 3, 32, 32) -> two conv/bn/relu blocks -> global pool -> dense 10 -> softmax."""
    data = relay.var("data", shape=(1, 3, 32, 32), dtype="float32")
    y = _conv_bn_relu(rng, data, 3, 8)
    y = relay.nn.max_pool2d(y, pool_size=(2, 2), strides=(2, 2))
    y = _conv_bn_relu(rng, y, 8, 16)
    y = relay.nn.global_avg_pool2d(y)
    y = relay.nn.batch_flatten(y)
    y = relay.nn.dense(y, _weights(rng, (10, 16), 16))
    y = relay.nn.bias_add(y, _vector(rng, 10, -0.1, 0.1))
    return relay.IRModule.from_expr(relay.Function([data], relay.nn.softmax(y)))


def main() -> None:
    rng = np.random.default_rng(SEED)
    out = os.path.join(HERE, "models")
    os.makedirs(out, exist_ok=True)
    for name, build in (("mlp", mlp), ("convnet", convnet)):
        path = os.path.join(out, f"{name}.relay")
        save(build(rng), path)
        print(f"wrote {os.path.relpath(path)}")


if __name__ == "__main__":
    main()
