"""Every cap the kernel works under, in one place (TRUST.md, "Limits").

A certificate that needs more than a cap is answered ``undecided``, naming the
cap (:func:`over`); a certificate whose *text* is over a cap of the reader is
refused before it is checked.  Every loop of the kernel is bounded by the
certificate's size and these numbers.

The kernel sets Python's integer-to-text digit limit itself, for the time it
checks one certificate (:func:`int_digits`), and restores the caller's.

>>> import sys
>>> before = sys.get_int_max_str_digits()
>>> with int_digits():
...     sys.get_int_max_str_digits() == MAX_INT_DIGITS
True
>>> sys.get_int_max_str_digits() == before
True
"""

from __future__ import annotations

import contextlib
import math
import sys

# -- reading ----------------------------------------------------------------
#: bytes of one certificate file
MAX_FILE_BYTES = 64 * 1024 * 1024
#: decimal digits of one integer (JSON number, or numerator / denominator of a rational)
MAX_INT_DIGITS = 20_000
#: nesting depth of the JSON text
MAX_JSON_DEPTH = 64

# -- exact linear algebra ---------------------------------------------------
#: side of a matrix given inline in a certificate (the kernel multiplies such matrices out)
MAX_DIM = 256
#: side of a matrix the kernel takes the characteristic polynomial of (a head's J·Z·Zᵀ is 2n × 2n)
MAX_CHARPOLY_DIM = 512
#: work of one characteristic polynomial, :func:`charpoly_work` = n³·b·(n + b/16) for an n × n
#: integer matrix of b-bit entries (after clearing denominators).  FLINT's multimodular charpoly
#: takes about 2.8e-11 s per unit on the development machine: 2^40 is some 30 s.  A real head's
#: J·Z·Zᵀ fits: 2n = 64 (all-MiniLM-L6-v2, b ≤ 90) 2e9; 2n = 256 (d_head 128, b ≈ 110-130 from
#: float32 weights) 5e11; 2n = 256 up to b = 236 bits.
MAX_CHARPOLY_WORK = 1 << 40
#: bits of an exact matrix power X^k (GramForm.trace_pow_symPart at the input's k, k ≤ 4096): the
#: n² entries of X^k hold about k·(b + log₂ n) bits each (b the cleared entry size); 2^30 bits is
#: 128 MiB (a fault-injection test once took 22 GB with S^k of a perturbed S)
MAX_POWER_BITS = 1 << 30
#: head dimension n of a weights head (J·Z·Zᵀ is 2n × 2n)
MAX_HEAD_N = 256
#: entries of a matrix given inline in a certificate
MAX_INLINE_ENTRIES = 1 << 22
#: entries of W_K and W_Q (2n·N) read from a weights file for one head
MAX_HEAD_ENTRIES = 1 << 23
#: degree of a polynomial in a witness (factors, cells, complex roots)
MAX_DEGREE = 8192
#: bits of a scale, and |exponent| of a cell grid, in a witness
MAX_WITNESS_BITS = 1 << 14

# -- enclosures -------------------------------------------------------------
#: working precision (bits) of the enclosures the kernel computes
PREC = 128
#: largest precision (bits) a witness may ask the kernel to work at
MAX_PREC = 1 << 16
#: bisection steps for one comparison of two real algebraic numbers
MAX_BISECTIONS = 4000

# -- sums, sampling, decompositions ------------------------------------------
#: size N of a fiber decomposition over ℚ(√s) (Theorem 4: N matrix products over the quadratic field)
MAX_QUADRATIC_FIBER = 64
#: value patterns a finite-law enumeration sums over (Appendix A)
ENUM_LIMIT = 1 << 16
#: the exact iid convolution of the energy law: values of a partial law, products in all
CONV_MAX_SUPPORT = 1 << 16
CONV_MAX_WORK = 1 << 24
#: terms of the moments of dependent entries (copies): N² (iid) or n²N² (qk) per integrand
MAX_DEPENDENT_TERMS = 1 << 22
#: Monte Carlo draws (samples × drawn entries) and multiply-adds (samples × (N²·n + N²)) the kernel
#: re-draws (Appendix A; about 6 µs per Gaussian draw: a minute at most)
MAX_MC_DRAWS = 1 << 23
MAX_MC_PRODUCT = 1 << 26
#: sample size of a lobes input (Lemma 6, Theorem 5), and uniforms of one study (paths × n_max ×
#: uniforms per pair)
MAX_LOBES = 1_000_000
MAX_LOBE_UNIFORMS = 1 << 21

# -- expressions (§1) --------------------------------------------------------
#: |exponent| of one power in an expression
MAX_EXPONENT = 64
#: total degree an expression may reach while it is multiplied out
MAX_EXPR_DEGREE = 256
#: terms of a multiplied-out expression
MAX_EXPR_TERMS = 1 << 16


def over(what: str, value: int, cap: int, name: str) -> None:
    """Undecided naming the cap ``name`` when ``value`` exceeds ``cap``.

    >>> over("entries", 3, 4, "MAX_DIM")
    >>> over("entries", 5, 4, "MAX_DIM")
    Traceback (most recent call last):
    ...
    qkverify.kernel.jsonio.Undecided: 5 entries exceed the kernel's limit MAX_DIM = 4 (kernel/limits.py)
    """
    if value > cap:
        from .jsonio import Undecided

        raise Undecided(f"{value} {what} exceed the kernel's limit {name} = {cap} (kernel/limits.py)")


def charpoly_work(n: int, bits: int) -> int:
    """Estimated cost n³·b·(n + b/16) of the characteristic polynomial of an n × n integer matrix
    whose entries have at most b bits: about n·b/60 primes, each an n³ charpoly modulo the prime,
    plus the reduction of n² entries of b bits per prime.

    >>> charpoly_work(64, 90) < MAX_CHARPOLY_WORK < charpoly_work(160, 1994)
    True
    """
    return n**3 * bits * (16 * n + bits) // 16


def cleared_bits(X, n: int) -> int:
    """Bits of the largest entry of the integer matrix FLINT takes the characteristic polynomial
    of: X's entries (``fmpz_mat``), or an upper bound for ``fmpq_mat`` -- the largest numerator's
    bits plus those of d, the lcm of the denominators (FLINT clears them matrix-wise).  d is built
    one distinct denominator at a time and abandoned, returning its bits so far, once the work of
    an n × n matrix of d's size is past MAX_CHARPOLY_WORK: a certificate cannot make the kernel
    multiply out the lcm of thousands of distinct denominators."""
    ents = X.entries()
    if not ents:
        return 0
    if not hasattr(ents[0], "q"):
        return max(abs(e).bit_length() for e in ents)
    d = 1
    for q in {int(e.q) for e in ents}:
        d = math.lcm(d, q)
        if charpoly_work(n, d.bit_length()) > MAX_CHARPOLY_WORK:
            break
    return max(abs(e.p).bit_length() for e in ents) + (d.bit_length() if d > 1 else 0)


def for_charpoly(X):
    """X itself, after checking that its characteristic polynomial is within the kernel's work cap
    (undecided naming MAX_CHARPOLY_DIM or MAX_CHARPOLY_WORK, before any of it is computed).  Called
    on the matrix itself, before FLINT clears its denominators (``numer_denom``) or takes the
    polynomial: ``limits.for_charpoly(X).charpoly()``.

    >>> from flint import fmpq_mat
    >>> for_charpoly(fmpq_mat([[1, 2], [3, 4]])).charpoly()
    x^2 + (-5)*x + (-2)
    >>> X = fmpq_mat(64, 64, [2**20000 * (k % 65 == 0) for k in range(64 * 64)])
    >>> for_charpoly(X)  # 64 × 64, 20,001-bit entries
    Traceback (most recent call last):
    ...
    qkverify.kernel.jsonio.Undecided: the characteristic polynomial of a 64 × 64 matrix of 20001-bit entries: work n³·b·(n + b/16) = 6889816473600 exceeds the kernel's limit MAX_CHARPOLY_WORK = 1099511627776 (kernel/limits.py)
    """
    n = X.nrows()
    over("rows of a matrix to take the characteristic polynomial of", n, MAX_CHARPOLY_DIM, "MAX_CHARPOLY_DIM")
    b = cleared_bits(X, n)
    w = charpoly_work(n, b)
    if w > MAX_CHARPOLY_WORK:
        from .jsonio import Undecided

        raise Undecided(f"the characteristic polynomial of a {n} × {n} matrix of {b}-bit entries: work "
                        f"n³·b·(n + b/16) = {w} exceeds the kernel's limit MAX_CHARPOLY_WORK = "
                        f"{MAX_CHARPOLY_WORK} (kernel/limits.py)")
    return X


def for_power(X, k: int):
    """X itself, after checking that X^k (k ≥ 0) fits MAX_POWER_BITS: n²·k·(b + ⌈log₂ n⌉) bits,
    b the entry size after clearing denominators (undecided naming the limit, before any product).

    >>> from flint import fmpq_mat
    >>> for_power(fmpq_mat([[1, 2], [3, 4]]), 3) == fmpq_mat([[1, 2], [3, 4]])
    True
    >>> for_power(fmpq_mat([[1, 2], [3, 4]]), -1)
    Traceback (most recent call last):
    ...
    qkverify.kernel.jsonio.Invalid: power: the exponent -1 is not a natural number (Lean's k : ℕ)
    """
    if k < 0:
        from .jsonio import Invalid

        raise Invalid("power", f"the exponent {k} is not a natural number (Lean's k : ℕ)")
    n = X.nrows()
    b = cleared_bits(X, n) + max(n - 1, 1).bit_length()
    bits = n * n * max(k, 1) * b
    if bits > MAX_POWER_BITS:
        from .jsonio import Undecided

        raise Undecided(f"the power X^{k} of a {n} × {n} matrix of {b}-bit entries: about {bits} bits exceed "
                        f"the kernel's limit MAX_POWER_BITS = {MAX_POWER_BITS} (kernel/limits.py)")
    return X


@contextlib.contextmanager
def int_digits():
    """Python's int/str conversion limit at MAX_INT_DIGITS for the block, then the caller's."""
    get = getattr(sys, "get_int_max_str_digits", None)
    if get is None:  # Python before 3.11: no limit to set
        yield
        return
    before = get()
    sys.set_int_max_str_digits(MAX_INT_DIGITS)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(before)
