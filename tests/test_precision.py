"""Arb precision is set through a context manager, never by assigning the global.

python-flint's working precision (``flint.ctx.prec``) is process-global.  The library sets
it only through python-flint's own ``ctx.workprec(bits)`` (the kernel through its one-line
``kernel.algebra.precision``, which returns ``ctx.workprec``), so every block states its
precision explicitly and the previous precision comes back on exit, exceptions included.
"""

from __future__ import annotations

import doctest
import io
import tokenize
from pathlib import Path

import pytest
from flint import arb, ctx

import qkverify
from qkverify.kernel import algebra

PACKAGE = Path(qkverify.__file__).resolve().parent

#: the global precision attributes of python-flint's ``ctx`` and mpmath's ``mp``
GLOBALS = {("ctx", "prec"), ("ctx", "dps"), ("mp", "prec"), ("mp", "dps")}


class _Boom(Exception):
    pass


@pytest.mark.parametrize("enter", [ctx.workprec, algebra.precision], ids=["ctx.workprec", "kernel.precision"])
def test_precision_restored_after_exception(enter):
    before = ctx.prec
    with pytest.raises(_Boom):
        with enter(before + 150):
            assert ctx.prec == before + 150
            raise _Boom
    assert ctx.prec == before


@pytest.mark.parametrize("enter", [ctx.workprec, algebra.precision], ids=["ctx.workprec", "kernel.precision"])
def test_precision_nested_and_effective(enter):
    before = ctx.prec
    with enter(20):
        # 1/3 at 20 bits: the ball's radius is about 2^-21, far wider than at 200 bits
        coarse = arb(1) / 3
        with enter(200):
            assert ctx.prec == 200
            fine = arb(1) / 3
        assert ctx.prec == 20
    assert ctx.prec == before
    assert coarse.rad() > arb(2) ** -30
    assert fine.rad() < arb(2) ** -190
    assert coarse.overlaps(fine)


def test_precision_restored_after_return_from_inside():
    before = ctx.prec

    def inner():
        with ctx.workprec(300):
            return ctx.prec

    assert inner() == 300
    assert ctx.prec == before


def test_kernel_precision_doctest():
    result = doctest.testmod(algebra, verbose=False)
    assert result.attempted >= 1 and result.failed == 0


def _global_precision_assignments(path: Path, root: Path) -> list[str]:
    """``NAME.ATTR = …`` (also augmented) for (NAME, ATTR) in GLOBALS, found in the token
    stream so that docstrings and comments do not count."""
    toks = [t for t in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
            if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)]
    hits = []
    for a, dot, b, op in zip(toks, toks[1:], toks[2:], toks[3:]):
        if (a.type == tokenize.NAME and dot.string == "." and b.type == tokenize.NAME
                and (a.string, b.string) in GLOBALS and op.type == tokenize.OP
                and op.string.endswith("=") and op.string not in ("==", "<=", ">=", "!=")):
            hits.append(f"{path.relative_to(root)}:{a.start[0]}: {a.string}.{b.string} {op.string}")
    return hits


def test_scanner_finds_assignments(tmp_path):
    # the scanner itself: assignments found, comparisons, reads and strings ignored
    f = tmp_path / "m.py"
    f.write_text('old = ctx.prec\nctx.prec = 100\nmpmath.mp.dps = 50\nmp.prec += 3\n'
                 'if ctx.prec == 53:\n    pass\n"""ctx.prec = 7"""\n# ctx.prec = 8\n', encoding="utf-8")
    hits = _global_precision_assignments(f, tmp_path)
    assert [h.split(":")[1] for h in hits] == ["2", "3", "4"]


def test_no_module_assigns_global_precision():
    # stricter than "outside exact/ and kernel/": no module of the package assigns it
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 50
    hits = [h for f in files for h in _global_precision_assignments(f, PACKAGE.parent)]
    assert hits == [], "assign the precision through ctx.workprec(bits) / mpmath.workprec:\n" + "\n".join(hits)
