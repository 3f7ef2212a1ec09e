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
