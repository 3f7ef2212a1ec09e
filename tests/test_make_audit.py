"""`make audit` on a fresh clone (issue 19): it regenerates the shipped
certificates, then from the tree the manifest lean-audit reads
(qkverify/data/shipped_certificates.sha256) and the conformance sheet
(docs/conformance.md) -- and leaves `git status` clean, because every file it
writes is byte-identical to the shipped one.

The clone is of this repository at its current commit; `make` runs with a
stand-in virtualenv whose ``bin/qkverify`` runs the clone's own package (the
real install step would create a virtualenv and download packages)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _git(*args, cwd):
    return subprocess.run(["git", *args], capture_output=True, text=True, cwd=cwd)


def _stand_in_venv(base: Path, clone: Path) -> Path:
    """``base/bin/{qkverify,python}`` running this interpreter on the clone's package, and the
    Makefile's install stamp (newer than the clone's pyproject.toml)."""
    bin_ = base / "bin"
    bin_.mkdir(parents=True)
    for name, argv in (("qkverify", f'"{sys.executable}" -m qkverify'), ("python", f'"{sys.executable}"')):
        f = bin_ / name
        f.write_text(f'#!/bin/sh\nPYTHONPATH="{clone}" exec {argv} "$@"\n')
        f.chmod(0o755)
    (base / ".installed").touch()
    return base


@pytest.mark.slow
def test_make_audit_on_a_fresh_clone_leaves_the_tree_clean(tmp_path):
    if not (shutil.which("git") and shutil.which("make")) or _git("rev-parse", "HEAD", cwd=ROOT).returncode:
        pytest.skip("needs git, make and a git checkout")
    head = _git("rev-parse", "HEAD", cwd=ROOT).stdout.strip()
    clone = tmp_path / "qkverify"
    assert _git("clone", "-q", "--no-hardlinks", str(ROOT), str(clone), cwd=ROOT).returncode == 0
    assert _git("checkout", "-q", head, cwd=clone).returncode == 0
    venv = _stand_in_venv(tmp_path / "venv", clone)
    env = dict(os.environ, MPLCONFIGDIR=str(tmp_path / ".mpl"))
    r = subprocess.run(["make", "audit", f"VENV={venv}"], cwd=clone, env=env, capture_output=True, text=True,
                       timeout=5400)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    status = _git("status", "--porcelain", "--untracked-files=all", cwd=clone).stdout
    assert status == "", f"make audit changed the tree:\n{status[:3000]}"
    assert "Result: nothing fails" in r.stdout
