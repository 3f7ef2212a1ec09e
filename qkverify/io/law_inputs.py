"""The random inputs of Appendix A and of Theorem 5: ``law`` and ``lobes`` (input kinds).

A ``law`` input (:class:`LawInput`) is a random matrix with exact entry laws -- model
``iid`` (L, N×N) for Corollary 1, model ``qk`` (L = W_Kᵀ W_Q, W_K and W_Q n×N) for
Corollary 2 and Proposition 5.  Each entry has a finite law, a Gaussian or a Pareto law
(heavy-tailed: not square-integrable for shape ≤ 2).  The entries are independent except
for ``copies``: an entry that is ``sign ×`` another entry (dependent unless the source is a
point mass).  So every hypothesis of the Lean statements is a decision on the input:
``hIndep``/``hindep`` (no copy of a random entry), ``hMemLp``/``hKL2``/``hQL2`` (every
entry square-integrable), the means, variances and Gaussian laws.

A ``lobes`` input (:class:`LobesInput`) describes the random matrices S_n of Lemma 6 and
Theorem 5: a law γ (:mod:`qkverify.math.accumulation`), scales u, v, the laws X_i and X'_i
actually have (γ unless stated), their dependence (independent, or ``repeated``: X_i = X_0
and X'_i = X'_0 for every i), and the matrix S_n (``symmetric`` or block ``triangular``
with a coupling q; the scales its spectrum actually carries; extra zero eigenvalues, which
may be negative: N_n = 2n + k).  The sampled evidence (``paths`` independent sample paths,
level ``delta``) is part of the input.

Neither input has a seed: the sampler's seed is derived from the input object
(:func:`qkverify.math.montecarlo.derive_seed`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from flint import fmpq

from ..errors import QKInputError
from ..exact.rational import fmpq_str, parse_integer, parse_rational
from ..math import baselines as B
from ..math import montecarlo as MC

#: Monte Carlo defaults for claim checks: 10000 samples at δ = 10⁻⁶ (Hoeffding half-width 0.027);
#: 0.4 to 0.8 s of CPU to draw and as long for the kernel to re-draw with 8 to 12 Gaussian entries
MC_SAMPLES = 10000
MC_DELTA = fmpq(1, 10 ** 6)
BLOCKS = {"iid": ("L",), "qk": ("W_K", "W_Q")}


def _entry(x: Any, model: str, N: int, n: int | None, where: str) -> tuple[str, int, int]:
    """A copy endpoint ``[block, row, column]`` checked against the model's shapes."""
    if not (isinstance(x, (list, tuple)) and len(x) == 3 and isinstance(x[0], str)):
        raise QKInputError(f"{where}: a copy endpoint is [block, row, column], e.g. [\"W_Q\", 0, 1]")
    blk, r, c = x[0], parse_integer(x[1], where), parse_integer(x[2], where)
    if blk not in BLOCKS[model]:
        raise QKInputError(f"{where}: block {blk!r} is not one of {', '.join(BLOCKS[model])}")
    rows = N if model == "iid" else n
    if not (0 <= r < rows and 0 <= c < N):
        raise QKInputError(f"{where}: entry ({r}, {c}) is outside the {rows}×{N} matrix {blk}")
    return blk, r, c


@dataclass(frozen=True)
class LawInput:
    """A random-matrix model with exact laws (input kind ``law``).

    model  -- ``"iid"`` (L is N x N) or ``"qk"`` (L = W_Kᵀ W_Q, W_K and W_Q n x N)
    N, n   -- sizes (n only for ``qk``), integers >= 0
    law / grid     -- iid: one law for every entry of L, or an N x N tuple of laws
    law_K / grid_K -- qk: one law for every entry of W_K, or an n x N tuple of laws
    law_Q / grid_Q -- the same for W_Q
    copies -- dependent entries: ((block, r, c), (block, r, c), sign), the target first; the
              target *is* sign × the source (its stated law must be that law), all other
              entries are independent
    samples, delta -- Monte Carlo parameters, used only when the expectation of a ratio is
              sampled (:meth:`needs_monte_carlo`); the seed follows from the input

    Raises QKInputError on inconsistent fields.
    """

    model: str
    N: int
    n: int | None = None
    law: Any = None
    grid: tuple | None = None
    law_K: Any = None
    law_Q: Any = None
    samples: int = MC_SAMPLES
    delta: fmpq = MC_DELTA
    grid_K: tuple | None = None
    grid_Q: tuple | None = None
    copies: tuple = ()
    source: dict = field(default_factory=dict, compare=False)

    kind2 = "law"

    def __post_init__(self) -> None:
        B._check_size("N", self.N, lo=0, hi=4096)
        MC.check_samples(self.samples, "monte_carlo.samples")
        MC.check_delta(self.delta, "monte_carlo.delta")
        if self.model == "iid":
            pairs = [("L", self.law, self.grid, self.N)]
        elif self.model == "qk":
            if self.n is None:
                raise QKInputError("a qk law input needs the head dimension n")
            B._check_size("n", self.n, lo=0, hi=4096)
            pairs = [("W_K", self.law_K, self.grid_K, self.n), ("W_Q", self.law_Q, self.grid_Q, self.n)]
        else:
            raise QKInputError(f"unknown law model {self.model!r} (use 'iid' or 'qk')")
        for name, law, grid, rows in pairs:
            if (law is None) == (grid is None):
                raise QKInputError(f"a {self.model} law input needs one law or one grid of laws for {name}")
            if grid is not None and (len(grid) != rows or any(len(r) != self.N for r in grid)):
                raise QKInputError(f"the laws of {name} must form a {rows} x {self.N} grid")
        self._check_copies()

    def _check_copies(self) -> None:
        """Copies: endpoints inside the matrices, sign ±1, each target copied once, no source is
        a target, and the target's stated law is the law of sign × the source."""
        targets = set()
        for t, s, sign in self.copies:
            for e in (t, s):  # the endpoints the document reader checks (_entry), for inputs built in code
                _entry(list(e), self.model, self.N, self.n, "copies")
            if sign not in (1, -1):
                raise QKInputError(f"copy of {list(s)} into {list(t)}: the sign must be 1 or -1")
            if t == s or t in targets:
                raise QKInputError(f"entry {list(t)} is copied twice, or from itself")
            targets.add(t)
        for t, s, sign in self.copies:
            if s in targets:
                raise QKInputError(f"entry {list(s)} is itself a copy: copy from the original entry")
            want = self.entry_law(s) if sign == 1 else B.negated(self.entry_law(s))
            if want is None or not B.same_law(want, self.entry_law(t)):
                raise QKInputError(f"entry {list(t)} is {'-' if sign < 0 else ''}{list(s)}, so its law must be that of "
                                   f"{'-' if sign < 0 else ''}{list(s)}" + (" (not expressible: a one-sided Pareto law)"
                                                                            if want is None else ""))

    # ---- the laws of the entries ------------------------------------------
    def entry_law(self, e: tuple[str, int, int]) -> Any:
        blk, r, c = e
        law, grid = {"L": (self.law, self.grid), "W_K": (self.law_K, self.grid_K),
                     "W_Q": (self.law_Q, self.grid_Q)}[blk]
        return law if grid is None else grid[r][c]

    def blocks(self) -> dict[str, Any]:
        """Each matrix's laws as given: one law, or a tuple of rows (cheap for large N)."""
        if self.model == "iid":
            return {"L": self.law if self.grid is None else self.grid}
        return {"W_K": self.law_K if self.grid_K is None else self.grid_K,
                "W_Q": self.law_Q if self.grid_Q is None else self.grid_Q}

    def grids(self) -> dict[str, list[list[Any]]]:
        """The law of every entry: ``{"L": N x N}`` (iid) or ``{"W_K": n x N, "W_Q": n x N}`` (qk)."""
        def g(law, grid, rows):
            return [list(r) for r in grid] if grid is not None else [[law] * self.N for _ in range(rows)]

        if self.model == "iid":
            return {"L": g(self.law, self.grid, self.N)}
        return {"W_K": g(self.law_K, self.grid_K, self.n), "W_Q": g(self.law_Q, self.grid_Q, self.n)}

    def distinct_laws(self, block: str) -> list[Any]:
        """The distinct laws occurring in ``block`` (equal law objects once, in order of first
        occurrence; computed once per input, so that predicates over every entry cost O(n·N) in all)."""
        cache = self.__dict__.setdefault("_distinct", {})
        if block not in cache:
            b = self.blocks()[block]
            if not isinstance(b, tuple):
                cache[block] = [b] if self.N and (self.model == "iid" or self.n) else []
            else:
                by_id = {id(law): law for row in b for law in row}     # cheap: parsed grids share objects
                cache[block] = list(dict.fromkeys(by_id.values()))
        return cache[block]

    def first_law(self, block: str) -> Any | None:
        """The law of the block's entry (0, 0) (None for an empty matrix)."""
        b = self.blocks()[block]
        if not isinstance(b, tuple):
            return b if self.N and (self.model == "iid" or self.n) else None
        return b[0][0] if b and b[0] else None

    def all_laws(self) -> list[Any]:
        """Every entry's law, matrix by matrix, row-major."""
        return [l for G in self.grids().values() for r in G for l in r]

    def is_finite(self) -> bool:
        """Every entry law is finite (point masses included): expectations are finite sums."""
        return all(B.as_finite(l) is not None for b in BLOCKS[self.model] for l in self.distinct_laws(b))

    def copy_sources(self) -> list[tuple]:
        return [s for _, s, _ in self.copies]

    def independent(self) -> bool:
        """The entries are (jointly) independent: every copy's source is a point mass (a copy of
        a constant is independent of everything)."""
        return all(B.as_finite(self.entry_law(s)) is not None and len(B.as_finite(self.entry_law(s)).atoms) == 1
                   for _, s, _ in self.copies)

    def zero_product(self) -> bool:
        """Model qk with every entry of W_K, or every entry of W_Q, the point mass at 0: then L = 0
        surely, whatever the other matrix's laws, and every ratio is 0/0 = 0 (Lean)."""
        return self.model == "qk" and any(all(B.is_zero_law(l) for l in self.distinct_laws(b)) and self.distinct_laws(b)
                                          for b in ("W_K", "W_Q"))

    def patterns(self) -> int | None:
        """Number of value patterns of the free entries (copy targets follow their source; None
        when an entry is not finite); 1 for a zero product (:meth:`zero_product`: L has one value)."""
        if self.zero_product():
            return 1
        if not self.is_finite():
            return None
        targets = {t for t, _, _ in self.copies}
        out = 1
        for name, G in self.blocks().items():
            if not isinstance(G, tuple):
                rows = self.N if self.model == "iid" else self.n
                k = len(B.as_finite(G).atoms)
                free = rows * self.N - sum(1 for t in targets if t[0] == name)
                if k > 1 and free * (k - 1).bit_length() > 64:
                    return ENUM_CAP  # astronomically many; only the comparison with ENUM_LIMIT matters
                out *= k ** free
                continue
            for r, row in enumerate(G):
                for c, law in enumerate(row):
                    if (name, r, c) not in targets:
                        out *= len(B.as_finite(law).atoms)
                        if out > ENUM_CAP:
                            return ENUM_CAP
        return out

    def ratio_route(self) -> tuple:
        """How E[‖S‖²/‖L‖²] and E[‖T‖²/‖L‖²] are decided, the first that applies (computed once):
        ``("zero", 0, 0)`` for a zero product; ``("patterns",)`` -- every value pattern of the free
        entries, at most ENUM_LIMIT; ``("one_dimensional", E_S, E_T)`` for N = 1 without copies
        (E[r_S] = P(L ≠ 0): a closed form for any laws); ``("symmetric", E_S, E_T)`` when the copies make
        L symmetric surely (again E[r_S] = P(L ≠ 0)); ``("convolution", E_S, E_T)`` -- iid finite
        laws without copies, the exact law of the energies within its caps; ``("monte_carlo",)``
        otherwise (no closed form: sampled)."""
        cache = self.__dict__.setdefault("_route", [])
        if cache:
            return cache[0]
        k = self.patterns()
        if self.zero_product():
            route: tuple = ("zero", fmpq(0), fmpq(0))
        elif k is not None and k <= MC.ENUM_LIMIT:
            route = ("patterns",)
        else:
            route = ("monte_carlo",)
            sym = B.symmetric_ratios(self.model, self.N, self.n or 0, self.grids(), self.copies) if self.copies else None
            if sym is not None:
                route = ("symmetric",) + sym
            elif self.N == 1 and not self.copies:
                r = B.one_dimensional_ratios(self.model, self.n or 0, self.grids(), MC.ENUM_LIMIT)
                if r is not None:
                    route = ("one_dimensional",) + r
            elif self.model == "iid" and not self.copies and k is not None:
                try:
                    e = B.iid_energy_law(self.N, self.blocks()["L"] if self.grid is None else self.grids()["L"],
                                         capped=True).summary()
                    route = ("convolution", e.E_ratio_S_lean, e.E_ratio_T_lean)
                except B.ConvolutionTooLarge:
                    pass
        cache.append(route)
        return route

    def needs_monte_carlo(self) -> bool:
        """Expectations of ratios are sampled: no exact route applies (:meth:`ratio_route`)."""
        return self.ratio_route()[0] == "monte_carlo"

    def mc_blocks(self) -> tuple[list[list], list]:
        """The sampler's blocks (laws row-major) and copies ((block index, flat index), …, sign)."""
        g = self.grids()
        names = list(g)
        blocks = [[l for r in g[k] for l in r] for k in names]
        copies = [((names.index(t[0]), t[1] * self.N + t[2]), (names.index(s[0]), s[1] * self.N + s[2]), sign)
                  for t, s, sign in self.copies]
        return blocks, copies

    @property
    def seed(self) -> int:
        """The sampler's seed, derived from the input object (DESIGN: no free choice)."""
        return MC.derive_seed(self.to_json2())

    # ---- JSON ---------------------------------------------------------------
    def to_json2(self) -> dict:
        """The certificate input object (schema ``input_law``); the Monte Carlo parameters are
        included when a ratio would be sampled."""
        out: dict[str, Any] = {"kind": "law", "model": self.model, "N": self.N}
        if self.model == "iid":
            items = [("L", self.law, self.grid)]
        else:
            out["n"] = self.n
            items = [("W_K", self.law_K, self.grid_K), ("W_Q", self.law_Q, self.grid_Q)]
        for k, law, grid in items:
            out[k] = law.to_json2() if grid is None else _grid_json(grid)
        if self.copies:
            out["copies"] = [{"entry": list(t), "of": list(s), "sign": sign} for t, s, sign in self.copies]
        if self.needs_monte_carlo():
            out["monte_carlo"] = {"sampler": MC.SAMPLER, "samples": self.samples, "delta": fmpq_str(self.delta)}
        return out

    to_json = to_json2

    @staticmethod
    def from_document(doc: Any, where: str = "input") -> "LawInput":
        """Inverse of :meth:`to_json2`; also reads the short forms ``"law"``/``"grid"``
        (iid) and ``"law_K"``/``"law_Q"`` (qk, a law or a grid).  Laws: a certificate law
        object, ``{"value": "prob"}``, ``{"gaussian": "v"[, "mean": "m"]}``, ``{"pareto": {…}}``
        or a name (``rademacher``, ``skewed``, ``lazy``, ``skewed3``, ``gaussian``).  A seed is
        refused (it follows from the input).  Raises QKInputError."""
        if not isinstance(doc, dict):
            raise QKInputError(f"{where}: a law input is a JSON object with 'model', 'N' and the laws")
        model = str(doc.get("model", "iid"))
        allowed = {"kind", "model", "N", "monte_carlo", "copies"} | (
            {"law", "grid", "L"} if model == "iid" else {"n", "law_K", "law_Q", "W_K", "W_Q"} if model == "qk"
            else set())
        extra = sorted(str(k) for k in doc if k not in allowed)
        if extra and model in ("iid", "qk"):
            raise QKInputError(f"{where}: unknown key {extra[0]!r} (a {model} law input has the keys "
                               f"{', '.join(sorted(allowed))})")
        if "kind" in doc and doc["kind"] != "law":
            raise QKInputError(f"{where}: key 'kind' is {doc['kind']!r}, but this claim takes a law input")

        def size(key: str) -> int:
            if key not in doc:
                raise QKInputError(f"{where}: missing '{key}'")
            return parse_integer(doc[key], f"{where}: {key}")

        parsed: dict[str, Any] = {}

        def one(spec: Any) -> Any:
            """A law, parsed once per distinct JSON text (a grid of 512 × 512 equal laws is one object)."""
            key = spec if isinstance(spec, str) else json.dumps(spec, sort_keys=True)
            if key not in parsed:
                parsed[key] = B.parse_law(spec)
            return parsed[key]

        def entries(x: Any, name: str) -> dict:
            if isinstance(x, dict) and set(x) == {"laws", "index"}:   # the certificate's form of a grid
                laws, index = x["laws"], x["index"]
                if not (isinstance(laws, list) and isinstance(index, list)
                        and all(isinstance(r, str) for r in index)):
                    raise QKInputError(f"{where}: the laws of {name}: 'laws' is a list of laws, 'index' one string "
                                       "of comma-separated positions per row")
                table = [one(l) for l in laws]
                try:
                    return {"grid": tuple(tuple(table[parse_integer(i, where)] for i in r.split(",")) if r else ()
                                          for r in index)}
                except IndexError:
                    raise QKInputError(f"{where}: the laws of {name}: an index is past the list of laws") from None
            if isinstance(x, list):
                if not all(isinstance(r, list) for r in x):
                    raise QKInputError(f"{where}: the laws of {name} are one law or a list of rows of laws")
                return {"grid": tuple(tuple(one(l) for l in r) for r in x)}
            return {"law": one(x)}

        mc = doc.get("monte_carlo") or {}
        if not isinstance(mc, dict):
            raise QKInputError(f"{where}: 'monte_carlo' must be an object with sampler, samples, delta")
        if "seed" in mc:
            raise QKInputError(f"{where}: 'monte_carlo' has no seed: the seed is derived from the input "
                               f"({MC.SEED_DERIVATION})")
        extra = sorted(str(k) for k in mc if k not in ("sampler", "samples", "delta"))
        if extra:
            raise QKInputError(f"{where}: unknown key {extra[0]!r} in 'monte_carlo' (keys: sampler, samples, delta)")
        if mc.get("sampler", MC.SAMPLER) != MC.SAMPLER:
            raise QKInputError(f"{where}: unknown Monte Carlo sampler {mc['sampler']!r} (this version: {MC.SAMPLER})")
        kw: dict[str, Any] = {}
        if mc:
            kw = {"samples": parse_integer(mc.get("samples", MC_SAMPLES), f"{where}: monte_carlo.samples"),
                  "delta": MC.check_delta(mc.get("delta", MC_DELTA), f"{where}: monte_carlo.delta")}
        if model == "iid":
            keys = [k for k in ("law", "grid", "L") if k in doc]
            if len(keys) != 1:
                raise QKInputError(f"{where}: an iid law input needs exactly one of 'L', 'law' or 'grid'")
            e = entries(doc[keys[0]], "L")
            kw.update(law=e.get("law"), grid=e.get("grid"))
            N, n = size("N"), None
        elif model == "qk":
            for short, long in (("law_K", "W_K"), ("law_Q", "W_Q")):
                keys = [k for k in (short, long) if k in doc]
                if len(keys) != 1:
                    raise QKInputError(f"{where}: a qk law input needs exactly one of '{long}' or '{short}'")
                e = entries(doc[keys[0]], long)
                kw[short], kw["grid_" + short[-1]] = e.get("law"), e.get("grid")
            N, n = size("N"), size("n")
        else:
            raise QKInputError(f"{where}: unknown law model {model!r} (use 'iid' or 'qk')")
        cps = doc.get("copies", [])
        if not isinstance(cps, list) or not all(isinstance(c, dict) and set(c) <= {"entry", "of", "sign"}
                                                 and {"entry", "of"} <= set(c) for c in cps):
            raise QKInputError(f"{where}: 'copies' is a list of {{\"entry\": [block, r, c], \"of\": [block, r, c], "
                               "\"sign\": 1 | -1}}")
        B._check_size("N", N, lo=0, hi=4096)
        if n is not None:
            B._check_size("n", n, lo=0, hi=4096)
        kw["copies"] = tuple((_entry(c["entry"], model, N, n, f"{where}: copies"),
                              _entry(c["of"], model, N, n, f"{where}: copies"),
                              parse_integer(c.get("sign", 1), f"{where}: copies sign")) for c in cps)
        return LawInput(model, N, n=n, **kw)

    def describe(self) -> str:
        def what(law):
            return law.label() if law is not None else "per-entry laws"

        dep = f", {len(self.copies)} copied entries" if self.copies else ""
        if self.model == "iid":
            return f"iid N={self.N}, {what(self.law)}{dep}"
        return f"qk n={self.n} N={self.N}, K {what(self.law_K)}, Q {what(self.law_Q)}{dep}"


def _grid_json(grid: tuple) -> dict:
    """A per-entry grid as the certificate writes it: the distinct laws once (in order of first
    occurrence) and each entry's index into that list -- small, and cheap to validate."""
    laws: dict = {}
    index = [",".join(str(laws.setdefault(law, len(laws))) for law in row) for row in grid]
    return {"laws": [l.to_json2() for l in laws], "index": index}


#: pattern counts above this are reported as this (only the comparison with ENUM_LIMIT matters)
ENUM_CAP = 1 << 64


@dataclass(frozen=True)
class LobesInput:
    """Lemma 6 and Theorem 5 sampled (input kind ``lobes``): a law γ, scales u, v (ρ = u/v), the
    sizes n_min < … < n_max, ``paths`` independent sample paths and the level ``delta`` of the
    sign test (:func:`qkverify.math.accumulation.trend_test`); what X, X' and S_n are:
    ``law_X``/``law_Xprime`` (the laws actually sampled; None = γ), ``dependence``
    (``independent``, or ``repeated``: X_i = X_0, X'_i = X'_0) and ``S``
    (:class:`~qkverify.math.accumulation.MatrixSpec`).  The seed follows from the input."""

    law: Any
    u: fmpq
    v: fmpq
    sizes: tuple
    paths: int = 32
    delta: fmpq = fmpq(1, 1000)
    law_X: Any = None
    law_Xprime: Any = None
    dependence: str = "independent"
    S: Any = None
    source: dict = field(default_factory=dict, compare=False)

    kind2 = "lobes"

    def __post_init__(self) -> None:
        from ..math import accumulation as Acc

        if self.S is None:
            object.__setattr__(self, "S", Acc.MatrixSpec())
        if not (isinstance(self.sizes, tuple) and 2 <= len(self.sizes) <= 64
                and all(isinstance(n, int) and 1 <= n <= Acc.MAX_SIZE for n in self.sizes)
                and list(self.sizes) == sorted(set(self.sizes))):
            raise QKInputError(f"sizes must be 2 to 64 increasing integers from 1 to {Acc.MAX_SIZE}")
        if isinstance(self.paths, bool) or not isinstance(self.paths, int) or not Acc.PATHS_MIN <= self.paths <= Acc.PATHS_MAX:
            raise QKInputError(f"paths must be an integer from {Acc.PATHS_MIN} to {Acc.PATHS_MAX}")
        MC.check_delta(self.delta, "delta")
        if self.dependence not in ("independent", "repeated"):
            raise QKInputError("dependence is 'independent' or 'repeated' (X_i = X_0, X'_i = X'_0)")
        if self.S.form not in ("symmetric", "triangular"):
            raise QKInputError("S.form is 'symmetric' or 'triangular'")
        lx, lxp = self.law_X or self.law, self.law_Xprime or self.law
        Acc.check_study_cost(self.paths, self.sizes[-1], lx.uniforms_per_sample + lxp.uniforms_per_sample)

    @property
    def rho(self) -> fmpq:
        return self.u / self.v

    @property
    def seed(self) -> int:
        """The sampler's seed, derived from the input object (DESIGN: no free choice)."""
        return MC.derive_seed(self.to_json2())

    def to_json2(self) -> dict:
        out: dict[str, Any] = {"kind": "lobes", "law": self.law.to_json(), "u": fmpq_str(self.u),
                               "v": fmpq_str(self.v), "sizes": list(self.sizes), "paths": self.paths,
                               "delta": fmpq_str(self.delta)}
        if self.law_X is not None:
            out["law_X"] = self.law_X.to_json()
        if self.law_Xprime is not None:
            out["law_Xprime"] = self.law_Xprime.to_json()
        if self.dependence != "independent":
            out["dependence"] = self.dependence
        S = self.S
        if (S.form, S.coupling, S.scale_pos, S.scale_neg, S.extra_zeros) != ("symmetric", 0, None, None, 0):
            out["S"] = {"form": S.form, "coupling": fmpq_str(S.coupling),
                        "scale_pos": fmpq_str(S.scale_pos if S.scale_pos is not None else self.v),
                        "scale_neg": fmpq_str(S.scale_neg if S.scale_neg is not None else self.u),
                        "extra_zeros": S.extra_zeros}
        return out

    to_json = to_json2

    @staticmethod
    def from_document(doc: Any, where: str = "input") -> "LobesInput":
        """From {"law": …, "u": q, "v": q, "sizes": [ints], "paths": R, "delta": "1/k", and the
        optional "law_X", "law_Xprime", "dependence", "S": {"form", "coupling", "scale_pos",
        "scale_neg", "extra_zeros"}}; a seed is refused (it follows from the input).  QKInputError."""
        from ..math.accumulation import MatrixSpec, parse_positive_law

        if not isinstance(doc, dict):
            raise QKInputError(f"{where}: a lobes input is a JSON object")
        if "seed" in doc:
            raise QKInputError(f"{where}: a lobes input has no seed: it is derived from the input "
                               f"({MC.SEED_DERIVATION})")
        extra = set(doc) - {"kind", "law", "u", "v", "sizes", "paths", "delta", "law_X", "law_Xprime",
                            "dependence", "S"}
        if extra:
            raise QKInputError(f"{where}: unknown field(s) {sorted(extra)} of a lobes input")
        law = parse_positive_law(doc.get("law"), f"{where}: law")
        u, v = (parse_rational(doc.get(k, 1), f"{where}: {k}") for k in ("u", "v"))
        sizes = doc.get("sizes", [10, 100, 1000])
        if not isinstance(sizes, list):
            raise QKInputError(f"{where}: sizes must be a list of sample sizes")
        sizes = tuple(parse_integer(n, f"{where}: a sample size") for n in sizes)
        opt = {k: parse_positive_law(doc[k], f"{where}: {k}") for k in ("law_X", "law_Xprime") if k in doc}
        S = doc.get("S", {})
        if not isinstance(S, dict) or set(S) - {"form", "coupling", "scale_pos", "scale_neg", "extra_zeros"}:
            raise QKInputError(f"{where}: S is {{\"form\", \"coupling\", \"scale_pos\", \"scale_neg\", \"extra_zeros\"}}")
        spec = MatrixSpec(str(S.get("form", "symmetric")), parse_rational(S.get("coupling", 0), f"{where}: S.coupling"),
                          parse_rational(S["scale_pos"], f"{where}: S.scale_pos") if "scale_pos" in S else None,
                          parse_rational(S["scale_neg"], f"{where}: S.scale_neg") if "scale_neg" in S else None,
                          parse_integer(S.get("extra_zeros", 0), f"{where}: S.extra_zeros"))
        if spec.scale_pos is not None and spec.scale_pos == v:
            spec = MatrixSpec(spec.form, spec.coupling, None, spec.scale_neg, spec.extra_zeros)
        if spec.scale_neg is not None and spec.scale_neg == u:
            spec = MatrixSpec(spec.form, spec.coupling, spec.scale_pos, None, spec.extra_zeros)
        if abs(spec.extra_zeros) > 2 * 10 ** 6:
            raise QKInputError(f"{where}: S.extra_zeros must lie in [-2·10^6, 2·10^6]")
        return LobesInput(law, u, v, sizes, parse_integer(doc.get("paths", 32), f"{where}: paths"),
                          MC.check_delta(doc.get("delta", "1/1000"), f"{where}: delta"), opt.get("law_X"),
                          opt.get("law_Xprime"), str(doc.get("dependence", "independent")), spec)

    def describe(self) -> str:
        return f"lobes {self.law.label()}, u={fmpq_str(self.u)}, v={fmpq_str(self.v)}, sizes {list(self.sizes)}"
