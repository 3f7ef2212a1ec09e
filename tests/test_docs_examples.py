"""The README's examples run as a newcomer runs them (issues 14 and 19): every
``qkverify …`` line of the README's shell blocks is run, in order, from the root
of a fresh clone of this repository (``git clone`` into a temporary folder, the
same commit), and must exit with the status its comment states ("(exit N)",
else 0).  Afterwards the clone is unchanged (``git status --porcelain`` is
empty: every output went under ``./qkverify-out/``, which is ignored, never into
the shipped ``certificates/``) and ``qkverify lean-audit`` still exits 0.  The
shipped example inputs are each used by some example; the docs cite only files
inside the repository and no machine paths."""

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: README lines that run a real model or re-check every shipped certificate: the slow test runs them
SLOW = ("qkverify heads", "qkverify audit", "qkverify regimes --layers", "qkverify rope smollm2",
        "qkverify verify 'certificates")


def readme_commands(readme: Path = README) -> list[tuple[list[str], int, str]]:
    """(argv, expected exit status, line) for every ``qkverify`` line in a
    ```sh block of the README."""
    text = readme.read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            line = line.strip()
            if not line.startswith("qkverify "):
                continue
            cmd, _, comment = line.partition("#")
            assert cmd.endswith("  ") or not comment, f"README: put two spaces before the comment: {line}"
            m = re.search(r"\(exit (\d+)\)", comment)
            out.append((shlex.split(cmd), int(m.group(1)) if m else 0, line))
    return out


#: commands whose text report is not yet within 100 columns
WIDE: tuple[str, ...] = ()


def _fits(line: str) -> bool:
    """Within 100 columns, or a single token (a file path, kept whole so that it can be copied)."""
    return len(line) <= 100 or len(line.split()) == 1


def _git(*args, cwd):
    return subprocess.run(["git", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """A fresh clone of this repository at its current commit (what a newcomer has)."""
    head = _git("rev-parse", "HEAD", cwd=ROOT)
    if head.returncode != 0 or not shutil.which("git"):
        pytest.skip("not a git checkout")
    d = tmp_path_factory.mktemp("fresh") / "qkverify"
    r = _git("clone", "-q", "--no-hardlinks", str(ROOT), str(d), cwd=ROOT)
    assert r.returncode == 0, r.stderr
    r = _git("checkout", "-q", head.stdout.strip(), cwd=d)
    assert r.returncode == 0, r.stderr
    assert _git("status", "--porcelain", cwd=d).stdout == ""
    return d


def _run(argv, cwd, timeout=900):
    # the clone's own package is imported (python -m from its root); caches stay outside the clone
    env = dict(os.environ, MPLCONFIGDIR=str(Path(cwd).parent / ".mpl"), PYTHONPATH=str(cwd))
    return subprocess.run([sys.executable, "-m", "qkverify", *argv[1:]], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=timeout)


def test_readme_has_examples():
    cmds = readme_commands()
    assert len(cmds) >= 15
    names = {argv[1] for argv, _, _ in cmds}
    for sub in ("profile", "signature", "claims", "check", "verify", "search", "probes", "baselines",
                "lean-audit", "heads", "audit"):
        assert sub in names, sub


def test_readme_examples_run(clone, capsys):
    """The fast examples, in order, from the clone's root; then the tree is clean and
    lean-audit (on the shipped certificates) exits 0."""
    times = []
    for argv, code, line in readme_commands(clone / "README.md"):
        if line.startswith(SLOW):
            continue
        t0 = time.perf_counter()
        r = _run(argv, clone)
        times.append((time.perf_counter() - t0, line))
        assert r.returncode == code, f"{line}\nexit {r.returncode}\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}"
        assert "Traceback" not in r.stderr
        if "--json" in argv:
            import json

            json.loads(r.stdout)  # one JSON document
        elif argv[1] not in WIDE:  # the terminal stays within 100 columns (JSON is for programs)
            assert all(_fits(x) for x in r.stdout.splitlines()), f"{line}: a line over 100 columns"
    status = _git("status", "--porcelain", "--untracked-files=all", cwd=clone).stdout
    assert status == "", f"the README's examples changed the tree:\n{status[:2000]}"
    assert (clone / "qkverify-out").is_dir()
    fast = [line for _, _, line in readme_commands(clone / "README.md") if not line.startswith(SLOW)]
    if not fast[-1].startswith("qkverify lean-audit "):  # else it ran last above and exited 0
        r = _run(["qkverify", "lean-audit"], clone)
        assert r.returncode == 0, r.stdout[-2000:]
    with capsys.disabled():  # the figure the issue asks for, measured (not asserted)
        print(f"\nREADME examples: {len(times)} fast lines in {sum(t for t, _ in times):.0f} s wall; slowest: "
              + "; ".join(f"{t:.0f} s {line.split('#')[0].strip()}" for t, line in sorted(times)[-3:]))


@pytest.mark.slow
def test_readme_model_examples_run(clone):
    """``heads``, ``regimes``, ``rope`` and ``audit`` on the real models and the full
    ``verify``, as the README runs them, from the clone's root: the tree stays clean,
    every file written is under ./qkverify-out/ (so lean-audit's verdict is unchanged)."""
    for argv, code, line in readme_commands(clone / "README.md"):
        if not line.startswith(SLOW):
            continue
        r = _run(argv, clone, timeout=1800)
        assert r.returncode == code, f"{line}\nexit {r.returncode}\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}"
        if "--json" not in argv and argv[1] not in WIDE:
            assert all(_fits(x) for x in r.stdout.splitlines()), line
    assert _git("status", "--porcelain", "--untracked-files=all", cwd=clone).stdout == ""
    out = clone / "qkverify-out" / "audit"
    heads = {p.name for p in (out / "heads" / "all-MiniLM-L6-v2").iterdir()}
    assert {"heads.csv", "heads.json", "heads.png", "L00H00.json", "L05H11.json"} <= heads
    # what `make audit` meets on a fresh clone: every certificate the audit writes is the shipped
    # one, byte for byte (stale shipped certificates made it refuse to overwrite, exit 2)
    differ = [str(p) for p in out.rglob("*.json") if p.relative_to(out).parts[0] not in ("heads", "audit.json")
              and (clone / "certificates" / p.relative_to(out)).is_file()
              and p.read_bytes() != (clone / "certificates" / p.relative_to(out)).read_bytes()]
    assert differ == [], differ[:5]
    # lean-audit reads the shipped set through the package's manifest: with the tree clean (above)
    # it is the audit test_readme_examples_run ran and saw exit 0, so it is not run a second time


def test_every_example_file_is_used_and_exists():
    text = README.read_text(encoding="utf-8")
    used = set(re.findall(r"examples/([A-Za-z0-9_.-]+)", " ".join(line for _, _, line in readme_commands())))
    shipped = {p.name for p in (ROOT / "examples").iterdir()}
    assert shipped - used == set(), f"shipped but not used by a README example: {shipped - used}"
    assert used <= shipped
    # every file the README's example table names is shipped
    assert set(re.findall(r"\| `([A-Za-z0-9_]+\.json)` \|", text)) == shipped


def test_example_inputs_are_what_the_table_says():
    # independent of the producer: the head's factors are 2 x 5, U is orthogonal, S symmetric
    import json
    from fractions import Fraction

    head = json.loads((ROOT / "examples" / "head.json").read_text())
    assert len(head["W_Q"]) == len(head["W_K"]) == 2 and all(len(r) == 5 for r in head["W_Q"] + head["W_K"])
    o = json.loads((ROOT / "examples" / "orthogonal.json").read_text())
    U = [[Fraction(x) for x in row] for row in o["U"]]
    n = len(U)
    assert all(sum(U[k][i] * U[k][j] for k in range(n)) == (i == j) for i in range(n) for j in range(n))
    S = json.loads((ROOT / "examples" / "S.json").read_text())["S"]
    assert all(S[i][j] == S[j][i] for i in range(3) for j in range(3))


DOCS = ["README.md", "TRUST.md", "CONTRIBUTING.md", "docs/MATH.md", "docs/CERTIFICATES.md"]


@pytest.mark.parametrize("name", DOCS)
def test_docs_cite_only_files_in_the_repository(name):
    text = (ROOT / name).read_text(encoding="utf-8")
    assert "/work/" not in text and "/home/" not in text and "/root/" not in text
    # the reference notes the project started from are not shipped: cite docs/MATH.md instead
    for outside in ("SPEC.md", "CLUSTERS.md", "HELPERS.md", "seeds/"):
        assert outside not in text, f"{name} cites {outside}, which is not in the repository"
    # every repository path written in backquotes exists
    for path in re.findall(r"`((?:qkverify|docs|tests|bench|examples|lean_map)/[A-Za-z0-9_./*-]*)`", text):
        if "*" in path or "<" in path:
            continue
        assert (ROOT / path).exists(), f"{name} cites {path}, which does not exist"


def test_lean_map_cites_only_files_in_the_repository():
    # issue 14, Found 10: lean_map's sources named SPEC.md / CLUSTERS.md, which are not shipped
    for p in sorted((ROOT / "lean_map").glob("*.toml")):
        text = p.read_text(encoding="utf-8")
        for outside in ("SPEC.md", "CLUSTERS.md", "seeds/"):
            assert outside not in text, f"{p.name} cites {outside}, which is not in the repository"


def test_no_machine_paths_in_the_repository():
    tracked = subprocess.run(["git", "ls-files"], capture_output=True, text=True, cwd=ROOT).stdout.split()
    if not tracked:
        pytest.skip("not a git checkout")
    bad = []
    for f in tracked:
        p = ROOT / f
        if not p.is_file() or p.suffix not in (".py", ".md", ".toml", ".txt", ".cfg", ".ini", ".sh", "") \
                or f.startswith("certificates/"):
            continue
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if re.search(r"(?<![\w.])/work/", text) and f != "tests/test_docs_examples.py":
            bad.append(f)
    assert bad == [], bad


def test_tracked_file_names_are_portable():
    # probe certificates were once named after Greek Lean binders (…__hρ.json); names are ASCII now
    tracked = subprocess.run(["git", "ls-files", "-z"], capture_output=True, cwd=ROOT).stdout.split(b"\0")
    if not any(tracked):
        pytest.skip("not a git checkout")
    bad = [f.decode("utf-8", "replace") for f in tracked if f and (not f.isascii() or b"'" in f or b" " in f)]
    assert bad == [], bad[:5]
