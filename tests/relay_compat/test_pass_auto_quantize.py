"""relay.quantize's configuration, as the passes and tests of TVM v0.18 read it.

TVM's test_pass_auto_quantize.py quantizes models, which relaypass does not
(the quantizer needs TVM's code generator: it is out of scope and says so);
what ports is the configuration: ``qconfig`` with Relay's fields and
defaults, the ``with`` scopes, ``current_qconfig``, ``QAnnotateKind``.
"""
import threading

import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.errors import RelayCompatError, RelayPassError


def test_defaults_are_relays():
    cfg = relay.quantize.current_qconfig()
    assert (cfg.nbit_input, cfg.nbit_weight, cfg.nbit_activation) == (8, 8, 32)
    assert (cfg.dtype_input, cfg.dtype_weight, cfg.dtype_activation) == ("int8", "int8", "int32")
    assert cfg.calibrate_mode == "global_scale" and cfg.global_scale == 8.0
    assert cfg.weight_scale == "power2" and cfg.skip_dense_layer is True
    assert list(cfg.skip_conv_layers) == [0] and cfg.debug_enabled_ops is None
    assert cfg.rounding == "UPWARD" and cfg.partition_conversions == "disabled"


def test_scopes_nest_and_restore():
    outer_default = relay.quantize.current_qconfig()
    with relay.quantize.qconfig(calibrate_mode="kl_divergence", skip_conv_layers=[0, 2]) as a:
        assert relay.quantize.current_qconfig() is a
        assert a.calibrate_mode == "kl_divergence" and tuple(a.skip_conv_layers) == (0, 2)
        assert a.nbit_input == 8  # the rest keeps Relay's defaults
        with relay.quantize.qconfig(nbit_input=4) as b:
            assert relay.quantize.current_qconfig() is b
            assert b.calibrate_mode == "global_scale"  # a new config, not a merge
        assert relay.quantize.current_qconfig() is a
    assert relay.quantize.current_qconfig() is outer_default


def test_scope_is_per_thread():
    seen = []
    with relay.quantize.qconfig(nbit_weight=4):
        worker = threading.Thread(
            target=lambda: seen.append(relay.quantize.current_qconfig().nbit_weight)
        )
        worker.start()
        worker.join()
    assert seen == [8]


def test_kinds_and_guard():
    from relaypass.relay.quantize import QAnnotateKind, kind2str

    cfg = relay.quantize.qconfig(nbit_weight=4, dtype_activation="int16",
                                 debug_enabled_ops=["nn.conv2d"])
    assert cfg.get_nbit_by_kind(QAnnotateKind.WEIGHT) == 4
    assert cfg.get_dtype_by_kind(QAnnotateKind.ACTIVATION) == "int16"
    assert kind2str(QAnnotateKind.INPUT) == "input"
    x = relay.var("x", shape=(1, 1, 4, 4))
    w = relay.var("w", shape=(1, 1, 3, 3))
    assert cfg.guard(relay.nn.conv2d(x, w))
    assert not cfg.guard(relay.nn.relu(x))
    assert relay.quantize.qconfig().guard(relay.nn.relu(x))
    with pytest.raises(RelayPassError, match="not a QAnnotateKind"):
        kind2str(7)


def test_config_is_immutable_and_checked():
    cfg = relay.quantize.qconfig()
    with pytest.raises(AttributeError, match="immutable"):
        cfg.nbit_input = 4
    with pytest.raises(RelayPassError, match="unknown setting nbits_input; the settings are"):
        relay.quantize.qconfig(nbits_input=4)


def test_make_node_builds_a_qconfig():
    cfg = tvm.ir.make_node("relay.quantize.QConfig", global_scale=4.0)
    assert isinstance(cfg, relay.quantize.QConfig) and cfg.global_scale == 4.0


def test_the_quantizer_is_out_of_scope():
    x = relay.var("x", shape=(2,))
    mod = tvm.IRModule.from_expr(relay.Function([x], x))
    with pytest.raises(RelayCompatError, match="coming-from-relay#out-of-scope"):
        relay.quantize.quantize(mod, params={})
    with pytest.raises(RelayCompatError, match=r"relay\.quantize\.realize is out of scope"):
        relay.quantize.realize()
    assert not hasattr(relay.quantize, "no_such_name")
