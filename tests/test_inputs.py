"""Strict inputs (issue 14, Found 5): unknown and duplicate keys, the one
number grammar, numpy dtypes read exactly or refused."""

import json
from fractions import Fraction

import numpy as np
import pytest
from flint import fmpq

from qkverify.errors import QKInputError
from qkverify.exact.rational import ndarray_to_fmpq_mat, parse_rational, read_input_file
from qkverify.io.inputs import HeadInput, LawInput, MatrixInput, OrthoInput, load_input


@pytest.fixture
def cli(capsys):
    """Run the command line in this process: (exit status, stdout, stderr).
    (tests/test_cli_errors.py runs it in subprocesses.)"""
    from qkverify.cli import main

    def run(*args):
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


# ---- the number grammar ----------------------------------------------------------------------

@pytest.mark.parametrize("text,value", [
    ("7", Fraction(7)), ("-7", Fraction(-7)), ("+7", Fraction(7)), ("007", Fraction(7)),
    ("3/4", Fraction(3, 4)), ("-6/8", Fraction(-3, 4)), ("+1/3", Fraction(1, 3)),
    ("0.1", Fraction(1, 10)), ("-2.5e-1", Fraction(-1, 4)), ("1E3", Fraction(1000)), ("1e+2", Fraction(100)),
    ("1.", Fraction(1)), (".5", Fraction(1, 2)), ("-.125", Fraction(-1, 8)), ("12.50e-2", Fraction(1, 8)),
])
def test_grammar_accepts(text, value):
    q = parse_rational(text, "x")
    assert (int(q.p), int(q.q)) == (value.numerator, value.denominator)


@pytest.mark.parametrize("text", [
    "1_000", " 1 ", "1 ", " 1", "1 /2", "1/ 2", "1/-2", "1/+2", "--1", "+-1", "0x10", "1e", "e3", ".", "",
    "1.5/2", "1/2.5", "inf", "-Infinity", "nan", "٣", "１", "1,5", "1e1.5", "½", "\t1", "1\n",
])
def test_grammar_refuses(text):
    with pytest.raises(QKInputError, match="not a rational number|zero denominator"):
        parse_rational(text, "x")


def test_zero_denominator_named():
    with pytest.raises(QKInputError, match="zero denominator"):
        parse_rational("3/0", "L[1][0]")


@pytest.mark.parametrize("entry", ['"1_000"', '" 1 "', '"1 "'])
def test_cli_number_text_exit2_naming_entry(tmp_path, cli, entry):
    f = tmp_path / "L.json"
    f.write_text(f'[[1, 2], [3, {entry}]]')
    code, out, err = cli("profile", str(f))
    assert code == 2 and out == ""
    assert "L[1][1]" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_json_numbers_by_decimal_text(tmp_path):
    # 0.1 and 1e-1 are exactly 1/10, not the binary float 0.1000000000000000055511151231257827…
    f = tmp_path / "L.json"
    f.write_text('[[0.1, 1e-1], [-0.0, 3]]')
    M = load_input(f, "matrix").L
    assert M[0, 0] == fmpq(1, 10) and M[0, 1] == fmpq(1, 10) and M[1, 0] == 0


# ---- keys ------------------------------------------------------------------------------------

@pytest.mark.parametrize("doc,key", [
    ({"L": [[1, 2], [3, 4]], "foo": 1}, "foo"),
    ({"L": [[1, 2], [3, 4]], "S": [[1, 0], [0, 1]]}, "S"),
    ({"W_Q": [[1, 0]], "W_K": [[0, 1]], "n": 1}, "n"),
    ({"W_Q": [[1, 0]], "W_K": [[0, 1]], "L": [[1, 0], [0, 1]]}, "L"),
    ({"L": [[1, 0], [0, 1]], "U": [[1, 0], [0, 1]], "n": 2}, "n"),
    ({"S": [[1, 0], [0, 1]], "label": "x"}, "label"),
    ({"L": [[1, 2], [3, 4]], "l": [[1]]}, "l"),
])
def test_unknown_key_named(tmp_path, cli, doc, key):
    f = tmp_path / "in.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(QKInputError, match=f"unknown key '{key}'"):
        load_input(f)
    code, out, err = cli("signature", str(f))
    assert code == 2 and f"'{key}'" in err and len(err.strip().splitlines()) == 1


def test_head_needs_both_factors(tmp_path):
    f = tmp_path / "in.json"
    f.write_text('{"W_Q": [[1, 0]]}')
    with pytest.raises(QKInputError, match="needs both W_Q and W_K"):
        load_input(f)


def test_kind_key_must_match_the_shape(tmp_path):
    f = tmp_path / "in.json"
    f.write_text('{"kind": "head", "L": [[1, 2], [3, 4]]}')
    with pytest.raises(QKInputError, match="'kind'"):
        load_input(f)


@pytest.mark.parametrize("doc,cls", [
    ({"kind": "matrix", "L": [["1", "2"], ["3", "4"]], "n": 1}, MatrixInput),
    ({"kind": "head", "W_Q": [["1", "0"]], "W_K": [["0", "1"]]}, HeadInput),
    ({"kind": "orthogonal", "L": [["1", "2"], ["3", "4"]], "U": [["0", "1"], ["1", "0"]]}, OrthoInput),
])
def test_written_inputs_read_back(tmp_path, doc, cls):
    # what to_json writes (search/probes input files) is accepted as input, and round-trips
    f = tmp_path / "in.json"
    f.write_text(json.dumps(doc))
    inp = load_input(f)
    assert isinstance(inp, cls) and inp.to_json() == doc


def test_duplicate_key_named(tmp_path, cli):
    f = tmp_path / "in.json"
    f.write_text('{"L": [[1, 2], [3, 4]], "L": [[1, 0], [0, 1]]}')
    with pytest.raises(QKInputError, match="duplicate key 'L'"):
        read_input_file(f)
    code, out, err = cli("profile", str(f))
    assert code == 2 and "duplicate key 'L'" in err and out == ""


def test_duplicate_key_nested(tmp_path):
    f = tmp_path / "law.json"
    f.write_text('{"model": "iid", "N": 2, "law": {"gaussian": "1", "gaussian": "2"}}')
    with pytest.raises(QKInputError, match="duplicate key 'gaussian'"):
        read_input_file(f)


def test_npz_extra_array_named(tmp_path):
    f = tmp_path / "in.npz"
    np.savez(f, L=np.eye(2), extra=np.ones(2))
    with pytest.raises(QKInputError, match="unknown key 'extra'"):
        load_input(f)
    g = tmp_path / "ok.npz"
    np.savez(g, W_Q=np.array([[1.0, 0.5]]), W_K=np.array([[0.0, 2.0]]))
    inp = load_input(g)
    assert isinstance(inp, HeadInput) and inp.L[1, 1] == 1 and inp.L[1, 0] == 2  # L = W_Kᵀ W_Q


@pytest.mark.parametrize("doc,key", [
    ({"model": "iid", "N": 2, "law": "rademacher", "foo": 1}, "foo"),
    ({"model": "iid", "N": 2, "law": "rademacher", "n": 1}, "n"),
    ({"model": "qk", "N": 2, "n": 1, "law_K": "rademacher", "law_Q": "rademacher", "law": "rademacher"}, "law"),
    ({"model": "iid", "N": 2, "law": "gaussian", "monte_carlo": {"samples": 10, "sample": 3}}, "sample"),
])
def test_law_unknown_key(doc, key):
    with pytest.raises(QKInputError, match=f"unknown key '{key}'"):
        LawInput.from_document(doc)


def test_law_written_form_reads_back():
    inp = LawInput.from_document({"model": "qk", "N": 3, "n": 1, "law_K": "rademacher", "law_Q": "rademacher"})
    assert LawInput.from_document(inp.to_json()).to_json() == inp.to_json()


# ---- numpy dtypes ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_binary_floats_exact(dtype):
    a = np.array([[0.1, -3.75], [2.0 ** -20, 0.0]], dtype=dtype)
    M = ndarray_to_fmpq_mat(a)
    for i in range(2):
        for j in range(2):
            want = Fraction(float(a[i, j]))  # float16/32 -> float64 is exact
            assert (int(M[i, j].p), int(M[i, j].q)) == (want.numerator, want.denominator)


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint8, np.uint64])
def test_integer_dtypes_exact(dtype):
    big = np.iinfo(dtype).max
    M = ndarray_to_fmpq_mat(np.array([[big, 0], [1, 2]], dtype=dtype))
    assert M[0, 0] == int(big)  # uint64 max 18446744073709551615 is not a float64


def test_longdouble_read_exactly(tmp_path):
    # 1 + 2^-k with k the longdouble mantissa width: representable in longdouble, not in float64
    # when longdouble is wider (x87 extended: k = 63; IEEE quad: k = 112)
    k = np.finfo(np.longdouble).nmant
    x = np.longdouble(1) + np.longdouble(2) ** -k
    f = tmp_path / "ld.npy"
    np.save(f, np.array([[x, 0], [0, -x]], dtype=np.longdouble))
    M = load_input(f, "matrix").L
    assert M[0, 0] == fmpq(2 ** k + 1, 2 ** k) and M[1, 1] == -fmpq(2 ** k + 1, 2 ** k)


@pytest.mark.parametrize("arr,word", [
    (np.eye(2, dtype=np.complex128), "complex"),
    (np.eye(2, dtype=bool), "boolean"),
    (np.array([["1", "2"], ["3", "4"]]), "string"),
    (np.array([[np.datetime64("2020-01-01")] * 2] * 2), "datetime"),
])
def test_unreadable_dtypes_refused(tmp_path, cli, arr, word):
    f = tmp_path / "m.npy"
    np.save(f, arr)
    code, out, err = cli("profile", str(f))
    assert code == 2 and word in err and len(err.strip().splitlines()) == 1


def test_object_array_refused(tmp_path, cli):
    f = tmp_path / "m.npy"
    np.save(f, np.array([[1, None], [2, 3]], dtype=object), allow_pickle=True)
    code, out, err = cli("profile", str(f))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("bad", ['"1_0"', '" 2"', '"3/2"', "2.5", "true"])
def test_sizes_follow_the_grammar(tmp_path, bad):
    f = tmp_path / "in.json"
    f.write_text('{"L": [[1, 2], [3, 4]], "n": %s}' % bad)
    with pytest.raises(QKInputError, match="n:"):
        load_input(f)
    with pytest.raises(QKInputError, match="N:"):
        LawInput.from_document(json.loads('{"model": "iid", "N": %s, "law": "rademacher"}' % bad))


def test_sizes_read_exactly(tmp_path):
    f = tmp_path / "in.json"
    f.write_text('{"L": [[1, 2], [3, 4]], "n": 2}')
    assert load_input(f).n == 2
    g = tmp_path / "in.npz"
    np.savez(g, L=np.eye(3), n=np.array(1))
    assert load_input(g).n == 1
