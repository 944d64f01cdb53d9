"""tvm.nd / tvm.runtime: NDArray and Device as TVM v0.18 defines them, and constants' data.

Facts from TVM (python/tvm/runtime/ndarray.py, python/tvm/_ffi/runtime_ctypes.py):
``numpy()`` copies, ``dtype`` is a string, ``==`` is identity (``same_as``),
``copyfrom`` checks the shape and converts the dtype, ``nd[:] = x`` is the only
slice assignment, ``asnumpy()`` still exists and warns, ``tvm.device("llvm")``
is ``cpu(0)`` and a device prints as ``cpu(0)``.
"""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

import relaypass as tvm
from relaypass import relay
from relaypass.errors import RelayCompatError, RelayPassError
from relaypass.ir.ndarray import ReadOnlyArrayError

# --- the module tree -----------------------------------------------------------------------


def test_tvm_names_for_arrays_and_devices():
    assert tvm.nd.NDArray is tvm.runtime.NDArray is tvm.runtime.ndarray.NDArray
    assert tvm.runtime.Device is tvm.nd.Device
    assert tvm.nd.array is tvm.runtime.ndarray.array
    assert tvm.nd.empty is tvm.runtime.ndarray.empty
    assert tvm.cpu is tvm.nd.cpu is tvm.runtime.cpu
    assert tvm.device is tvm.runtime.device
    from relaypass.nd import NDArray, array
    from relaypass.runtime.ndarray import cpu

    assert isinstance(array([1]), NDArray) and cpu(0) == tvm.cpu(0)


def test_importing_relaypass_stays_light():
    code = (
        "import sys, relaypass; assert 'numpy' not in sys.modules; "
        "relaypass.cpu(0); relaypass.nd.array([1.0]); print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


# --- devices -------------------------------------------------------------------------------


def test_devices_compare_by_type_and_id():
    assert tvm.cpu() == tvm.cpu(0) == tvm.device("cpu") == tvm.device("cpu", 0)
    assert tvm.device("llvm") == tvm.cpu(0) and tvm.device("c") == tvm.cpu(0)
    assert tvm.device("llvm -mcpu=skylake") == tvm.cpu(0)
    assert tvm.device("cpu:1") == tvm.cpu(1) != tvm.cpu(0)
    assert tvm.device(tvm.cpu(2)) == tvm.cpu(2)
    assert tvm.cuda(0) != tvm.cpu(0)
    assert len({tvm.cpu(0), tvm.device("cpu"), tvm.cpu(1)}) == 2


def test_device_fields_and_text():
    dev = tvm.cpu(0)
    assert (dev.device_type, dev.device_id) == (1, 0) and dev.device_type == tvm.nd.Device.kDLCPU
    assert repr(dev) == "cpu(0)" and str(tvm.cuda(1)) == "cuda(1)"
    assert tvm.device("cuda").device_type == 2
    assert tvm.opencl(0) == tvm.nd.cl(0) and tvm.metal(0) == tvm.nd.mtl(0)


def test_only_the_cpu_exists():
    assert tvm.cpu(0).exist
    assert not tvm.cuda(0).exist and not tvm.vulkan(0).exist


def test_bad_device_names():
    with pytest.raises(ValueError, match="Unknown device type: tpu"):
        tvm.device("tpu")
    with pytest.raises(ValueError, match="Invalid device id"):
        tvm.device("cpu:x")
    with pytest.raises(ValueError, match="Invalid device id"):
        tvm.device("cpu", "0")


def test_gpu_is_cuda_with_tvms_warning():
    with pytest.warns(UserWarning, match=r"tvm\.cuda\(\)"):
        assert tvm.gpu(0) == tvm.cuda(0)


# --- arrays --------------------------------------------------------------------------------


def test_array_copies_its_source():
    src = np.arange(6, dtype="float32").reshape(2, 3)
    nd = tvm.nd.array(src)
    src[0, 0] = 100
    assert nd.numpy()[0, 0] == 0
    assert nd.shape == (2, 3) and isinstance(nd.shape, tuple)
    assert nd.dtype == "float32" and isinstance(nd.dtype, str)
    assert nd.device == tvm.cpu(0)


def test_array_of_a_list_uses_numpys_dtype():
    # tvm.nd.array has none of relay.const's int32/float32 defaults.
    assert tvm.nd.array([1.0, 2.0]).dtype == "float64"
    assert tvm.nd.array([True]).dtype == "bool"
    assert tvm.nd.array(np.int8(3)).shape == ()


def test_numpy_is_a_fresh_writable_copy():
    nd = tvm.nd.array(np.ones(3, "int32"))
    a, b = nd.numpy(), nd.numpy()
    assert a is not b and a.flags.writeable
    a[0] = 7
    np.testing.assert_array_equal(nd.numpy(), [1, 1, 1])


def test_asnumpy_still_exists_and_warns():
    nd = tvm.nd.array(np.ones(2, "float32"))
    with pytest.warns(DeprecationWarning, match="numpy()"):
        np.testing.assert_array_equal(nd.asnumpy(), [1.0, 1.0])


def test_numpy_functions_accept_an_ndarray():
    nd = tvm.nd.array(np.array([1.0, 2.0], "float32"))
    np.testing.assert_allclose(nd, [1.0, 2.0])
    assert np.add(nd, 1).tolist() == [2.0, 3.0]
    assert np.asarray(nd, dtype="float64").dtype == np.float64
    assert np.array(nd, copy=True) is not np.asarray(nd)


def test_equality_is_identity_as_in_tvm():
    a = tvm.nd.array(np.zeros(2, "float32"))
    b = tvm.nd.array(np.zeros(2, "float32"))
    assert a == a and a.same_as(a)
    assert a != b and not a.same_as(b) and a != a.numpy()
    assert len({a, a, b}) == 2


def test_empty_has_the_shape_and_dtype():
    nd = tvm.nd.empty((2, 3), "int8")
    assert nd.shape == (2, 3) and nd.dtype == "int8" and nd.device == tvm.cpu(0)
    assert tvm.nd.empty([4]).dtype == "float32"


def test_copyfrom_checks_the_shape_and_converts_the_dtype():
    nd = tvm.nd.empty((3,), "float32")
    assert nd.copyfrom(np.array([1, 2, 3], "int64")) is nd
    assert nd.dtype == "float32"
    np.testing.assert_array_equal(nd.numpy(), [1.0, 2.0, 3.0])
    nd.copyfrom([4, 5, 6])
    np.testing.assert_array_equal(nd.numpy(), [4.0, 5.0, 6.0])
    nd.copyfrom(tvm.nd.array(np.zeros(3, "float32")))
    np.testing.assert_array_equal(nd.numpy(), [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"array shape do not match the shape of NDArray \(2,\) vs \(3,\)"):
        nd.copyfrom(np.zeros(2, "float32"))
    with pytest.raises(TypeError, match="array_like"):
        nd.copyfrom(object())


def test_copyto_a_device_or_an_array():
    nd = tvm.nd.array(np.arange(3, dtype="int32"))
    other = nd.copyto(tvm.cpu(0))
    assert other is not nd and other.device == tvm.cpu(0)
    other.copyfrom(np.zeros(3, "int32"))
    np.testing.assert_array_equal(nd.numpy(), [0, 1, 2])
    target = tvm.nd.empty((3,), "int32")
    assert nd.copyto(target) is target
    np.testing.assert_array_equal(target.numpy(), [0, 1, 2])
    with pytest.raises(ValueError, match="Unsupported target type"):
        nd.copyto("cpu")


def test_whole_slice_assignment_only():
    nd = tvm.nd.empty((2,), "float32")
    nd[:] = np.array([1.0, 2.0], "float32")
    np.testing.assert_array_equal(nd.numpy(), [1.0, 2.0])
    nd[:] = tvm.nd.array(np.array([3.0, 4.0], "float32"))
    np.testing.assert_array_equal(nd.numpy(), [3.0, 4.0])
    with pytest.raises(ValueError, match="Array only support set from numpy array"):
        nd[0] = np.float32(1)
    with pytest.raises(TypeError, match="not supported"):
        nd[:] = [1.0, 2.0]


def test_repr_and_str():
    nd = tvm.nd.array(np.array([1, 2], "int32"))
    assert repr(nd).startswith("<relaypass.nd.NDArray shape=(2,), cpu(0)>\narray([1, 2]")
    assert str(nd) == "[1 2]"


def test_copies_and_pickles_keep_the_values():
    nd = tvm.nd.array(np.arange(4, dtype="float32"))
    deep = copy.deepcopy(nd)
    assert deep is not nd
    np.testing.assert_array_equal(deep.numpy(), nd.numpy())
    back = pickle.loads(pickle.dumps(nd))
    assert back.dtype == "float32"
    np.testing.assert_array_equal(back.numpy(), nd.numpy())


def test_dlpack_round_trip():
    nd = tvm.nd.array(np.arange(3, dtype="float32"))
    assert nd.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(nd), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(tvm.nd.from_dlpack(np.arange(2)).numpy(), [0, 1])


def test_arrays_off_the_cpu_are_out_of_scope():
    with pytest.raises(RelayCompatError, match=r"tvm\.nd\.array on cuda\(0\) is out of scope") as info:
        tvm.nd.array(np.zeros(2), tvm.cuda(0))
    assert "relaypass help coming-from-relay#out-of-scope" in str(info.value)
    assert isinstance(info.value, RelayPassError) and isinstance(info.value, NotImplementedError)
    with pytest.raises(RelayCompatError, match="empty"):
        tvm.nd.empty((2,), "float32", tvm.vulkan(0))
    with pytest.raises(RelayCompatError, match="copyto"):
        tvm.nd.array(np.zeros(2)).copyto(tvm.cuda(0))


# --- constants -------------------------------------------------------------------------------


def test_constant_data_is_a_read_only_ndarray():
    c = relay.const(np.array([1.0, 2.0], "float32"))
    assert isinstance(c.data, tvm.nd.NDArray)
    assert c.data.shape == (2,) and c.data.dtype == "float32" and c.data.device == tvm.cpu(0)
    assert c.data is c.data and c.data == c.data
    out = c.data.numpy()
    out[0] = 9.0
    np.testing.assert_array_equal(c.data.numpy(), [1.0, 2.0])
    with pytest.raises(ReadOnlyArrayError, match="constants are immutable"):
        c.data.copyfrom(np.zeros(2, "float32"))
    with pytest.raises(ValueError):
        c.data[:] = np.zeros(2, "float32")
    with pytest.raises(ValueError):
        np.asarray(c.data)[0] = 5.0


def test_constant_array_is_the_numpy_array_behind_data():
    c = relay.const(np.arange(3, dtype="int32"))
    assert isinstance(c.array, np.ndarray) and not c.array.flags.writeable
    assert np.asarray(c.data) is c.array  # no copy
    assert c.array.dtype == np.int32


def test_const_of_an_ndarray_keeps_its_dtype():
    # relay.const maps float64 numpy arrays to float32, but an NDArray keeps its dtype,
    # and dtype= is ignored for one, as in TVM.
    assert relay.const(np.ones(2)).data.dtype == "float32"
    assert relay.const(tvm.nd.array(np.ones(2))).data.dtype == "float64"
    assert relay.const(tvm.nd.array(np.ones(2, "int64"))).data.dtype == "int64"
    assert relay.const(tvm.nd.array(np.ones(2)), dtype="float32").data.dtype == "float64"
    assert relay.Constant(tvm.nd.array(np.ones(2, "float16"))).data.dtype == "float16"


def test_constant_of_an_ndarray_is_not_changed_by_later_writes():
    nd = tvm.nd.array(np.zeros(2, "float32"))
    c = relay.const(nd)
    nd.copyfrom(np.ones(2, "float32"))
    np.testing.assert_array_equal(c.data.numpy(), [0.0, 0.0])


def test_a_constants_data_builds_the_same_constant():
    c = relay.const(np.arange(4, dtype="float32"))
    again = relay.Constant(c.data)
    assert again.data is c.data and again.array is c.array
    assert tvm.ir.structural_equal(again, c)
    assert tvm.ir.structural_hash(again) == tvm.ir.structural_hash(c)


def test_constants_from_arrays_and_ndarrays_compare_structurally():
    a = relay.const(np.arange(3, dtype="float32"))
    b = relay.const(tvm.nd.array(np.arange(3, dtype="float32")))
    c = relay.const(tvm.nd.array(np.arange(3, dtype="float64")))
    assert tvm.ir.structural_equal(a, b)
    assert tvm.ir.structural_hash(a) == tvm.ir.structural_hash(b)
    assert not tvm.ir.structural_equal(a, c)
    with pytest.raises(AssertionError, match="dtypes float32 vs float64"):
        tvm.ir.assert_structural_equal(a, c)


def test_constants_print_and_parse_from_an_ndarray():
    c = relay.const(tvm.nd.array(np.arange(40, dtype="float32")))
    x = relay.var("x", shape=(40,))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.add(x, c)))
    back = tvm.parse(mod.astext())
    assert tvm.ir.structural_equal(back, mod)
    np.testing.assert_array_equal(back["main"].body.args[1].data.numpy(), c.data.numpy())


def test_deep_copies_of_constant_data_are_shared():
    c = relay.const(np.ones(2, "float32"))
    assert copy.deepcopy(c.data) is c.data
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pickle.loads(pickle.dumps(c.data)).dtype == "float32"
