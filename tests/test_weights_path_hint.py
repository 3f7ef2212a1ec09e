"""Certificates of a user's model record where the weights were (issue 19): a ``path_hint``
relative to the certificate's directory, used only as a hint and checked by SHA-256, so
``qkverify heads my-model --out out`` then ``qkverify verify 'out/**/*.json'`` from the same
folder says valid with no options -- although the installed MiniLM, another file named
``model.safetensors``, is also a candidate of ``verify``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from qkverify.cli import main


def _my_model(d: Path) -> Path:
    from safetensors.numpy import save_file

    d.mkdir(parents=True)
    rng = np.random.default_rng(5)
    q = (rng.integers(-8, 8, (4, 6)) / 8).astype(np.float32)
    k = (rng.integers(-8, 8, (4, 6)) / 8).astype(np.float32)
    save_file({"model.layers.0.self_attn.q_proj.weight": q, "model.layers.0.self_attn.k_proj.weight": k},
              str(d / "model.safetensors"))
    (d / "config.json").write_text(json.dumps({"model_type": "llama", "num_attention_heads": 2,
                                               "num_key_value_heads": 2, "hidden_size": 6}))
    return d


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _my_model(tmp_path / "my-model")
    assert main(["heads", "my-model", "--out", "out", "--no-plot", "--quiet"]) == 0
    return tmp_path


def test_heads_then_verify_from_the_same_folder_is_valid_with_no_options(folder, capsys):
    cert = json.loads((folder / "out" / "L00H00.json").read_text())
    assert {t["path_hint"] for t in cert["input"]["tensors"]} == {"../my-model/model.safetensors"}
    assert {t["file"] for t in cert["input"]["tensors"]} == {"model.safetensors"}
    capsys.readouterr()
    assert main(["verify", "out/**/*.json"]) == 0
    assert "4 valid" in capsys.readouterr().out


def test_the_installed_model_of_the_same_name_is_a_candidate_and_is_not_used(folder, capsys):
    from qkverify.models.installed import default_weights_dirs

    if not any((Path(d) / "model.safetensors").is_file() for d in default_weights_dirs()):
        pytest.skip("the default model is not installed")
    # without the hint the certificate names only model.safetensors: the installed MiniLM is the
    # one candidate verify finds, its SHA-256 differs, so the head is undecided (issue 19)
    p = folder / "out" / "L00H00.json"
    cert = json.loads(p.read_text())
    for t in cert["input"]["tensors"]:
        del t["path_hint"]
    p.write_text(json.dumps(cert))
    capsys.readouterr()
    assert main(["verify", str(p)]) == 3
    assert "other SHA-256" in capsys.readouterr().out


def test_the_hint_survives_moving_the_folder(folder, tmp_path_factory, monkeypatch, capsys):
    import shutil

    dest = tmp_path_factory.mktemp("moved") / "project"
    shutil.copytree(folder, dest)
    monkeypatch.chdir(dest.parent)  # verify from elsewhere: the hint is relative to the certificate
    capsys.readouterr()
    assert main(["verify", str(dest / "out" / "*.json")]) == 0


def test_a_hint_is_only_a_hint(folder, capsys):
    """A hint at a file with another SHA-256 is not used (undecided); a hint naming another file
    than ``file`` is invalid; the schema refuses absolute hints."""
    other = folder / "elsewhere"
    other.mkdir()
    (other / "model.safetensors").write_bytes((folder / "my-model" / "model.safetensors").read_bytes()[:-4] + b"\0" * 4)
    (folder / "my-model" / "model.safetensors").rename(folder / "my-model" / "moved.safetensors")
    p = folder / "out" / "L00H00.json"
    cert = json.loads(p.read_text())
    for t in cert["input"]["tensors"]:
        t["path_hint"] = "../elsewhere/model.safetensors"
    p.write_text(json.dumps(cert))
    capsys.readouterr()
    assert main(["verify", str(p)]) == 3
    for hint, code in (("../my-model/moved.safetensors", 1), ("/etc/model.safetensors", 1)):
        for t in cert["input"]["tensors"]:
            t["path_hint"] = hint
        p.write_text(json.dumps(cert))
        assert main(["verify", str(p)]) == code, hint


def test_installed_models_get_no_hint(tmp_path):
    """The shipped certificates stay the same on every machine: no path into site-packages."""
    from qkverify.heads.certificate import path_hints
    from qkverify.models.installed import default_weights_dirs

    dirs = default_weights_dirs()
    if not dirs:
        pytest.skip("no installed model")
    src = {"file": "model.safetensors", "tensors": [{"role": "W_Q", "name": "q"}]}
    assert path_hints(src, dirs[0], tmp_path) == {}
    assert path_hints(src, tmp_path / "m", tmp_path / "out") == {"model.safetensors": "../m/model.safetensors"}
