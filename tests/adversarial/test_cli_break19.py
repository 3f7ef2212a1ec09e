"""A fresh reviewer's attacks on the command line (issues 18, 19, 21): what a
careless or hostile user types.  Each case found a defect; each gives exit 2 in one
line (no traceback, no exit 70, no long run), or the documented answer."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

#: a refused command answers at once; the bound is for a loaded 2-core machine
TIMEOUT = 60


def run(cwd, *args, stdin=None):
    env = dict(os.environ, MPLCONFIGDIR=str(cwd / ".mpl"))
    return subprocess.run([sys.executable, "-m", "qkverify", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=TIMEOUT, input=stdin)


def one_line(r, word):
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, (r.returncode, r.stderr[-500:])
    assert len(lines) == 1 and lines[0].startswith("qkverify: ") and word in lines[0], r.stderr
    assert "Traceback" not in r.stderr


def bert(folder, n_layers=2, n_heads=2, d_model=8, seed=0, values=False):
    """A tiny BERT checkpoint (config.json + model.safetensors) with random float32 heads (and
    value and output weights with ``values``)."""
    from safetensors.numpy import save_file

    rng = np.random.default_rng(seed)
    t = {}
    for l in range(n_layers):
        for nm in ("query", "key") + (("value",) if values else ()):
            t[f"encoder.layer.{l}.attention.self.{nm}.weight"] = rng.standard_normal((d_model, d_model)).astype(
                np.float32)
        if values:
            t[f"encoder.layer.{l}.attention.output.dense.weight"] = rng.standard_normal(
                (d_model, d_model)).astype(np.float32)
    folder.mkdir(parents=True)
    save_file(t, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_size": d_model,
                                                    "num_attention_heads": n_heads,
                                                    "num_hidden_layers": n_layers}))
    return folder


@pytest.mark.parametrize("opt", ["--n-heads", "--n-kv-heads"])
def test_zero_head_count_is_refused_not_ignored(tmp_path, opt):
    # --n-heads 0 was read as "not given" (a falsy 0): the default model was certified in full
    # (72 heads, minutes), while --n-heads -1 was refused
    one_line(run(tmp_path, "heads", "--no-certificates", opt, "0"), opt)


def test_probes_with_an_empty_claim_is_refused(tmp_path):
    # "" was read as "no claim": every statement was probed (minutes), while search "" is refused
    one_line(run(tmp_path, "probes", ""), "unknown claim")


@pytest.mark.parametrize("what", ["file", "missing"])
def test_lean_audit_out_must_be_a_folder(tmp_path, what):
    # --out naming a file or a missing folder audited 0 certificates and exited 0
    target = tmp_path / "x.json"
    if what == "file":
        target.write_text("{}")
    one_line(run(tmp_path, "lean-audit", "--out", str(target)), "--out")


def test_heads_json_of_several_models_is_one_document(tmp_path):
    # "wrote …/report.html (one page, a model selector)" went to stdout before the JSON
    a, b = bert(tmp_path / "m1"), bert(tmp_path / "m2", seed=1)
    r = run(tmp_path, "heads", str(a), str(b), "--json", "--out", str(tmp_path / "o"), "--no-plot")
    assert r.returncode == 0, r.stderr[-800:]
    doc = json.loads(r.stdout)
    assert [m["model"]["name"] for m in doc["models"]] == ["m1", "m2"]


def test_a_head_certificate_does_not_depend_on_the_selection(tmp_path):
    """Certificates are facts: the certificate of head (1, 0) is the same bytes whether the run
    selected every head or only layer 1; so a run over a subset resumes in the folder of a full
    run (it was exit 2, "a different certificate exists": the first head *of the run* got the
    exact cross-checks and recorded them)."""
    m = bert(tmp_path / "m")
    common = ["--no-plot", "--no-report", "--quiet"]
    assert run(tmp_path, "heads", str(m), "--out", "all", *common).returncode == 0
    r = run(tmp_path, "heads", str(m), "--out", "l1", "--layers", "1", *common)
    assert r.returncode == 0, r.stderr
    for name in ("L01H00.json", "L01H00.profile.json", "L01H01.json"):
        assert (tmp_path / "l1" / name).read_bytes() == (tmp_path / "all" / name).read_bytes(), name
    r = run(tmp_path, "heads", str(m), "--out", "all", "--layers", "1", "--heads", "1", *common)
    assert r.returncode == 0, r.stderr
    r = run(tmp_path, "heads", str(m), "--out", "h1", "--heads", "1", *common)
    assert r.returncode == 0 and (tmp_path / "h1" / "L00H01.json").read_bytes() == \
        (tmp_path / "all" / "L00H01.json").read_bytes()


def test_accumulation_smallest_max_n_is_refused_or_answers(tmp_path):
    # --max-n 10 (the stated minimum) sampled one size only: the slope of one point was NaN,
    # exit 70 "man_exp requires an exact, finite value"
    r = run(tmp_path, "accumulation", "--max-n", "10", "--law", "uniform", "--rho", "1", "--no-cert", "--out", "o")
    one_line(r, "--max-n")
    r = run(tmp_path, "accumulation", "--max-n", "11", "--law", "uniform", "--rho", "1", "--no-cert", "--out", "o",
            "--json")
    assert r.returncode in (0, 1) and json.loads(r.stdout)["sizes"] == [10, 11], r.stderr


@pytest.mark.parametrize("shape", ["1e-300", "1/1000", "1e20"])
def test_accumulation_pareto_shape_outside_what_the_sampler_honours(tmp_path, shape):
    # X = x_m·U^(−1/α) for U ≥ 2^-54: a tiny α overflows the ball arithmetic, a huge one was exit 70 too
    law = json.dumps({"family": "pareto", "scale": 1, "shape": shape})
    one_line(run(tmp_path, "accumulation", "--law", law, "--max-n", "30", "--no-cert", "--out", "o"), "shape")


@pytest.mark.parametrize("kind", ["deep", "big"])
def test_layout_file_deep_or_huge_is_one_line(tmp_path, kind):
    # a layout file nested 10^5 deep was exit 70 (RecursionError); a 1 GB one was read whole first
    m = bert(tmp_path / "m", n_layers=1)
    f = tmp_path / "layout.json"
    if kind == "deep":
        f.write_text("[" * 100000 + "]" * 100000)
    else:
        with open(f, "wb") as fh:
            fh.truncate(2**30)  # sparse: a 1 GiB file of zero bytes
    r = run(tmp_path, "heads", str(m), "--layout", str(f), "--no-certificates", "--out", "o")
    one_line(r, "nested too deeply" if kind == "deep" else "bytes is refused")


@pytest.mark.parametrize("what", ["deep", "big"])
@pytest.mark.parametrize("command", ["heads", "regimes"])
def test_config_json_deep_or_huge_is_one_line(tmp_path, what, command):
    # a config.json nested 10^5 deep was exit 70 (RecursionError); a 1 GiB one was read whole
    m = bert(tmp_path / "m", n_layers=1, values=True)
    cfg = m / "config.json"
    if what == "deep":
        cfg.write_text('{"a":' * 100000 + "1" + "}" * 100000)
    else:
        with open(cfg, "wb") as fh:
            fh.truncate(2**30)
    r = run(tmp_path, command, str(m), "--out", "o", *(["--no-certificates"] if command == "heads" else ["--no-cert"]))
    one_line(r, "config.json")


@pytest.mark.parametrize("command", ["heads", "regimes", "rope"])
def test_a_device_as_the_model_is_one_line(tmp_path, command):
    # heads /dev/null was exit 70 (NotADirectoryError): neither a file nor a folder
    one_line(run(tmp_path, command, "/dev/null"), "not a regular file")


EXAMPLES = __import__("pathlib").Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("argv", [
    ["profile", "forms.json"], ["profile", "transformer.json"], ["profile", "law.json"],
    ["signature", "triple.json"], ["signature", "forms.json"], ["signature", "law.json"],
    ["simulate", "--triple", "forms.json", "--no-png"], ["simulate", "--triple", "law.json", "--no-png"],
    ["profile", "-", "<", '[1, 2, 3]'], ["signature", "-", "<", '{"rho": "1/2"}'],
    ["profile", "-", "<", '{"v": [[1, 0], [0, 1]], "s": [0]}'], ["profile", "-", "<", '{"p": [1, 0, 0, 0], "N": 2}'],
])
def test_an_input_of_another_kind_is_one_line(tmp_path, argv):
    # profile/signature/simulate --triple on a §1, law, vector, family, Θ-point or triple input: exit 70
    # (AttributeError: 'KindInput' object has no attribute 'L') -- the shipped example files themselves did it
    stdin = None
    if "<" in argv:
        argv, stdin = argv[:argv.index("<")], argv[-1]
    argv = [str(EXAMPLES / a) if a.endswith(".json") else a for a in argv]
    r = run(tmp_path, *argv, stdin=stdin)
    one_line(r, " input; ")
    assert "needed" in r.stderr or "give a symmetric matrix or a head" in r.stderr, r.stderr


def test_the_reader_refuses_another_kind_than_asked():
    # io/inputs.input_from_document itself (the commands' and the API's reader): a law, a §1 input, a
    # family or a Θ point asked for as a matrix / triple / head is refused naming both kinds
    from qkverify.errors import QKInputError
    from qkverify.io.inputs import input_from_document

    law = json.loads((EXAMPLES / "law.json").read_text())
    forms = json.loads((EXAMPLES / "forms.json").read_text())
    for doc, kind, words in [(law, "matrix", "a law input; a matrix (or a head) is needed"),
                             (forms, "triple", "a forms input; a triple"),
                             ({"v": [[1, 0], [0, 1]], "s": [0]}, "matrix", "a family input; a matrix"),
                             ({"p": [1, 0, 0, 0], "N": 2}, "symmetric", "a theta_point input; a symmetric matrix"),
                             ([1, 2], "matrix_n", "a vector input; {\"L\": …, \"n\": k} or a head")]:
        with pytest.raises(QKInputError, match=re.escape(words)):
            input_from_document(doc, kind, "f.json")
    # what each kind accepts is still read: a head as a matrix, a law as a law, any input without a kind
    assert input_from_document({"W_Q": [[1, 0]], "W_K": [[0, 1]]}, "matrix").L.nrows() == 2
    assert input_from_document(law, "law").kind2 == "law"
    assert input_from_document({"p": [1, 0, 0, 0], "N": 2}).kind2 == "theta_point"


def test_accumulation_text_fits_100_columns(tmp_path):
    # after the sign-test rewrite the README's accumulation example printed lines of 105 to 145
    # columns (the two header sentences and the table's headers)
    law = json.dumps({"family": "pareto", "shape": "5/2"})
    r = run(tmp_path, "accumulation", "--max-n", "30", "--law", "uniform", "--law", law, "--rho", "1/2",
            "--no-cert", "--out", "o", "--paths", "16")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert any(x.startswith("sign test of the trend") for x in lines) and len(lines) >= 6, r.stdout
    assert all(len(x) <= 100 for x in lines), [x for x in lines if len(x) > 100]
