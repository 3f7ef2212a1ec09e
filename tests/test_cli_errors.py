"""Errors before long work, and what a killed writer leaves behind (issue 14,
Found 6): an unreadable input or an unwritable output folder is exit 2 with
one line, found before any computation; a SIGKILLed writer's temporary is
removed by the next run that writes into the same folder, and a live
writer's temporary is not."""

import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from qkverify.io import outputs
from qkverify.io.outputs import TEMP_PATTERN, clean_stale_temporaries, probe_output_dir, temp_path
from qkverify.errors import QKInputError

MATRIX = "[[1,-1,2,-1],[3,2,3,2],[2,1,-3,3],[0,3,-2,2]]"


def _drop_dac():
    """preexec_fn for root: drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the
    bounding set, so that the exec'd process obeys file modes like any user."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            os._exit(97)


def run_restricted(args, cwd=None, timeout=300):
    """Run ``python -m qkverify ARGS`` so that permission bits apply (as root:
    without the capabilities that bypass them)."""
    pre = _drop_dac if os.geteuid() == 0 else None
    r = subprocess.run([sys.executable, "-m", "qkverify", *args], capture_output=True, text=True, cwd=cwd,
                       preexec_fn=pre, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


@pytest.fixture
def perm_dir(tmp_path):
    """A folder holding an unreadable file ``secret.json`` and a read-only
    folder ``ro/``; skips when file modes cannot be enforced here."""
    secret = tmp_path / "secret.json"
    secret.write_text(MATRIX)
    secret.chmod(0)
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    pre = _drop_dac if os.geteuid() == 0 else None
    r = subprocess.run(["cat", str(secret)], capture_output=True, preexec_fn=pre)
    if r.returncode == 0:
        pytest.skip("file modes are not enforced for this user")
    yield tmp_path
    ro.chmod(0o755)
    secret.chmod(0o644)


def one_line(err: str) -> bool:
    return len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("cmd", [["profile", "{f}"], ["signature", "{f}"],
                                 ["check", "Definition 6", "--input", "{f}", "--no-cert"]])
def test_unreadable_input_exit2(perm_dir, cmd):
    f = perm_dir / "secret.json"
    code, out, err = run_restricted([a.format(f=f) for a in cmd])
    assert code == 2, err
    assert str(f) in err and "Permission denied" in err and one_line(err) and out == ""


def test_unreadable_model_file_exit2(perm_dir):
    f = perm_dir / "model.safetensors"
    f.write_bytes(b"\x00" * 16)
    f.chmod(0)
    code, out, err = run_restricted(["heads", str(f), "--out", str(perm_dir / "h")])
    assert code == 2 and str(f) in err and one_line(err)


def test_unwritable_out_check(perm_dir):
    (perm_dir / "L.json").write_text(MATRIX)
    for out in (perm_dir / "ro", perm_dir / "ro" / "sub" / "c.json"):
        code, stdout, err = run_restricted(["check", "Definition 6", "--input", str(perm_dir / "L.json"),
                                            "--out", str(out)])
        assert code == 2 and "ro" in err and "Permission denied" in err and one_line(err)
        assert stdout == ""  # refused before the claim was evaluated
    assert list((perm_dir / "ro").iterdir()) == []


def test_unwritable_out_heads_before_work(perm_dir):
    # the certification would print "<k> heads in <t> s" on stderr; it must not have started
    code, out, err = run_restricted(["heads", "--layers", "0", "--out", str(perm_dir / "ro" / "m")])
    assert code == 2 and "Permission denied" in err and one_line(err) and "heads in" not in err and out == ""


@pytest.mark.parametrize("cmd", [
    ["audit", "--no-model", "--out", "{ro}"],
    ["search", "profile_scale", "--budget", "5", "--out", "{ro}/s"],
    ["probes", "rank_balance", "--budget", "5", "--out", "{ro}/p"],
])
def test_unwritable_out_before_work(perm_dir, cmd):
    code, out, err = run_restricted([a.format(ro=perm_dir / "ro") for a in cmd])
    assert code == 2 and "Permission denied" in err and one_line(err)
    assert out == ""  # no table, no search summary: nothing ran
    assert list((perm_dir / "ro").iterdir()) == []


def test_out_is_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(QKInputError, match="not a directory"):
        probe_output_dir(tmp_path / "f" / "sub")
    r = subprocess.run([sys.executable, "-m", "qkverify", "audit", "--no-model", "--out", str(tmp_path / "f")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and one_line(r.stderr) and r.stdout == ""


def test_probe_creates_nothing(tmp_path):
    probe_output_dir(tmp_path / "a" / "b")
    assert list(tmp_path.iterdir()) == []


# ---- temporaries ---------------------------------------------------------------------------

def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _plant(d: Path, name: str, age: float = 3600.0) -> Path:
    f = d / name
    f.write_bytes(b"partial")
    t = outputs.PROCESS_START - age
    os.utime(f, (t, t))
    return f


def test_temp_names_follow_the_pattern(tmp_path):
    m = TEMP_PATTERN.match(temp_path(tmp_path / "L00H00.json").name)
    assert m and m.group("target") == "L00H00.json" and int(m.group("pid")) == os.getpid()


def test_clean_stale_only(tmp_path):
    host, dead = outputs._host(), _dead_pid()
    stale = _plant(tmp_path, f".c.json.{host}.{dead}.0123456789ab.tmp")
    live = _plant(tmp_path, f".c.json.{host}.{os.getppid()}.0123456789ab.tmp")  # a live process
    mine = _plant(tmp_path, f".c.json.{host}.{os.getpid()}.0123456789ab.tmp")
    other_host = _plant(tmp_path, f".c.json.elsewhere-{host}x.{dead}.0123456789ab.tmp")
    fresh = _plant(tmp_path, f".d.json.{host}.{dead}.0123456789ab.tmp", age=-60)  # newer than this process
    foreign = [_plant(tmp_path, n) for n in (f".c.json.{host}.{dead}.tmp", "c.json.tmp", f"x.{host}.{dead}.0123456789ab.tmp",
                                             f".c.json.{host}.{dead}.0123456789AB.tmp", "notes.txt")]
    removed = clean_stale_temporaries(tmp_path, force_rescan=True)
    assert removed == [stale] and not stale.exists()
    for f in [live, mine, other_host, fresh, *foreign]:
        assert f.exists(), f


def test_write_cleans_stale_planted(tmp_path):
    (tmp_path / "L.json").write_text(MATRIX)
    out = tmp_path / "out"
    out.mkdir()
    stale = _plant(out, f".check_0.json.{outputs._host()}.{_dead_pid()}.0123456789ab.tmp")
    r = subprocess.run([sys.executable, "-m", "qkverify", "check", "Definition 6", "--input", str(tmp_path / "L.json"),
                        "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert not stale.exists()
    assert [p.name for p in out.iterdir()] == [p.name for p in out.glob("check_*.json")] and len(list(out.iterdir())) == 1


HANG = r"""
import os, sys, time
real = os.replace
def hang(src, dst):
    print("TMP", src, flush=True)
    time.sleep(600)
os.replace = hang
from qkverify.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _start_hanging_writer(args, cwd):
    """A real ``qkverify`` process that stops between writing its temporary and
    renaming it; returns (process, temporary path)."""
    p = subprocess.Popen([sys.executable, "-c", HANG, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=cwd)
    line = p.stdout.readline()
    if not line.startswith("TMP "):
        p.kill()
        pytest.fail(f"writer did not reach the rename: {line!r} {p.stderr.read()}")
    return p, Path(line.split(" ", 1)[1].strip())


def test_sigkill_leaves_temp_that_next_run_removes(tmp_path):
    (tmp_path / "L.json").write_text(MATRIX)
    out = tmp_path / "certs"
    args = ["check", "Definition 6", "--input", "L.json", "--out", str(out)]
    out.mkdir()
    p, tmp = _start_hanging_writer(args, tmp_path)
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert tmp.exists() and TEMP_PATTERN.match(tmp.name)  # SIGKILL runs no cleanup
    assert not list(out.glob("check_*.json"))
    r = subprocess.run([sys.executable, "-m", "qkverify", *args], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert not tmp.exists()
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in out.glob("check_*.json"))


def test_live_writer_temp_survives(tmp_path):
    # a concurrent writer (alive, between write and rename) keeps its temporary
    (tmp_path / "A.json").write_text(MATRIX)
    (tmp_path / "B.json").write_text("[[1,2],[3,4]]")
    out = tmp_path / "certs"
    out.mkdir()
    p, tmp = _start_hanging_writer(["check", "Definition 6", "--input", "A.json", "--out", str(out)], tmp_path)
    try:
        r = subprocess.run([sys.executable, "-m", "qkverify", "check", "Definition 6", "--input", "B.json",
                            "--out", str(out)], capture_output=True, text=True, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert tmp.exists()
    finally:
        p.kill()
        p.wait()
