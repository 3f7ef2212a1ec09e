"""The kernel's loop, as a proof checker's: read (strict JSON, the schema), the
well-formedness pass (the Lean types of the input), the first pass over every witness
(one checker per kind, typed facts out), then for each declaration record decide its
hypotheses and conclusion from the facts and compare; every witness must be used; the
verdict and evidence are re-derived (certificate format 3, docs/CERTIFICATES.md)."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flint import arb, fmpq, fmpq_mat

from . import limits
from .algebra import Box, arb_inside, cmp, is_root, isolates, precision
from .algebra import Coord
from .derive import PREC, Ctx
from .jsonio import Invalid, NotEvaluable, Undecided, Unreadable, check_schema, dec, poly, rat, ratmat, read, require
from . import rules  # noqa: F401  (registers the table's entries)
from .table import PREDICATES, TABLE
from .wellformed import basis

FORMAT = "qkverify-certificate/3"
#: the ``check`` of an outcome the kernel could not finish because of its own defect (reported
#: invalid -- strict -- never raised; tests treat it as a failure of the kernel)
INTERNAL = "kernel error"
EXIT = {"valid": 0, "invalid": 1, "not checkable": 1, "undecided": 3, "unreadable": 2}
#: a certificate's verdict is the weakest of its records' conclusions (a definition's
#: ``computed`` counts as ``holds``)
PRECEDENCE = ("fails", "undecided", "inconsistent", "consistent", "holds")
LEVELS = ("exact", "certified", "empirical")


def verdict_of(conclusions: list[str]) -> str:
    """fails > undecided > inconsistent > consistent > holds; definitions only: holds.

    >>> verdict_of(["computed", "consistent", "holds"]), verdict_of(["computed"]), verdict_of(["inconsistent", "undecided"])
    ('consistent', 'holds', 'undecided')
    """
    cs = ["holds" if c == "computed" else c for c in conclusions]
    return next((v for v in PRECEDENCE if v in cs), "holds")


@dataclass
class Outcome:
    """Result of checking one file: ``status`` is valid / invalid / undecided /
    not a certificate / not checkable / unreadable; ``check`` and ``reason`` say why."""

    path: str
    status: str
    check: str = ""
    reason: str = ""
    statement: str = ""
    verdict: str = ""
    declarations: list[str] = field(default_factory=list)


class NotCheckable(Exception):
    pass


def _short(name: str) -> str:
    for p in ("Appendices.MainText.", "Appendices."):
        if name.startswith(p):
            return name[len(p):]
    return name


# ---------------------------------------------------------------------------
# stated values of definitions


def _real_in(v: Any, lo: fmpq, hi: fmpq, q: Ctx) -> bool:
    """Whether the kernel's value v lies in [lo, hi]: exactly for a rational or a root; for a
    value the kernel knows only by an enclosure, True when its enclosure lies inside, False
    when it lies wholly outside (the statement is shown false), and undecided otherwise (the
    kernel cannot confirm the statement, nor refute it)."""
    if isinstance(v, (Coord, arb, Box)):
        q.certified = True
        if isinstance(v, Box):
            vlo, vhi = v.lo, v.hi
        elif isinstance(v, Coord) and v.bounds is not None:   # exact bounds (a weights head's cells)
            vlo, vhi = v.bounds
        else:
            b = v.ball if isinstance(v, Coord) else v
            if arb_inside(b, lo, hi):
                return True
            if bool(b < arb(lo)) or bool(b > arb(hi)):
                return False
            raise Undecided(f"the kernel's enclosure of the value meets [{lo}, {hi}] but does not lie inside it")
        if lo <= vlo and vhi <= hi:
            return True
        if vhi < lo or hi < vlo:
            return False
        raise Undecided(f"the kernel's enclosure of the value meets [{lo}, {hi}] but does not lie inside it")
    return cmp(v, lo) >= 0 and cmp(v, hi) <= 0


def compare_value(v: Any, s: dict, q: Ctx, where: str) -> None:
    """Invalid unless the stated value s (a value object of the schema) agrees with v."""
    (tag, x), = s.items()
    if tag == "list":
        require(isinstance(v, (list, tuple)) and len(v) == len(x), where, "list length differs")
        for i, (a, b) in enumerate(zip(v, x)):
            compare_value(a, b, q, f"{where}[{i}]")
        return
    if tag == "matrix":
        if x == []:   # a matrix with no rows or no columns
            require(isinstance(v, fmpq_mat) and (v.nrows() == 0 or v.ncols() == 0), where, "matrix differs")
            return
        require(isinstance(v, fmpq_mat) and v == ratmat(x), where, "matrix differs")
        return
    if tag == "bool":
        require(v is x, where, f"value is {v}, not {x}")
        return
    if tag == "ints":
        require(list(v) == x, where, f"value is {list(v)}, not {x}")
        return
    if isinstance(v, Coord) and v.exact is not None:
        v = v.exact
    if tag == "exact":
        require(isinstance(v, fmpq) and v == rat(x), where, f"the value is not exactly {x}")
    elif tag == "enclosure":
        lo, hi = dec(x[0]), dec(x[1])
        require(_real_in(v, lo, hi, q), where, f"the value lies outside [{x[0]}, {x[1]}]")
    elif tag == "root":  # "the root of poly in [lo, hi]": an isolation proof, then v is that root
        f, lo, hi = poly(x["poly"]), rat(x["lo"]), rat(x["hi"])
        limits.over("degrees", f.degree(), limits.MAX_DEGREE, "MAX_DEGREE")
        require(isolates(f, lo, hi), where, f"[{x['lo']}, {x['hi']}] does not isolate one root of the stated "
                "polynomial (a sign change and a root count of 1 are needed)")
        require(not isinstance(v, (Box, Coord)), where, "an exact root is stated for a value known only as an enclosure")
        require(cmp(v, lo) >= 0 and cmp(v, hi) <= 0, where, f"the value is not in [{x['lo']}, {x['hi']}]")
        require(is_root(f, v), where, "the value is not a root of the stated polynomial")


# ---------------------------------------------------------------------------


#: witness kinds whose fact stands on its own (checked in the first pass even when no
#: declaration used it): a spectrum, a rank, cells
STANDALONE = {"spectrum", "rank", "cells"}


def _decide(q: Ctx, i: int, d: dict, st: str, seen: list[str]) -> tuple[str, str]:
    """(conclusion, evidence) of record i, re-derived; Invalid when the record says otherwise."""
    where = f"declarations[{i}] ({_short(d['name'])})"
    e = TABLE.get(d["name"])
    if e is None:
        raise NotCheckable(f"the kernel has no table entry for {d['name']}")
    require(d["name"] not in seen, where, "declaration listed twice")
    seen.append(d["name"])
    require(e.statement == st, where, f"belongs to statement {e.statement}, not {st}")
    require(d["check"] == _short(d["name"]), where, "check id does not name the declaration")
    require(q.kind in e.kinds, where, f"not evaluated on a {q.kind} input")
    require(set(d["hypotheses"]) == {b for b, _ in e.binders}, where,
            f"hypotheses must be exactly the Lean binders {[b for b, _ in e.binders]}")
    dropped = d.get("dropped", [])
    require(set(dropped) <= set(d["hypotheses"]), where, "a dropped binder is not a hypothesis")
    stated = d["conclusion"]
    require((stated in ("computed", "undecided")) if e.is_def else stated != "computed", where,
            "a definition's conclusion is computed (or undecided), a theorem's never")
    q.certified = q.empirical = False
    q.sample = None
    try:
        for check_arg in e.args:  # the declaration's argument types on this input
            check_arg(q)
        resting = False  # on a hypothesis the certificate leaves undecided (and does not drop)
        for b, pid in e.binders:
            said = d["hypotheses"][b]
            if said is None:
                # the certificate leaves this hypothesis undecided (weaker than any value): a record
                # resting on it (not dropped) can only be undecided; a dropped one is evaluated anyway
                require(b in dropped or stated == "undecided", where,
                        f"hypothesis {b} is undecided and not dropped: the record cannot conclude {stated}")
                resting |= b not in dropped
                continue
            val = PREDICATES[pid](q)
            require(val == said, where, f"hypothesis {b} is {val}, the certificate says {said}")
            require(val or b in dropped, where, f"hypothesis {b} is false and not dropped")
        if resting:  # the conclusion is not evaluated (nor are its witnesses given)
            return "undecided", d["evidence"]
        if e.is_def:
            if "value" in d or stated != "undecided":
                require("value" in d, where, "a definition's record carries its value")
                with precision(PREC):
                    compare_value(e.fn(q), d["value"], q, where)
            concl = "computed"
        else:
            require("value" not in d, where, "a theorem's record carries no value")
            ok = e.fn(q)
            concl = ("consistent" if ok else "inconsistent") if q.empirical else ("holds" if ok else "fails")
    except NotEvaluable as err:  # a hypothesis, value or conclusion not stated for this input
        raise Invalid(where, f"cannot be evaluated on this input ({err})") from None
    except Undecided as err:
        if stated != "undecided":
            raise Undecided(f"{where}: {err}") from None
        concl = "undecided"
    level = LEVELS[2] if q.empirical else (LEVELS[1] if q.certified else LEVELS[0])
    if stated == "undecided":  # weaker than what the kernel shows: true, kept as stated
        return "undecided", d["evidence"]
    require(stated == concl, where, f"conclusion is {concl}, the certificate says {stated}")
    require(d["evidence"] == level, where, f"evidence is {level}, the certificate says {d['evidence']}")
    if level == "empirical":
        require(d.get("sample") == q.sample, where, f"the sample is {q.sample}, the certificate says {d.get('sample')}")
    else:
        require("sample" not in d, where, "only an empirical conclusion carries a sample")
    return concl, level


def _check(cert: dict, base_dir: Path | None, weights_dirs: list[str]) -> tuple[str, list[str]]:
    check_schema(cert)
    q = Ctx(cert, base_dir, weights_dirs)  # the well-formedness pass: the input's Lean types
    q.establish_all()  # the first pass: every witness through its checker
    basis(q)  # types that need a witness: a head's basis B is invertible
    concls, levels, names = [], [], []
    for i, d in enumerate(cert["declarations"]):
        c, lv = _decide(q, i, d, cert["statement"], names)
        concls.append(c)
        levels.append(lv)
    for key in sorted(set(q.witnesses) - q.used, key=str):  # checked in the first pass, but unused
        require(key[0] in STANDALONE, "witnesses", f"witness {key} is not used by any declaration")
    q.all_checked()  # a witness the first pass could not decide leaves the certificate undecided
    verdict = verdict_of(concls)
    require(cert["verdict"] == verdict, "verdict", f"the declarations give {verdict}, the certificate says {cert['verdict']}")
    level = max(levels, key=LEVELS.index) if levels else "exact"
    require(cert["evidence"] == level, "evidence", f"the declarations give {level}, the certificate says {cert['evidence']}")
    return verdict, names


def verify_document(cert: Any, path: str = "<certificate>", base_dir: Path | None = None,
                    weights_dirs: list[str] | None = None) -> Outcome:
    """Check one parsed certificate; never raises for bad content."""
    if not isinstance(cert, dict) or "format" not in cert:
        return Outcome(path, "not a certificate", reason="a JSON document without a 'format' field")
    st = cert.get("statement", "") if isinstance(cert.get("statement"), str) else ""
    try:
        require(cert["format"] == FORMAT, "format", f"format {cert['format']!r} is not {FORMAT}")
        with limits.int_digits():
            verdict, names = _check(cert, base_dir, weights_dirs or [])
        return Outcome(path, "valid", statement=st, verdict=verdict, declarations=names)
    except Invalid as err:
        return Outcome(path, "invalid", err.check, err.why, st)
    except Undecided as err:
        return Outcome(path, "undecided", "limits", str(err), st)
    except NotCheckable as err:
        return Outcome(path, "not checkable", "table", str(err), st)
    except (ArithmeticError, ValueError, TypeError, KeyError, IndexError, ZeroDivisionError) as err:
        return Outcome(path, "invalid", "format", f"{type(err).__name__}: {str(err)[:200]}", st)
    except RecursionError:
        return Outcome(path, "invalid", "limits", "structure nested too deeply", st)
    except MemoryError:
        return Outcome(path, "undecided", "limits", "out of memory", st)
    except OSError as err:  # the weights file could not be read: nothing shown wrong, nothing shown right
        return Outcome(path, "undecided", "limits", f"reading a weights file: {err}", st)
    except NotEvaluable as err:  # e.g. a standalone witness of a fact this input does not have
        return Outcome(path, "invalid", "input", f"cannot be evaluated on this input ({err})", st)
    except Exception as err:  # noqa: BLE001 -- a kernel defect: never a traceback, never valid
        return Outcome(path, "invalid", INTERNAL, f"kernel error {type(err).__name__}: {str(err)[:200]}", st)


def verify_file(path: str | Path, weights_dirs: list[str] | None = None) -> Outcome:
    """Read and check one certificate file."""
    p = Path(path)
    try:
        with limits.int_digits():
            doc = read(p)
    except Unreadable as err:
        return Outcome(str(path), "unreadable", "read", str(err))
    except Invalid as err:
        return Outcome(str(path), "invalid", err.check, err.why)
    return verify_document(doc, str(path), p.parent, weights_dirs)


def expand_paths(args: list[str]) -> tuple[list[Path], list[str]]:
    """Files named by ``args`` (files, directories searched for ``*.json``, globs with ``**``),
    without duplicates, and the arguments that matched nothing."""
    files: list[Path] = []
    problems: list[str] = []
    for a in args:
        p = Path(a)
        if p.is_dir():
            found = sorted(x for x in p.rglob("*.json") if x.is_file())
        elif p.exists():
            found = [p]
        elif any(ch in a for ch in "*?["):
            found = sorted(Path(x) for x in glob.glob(a, recursive=True) if os.path.isfile(x))
        else:
            found = []
        if not found:
            problems.append(f"{a}: matches no file")
        files.extend(found)
    seen: set[str] = set()
    out = []
    for f in files:
        k = str(f.resolve())
        if k not in seen:
            seen.add(k)
            out.append(f)
    return out, problems
