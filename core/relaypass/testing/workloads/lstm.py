"""An unrolled LSTM network, as Relay's ``relay.testing.lstm`` builds it.

Each step calls a cell function (:func:`lstm_cell`) written with let
bindings; the network threads the (hidden, cell) state through the calls and
returns the last output.  Every step has its own input variable named
``data`` and its own weights ``i2h_<i>_weight``, ``h2h_<i>_bias``, ...
"""

from __future__ import annotations

from ...ir.expr import Call, Function, Tuple, TupleGetItem, Var
from ...ir.scope_builder import ScopeBuilder
from ...ir.types import TensorType, TupleType
from ...ir.variables import free_vars
from ...op import add, multiply, sigmoid, split, tanh, zeros
from . import layers
from .common import create_workload

__all__ = ["get_net", "get_workload", "lstm_cell"]


def _types(num_hidden: int, batch_size: int, dtype: str):
    hidden = TensorType((batch_size, num_hidden), dtype)
    weight = TensorType((4 * num_hidden, num_hidden), dtype)
    bias = TensorType((4 * num_hidden,), dtype)
    return hidden, weight, bias


def lstm_cell(num_hidden: int, batch_size: int = 1, dtype: str = "float32",
              name: str = "") -> Function:
    """One LSTM cell as a function of (inputs, states, i2h weight/bias, h2h weight/bias).

    It returns ``(next_h, (next_h, next_c))``; the gates come from splitting
    ``dense(inputs) + dense(h)`` in four along the units: input, forget,
    transform, output.
    """
    hidden, weight_type, bias_type = _types(num_hidden, batch_size, dtype)
    gates_type = TensorType((batch_size, 4 * num_hidden), dtype)
    state_type = TupleType([hidden, hidden])
    ret_type = TupleType([hidden, state_type])

    inputs = Var("inputs", hidden)
    states = Var("states", state_type)
    i2h_weight = Var("i2h_weight", weight_type)
    i2h_bias = Var("i2h_bias", bias_type)
    h2h_weight = Var("h2h_weight", weight_type)
    h2h_bias = Var("h2h_bias", bias_type)

    sb = ScopeBuilder()
    i2h = sb.let(("i2h", gates_type), layers.dense_add_bias(
        data=inputs, units=num_hidden * 4, weight=i2h_weight, bias=i2h_bias, name=f"{name}i2h"))
    h2h = sb.let(("h2h", gates_type), layers.dense_add_bias(
        data=TupleGetItem(states, 0), units=num_hidden * 4, weight=h2h_weight, bias=h2h_bias,
        name=f"{name}h2h"))
    gates = sb.let(("gates", gates_type), add(i2h, h2h))
    parts = sb.let(("slice_gates", TupleType([hidden] * 4)),
                   split(gates, indices_or_sections=4, axis=1).astuple())
    gate = {}
    for index, (gate_name, activation) in enumerate(
        (("in_gate", sigmoid), ("forget_gate", sigmoid), ("in_transform", tanh),
         ("out_gate", sigmoid))
    ):
        gate[gate_name] = sb.let((gate_name, hidden), activation(TupleGetItem(parts, index)))
    next_c = sb.let(("next_c", hidden), add(
        multiply(gate["forget_gate"], TupleGetItem(states, 1)),
        multiply(gate["in_gate"], gate["in_transform"]),
    ))
    next_h = sb.let(("next_h", hidden), multiply(gate["out_gate"], tanh(next_c)))
    ret = sb.let(("ret", ret_type), Tuple([next_h, Tuple([next_h, next_c])]))
    sb.ret(ret)
    return Function([inputs, states, i2h_weight, i2h_bias, h2h_weight, h2h_bias], sb.get(),
                    ret_type)


def get_net(iterations: int, num_hidden: int, batch_size: int = 1,
            dtype: str = "float32") -> Function:
    """``iterations`` LSTM steps from zero states; the result is the last step's output."""
    hidden, weight_type, bias_type = _types(num_hidden, batch_size, dtype)
    state_type = TupleType([hidden, hidden])
    cell_type = TupleType([hidden, state_type])

    sb = ScopeBuilder()
    zero = sb.let(("zeros", hidden), zeros((batch_size, num_hidden), dtype))
    states = sb.let(("init_states", state_type), Tuple([zero, zero]))
    out = None
    for i in range(iterations):
        args = [
            Var("data", hidden),
            states,
            Var(f"i2h_{i}_weight", weight_type),
            Var(f"i2h_{i}_bias", bias_type),
            Var(f"h2h_{i}_weight", weight_type),
            Var(f"h2h_{i}_bias", bias_type),
        ]
        cell = lstm_cell(num_hidden, batch_size, dtype, f"lstm_{i}")
        result = sb.let((f"call_{i}", cell_type), Call(cell, args))
        out = sb.let((f"out_{i}", hidden), TupleGetItem(result, 0))
        states = sb.let((f"states_{i}", state_type), TupleGetItem(result, 1))
    if out is None:
        raise ValueError("lstm: iterations must be at least 1")
    sb.ret(out)
    body = sb.get()
    return Function(free_vars(body), body, hidden)


def get_workload(iterations: int, num_hidden: int, batch_size: int = 1, dtype: str = "float32"):
    """``(mod, params)`` for the unrolled LSTM; the inputs (all named ``data``) get no values."""
    return create_workload(get_net(iterations, num_hidden, batch_size, dtype))
