"""Reading a published per-head table in the authors' format.

The format is the one ``scripts/head_statistics.py`` of the paper's
repository writes (pandas ``to_csv``, one row per head, NaN as an empty
cell).  Its columns, as that script computes them from the float32-stored
restricted form L̃ (m × m, m = ``dim`` = 2n) with S̃, T̃ its symmetric and
antisymmetric parts and λ̃ = ``eigvalsh(S̃)``:

==================  ==========================================================
``dim``             m, the size of the restricted form
``symmetric_energy`` ‖S̃‖²/‖L̃‖²
``balance``         1 − |n_pos − n_neg|/(n_pos + n_neg)
``pairing``         1 − ‖λ₊ − λ₋‖/‖S̃‖_F (lobes from all eigenvalues, no cut)
``rho``             ‖λ₋‖/‖λ₊‖ (empty when λ₊ = 0)
``pairing_bound``   1 − |1 − ρ|/√(1 + ρ²) (Lemma 2's bound at ρ)
``pairing_gap``     pairing_bound − pairing
``lobe_departure``  ‖λ₋ − ρλ₊‖/‖λ₋‖
``n_pos, n_neg``    eigenvalues beyond ±1e-9·max|λ̃|; ``n_zero`` = m − n_pos − n_neg
``a, b, c, d``      ‖T̃‖²/‖L̃‖², 2⟨λ₊,λ₋⟩/‖L̃‖², ‖(λ₊−λ₋)₊‖²/‖L̃‖², ‖(λ₊−λ₋)₋‖²/‖L̃‖²
``b_sym, c_sym, d_sym`` the same over ‖S̃‖² (the profile of S)
``trace_ratio``     |tr L̃|/‖L̃‖_F
``participation_ratio, stable_rank, leading_share`` from the singular values of L̃
==================  ==========================================================
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

from ..errors import QKInputError

#: the authors' columns, in their order
AUTHORS_COLUMNS = ["model", "layer", "head", "kv_head", "dim", "symmetric_energy", "balance", "pairing", "rho",
                   "pairing_bound", "pairing_gap", "lobe_departure", "n_pos", "n_neg", "n_zero", "a", "b", "c", "d",
                   "b_sym", "c_sym", "d_sym", "trace_ratio", "participation_ratio", "stable_rank", "leading_share"]
#: columns every audited table must have
REQUIRED = ["model", "layer", "head", "dim", "a", "b", "c", "d"]
INT_COLUMNS = {"layer", "head", "kv_head", "dim", "n_pos", "n_neg", "n_zero"}
#: a table larger than this many rows is refused (one line), not read into memory
MAX_ROWS = 2_000_000
#: the largest ``dim`` read (2·d_head of any model is far below it; beyond it the error model's
#: tolerances exceed 1 and its squares overflow)
MAX_DIM = 2 ** 20
#: a decimal number as table writers spell it (pandas' to_csv, Python's repr); Python's float()
#: also takes '1_000' and non-ASCII digits, which no table writer produces
DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity)", re.I)


def _num(text: str, col: str, where: str, integer: bool):
    t = text.strip()
    if t == "" or t.lower() == "nan":
        if integer:
            raise QKInputError(f"{where}: column {col} is empty")
        return math.nan
    try:
        if not DECIMAL.fullmatch(t):
            raise ValueError
        if integer:
            v = float(t)
            if not v.is_integer():
                raise ValueError
            v = int(v)
        else:
            v = float(t)
    except ValueError:
        raise QKInputError(f"{where}: column {col} is not a number: {text[:40]!r}") from None
    if integer:
        if v < 0:          # layer, head, kv_head, dim and the counts are natural numbers
            raise QKInputError(f"{where}: column {col} = {v} is negative")
        return v
    if math.isinf(v):
        raise QKInputError(f"{where}: column {col} is infinite")
    return v


def read_table(path: str | Path) -> tuple[list[dict], list[str]]:
    """Rows of a table in the authors' format, numbers parsed (floats by
    their decimal text, an empty cell or ``nan`` is NaN; integer columns
    must be integers).  Returns (rows, columns present).  Each row gets
    ``_line`` (its line number in the file).

    Raises QKInputError (exit 2, one line) for an unreadable file, a missing
    required column (:data:`REQUIRED`) or an empty cell in one, a malformed
    number (a negative integer column, a dim outside 1..:data:`MAX_DIM`), a
    duplicate (model, layer, head) or more than :data:`MAX_ROWS` rows.
    """
    p = Path(path)
    try:
        fh = open(p, newline="", encoding="utf-8-sig")
    except OSError as err:
        raise QKInputError(f"{p}: cannot read ({err.strerror or err.__class__.__name__})") from None
    with fh:
        try:
            reader = csv.reader(fh)
            header = next(reader, None)
            if not header:
                raise QKInputError(f"{p}: empty table (no header line)")
            header = [h.strip() for h in header]
            missing = [c for c in REQUIRED if c not in header]
            if missing:
                raise QKInputError(f"{p}: not a per-head table in the authors' format: no column {', '.join(missing)}")
            if len(set(header)) != len(header):
                dup = next(h for h in header if header.count(h) > 1)
                raise QKInputError(f"{p}: column {dup} appears twice")
            known = [c for c in header if c in AUTHORS_COLUMNS]
            rows, seen = [], {}
            for k, rec in enumerate(reader, start=2):
                if not rec or all(not x.strip() for x in rec):
                    continue
                if len(rows) >= MAX_ROWS:
                    raise QKInputError(f"{p}: more than {MAX_ROWS} rows")
                where = f"{p}:{k}"
                if len(rec) != len(header):
                    raise QKInputError(f"{where}: {len(rec)} fields, the header has {len(header)}")
                row: dict = {"_line": k}
                for col, text in zip(header, rec):
                    if col not in AUTHORS_COLUMNS:
                        continue
                    row[col] = text.strip() if col == "model" else _num(text, col, where, col in INT_COLUMNS)
                for col in REQUIRED:       # nothing can be checked on a row without them
                    v = row[col]
                    if v == "" or (isinstance(v, float) and math.isnan(v)):
                        raise QKInputError(f"{where}: column {col} is empty")
                key = (row["model"], row["layer"], row["head"])
                if key in seen:
                    raise QKInputError(f"{where}: model {key[0]} layer {key[1]} head {key[2]} already on line {seen[key]}")
                seen[key] = k
                if not 1 <= row["dim"] <= MAX_DIM:
                    raise QKInputError(f"{where}: column dim = {row['dim']} is not the size of a head's restricted "
                                       f"form (1..{MAX_DIM})")
                rows.append(row)
        except UnicodeDecodeError:
            raise QKInputError(f"{p}: not UTF-8 text") from None
        except csv.Error as err:
            raise QKInputError(f"{p}: not a CSV table ({err})") from None
    if not rows:
        raise QKInputError(f"{p}: the table has no rows")
    return rows, known
