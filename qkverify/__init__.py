"""qkverify: exact checks of the mathematics of transformer attention heads.

Layers (bottom to top):

* :mod:`qkverify.exact` -- exact rational / real-algebraic arithmetic and rigorous
  enclosures; knows nothing about attention.
* :mod:`qkverify.claims` -- one module per blueprint section; each statement is
  registered once in :mod:`qkverify.claims.registry`.
* :mod:`qkverify.certificates` -- certificate files (JSON Schema in ``schema/``).
* :mod:`qkverify.cli` -- a thin command-line layer.
"""

import sys as _sys

__version__ = "0.1.0"

# Exact certificates print integers of any size (Python 3.11 caps int<->str
# conversion at 4300 digits by default).
if hasattr(_sys, "set_int_max_str_digits"):
    _sys.set_int_max_str_digits(0)
