"""Break-it review of the Python API (issue 21 item 1): every parameter a notebook user can get
wrong raises qkverify.InputError with one line (never a hang or another exception), and the
input types the issue names are read the same way wherever they appear (an array, its rows, its
scalars in a nested list, a torch-like tensor)."""

from __future__ import annotations

import sys
import types
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import qkverify
from qkverify import InputError

M = [[1, 2], [3, 4]]
PI = (Fraction(1, 60), Fraction(3, 20), Fraction(5, 6), Fraction(0))   # the hand value


@pytest.mark.parametrize("digits", [0, -5, 10 ** 6, "9", 2.5, None])
def test_head_digits_out_of_range_is_an_input_error(digits):
    """The CLI takes --digits 1..200 for heads; digits = 10**6 used to run for hours (the cells
    route refines every enclosure to a million digits), digits = -5 gave [2/5, 1/2] for b."""
    W = np.ones((2, 60), np.float32)
    with pytest.raises(InputError, match="digits"):
        qkverify.head(W, np.eye(2, 60, dtype=np.float32), digits=digits)


@pytest.mark.parametrize("digits", [0, -3, 10 ** 6, "20", True])
def test_profile_digits_out_of_range_is_an_input_error(digits):
    """qkverify profile --digits takes 1..10000; profile(L, digits=10**6) ran without end (the
    intervals of the algebraic b, c, d to a million digits), digits = -3 printed a = 1/114 in [0, 10]."""
    with pytest.raises(InputError, match="digits"):
        qkverify.profile([[1, 2, 0], [3, 4, 1], [0, 1, 5]], digits=digits)


def test_digits_in_range_still_work():
    assert tuple(qkverify.profile(M, digits=1)) == PI
    assert qkverify.profile(M, digits=10000).a == PI[0]


@pytest.mark.parametrize("dt", [ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, np.float16])
def test_rows_and_scalars_of_small_float_arrays_read_like_the_array(dt):
    """A list of an array's rows (``list(W)``) or of its scalars is read exactly as the array is."""
    x = np.array([[0.1, 2], [3, -4]], dtype=dt)
    want = qkverify.profile(x)
    assert qkverify.profile(list(x)) == want
    assert qkverify.profile([[x[0, 0], x[0, 1]], [x[1, 0], x[1, 1]]]) == want
    assert qkverify.check("Theorem 4", [[x[0, 0], 2], [3, -4]]).verdict == "holds"
    # bfloat16(0.1) = 0.10009765625 = 205/2048 exactly, read from its bits, never via a decimal
    if dt is ml_dtypes.bfloat16:
        x205 = Fraction(205, 2048)
        nL = x205 ** 2 + 4 + 9 + 16
        assert want.a == Fraction(1, 2) / nL


def _torch_stub(monkeypatch):
    """A module named torch whose tensors behave like torch's where the API looks (dtype, detach,
    cpu, numpy); numpy() refuses what real torch refuses (sparse layout, meta device)."""
    mod = types.ModuleType("torch")

    class dtype:
        def __init__(self, name):
            self.name = name

        def __str__(self):
            return "torch." + self.name

    class Tensor:
        def __init__(self, a, refuse=None):
            self._a, self._refuse, self.dtype, self.ndim = np.asarray(a), refuse, dtype("float32"), 2

        def detach(self):
            return self

        def cpu(self):
            if self._refuse == "meta":
                raise NotImplementedError("Cannot copy out of meta tensor; no data!")
            return self

        def numpy(self):
            if self._refuse == "sparse":
                raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")
            return self._a

    Tensor.__module__ = "torch"
    mod.Tensor = Tensor
    monkeypatch.setitem(sys.modules, "torch", mod)
    return Tensor


def test_a_tensor_torch_cannot_hand_over_is_an_input_error(monkeypatch):
    T = _torch_stub(monkeypatch)
    assert tuple(qkverify.profile(T(np.array(M, np.float32)))) == PI
    for refuse in ("sparse", "meta"):
        with pytest.raises(InputError, match="torch tensor") as e:
            qkverify.profile(T(np.array(M, np.float32), refuse))
        assert "\n" not in str(e.value)


@pytest.mark.parametrize("call", [
    lambda: qkverify.check(None, M),
    lambda: qkverify.check(4, M),
    lambda: qkverify.check("Theorem 4", M, drop=[None]),
    lambda: qkverify.verify([1, 2]),
    lambda: qkverify.verify(5),
])
def test_arguments_of_the_wrong_type_are_input_errors(call):
    with pytest.raises(InputError):
        call()
