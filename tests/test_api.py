"""The Python API (qkverify.api; docs/API.md): doctests, exact reading of every input type, result
objects, hub ids through a fake local Hugging Face cache, the tokenizer of the layer input, and the
weight of ``import qkverify``."""

from __future__ import annotations

import doctest
import json
import subprocess
import sys
import types
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import qkverify
from qkverify import api

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------
# doctests: the module, the package docstring and the notebook page


def test_api_doctests():
    res = doctest.testmod(api, optionflags=doctest.ELLIPSIS)
    assert res.attempted >= 10 and res.failed == 0


def test_package_doctest():
    res = doctest.testmod(qkverify)
    assert res.attempted >= 2 and res.failed == 0


def test_docs_api_page_runs():
    res = doctest.testfile(str(ROOT / "docs" / "API.md"), module_relative=False,
                           optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.attempted >= 15 and res.failed == 0


# ---------------------------------------------------------------------------
# the two examples


def test_profile_of_1234_by_hand():
    # L = [[1,2],[3,4]]: ‖L‖² = 30, T = [[0,-1/2],[1/2,0]], ‖T‖² = 1/2 -> a = 1/60;
    # S = [[1, 5/2], [5/2, 4]]: eigenvalues (5 ± √34)/2, α = ((5+√34)/2), β = ((√34−5)/2):
    # b = 2αβ/30 = 2·(34−25)/4/30 = 3/20, c = (α−β)²/30 = 25/30 = 5/6, d = 0
    p = qkverify.profile([[1, 2], [3, 4]])
    assert (p.a, p.b, p.c, p.d) == (Fraction(1, 60), Fraction(3, 20), Fraction(5, 6), Fraction(0))
    assert p.evidence == "exact" and p.inertia == (1, 1, 0)
    assert isinstance(p.alpha[0], qkverify.Algebraic) and abs(float(p.alpha[0]) - (5 + 34 ** 0.5) / 2) < 1e-12
    assert str(p.alpha[0]).startswith("root(4*x^2 - 20*x - 9, [")     # 2α − 5 = √34
    d = p.to_dict()
    assert d["a"]["exact"] == "1/60" and d["evidence"] == "exact" and d["fibers"]["d=0"] is True
    json.dumps(d)
    assert "<table>" in p._repr_html_() and "1/60" in p._repr_html_()


def test_float32_head_with_equal_maps_has_no_skew_part():
    W = np.array([[0.1, -2.5, 3.0], [1e-3, 0.0, 7.25]], np.float32)
    h = qkverify.head(W, W)
    assert h.profile.a == 0 and h.profile.d == 0              # L = WᵀW is symmetric positive semidefinite
    assert tuple(h.signature) == (2, 0, 1) and h.rank_M == 2 and h.theorem3 == "not applicable"


# ---------------------------------------------------------------------------
# every input type, read exactly


def _bits_bf16(a: np.ndarray) -> np.ndarray:
    """bfloat16 by hand: truncate float32 values that are exact in bfloat16 to their top 16 bits."""
    return (np.asarray(a, np.float32).view(np.uint32) >> 16).astype(np.uint16)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "longdouble", "int8", "int64", "uint8",
                                   "bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_every_dtype_is_read_exactly(dtype):
    vals = np.array([[1.5, -0.25, 3], [0.125, 2, -4]])             # exact in every dtype below (ints: see below)
    if dtype.startswith(("int", "uint")):
        vals = np.array([[1, 0, 3], [5, 2, 4]])
    if dtype in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        import ml_dtypes

        a = vals.astype(getattr(ml_dtypes, dtype))
    else:
        a = vals.astype(dtype)
    M = api.as_exact_matrix(a, "W")
    assert [[Fraction(int(M[i, j].p), int(M[i, j].q)) for j in range(3)] for i in range(2)] == \
        [[Fraction(str(v)) for v in row] for row in vals.tolist()]


def test_bfloat16_is_read_from_its_bits():
    import ml_dtypes

    # 1 + 2^-7 is the bfloat16 just above 1; 3·2^-130 is subnormal in float32 and exact in bfloat16
    x = np.array([[1 + 2 ** -7, -3 * 2.0 ** -130], [65280.0, 2.0 ** -133]], np.float32)
    b = x.astype(ml_dtypes.bfloat16)
    assert np.array_equal(b.view(np.uint16), _bits_bf16(x))
    M = api.as_exact_matrix(b)
    assert Fraction(int(M[0, 0].p), int(M[0, 0].q)) == 1 + Fraction(1, 128)
    assert Fraction(int(M[0, 1].p), int(M[0, 1].q)) == -3 * Fraction(1, 2 ** 130)
    assert Fraction(int(M[1, 1].p), int(M[1, 1].q)) == Fraction(1, 2 ** 133)


def test_nested_lists_fractions_strings_floats():
    M = api.as_exact_matrix([[Fraction(1, 3), "0.1", "-2/6"], (0.5, 7, "1e-3")])
    got = [[Fraction(int(M[i, j].p), int(M[i, j].q)) for j in range(3)] for i in range(2)]
    assert got == [[Fraction(1, 3), Fraction(1, 10), Fraction(-1, 3)], [Fraction(1, 2), 7, Fraction(1, 1000)]]
    assert api.as_exact_matrix([[0.1]])[0, 0] != api.as_exact_matrix([["0.1"]])[0, 0]   # the float's binary value


@pytest.mark.parametrize("bad,msg", [
    ([[1, 2], [3]], "ragged rows"),
    ([[1, "1_000"]], "'1_000' is not a rational number"),
    ([[1, float("nan")]], "not a rational number"),
    (np.array([[1, 2], [3, 4]], np.complex128), "complex dtype"),
    ({"a": 1}, "dict is not a matrix"),
])
def test_bad_input_is_one_line_input_error(bad, msg):
    with pytest.raises(qkverify.InputError, match=msg) as ei:
        qkverify.profile(bad)
    assert "\n" not in str(ei.value)


def test_input_error_is_the_cli_one(tmp_path, capsys):
    from qkverify.cli import main

    f = tmp_path / "L.json"
    f.write_text('[[1, 2], [3, 4, 5]]')
    assert main(["profile", str(f)]) == 2
    cli = capsys.readouterr().err.strip()
    with pytest.raises(qkverify.InputError) as ei:
        qkverify.profile([[1, 2], [3, 4, 5]])
    assert str(ei.value) in cli and qkverify.InputError is qkverify.errors.QKInputError


class _FakeTorchDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


def _fake_torch(monkeypatch):
    """A stand-in for torch (not installed here) with the protocol the API uses: a Tensor class of module
    ``torch`` with .detach(), .cpu(), .dtype, .contiguous(), .view(torch.int16), .float(), .numpy()."""
    mod = types.ModuleType("torch")
    mod.int16 = _FakeTorchDtype("int16")

    class Tensor:
        def __init__(self, bits_or_values, dtype):
            self._a, self.dtype = bits_or_values, _FakeTorchDtype(dtype)

        def detach(self):
            return self

        def cpu(self):
            return self

        def contiguous(self):
            return self

        def view(self, dt):
            assert dt is mod.int16 and self.dtype.name == "bfloat16"
            return Tensor(self._a.view(np.int16), "int16")

        def numpy(self):
            if self.dtype.name == "bfloat16":
                raise TypeError("Got unsupported ScalarType BFloat16")      # as torch does
            return self._a

        @property
        def ndim(self):
            return self._a.ndim

    Tensor.__module__ = "torch"
    mod.Tensor = Tensor
    monkeypatch.setitem(sys.modules, "torch", mod)
    return mod


def test_torch_tensors_by_protocol(monkeypatch):
    torch = _fake_torch(monkeypatch)
    Wq = np.array([[1, 0, 0, 0], [0, 0, 1, 0]], np.float32)
    Wk = np.array([[4, 3, 0, 0], [0, 0, -5, 12]], np.float32)
    tq = torch.Tensor(_bits_bf16(Wq), "bfloat16")                 # bfloat16: only the bits are readable
    tk = torch.Tensor(Wk, "float32")
    p = qkverify.head(tq, tk).profile
    assert (p.a, p.b, p.c, p.d) == (Fraction(153, 388), Fraction(85, 194), Fraction(49, 776), Fraction(81, 776))
    assert qkverify.check("Theorem 3", {"W_Q": tq, "W_K": tk}).verdict == "holds"


# ---------------------------------------------------------------------------
# results, routes, check and verify


def test_algebraic_values_and_notation():
    # L = [[0, 2], [1, 1]]: ‖L‖² = 6, ‖T‖² = 1/2 (a = 1/12), S = [[0, 3/2], [3/2, 1]] with eigenvalues
    # (1 ± √10)/2: α = (1 + √10)/2, β = (√10 − 1)/2, b = 2αβ/6 = 3/4, c = (α − β)²/6 = 1/6, d = 0
    p = qkverify.profile([[0, 2], [1, 1]])
    assert (p.a, p.b, p.c, p.d) == (Fraction(1, 12), Fraction(3, 4), Fraction(1, 6), 0)
    r = p.alpha[0]                                                   # 2α − 1 = √10: 4x² − 4x − 9 = 0
    assert str(r) == "root(4*x^2 - 4*x - 9, [2, 3])"  # α ≈ 2.08; the other root ≈ −1.08
    assert r > 2 and r < Fraction(21, 10) and abs(float(r) - (1 + 10 ** 0.5) / 2) < 1e-12
    assert r == api.Algebraic((-9, -4, 4), Fraction(2), Fraction(3)) and r != 2
    assert p.beta[0] < r and str(p.beta[0]).startswith("root(4*x^2 + 4*x - 9, [")   # β = −λ₋ = (√10 − 1)/2
    assert r.to_dict()["poly"] == ["-9", "-4", "4"]


def test_head_cells_route_agrees_with_exact_route():
    rng = np.random.default_rng(3)
    Wq = rng.integers(-4, 5, (2, 6)).astype(np.float64)
    Wk = rng.integers(-4, 5, (2, 6)).astype(np.float64)
    ex, ce = qkverify.head(Wq, Wk, route="exact"), qkverify.head(Wq, Wk, route="cells")
    assert ex.route == "exact" and ce.route == "cells"
    assert ex.profile.a == ce.profile.a and tuple(ex.signature) == tuple(ce.signature) and ex.theorem3 == ce.theorem3
    for k in "bcd":
        v, e = getattr(ex.profile, k), getattr(ce.profile, k)
        assert v == e if isinstance(e, Fraction) else e.lo <= v <= e.hi
    with pytest.raises(qkverify.InputError, match="cells"):
        qkverify.head([[Fraction(1, 3)]], [[1]], route="cells")


def test_check_write_and_verify(tmp_path):
    r = qkverify.check("Lemma 3", {"L": [[1, 0], [0, 1]], "n": 1}, drop=["rank_le_n"])
    assert r.verdict == "fails" and r.declarations[0]["dropped"] == ["hrank"]
    assert "fails" in repr(r) and r.to_dict()["verdict"] == "fails"
    path = tmp_path / "c.json"
    assert r.write(path) in ("written", "created", "new", "wrote") or path.is_file()
    v = qkverify.verify(path)
    assert v.valid and bool(v) and v.statement == r.statement
    assert qkverify.verify(r.certificate()).status == "valid"
    bad = r.certificate()
    bad["verdict"] = "holds"
    assert qkverify.verify(bad).status == "invalid"
    with pytest.raises(qkverify.InputError, match="the hypotheses of"):
        qkverify.check("Lemma 3", {"L": [[1]], "n": 1}, drop=["nonsense"])
    with pytest.raises(qkverify.InputError, match="unknown claim"):
        qkverify.check("Theorem 99", [[1]])
    # a file path is read as `qkverify check --input` reads it
    assert qkverify.check("Theorem 4", str(ROOT / "examples" / "L.json")).verdict == "holds"


def test_signature_of_symmetric_and_of_head():
    assert tuple(qkverify.signature(np.diag([3, -1, 0]).astype(np.int32))) == (1, 1, 1)
    with pytest.raises(qkverify.InputError, match="not symmetric"):
        qkverify.signature([[1, 2], [3, 4]])


# ---------------------------------------------------------------------------
# load_model: iteration, hub ids through a fake local cache


def _checkpoint(d: Path) -> Path:
    from safetensors.numpy import save_file

    d.mkdir(parents=True)
    Wq = np.array([[1, 0, 0, 0], [0, 0, 1, 0], [1, 1, 0, 0], [0, 1, 0, 1]], np.float32)
    Wk = np.array([[4, 3, 0, 0], [0, 0, -5, 12], [0, 1, 1, 0], [1, 0, 0, 1]], np.float32)
    save_file({"model.layers.0.self_attn.q_proj.weight": Wq, "model.layers.0.self_attn.k_proj.weight": Wk},
              str(d / "model.safetensors"))
    (d / "config.json").write_text(json.dumps({"model_type": "llama", "num_attention_heads": 2,
                                               "hidden_size": 4, "num_hidden_layers": 1}))
    return d


def _fake_hub_cache(root: Path, repo: str = "org/tiny-llama", commit: str = "a" * 40) -> Path:
    """The layout huggingface_hub writes: models--org--name/{blobs,refs/main,snapshots/<commit>/…→blobs}."""
    folder = root / ("models--" + repo.replace("/", "--"))
    src = _checkpoint(root / "_src")
    (folder / "blobs").mkdir(parents=True)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(commit)
    snap = folder / "snapshots" / commit
    snap.mkdir(parents=True)
    for f in src.iterdir():
        blob = folder / "blobs" / f"blob-{f.name}"
        blob.write_bytes(f.read_bytes())
        (snap / f.name).symlink_to(Path("../..") / "blobs" / blob.name)
    return folder


def test_load_model_iterates_heads(tmp_path):
    m = qkverify.load_model(_checkpoint(tmp_path / "ck"))
    heads = list(m)
    assert len(heads) == len(m) == 2 and [(h.layer, h.head, h.kv_head) for h in heads] == [(0, 0, 0), (0, 1, 1)]
    h = qkverify.head(heads[0])
    assert h.profile.a == Fraction(153, 388) and h.layer == 0 and "L0H0" in repr(h)
    assert "2 heads" in repr(m) or "1 layers × 2 heads" in repr(m)


def test_hub_id_from_the_local_cache(tmp_path, monkeypatch, capsys):
    cache = tmp_path / "hf" / "hub"
    folder = _fake_hub_cache(cache)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")                     # offline all the same: never downloads
    m = qkverify.load_model("org/tiny-llama")
    assert m.name == "org/tiny-llama" and len(list(m)) == 2
    assert qkverify.load_model("org/tiny-llama@main").name == "org/tiny-llama"
    # a models--org--name folder and a snapshot folder are named org/name too
    assert qkverify.load_model(folder).name == "org/tiny-llama"
    from qkverify.cli import main

    out = tmp_path / "out"
    assert main(["heads", "org/tiny-llama", "--out", str(out), "--quiet", "--no-plot"]) == 0
    doc = json.loads((out / "heads.json").read_text())
    assert doc["model"]["name"] == "org/tiny-llama" and {r["model"] for r in doc["rows"]} == {"org/tiny-llama"}
    snap = next((folder / "snapshots").iterdir())
    assert main(["heads", str(snap), "--out", str(tmp_path / "o2"), "--quiet", "--no-plot", "--no-certificates"]) == 0
    assert json.loads((tmp_path / "o2" / "heads.json").read_text())["model"]["name"] == "org/tiny-llama"
    assert main(["heads", str(folder), "--quiet", "--no-plot", "--no-certificates",
                 "--out", str(tmp_path / "o3")]) == 0
    # the kernel re-reads a head's certificate from the cached file
    assert main(["verify", str(out / "L00H00.json"), "--weights", str(snap)]) == 0
    capsys.readouterr()
    # HF_HOME is honoured when HF_HUB_CACHE is not set
    monkeypatch.delenv("HF_HUB_CACHE")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert qkverify.load_model("org/tiny-llama").name == "org/tiny-llama"


def test_hub_id_not_in_cache_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
    from qkverify.cli import main

    assert main(["heads", "openai-community/gpt2", "--out", str(tmp_path / "o"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "never downloads" in err and str(tmp_path / "empty") in err
    with pytest.raises(qkverify.InputError, match="holds no snapshot"):
        qkverify.load_model("openai-community/gpt2")


def test_import_is_light():
    """``import qkverify`` loads none of numpy, flint or the API (they come on first use)."""
    code = ("import sys, qkverify; heavy = [m for m in ('numpy', 'flint', 'qkverify.api', 'huggingface_hub') "
            "if m in sys.modules]; print(heavy); qkverify.profile; print('qkverify.api' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.split("\n")[:2] == ["[]", "True"]


# ---------------------------------------------------------------------------
# the layer input's tokenizer (the tokenizers library on the model's tokenizer.json)


def test_layer_tokenizer_is_the_models(tmp_path):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", ",", "world", "!", "bi",
                                         "##linear"])}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2),
                                                                                                  ("[SEP]", 3)])
    tok.enable_padding(length=16)
    tok.save(str(tmp_path / "tokenizer.json"))
    from qkverify.models.layer import tokenize

    ids, tokens = tokenize("Hello, World! bilinear", tmp_path)
    # punctuation is split off (the hand-written tokenizer made "hello," one unknown word); no padding
    assert tokens == ["[CLS]", "hello", ",", "world", "!", "bi", "##linear", "[SEP]"]
    assert ids == [2, 4, 5, 6, 7, 8, 9, 3]
    (tmp_path / "tokenizer.json").unlink()
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    assert tokenize("Hello, World! bilinear", tmp_path)[1] == tokens
    (tmp_path / "vocab.txt").unlink()
    with pytest.raises(qkverify.InputError, match="no tokenizer.json or vocab.txt"):
        tokenize("x", tmp_path)
