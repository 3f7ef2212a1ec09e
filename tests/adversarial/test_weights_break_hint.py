"""Breaking the ``path_hint`` of head certificates (issue 19's hint, after the weights merge).

A hint is a relative path the prover chooses: ``..`` may climb anywhere, so the kernel's
candidate files are whatever the verifier's machine holds there.  The kernel used a candidate
only when its SHA-256 matched -- but to know that, it read every candidate that was a regular
file to its end.  A hint at ``/proc/kmsg`` (a "regular file" of size 0 that never ends, which
root can read) made ``verify`` hang forever, and it drained the kernel's log; a hint at any big
file on the machine cost a full read.  Now a candidate is read only if it can be a weights
file: a regular file of at least 10 bytes that begins as a safetensors, GGUF or zip file does
(the only files the kernel reads; its own readers refuse the rest anyway), checked from its
size and first 9 bytes, opened non-blocking.

Also tried, and sound (tests in tests/test_weights_path_hint.py or here): a hint at another file
of the same name (its SHA-256 differs: not used), through a symlink (the target's bytes are
hashed: used only if they are the recorded ones), a hint naming another file than ``file``
(invalid), absolute hints and backslashes (schema), W_Q and W_K from two different files (each
found by its own hash)."""

from __future__ import annotations

import builtins
import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import kernel_fixtures as K  # noqa: E402

from qkverify.kernel import verify_document  # noqa: E402
from qkverify.kernel import weights as KW  # noqa: E402
from qkverify.kernel.jsonio import Undecided  # noqa: E402

FORBIDDEN = "/proc/kmsg"


@pytest.fixture
def no_kmsg(monkeypatch):
    """Opening /proc/kmsg fails the test at once (instead of hanging it and draining the log)."""
    real_open, real_os_open = builtins.open, os.open

    def guard(p):
        if os.path.realpath(os.fspath(p)) == FORBIDDEN:
            raise AssertionError(f"the kernel opened {FORBIDDEN}")

    def spy_open(p, *a, **k):
        if isinstance(p, (str, bytes, os.PathLike)):
            guard(p)
        return real_open(p, *a, **k)

    def spy_os_open(p, *a, **k):
        guard(p)
        return real_os_open(p, *a, **k)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(os, "open", spy_os_open)


@pytest.fixture
def hashed(monkeypatch):
    """The paths the kernel hashes (hashlib.file_digest on an open file)."""
    seen, real = [], hashlib.file_digest

    def spy(fh, *a, **k):
        seen.append(os.path.realpath(fh.name))
        return real(fh, *a, **k)

    monkeypatch.setattr(hashlib, "file_digest", spy)
    KW._sha256.cache_clear()
    return seen


def _climb(base: Path) -> str:
    return "../" * len(base.resolve().parts)


@pytest.mark.skipif(not Path(FORBIDDEN).is_file(), reason="no /proc/kmsg here")
def test_a_hint_at_proc_kmsg_is_never_opened(tmp_path, no_kmsg):
    cert = K.weights_certificate(tmp_path)
    for t in cert["input"]["tensors"]:
        t["file"], t["path_hint"] = "kmsg", _climb(tmp_path) + "proc/kmsg"
    out = verify_document(cert, str(tmp_path / "c.json"), tmp_path, [])
    assert out.status == "undecided", out


def test_a_hint_at_a_file_that_cannot_be_weights_is_not_read(tmp_path, hashed):
    """A 4 MiB regular file of zeros (no weights format begins so) named like the weights."""
    cert = K.weights_certificate(tmp_path)
    (tmp_path / "model.safetensors").unlink()
    junk = tmp_path / "elsewhere" / "model.safetensors"
    junk.parent.mkdir()
    with open(junk, "wb") as fh:
        fh.truncate(4 << 20)
    for t in cert["input"]["tensors"]:
        t["path_hint"] = "elsewhere/model.safetensors"
    out = verify_document(cert, str(tmp_path / "c.json"), tmp_path, [])
    assert out.status == "undecided", out
    assert str(junk.resolve()) not in hashed


def test_the_real_weights_are_still_found_through_the_hint_and_a_symlink(tmp_path, hashed):
    cert = K.weights_certificate(tmp_path)
    (tmp_path / "w").mkdir()
    (tmp_path / "model.safetensors").rename(tmp_path / "w" / "real.bin")
    (tmp_path / "w" / "model.safetensors").symlink_to(tmp_path / "w" / "real.bin")
    for t in cert["input"]["tensors"]:
        t["path_hint"] = "w/model.safetensors"
    out = verify_document(cert, str(tmp_path / "c.json"), tmp_path, [])
    assert out.status == "valid", out
    assert hashed == [str((tmp_path / "w" / "real.bin").resolve())]  # hashed once, cached


def test_w_q_and_w_k_from_two_files_are_each_found_by_their_hash(tmp_path):
    """Two files of the same name in two folders: each tensor's hint and hash pick its own."""
    cert = K.weights_certificate(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    K.write_weights(tmp_path / "a" / "model.safetensors")
    other = K.write_weights(tmp_path / "b" / "model.safetensors", wq=[[1.0, 0.0, 0.0]], wk=[[0.0, 1.0, 0.0]])
    # same arrays, but b's file gets one more metadata entry so the bytes (and hash) differ
    from safetensors.numpy import save_file

    save_file({"q.weight": np.array(K.W_Q, np.float32), "k.weight": np.array(K.W_K, np.float32)},
              str(tmp_path / "b" / "model.safetensors"), metadata={"x": "y"})
    other = hashlib.sha256((tmp_path / "b" / "model.safetensors").read_bytes()).hexdigest()
    (tmp_path / "model.safetensors").unlink()
    sha_a = hashlib.sha256((tmp_path / "a" / "model.safetensors").read_bytes()).hexdigest()
    q, k = cert["input"]["tensors"]
    q.update(path_hint="a/model.safetensors", sha256=sha_a)
    k.update(path_hint="b/model.safetensors", sha256=other)
    assert verify_document(json.loads(json.dumps(cert)), str(tmp_path / "c.json"), tmp_path, []).status == "valid"
    k["path_hint"] = "a/model.safetensors"  # b's hash is nowhere else
    out = verify_document(cert, str(tmp_path / "c.json"), tmp_path, [])
    assert out.status == "undecided", out


def test_find_reports_no_candidate_for_pseudo_files(tmp_path):
    with pytest.raises(Undecided, match="no candidate"):
        KW.find(_climb(tmp_path) + "proc/self/status" if Path("/proc/self/status").is_file() else "x/none",
                "0" * 64, tmp_path, [])


@pytest.mark.parametrize("folder", ["back\\slash", "tab\there", "deep/" * 220 + "m"])
def test_a_folder_the_schema_cannot_name_gets_no_hint_not_a_failed_run(tmp_path, monkeypatch, capsys, folder):
    """A model in a folder whose relative path has a backslash or a control character, or is over
    1024 characters: `heads` failed outright ("certificate schema violation at .../path_hint").
    The hint is optional: the certificates are written without it and verify with --weights."""
    from test_weights_path_hint import _my_model  # noqa: PLC0415

    from qkverify.cli import main

    monkeypatch.chdir(tmp_path)
    d = _my_model(Path("models") / folder)
    assert main(["heads", str(d), "--out", "out", "--no-plot", "--quiet", "--no-report"]) == 0, capsys.readouterr().err
    cert = json.loads(Path("out/L00H00.json").read_text())
    assert all("path_hint" not in t for t in cert["input"]["tensors"])
    capsys.readouterr()
    assert main(["verify", "out/L00H00.json", "--weights", str(d)]) == 0
