"""qkverify: exact checks of the mathematics of transformer attention heads.

Layers (bottom to top):

* :mod:`qkverify.exact` -- exact rational / real-algebraic arithmetic and rigorous
  enclosures; knows nothing about attention.
* :mod:`qkverify.claims` -- one module per blueprint section; each statement is
  registered once in :mod:`qkverify.claims.registry`.
* :mod:`qkverify.certificates` -- certificate files (JSON Schema in ``schema/``).
* :mod:`qkverify.cli` -- a thin command-line layer.
"""

__version__ = "0.1.0"
