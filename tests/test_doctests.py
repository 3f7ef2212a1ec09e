"""The doctests of every module of the package run in the suite (issue 23 item 6).

Every module under ``qkverify/`` is collected (``pkgutil.walk_packages``; only
``qkverify.__main__``, which runs the CLI when imported, is left out) and its
doctests run with the standard ``doctest`` runner: a docstring example that no
longer matches what the code does fails here, naming the module and example."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import qkverify

#: modules that must not be imported for their doctests
SKIP = {"qkverify.__main__"}


def _modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(qkverify.__path__, "qkverify.") if m.name not in SKIP)


MODULES = _modules()


def test_every_module_is_collected():
    assert len(MODULES) > 100
    for name in ("qkverify.kernel.algebra", "qkverify.io.text", "qkverify.claims.metadata",
                 "qkverify.audit.lean_audit", "qkverify.exact.intervals", "qkverify.kernel.rules.profile"):
        assert name in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    for test in doctest.DocTestFinder(exclude_empty=True).find(module, name):
        runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


def test_a_broken_example_fails(tmp_path, monkeypatch):
    """The runner above really fails on a wrong example (not a vacuous pass)."""
    (tmp_path / "qk_doctest_probe.py").write_text('def f():\n    """\n    >>> 1 + 1\n    3\n    """\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(AssertionError, match=r"Expected:\s+3\s+Got:\s+2"):
        test_doctests("qk_doctest_probe")
