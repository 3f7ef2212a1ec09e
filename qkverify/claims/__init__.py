"""Claims, one module per blueprint section.  Importing ``load_all`` registers
every section module with :mod:`qkverify.claims.registry`."""

import importlib

SECTION_MODULES = (
    "attention",     # §1: Defs 1, 2, 4, 5, Lemma 1, Props 2, 3
    "rope",          # §1: Def 3, Prop 1 (RoPE-like)
    "energy",        # Def A1, Lemma 5 (Appendix A, energy identities)
    "profile",       # §3: Def 6, Theorem 4, Lemma 4, profile_conj, Prop 4
    "balance",       # §2: Lemma 2, Lemma 3, Theorem 3
    "bimodal",       # Appendix B: Def (Λ_m, λ±, 𝓘, C, 𝒫, ι), Lemma 7, Lemma 8
    "moments",       # Appendix C: Def (O, E, R), Lemma 9
    "gram",          # Appendix C: Lemma 10
    "accumulation",  # §3 Theorem 5, Appendix A Lemma 6
    "laws",          # Appendix A: Corollary 1, Corollary 2, Proposition 5
    "clusters",      # clustering regimes: QᵀK ≻ 0, good triple (Def 4.1), paranormal V
)

_loaded = False


def load_all() -> None:
    """Import every section module (idempotent), which registers its checks."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for name in SECTION_MODULES:
        importlib.import_module(f"{__name__}.{name}")
