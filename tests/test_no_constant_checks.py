"""No check that cannot fail (issue 9, item 2).

For every registered declaration check (the producer, ``qkverify.claims``) and
every entry of the kernel's table (``qkverify/kernel/rules``), take inputs of
the audit suite (``audit/suite.py`` ``cases2()``) on which it is evaluated and
inject faults into what it computes: each function it calls (found by
tracing one run) gets its return value replaced by a wrong one -- on the
first call only, then on every call (a rational + 1, a boolean negated, a
matrix with one entry changed, a list / tuple / dataclass with its first such
field changed, ...).  A check whose verdict is the same on the input and
under every fault tried compares nothing that can go wrong: it is reported by
name.  Checks that cannot be made to change are listed in ``EXPECTED`` with
the reason; a constant check would be one with no fault to inject at all, and
there is none.

The harness is generic over the registry, ``lean_map`` and the kernel table:
a new section's checks are tested without edits here.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import re
import sys
import types
from typing import Any, Callable

import pytest
from flint import arb, fmpq, fmpq_mat, fmpq_mpoly, fmpq_poly, fmpz, fmpz_mat, fmpz_mpoly, fmpz_poly

from qkverify.audit.suite import cases2
from qkverify.claims import metadata
from qkverify.claims.evaluate import evaluate
from qkverify.claims.registry import Subject, declaration_check_fn, registered_check_ids
from qkverify.errors import QKInputError

#: checks whose verdict no fault changes, with the reason (none may be a constant); empty since
#: statO/statE_eq_tsum_*_moments got their exact closed-form route (issue 23)
EXPECTED: dict[str, str] = {}

#: at most this many suite inputs per check, and this many fault runs per (check, input)
INPUTS_PER_CHECK = 2
MAX_RUNS = 400

NOPE = object()
_RATIONAL = re.compile(r"-?[0-9]+(/[0-9]+)?")


# ---------------------------------------------------------------------------
# wrong values


def perturb(x: Any, every: bool = False, depth: int = 0) -> Any:
    """A wrong value of the same type as x, or NOPE when none is made here: the first number
    inside x plus one (``every`` False), or every number inside x replaced by −x − 1 (``every``
    True: signs and all the entries of a tuple or a profile go wrong at once); booleans negated."""
    if depth > 3:
        return NOPE
    if isinstance(x, bool):
        return not x
    if isinstance(x, (int, fmpz, fmpq, arb, fmpz_poly, fmpq_poly)):
        return -x - 1 if every else x + 1
    if isinstance(x, (fmpq_mpoly, fmpz_mpoly)):  # a multivariate polynomial: plus its first variable
        g = x.context().gens()[0] if x.context().nvars() else 1
        return -x - g if every else x + g
    if isinstance(x, str) and _RATIONAL.fullmatch(x):  # an exact rational carried as text ("-3/4")
        q = fmpq(*map(int, x.split("/")))
        q = -q - 1 if every else q + 1
        return str(q.p) if q.q == 1 else f"{q.p}/{q.q}"
    if isinstance(x, (fmpq_mat, fmpz_mat)):
        if x.nrows() == 0 or x.ncols() == 0:
            return NOPE
        if every:
            return -x - type(x)(x.nrows(), x.ncols(), [1] * (x.nrows() * x.ncols()))
        y = type(x)(x)
        y[0, 0] += 1
        return y
    if isinstance(x, (list, tuple)):
        new, hit = list(x), False
        for i, e in enumerate(x):
            p = perturb(e, every, depth + 1)
            if p is not NOPE:
                new[i], hit = p, True
                if not every:
                    break
        if not hit:
            return NOPE
        if isinstance(x, list):
            return new
        return type(x)(*new) if hasattr(x, "_fields") else tuple(new)
    if isinstance(x, dict):
        out, hit = dict(x), False
        for k, v in x.items():
            p = perturb(v, every, depth + 1)
            if p is not NOPE:
                out[k], hit = p, True
                if not every:
                    break
        return out if hit else NOPE
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        items = [(f.name, getattr(x, f.name)) for f in dataclasses.fields(x)]
    elif getattr(type(x), "__slots__", None) and not hasattr(x, "__dict__"):  # e.g. Quad (a + b√s)
        slots = type(x).__slots__
        items = [(k, getattr(x, k)) for k in ((slots,) if isinstance(slots, str) else slots) if hasattr(x, k)]
    elif hasattr(x, "__dict__") and not isinstance(x, (type, types.ModuleType, types.FunctionType)):
        items = list(vars(x).items())
    else:
        return NOPE
    y, hit = copy.copy(x), False
    for k, v in items:
        p = perturb(v, every, depth + 1)
        if p is NOPE:
            continue
        try:
            object.__setattr__(y, k, p)
        except (AttributeError, TypeError):
            continue
        hit = True
        if not every:
            break
    return y if hit else NOPE


# ---------------------------------------------------------------------------
# where each function can be replaced


def _code_of(obj) -> types.CodeType | None:
    obj = getattr(obj, "__wrapped__", obj)
    return getattr(obj, "__code__", None)


@functools.lru_cache(maxsize=None)
def _sites(prefixes: tuple[str, ...]) -> dict[types.CodeType, list[tuple[Any, str, str]]]:
    """code object -> [(owner, attribute, how)] for every function of the modules under
    ``prefixes``, module level or in a class (method, staticmethod, classmethod, property)."""
    out: dict[types.CodeType, list] = {}
    for name, mod in list(sys.modules.items()):
        if mod is None or not name.startswith(prefixes):
            continue
        for attr, obj in list(vars(mod).items()):
            c = _code_of(obj) if callable(obj) and not isinstance(obj, type) else None
            if c is not None:
                out.setdefault(c, []).append((mod, attr, "function"))
            if isinstance(obj, type) and obj.__module__.startswith(prefixes):
                for a, o in list(vars(obj).items()):
                    if isinstance(o, staticmethod):
                        how, c = "staticmethod", _code_of(o.__func__)
                    elif isinstance(o, classmethod):
                        how, c = "classmethod", _code_of(o.__func__)
                    elif isinstance(o, property) and o.fget is not None:
                        how, c = "property", _code_of(o.fget)
                    elif isinstance(o, types.FunctionType):
                        how, c = "function", _code_of(o)
                    else:
                        continue
                    if c is not None:
                        out.setdefault(c, []).append((obj, a, how))
    return out


def _callees(run: Callable[[], Any], prefixes: tuple[str, ...], skip: set) -> list[types.CodeType]:
    """Code objects of the patchable functions called during ``run()``, in first-call order."""
    sites = _sites(prefixes)
    seen: dict[types.CodeType, None] = {}

    def prof(frame, event, arg):
        if event == "call" and frame.f_code in sites and frame.f_code not in skip:
            seen.setdefault(frame.f_code, None)

    sys.setprofile(prof)
    try:
        run()
    except Exception:  # noqa: BLE001 - the baseline is re-run below
        pass
    finally:
        sys.setprofile(None)
    return list(seen)


class _Timeout(Exception):
    pass


def _counting(fn: Callable[[], Any], limit: int | None = None) -> tuple[Any, int]:
    """(fn(), the number of Python and C function calls it made); raises _Timeout once
    ``limit`` calls are exceeded (a fault can send a refinement loop on forever).  A budget
    of calls, not of seconds: the verdict is the same on a loaded machine and an idle one."""
    count = 0

    def prof(frame, event, arg):
        nonlocal count
        if event == "call" or event == "c_call":
            count += 1
            if limit is not None and count > limit:
                raise _Timeout()

    old = sys.getprofile()
    sys.setprofile(prof)
    try:
        return fn(), count
    finally:
        sys.setprofile(old)


def _limited(fn: Callable[[], Any], calls: int) -> Any:
    """fn() or _Timeout after ``calls`` function calls."""
    return _counting(fn, calls)[0]


class _Patch:
    """Replace every site of one code object by a wrapper returning a wrong value: on the first
    call (its first number + 1), or on every call (every number x as −x − 1)."""

    def __init__(self, sites: list, every: bool):
        self.sites, self.every, self.saved = sites, every, []
        self.calls = 0
        self.hit = False

    def _wrap(self, fn):
        patch = self

        def wrapper(*a, **k):
            r = fn(*a, **k)
            patch.calls += 1
            if patch.every or patch.calls == 1:
                p = perturb(r, patch.every)
                if p is not NOPE:
                    patch.hit = True
                    return p
            return r

        return wrapper

    def __enter__(self):
        for owner, attr, how in self.sites:
            orig = owner.__dict__[attr] if isinstance(owner, type) else getattr(owner, attr)
            self.saved.append((owner, attr, orig))
            if how == "staticmethod":
                new = staticmethod(self._wrap(orig.__func__))
            elif how == "classmethod":
                new = classmethod(self._wrap(orig.__func__))
            elif how == "property":
                new = property(self._wrap(orig.fget), orig.fset, orig.fdel)
            else:
                new = self._wrap(orig)
            setattr(owner, attr, new)
        return self

    def __exit__(self, *exc):
        for owner, attr, orig in reversed(self.saved):
            setattr(owner, attr, orig)


def sensitive(produce: Callable[[], Any], judge: Callable[[Any], Any], prefixes: tuple[str, ...],
              skip: set) -> tuple[bool, int, str]:
    """(changed, faults tried, how): does some injected fault change ``judge(produce())``?
    ``produce`` runs with the fault, ``judge`` without."""
    raw0, calls = _counting(produce)
    base = judge(raw0)
    limit = max(100_000, 20 * calls)  # a faulted run may make 20 times the calls of the clean one
    tried = 0
    sites = _sites(prefixes)
    for code in _callees(produce, prefixes, skip):
        for every in (False, True):
            if tried >= MAX_RUNS:
                return False, tried, "run limit"
            with _Patch(sites[code], every) as p:
                try:
                    raw = _limited(produce, limit)
                except (Exception, _Timeout):  # noqa: BLE001 - a crash or a hang under a fault is not a verdict
                    raw = NOPE
            if not p.hit:
                break  # nothing to perturb in what it returns
            tried += 1
            if raw is NOPE:
                continue
            try:
                got = judge(raw)
            except Exception:  # noqa: BLE001
                continue
            if got != base:
                return True, tried, f"{code.co_name} ({'every call' if every else 'first call'}): {base} -> {got}"
    return False, tried, "no fault changed it"


# ---------------------------------------------------------------------------
# the producer's checks


PRODUCER = ("qkverify.claims", "qkverify.exact", "qkverify.math", "qkverify.io")


def _statement_of(check: str) -> str:
    for st in metadata.load().values():
        for d in st.decls:
            if d.check == check:
                return st.id
    raise KeyError(check)


@functools.lru_cache(maxsize=None)
def _suite_runs(check: str) -> list[tuple[str, Any, tuple]]:
    """Suite inputs on which ``check`` is evaluated: (case, input, dropped binders), hypotheses
    true first; with them dropped when no input satisfies them."""
    sid = _statement_of(check)
    kinds = declaration_check_fn(check).kinds
    binders = tuple(h.binder for h in metadata.declaration(check).hypotheses)
    out = []
    for drop in ((), binders):
        for name, inp in cases2():
            if len(out) >= INPUTS_PER_CHECK:
                return out
            if getattr(inp, "kind2", None) not in kinds:
                continue
            try:
                run = evaluate(sid, inp, drop=drop, only=(check,))
            except QKInputError:
                continue
            if run.records and run.records[0].conclusion != "undecided":
                out.append((name, inp, drop))
        if out:
            return out
    return out


def _producer_report(check: str) -> tuple[bool, str]:
    fn = declaration_check_fn(check).fn
    runs = _suite_runs(check)
    if not runs:
        return False, "no suite input evaluates it"
    how = []
    for name, inp, _ in runs:
        ok, tried, why = sensitive(lambda: fn(Subject(inp)), lambda r: r.conclusion, PRODUCER,
                                   {fn.__code__})
        if ok:
            return True, f"{name}: {why}"
        how.append(f"{name}: {tried} faults, {why}")
    return False, "; ".join(how)


@pytest.mark.parametrize("check", sorted(registered_check_ids()))
def test_producer_check_can_fail(check):
    ok, why = _producer_report(check)
    if check in EXPECTED:
        assert not ok, f"{check} is listed in EXPECTED but a fault changed it: {why}"
        return
    assert ok, f"producer check {check} returns the same verdict under every fault tried: {why}"


# ---------------------------------------------------------------------------
# the kernel's table


KERNEL = ("qkverify.kernel",)


@dataclasses.dataclass(frozen=True)
class Rejected:
    """The kernel found the certificate invalid while evaluating the entry (a witness disagrees)."""

    check: str


@functools.lru_cache(maxsize=1)
def _certificates_by_declaration() -> dict[str, list[tuple[str, dict, dict]]]:
    """Full Lean name -> [(case, certificate, record)] from the producer on the suite (certificates
    the kernel finds valid), at most INPUTS_PER_CHECK each."""
    from qkverify.kernel import verify_document

    ids = registered_check_ids()
    out: dict[str, list] = {}
    for st in metadata.load().values():
        kinds = {k for d in st.decls if d.check in ids for k in declaration_check_fn(d.check).kinds}
        if not kinds:
            continue
        for name, inp in cases2():
            if getattr(inp, "kind2", None) not in kinds:
                continue
            try:
                cert = evaluate(st.id, inp).certificate()
            except QKInputError:
                continue
            if verify_document(cert).status != "valid":
                continue
            for rec in cert["declarations"]:
                if rec["conclusion"] != "undecided" and len(out.setdefault(rec["name"], [])) < INPUTS_PER_CHECK:
                    out[rec["name"]].append((name, cert, rec))
    return out


def _kernel_report(name: str) -> tuple[bool, str]:
    from qkverify.kernel.check import compare_value
    from qkverify.kernel.derive import Ctx
    from qkverify.kernel.jsonio import Invalid, Undecided
    from qkverify.kernel.table import TABLE

    e = TABLE[name]
    runs = _certificates_by_declaration().get(name, [])
    if not runs:
        return False, "no suite certificate evaluates it"
    how = []
    for case, cert, rec in runs:
        def judge(raw, cert=cert, rec=rec):
            if isinstance(raw, Rejected):
                return f"invalid ({raw.check})"
            if not e.is_def:
                return bool(raw)
            try:
                compare_value(raw, rec["value"], Ctx(cert, None, []), "value")
                return "agrees"
            except Invalid as err:
                return f"disagrees ({err.why[:60]})"
            except Undecided:
                return "undecided"

        def produce(cert=cert):
            try:
                return e.fn(Ctx(cert, None, []))
            except Invalid as err:  # the kernel rejects the certificate: a verdict too
                return Rejected(err.check)

        code = getattr(e.fn, "__code__", None)
        ok, tried, why = sensitive(produce, judge, KERNEL, {code} if code else set())
        if ok:
            return True, f"{case}: {why}"
        how.append(f"{case}: {tried} faults, {why}")
    return False, "; ".join(how)


def _kernel_names() -> list[str]:
    from qkverify.kernel.table import TABLE

    return sorted(TABLE)


@pytest.mark.parametrize("name", _kernel_names())
def test_kernel_entry_can_fail(name):
    ok, why = _kernel_report(name)
    key = f"kernel:{name}"
    if key in EXPECTED:
        assert not ok, f"{key} is listed in EXPECTED but a fault changed it: {why}"
        return
    assert ok, f"kernel entry {name} gives the same verdict under every fault tried: {why}"


# ---------------------------------------------------------------------------
# the harness itself finds constant and self-comparing checks


def test_a_constant_or_self_comparing_check_is_reported(monkeypatch):
    from qkverify.claims import registry
    from qkverify.claims.registry import DeclResult
    from qkverify.exact.matrix import frob_sq, sym_part
    from qkverify.kernel.table import TABLE

    chk = registry._DECL_CHECKS["frobSq_symPart"]
    assert _producer_report("frobSq_symPart")[0]
    monkeypatch.setitem(registry._DECL_CHECKS, "frobSq_symPart",
                        dataclasses.replace(chk, fn=lambda s: DeclResult(True)))
    ok, why = _producer_report("frobSq_symPart")
    assert not ok and "0 faults" in why

    def restating(s):  # one computation compared with itself
        x = frob_sq(sym_part(s.inp.L))
        return DeclResult(x == x)

    monkeypatch.setitem(registry._DECL_CHECKS, "frobSq_symPart", dataclasses.replace(chk, fn=restating))
    ok, why = _producer_report("frobSq_symPart")
    assert not ok and "no fault changed it" in why
    name = "Appendices.frobSq_symPart"
    assert _kernel_report(name)[0]
    monkeypatch.setitem(TABLE, name, dataclasses.replace(TABLE[name], fn=lambda q: True))
    assert not _kernel_report(name)[0]
