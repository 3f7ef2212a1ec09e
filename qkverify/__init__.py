"""qkverify: exact checks of the mathematics of transformer attention heads.

The Python API (:mod:`qkverify.api`; docs/API.md)::

    >>> import qkverify
    >>> qkverify.profile([[1, 2], [3, 4]])
    Profile(a=1/60, b=3/20, c=5/6, d=0; exact)

``profile(L)``, ``signature(S)``, ``head(W_Q, W_K)``, ``load_model(path_or_hub_id)``,
``check(declaration, input, drop=())`` and ``verify(path)``; bad input raises
:class:`qkverify.InputError` with the command line's one-line message.  They are imported on
first use, so ``import qkverify`` (and the command line's start-up) stays light.

Layers (bottom to top):

* :mod:`qkverify.exact` -- exact rational / real-algebraic arithmetic and rigorous
  enclosures; knows nothing about attention.
* :mod:`qkverify.claims` -- one module per blueprint section; each statement is
  registered once in :mod:`qkverify.claims.registry`.
* :mod:`qkverify.certificates` -- certificate files (JSON Schema in ``schema/``).
* :mod:`qkverify.api` -- the Python API; :mod:`qkverify.cli` -- a thin command-line layer.
"""

import sys as _sys

from .errors import QKInputError as InputError

__version__ = "0.1.0"

# Exact certificates print integers of any size (Python 3.11 caps int<->str
# conversion at 4300 digits by default).
if hasattr(_sys, "set_int_max_str_digits"):
    _sys.set_int_max_str_digits(0)

#: the API's names, imported from qkverify.api on first use (PEP 562)
_API = ("profile", "signature", "head", "load_model", "check", "verify", "Algebraic", "Enclosure", "Profile",
        "Signature", "Head", "CheckResult", "VerifyResult")

__all__ = ["InputError", "__version__", *_API]


def __getattr__(name: str):
    if name in _API:
        from . import api

        value = getattr(api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'qkverify' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_API))
