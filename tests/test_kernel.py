"""The witness kernel (qkverify/kernel/): isolation, exact reals, witness checkers.
Values are derived by hand in the comments."""

import ast
import json
from pathlib import Path

import pytest
from flint import fmpq, fmpq_mat, fmpz_mat, fmpz_poly

from qkverify.kernel import witnesses as W
from qkverify.kernel.algebra import Box, Root, cmp, count_with_multiplicity, is_root, sturm_count
from qkverify.kernel.jsonio import Invalid, Undecided, dec, loads

KERNEL = Path(__file__).resolve().parents[1] / "qkverify" / "kernel"
ALLOWED = {"flint", "jsonschema"}


def test_kernel_isolation():
    """Every kernel module imports only the standard library, flint, jsonschema and itself."""
    import sys

    std = set(sys.stdlib_module_names)
    for f in sorted(KERNEL.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Import):
                mods = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: must stay inside the kernel package
                    depth = len(f.relative_to(KERNEL).parts) - 1
                    assert node.level <= depth + 1, f"{f}: relative import leaves the kernel"
                    continue
                mods = [node.module.split(".")[0]]
            else:
                continue
            for m in mods:
                assert m in std or m in ALLOWED or m == "__future__", f"{f.name} imports {m}"


def sqrt2() -> Root:
    return Root(fmpz_poly([-2, 0, 1]), fmpq(1), fmpq(2))


def test_exact_comparisons():
    r = sqrt2()
    assert cmp(r, fmpq(141, 100)) == 1 and cmp(r, fmpq(142, 100)) == -1
    # √2 = −(−√2): the root of x² − 2 in [1, 2] against the negation of the one in [−2, −1]
    assert cmp(sqrt2(), Root(fmpz_poly([-2, 0, 1]), fmpq(-2), fmpq(-1)).neg()) == 0
    # √2 against √2 written as a root of 2x² − 4 in [1.4, 1.5]
    assert cmp(sqrt2(), Root(fmpz_poly([-4, 0, 2]), fmpq(7, 5), fmpq(3, 2))) == 0
    # √2 < √3 from intervals that do not meet; where they meet, the kernel does not bisect: undecided
    assert cmp(Root(fmpz_poly([-2, 0, 1]), fmpq(1), fmpq(3, 2)), Root(fmpz_poly([-3, 0, 1]), fmpq(17, 10), fmpq(2))) == -1
    with pytest.raises(Undecided):
        cmp(sqrt2(), Root(fmpz_poly([-3, 0, 1]), fmpq(1), fmpq(2)))
    assert is_root(fmpz_poly([-2, 0, 1]) * fmpz_poly([1, 1]), sqrt2())
    with pytest.raises(Undecided):
        cmp(Box(fmpq(0), fmpq(1)), Box(fmpq(1, 2), fmpq(2)))


def test_root_counts():
    f = fmpz_poly([-1, 0, 1]) ** 2 * fmpz_poly([-2, 1])  # (x² − 1)²(x − 2)
    assert sturm_count(f, fmpq(-2), fmpq(3)) == 3
    assert count_with_multiplicity(f, fmpq(-1), fmpq(2)) == 4  # [−1, 2): −1, −1, 1, 1
    assert count_with_multiplicity(f, fmpq(0), fmpq(3)) == 3


def test_dec_and_strict_json():
    assert dec("-0.25") == fmpq(-1, 4) and dec("1.9e-60") == fmpq(19, 10**61)
    with pytest.raises(Invalid, match="duplicate key"):
        loads('{"a": 1, "a": 2}')
    with pytest.raises(Invalid):
        loads('{"a": NaN}')


def _spectrum_S():
    # S = [[2, 1], [1, 2]]: eigenvalues 1 and 3
    return fmpq_mat([[2, 1], [1, 2]]), {"kind": "spectrum", "of": "S", "scale": "1", "factors": [
        {"poly": ["-1", "1"], "multiplicity": 1, "roots": [["1", "1"]]},
        {"poly": ["-3", "1"], "multiplicity": 1, "roots": [["3", "3"]]}]}


def test_spectrum_witness():
    S, w = _spectrum_S()
    assert sorted(W.spectrum_of(w, S).values) == [1, 3]
    bad = json.loads(json.dumps(w))
    bad["factors"][1]["roots"] = [["2", "2"]]
    with pytest.raises(Invalid):
        W.spectrum_of(bad, S)
    bad = json.loads(json.dumps(w))
    bad["factors"][0]["multiplicity"] = 2
    with pytest.raises(Invalid, match="multiply"):
        W.spectrum_of(bad, S)
    # x² − 2 with only one of its two intervals: the other root is unaccounted for
    T = fmpq_mat([[0, 1], [2, 0]])
    irr = {"kind": "spectrum", "of": "S", "scale": "1",
           "factors": [{"poly": ["-2", "0", "1"], "multiplicity": 1, "roots": [["1", "2"]]}]}
    with pytest.raises(Invalid, match="roots needed"):
        W.spectrum_of(irr, T)


def test_rank_witness():
    # M = [[1, 2], [2, 4]] has rank 1: minor M[0,0] = 1; left kernel y = (2, −1)
    M = fmpq_mat([[1, 2], [2, 4]])
    w = {"kind": "rank", "of": "M", "scale": "1", "rank": 1, "rows": [0], "cols": [0], "prime": "101",
         "minor_mod_p": "1", "kernel": [["2", "-1"]], "kernel_cols": [0], "kernel_minor_mod_p": "2"}
    assert W.rank_of(w, M).rank == 1
    with pytest.raises(Invalid):  # claiming rank 2 needs a nonzero 2x2 minor: det = 0
        W.rank_of(dict(w, rank=2, rows=[0, 1], cols=[0, 1], minor_mod_p="1", kernel=[], kernel_cols=[]), M)
    with pytest.raises(Invalid, match="kernel vector"):
        W.rank_of(dict(w, kernel=[["1", "1"]]), M)
    with pytest.raises(Invalid, match="not a prime"):
        W.rank_of(dict(w, prime="100"), M)


def test_cells_witness():
    # X = J·Z·Zᵀ with Z = I₂ (n = 1): X = [[0, 1], [1, 0]], eigenvalues ±1; grid 2^0 = 1
    X = fmpz_mat([[0, 1], [1, 0]])
    w = {"kind": "cells", "of": "JZZt", "scale_exponent": 0, "grid_exponent": 0, "zero": 0,
         "cells": [[-1, 0, 1], [1, 0, 1]]}  # ν = −1 in [−1, 0), ν = 1 in [1, 2)
    c = W.cells_of(w, X)
    boxes, z = c.boxes, c.zero
    assert z == 0 and [(b.lo, b.hi) for b in boxes] == [(-1, 0), (1, 2)]
    with pytest.raises(Invalid):  # both roots claimed in [1, 2)
        W.cells_of(dict(w, cells=[[1, 0, 2]]), X)
    with pytest.raises(Invalid):  # a wrong count of zero eigenvalues
        W.cells_of(dict(w, zero=1), X)
    # refinement level r = 1 halves the cell: ν = 1 in [1, 3/2)
    boxes = W.cells_of(dict(w, cells=[[-2, 1, 1], [2, 1, 1]]), X).boxes
    assert [(b.lo, b.hi) for b in boxes] == [(-1, fmpq(-1, 2)), (1, fmpq(3, 2))]


def test_fiber_witness():
    # S = diag(2, −1) = H + P, H = diag(1, −1), P = diag(1, 0): ‖P‖² = 1
    S, H, P = fmpq_mat([[2, 0], [0, -1]]), fmpq_mat([[1, 0], [0, -1]]), fmpq_mat([[1, 0], [0, 0]])
    assert W.fiber_props("d", S, H, P).normP == 1
    with pytest.raises(Invalid, match="negative eigenvalue"):
        W.fiber_props("d", S, fmpq_mat([[3, 0], [0, -3]]), fmpq_mat([[-1, 0], [0, 2]]))
    with pytest.raises(Invalid, match="symmetric about 0"):
        W.fiber_props("d", S, fmpq_mat([[2, 0], [0, -1]]), fmpq_mat([[0, 0], [0, 0]]))
