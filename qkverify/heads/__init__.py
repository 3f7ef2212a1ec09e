"""Per-head certification of real models (issue 3).

* :mod:`.exact_gram` -- exact integer Gram data of a head (M = Z·2^e, G = Z Zᵀ,
  traces for a), the rank witness of M;
* :mod:`.enclosure` -- verified enclosures of the nonzero spectrum of S
  through ½JG (float64 eigendecomposition + rigorous Weyl / Kato–Temple /
  Ostrowski bounds; arb and exact-product variants);
* :mod:`.certify` -- one head in, table row + certificate witnesses out;
* :mod:`.float_pipeline` -- the authors' float64 pipeline, for comparison;
* :mod:`.output` -- CSV/JSON tables, certificates, the PNG.
"""

from .certify import HeadOptions, certify_head
from .enclosure import Enclosure, EnclosureFailed, enclose_arb, enclose_exact_products, enclose_fast
from .exact_gram import GramData, gram_data, rank_witness
from .float_pipeline import authors_pipeline, full_eigvalsh

__all__ = [
    "HeadOptions", "certify_head", "Enclosure", "EnclosureFailed", "enclose_arb", "enclose_exact_products",
    "enclose_fast", "GramData", "gram_data", "rank_witness", "authors_pipeline", "full_eigvalsh",
]
