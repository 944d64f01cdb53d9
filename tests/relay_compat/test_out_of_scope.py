"""TVM's compilation APIs: a ported file imports them, and using one is a named error.

Relay code and its tests import ``te``, ``tvm.target`` or ``relay.backend`` at
the top of a file even when most of it never compiles.  With imports changed
by the porting rule, the file must still import, and each use of a
compilation API must raise ``RelayCompatError`` naming the construct (never an
ImportError for the whole file, nor an AttributeError from deep inside).
"""
import pytest

import relaypass as tvm
from relaypass import relay, te
from relaypass.errors import RelayCompatError
from relaypass.relay.backend import Executor
from relaypass.script import tir as T


@pytest.mark.parametrize("use, construct", [
    (lambda: te.placeholder((1,), name="x"), "tvm.te.placeholder"),
    (lambda: T.int32(1), "tvm.script.tir.int32"),
    (lambda: Executor("graph"), "tvm.relay.backend.Executor"),
    (lambda: tvm.target.Target("llvm"), "tvm.target.Target"),
    (lambda: tvm.topi.nn.relu, "tvm.topi.nn"),
    (lambda: relay.build(None, target="llvm"), "tvm.relay.build"),
    (lambda: relay.backend.GraphExecutorCodegen, "tvm.relay.backend.GraphExecutorCodegen"),
    (lambda: tvm.relay.qnn.op.quantize, "tvm.relay.qnn.op"),
])
def test_using_a_compilation_api_names_it(use, construct):
    with pytest.raises(RelayCompatError, match=construct.replace(".", r"\.")) as err:
        use()
    assert "relaypass help coming-from-relay#out-of-scope" in str(err.value)


def test_hasattr_says_no_and_real_names_stay_attribute_errors():
    assert not hasattr(tvm.target, "Target")
    assert not hasattr(relay, "build")
    with pytest.raises(AttributeError) as err:
        relay.no_such_name  # noqa: B018
    assert not isinstance(err.value, RelayCompatError)


def test_the_interpreter_values_of_relay_backend_are_real():
    # relay.backend is a real package for its interpreter module; its other names stay placeholders.
    from relaypass.relay.backend.interpreter import ConstructorValue, RefValue

    assert ConstructorValue.__name__ == "ConstructorValue" and RefValue.__name__ == "RefValue"
    assert not hasattr(relay.backend, "Runtime")
