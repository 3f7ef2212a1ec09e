"""The well-formedness pass: a certificate's input has the Lean types of the declarations
it is evaluated on, checked before anything else (DESIGN.md, "Lean's semantics, once").

One function per input kind (:data:`WF`) reads the input's exact objects and checks the
types Lean gives them: ``Matrix (Fin N) (Fin N) ℝ`` is square, one index type for every
matrix of an input, vectors of one length, a basis is invertible, a law is a probability
law.  It returns the exact objects (:class:`Args`: matrices as ``fmpq_mat``, vectors as
lists of ``fmpq``, sizes as ``int``); rules read them with ``q.arg(name)``.  A malformed
input is ``Invalid("input", one line)``.  Facts about the input (a hypothesis, an
orthogonal U, a symmetric S) are not types: they are the rules' business.

Types that depend on the declaration rather than on the input kind (a vector of even
length 2m for Appendix B, S of the size of x for Lemma 9) are checked per declaration:
``thm(..., args=(...))`` in :mod:`.table` with the checks of this module's second half."""

from __future__ import annotations

from typing import Any, Callable

from flint import fmpq, fmpq_mat

from . import limits
from .jsonio import Invalid, rat, require


class Args(dict):
    """The exact objects of a well-formed input, by field name."""


WF: dict[str, Callable[[dict], Args]] = {}


def kind(name: str):
    def reg(fn):
        assert name not in WF, name
        WF[name] = fn
        return fn
    return reg


def well_formed(inp: dict) -> Args:
    """The exact objects of ``inp`` after its kind's type checks (Invalid when malformed)."""
    fn = WF.get(inp["kind"])
    require(fn is not None, "input", f"no well-formedness rule for input kind {inp['kind']!r}")
    return fn(inp)


# -- readers with their types ---------------------------------------------------------


def matrix(x: list, what: str, rows: int | None = None, cols: int | None = None) -> fmpq_mat:
    """Rows of rationals as an R × C matrix (rectangular; R, C as given when given)."""
    require(isinstance(x, list) and x and all(isinstance(r, list) and r for r in x), "input",
            f"{what} must be a non-empty list of non-empty rows")
    require(len({len(r) for r in x}) == 1, "input", f"{what} has rows of different lengths")
    R, C = len(x), len(x[0])
    require(R * C <= limits.MAX_INLINE_ENTRIES, "input", f"{what} has more than {limits.MAX_INLINE_ENTRIES} entries")
    require(rows is None or R == rows, "input", f"{what} has {R} rows, its type needs {rows}")
    require(cols is None or C == cols, "input", f"{what} has {C} columns, its type needs {cols}")
    return fmpq_mat([[rat(v) for v in r] for r in x])


def square(x: list, what: str, N: int | None = None) -> fmpq_mat:
    """An N × N matrix (``Matrix (Fin N) (Fin N) ℝ``)."""
    require(isinstance(x, list) and x and all(isinstance(r, list) and len(r) == len(x) for r in x), "input",
            f"{what} must be square (Matrix (Fin N) (Fin N) ℝ)")
    return matrix(x, what, N, N)


def vector(x: list, what: str, n: int | None = None) -> list[fmpq]:
    """A vector of rationals of length n (``Fin n → ℝ``)."""
    require(isinstance(x, list) and (n is None or len(x) == n), "input",
            f"{what} has length {len(x) if isinstance(x, list) else '?'}, its type needs {n}")
    return [rat(v) for v in x]


def invertible(X: fmpq_mat, what: str) -> fmpq_mat:
    """X, after checking it is invertible (a basis, a unit)."""
    require(X.nrows() == X.ncols() and X.det() != 0, "input", f"{what} is singular, not a basis")
    return X


# -- one rule per input kind ----------------------------------------------------------


@kind("matrix")
def _matrix(i: dict) -> Args:
    return Args(L=square(i["L"], "L"))


@kind("matrix_pair")
def _pair(i: dict) -> Args:
    L = square(i["L"], "L")
    return Args(L=L, U=square(i["U"], "U", L.nrows()))


@kind("matrix_bound")
def _bound(i: dict) -> Args:
    return Args(L=square(i["L"], "L"), n=i["n"])


@kind("matrix_fiber")
def _fiber(i: dict) -> Args:
    L = square(i["L"], "L")
    N = L.nrows()
    return Args(L=L, H=square(i["H"], "H", N), P=square(i["P"], "P", N), face=i["face"])


@kind("matrix_subspace")
def _subspace(i: dict) -> Args:
    L = square(i["L"], "L")
    return Args(L=L, n=i["n"], V=matrix(i["V"], "V (rows spanning the subspace)", cols=L.nrows()))


@kind("head")
def _head(i: dict) -> Args:
    """Q, K : C → H with C = ℝ^N, H = ℝ^n: W_Q, W_K are n × N (n = 0 allowed: W_Q = W_K = [] with N
    given); b a basis of C indexed by Fin N; k : ℕ (GramForm.trace_pow_symPart); lam : Fin (2n) → ℝ."""
    if i["W_Q"] == [] or i["W_K"] == []:
        require(i["W_Q"] == [] and i["W_K"] == [] and "N" in i, "input",
                "a head with n = 0 has W_Q = W_K = [] and gives N")
        N = i["N"]
        WQ = WK = fmpq_mat(0, N)
    else:
        require("N" not in i, "input", "N is given only for a head with n = 0")
        WQ = matrix(i["W_Q"], "W_Q")
        WK = matrix(i["W_K"], "W_K", WQ.nrows(), WQ.ncols())
    n, N = WQ.nrows(), WQ.ncols()
    a = Args(W_Q=WQ, W_K=WK, n=n, N=N)
    if "B" in i:
        a["B"] = invertible(square(i["B"], "B", N), "B")
    if "k" in i:
        a["k"] = i["k"]
    if "lam" in i:
        require(len(i["lam"]) == 2 * n, "input", f"lam has {len(i['lam'])} entries, its type Fin (2n) → ℝ needs {2 * n}")
        a["lam"] = [exact_real(x, f"lam[{j}]") for j, x in enumerate(i["lam"])]
    return a


def exact_real(x: Any, what: str):
    """An exact real of an input: a rational, or {poly, interval} with exactly one distinct root of
    poly in the closed interval (Sturm count), read as that root (a rational or a Root)."""
    from flint import fmpz_poly

    from .algebra import Root, sign_at, sturm_count

    if isinstance(x, str):
        return rat(x)
    f = fmpz_poly([int(c) for c in x["poly"]])
    lo, hi = rat(x["interval"][0]), rat(x["interval"][1])
    require(not f.is_zero() and f.degree() >= 1 and lo <= hi, "input", f"{what}: a polynomial of degree ≥ 1 and lo ≤ hi")
    g = f // f.gcd(f.derivative())  # the square-free part: same distinct roots
    count = sturm_count(g, lo, hi) + (sign_at(g, lo) == 0)
    require(count == 1, "input", f"{what}: {count} distinct roots of the polynomial lie in [{lo}, {hi}], not one")
    if sign_at(g, lo) == 0:
        return lo
    if sign_at(g, hi) == 0:
        return hi
    return Root(g, lo, hi)


@kind("matrix_spectrum")
def _matrix_spectrum(i: dict) -> Args:
    """S : Matrix (Fin k) (Fin k) ℝ (any), lam, lam' : Fin m → ℝ (one m)."""
    a = Args(S=square(i["S"], "S"), lam=[exact_real(x, f"lam[{j}]") for j, x in enumerate(i["lam"])])
    if "lam2" in i:
        require(len(i["lam2"]) == len(i["lam"]), "input", "lam and lam2 must have one length m")
        a["lam2"] = [exact_real(x, f"lam2[{j}]") for j, x in enumerate(i["lam2"])]
    return a


def _slice(t: dict, n: int, what: str) -> None:
    for k in ("rows", "cols"):
        if k in t:
            a, b = t[k]
            require(0 <= a < b, "input", f"{what}: {k} [{a}, {b}) is empty")


@kind("weights")
def _weights(i: dict) -> Args:
    """A real head: W_Q and W_K (n × N) as slices of weights files, each role once."""
    roles = [t["role"] for t in i["tensors"]]
    require(sorted(roles) == ["W_K", "W_Q"], "input", "the tensors must give W_Q and W_K once each")
    n, N = i["n"], i["N"]
    for t in i["tensors"]:
        _slice(t, n, t["role"])
        for k in ("rows", "cols"):
            if k in t:
                require(t[k][1] - t[k][0] == n, "input", f"{t['role']}: {k} {t[k]} do not hold n = {n} rows")
    limits.over("entries of W_K and W_Q", 2 * n * N, limits.MAX_HEAD_ENTRIES, "MAX_HEAD_ENTRIES")
    return Args(n=n, N=N)


@kind("value_head")
def _value_head(i: dict) -> Args:
    roles = sorted(t["role"] for t in i["tensors"])
    require(roles == ["W_K", "W_O", "W_Q", "W_V"], "input", "the tensors must give W_Q, W_K, W_V and W_O once each")
    for t in i["tensors"]:
        _slice(t, i["n"], t["role"])
    return Args(n=i["n"], N=i["N"])


@kind("family")
def _family(i: dict) -> Args:
    """v : Fin N → EuclideanSpace ℝ (Fin N) (row i is v_i), s a set of indices of Fin N."""
    v = square(i["v"], "v (N vectors of length N)")
    require(all(0 <= k < v.nrows() for k in i["s"]) and len(set(i["s"])) == len(i["s"]), "input",
            "s must be distinct indices of Fin N")
    return Args(v=v, s=list(i["s"]), N=v.nrows())


@kind("rank_one")
def _rank_one(i: dict) -> Args:
    """u, v : Fin N → ℝ (one length), s : ℝ."""
    u = vector(i["u"], "u")
    return Args(u=u, v=vector(i["v"], "v", len(u)), s=rat(i["s"]), N=len(u))


@kind("theta_point")
def _theta_point(i: dict) -> Args:
    return Args(p=vector(i["p"], "p", 4), N=i["N"])


@kind("vector")
def _vector(i: dict) -> Args:
    """x : Fin n → ℝ; y of the same length; c : ℝ; S square (its size is tied to x by each
    declaration, e.g. 2m × 2m for Lemma 9)."""
    x = vector(i["x"], "x")
    a = Args(x=x, normalize=i["normalize"], n=len(x))
    if "y" in i:
        a["y"] = vector(i["y"], "y", len(x))
    if "c" in i:
        a["c"] = rat(i["c"])
    if "S" in i:
        a["S"] = square(i["S"], "S")
    return a


@kind("rho")
def _rho(i: dict) -> Args:
    return Args(rho=rat(i["rho"]))


_FAMILY = {"exponential": ("rate",), "gamma": ("shape", "scale"), "uniform": ("lo", "hi"), "pareto": ("scale", "shape")}


def _positive_law(law: dict, what: str) -> tuple:
    """A law of the lobes study: ("exponential", λ), ("gamma", k, θ) with an integer shape
    1 ≤ k ≤ 64 (the sampler adds k exponentials), ("uniform", lo, hi) with lo < hi, ("pareto", x_m,
    α) with 1/16 ≤ α ≤ 64; every other parameter positive."""
    fam = law["family"]
    need = _FAMILY[fam]
    require(set(law) == {"family", *need}, "input", f"{what}: a {fam} law takes exactly {', '.join(need)}")
    if fam == "gamma":
        require(isinstance(law["shape"], int) and 1 <= law["shape"] <= 64 and rat(law["scale"]) > 0, "input",
                f"{what}: a gamma law has an integer shape 1..64 and a positive scale")
        return ("gamma", law["shape"], rat(law["scale"]))
    p = [rat(law[k]) for k in need]
    if fam == "uniform":
        require(p[0] < p[1], "input", f"{what}: a uniform law needs lo < hi")
        return ("uniform", p[0], p[1])
    require(all(v > 0 for v in p), "input", f"{what}: the parameters of a {fam} law must be positive")
    if fam == "pareto":
        require(fmpq(1, 16) <= p[1] <= 64, "input", f"{what}: a Pareto shape lies in [1/16, 64]")
    return (fam, *p)


@kind("lobes")
def _lobes(i: dict) -> Args:
    """Sampled lobes (Lemma 6, Theorem 5): γ, the laws X and X' actually have (γ when absent), u, v,
    increasing sizes, the paths and the sign test's level δ = 1/k (20 ≤ k ≤ 10¹²), the dependence,
    and S_n (form, coupling, spectral scales, extra zeros; defaults: symmetric, v, u, 0)."""
    s = i["sizes"]
    require(all(a < b for a, b in zip(s, s[1:])), "input", "sizes must increase strictly")
    limits.over("samples", s[-1], limits.MAX_LOBES, "MAX_LOBES")
    gamma = _positive_law(i["law"], "law")
    delta = rat(i["delta"])
    require(delta.p == 1 and 20 <= delta.q <= 10 ** 12, "input", "delta must be 1/k with 20 ≤ k ≤ 10^12")
    S = i.get("S", {"form": "symmetric", "coupling": "0", "scale_pos": i["v"], "scale_neg": i["u"], "extra_zeros": 0})
    return Args(law=gamma, law_X=_positive_law(i["law_X"], "law_X") if "law_X" in i else gamma,
                law_Xprime=_positive_law(i["law_Xprime"], "law_Xprime") if "law_Xprime" in i else gamma,
                u=rat(i["u"]), v=rat(i["v"]), sizes=list(s), paths=i["paths"], delta=delta,
                dependence=i.get("dependence", "independent"),
                S={"form": S["form"], "coupling": rat(S["coupling"]), "scale_pos": rat(S["scale_pos"]),
                   "scale_neg": rat(S["scale_neg"]), "extra_zeros": S["extra_zeros"]})


def _law(j: dict) -> tuple:
    """("atoms", [(v, p), …]) -- a Gaussian of variance 0 is the point mass at its mean --,
    ("gauss", m, v) with v > 0, or ("pareto", x_m, α, symmetric) with x_m > 0, 1/4 ≤ α ≤ 64."""
    if "gaussian" in j:
        m, v = rat(j["gaussian"]["mean"]), rat(j["gaussian"]["variance"])
        require(v >= 0, "input", "a Gaussian variance must be ≥ 0")
        return ("gauss", m, v) if v else ("atoms", [(m, fmpq(1))])
    if "pareto" in j:
        xm, a = rat(j["pareto"]["scale"]), rat(j["pareto"]["shape"])
        require(xm > 0 and fmpq(1, 4) <= a <= 64, "input", "a Pareto law needs scale > 0 and 1/4 ≤ shape ≤ 64")
        return ("pareto", xm, a, j["pareto"]["symmetric"])
    at = [(rat(x), rat(p)) for x, p in j["atoms"]]
    ok = all(p > 0 for _, p in at) and sum(p for _, p in at) == 1 and all(a[0] < b[0] for a, b in zip(at, at[1:]))
    require(ok, "input", "a finite law needs strictly increasing atoms with positive probabilities summing to 1")
    return ("atoms", at)


@kind("law")
def _law_input(i: dict) -> Args:
    """A random matrix with exact entry laws: L (N × N, model iid) or W_K, W_Q (n × N, model qk);
    each entry a probability law -- one law, or the distinct laws once and an index per entry
    (``distinct`` lists the laws used, so a predicate over every entry costs O(n·N)); ``uniform``
    the law of a matrix given by one law;
    ``copies`` {target entry: (source entry, ±1)}: the target is ±the source, so its stated law
    must be that law, no source is a target, no target twice; the Monte Carlo parameters."""
    from .sampling import negated

    N = i["N"]
    n = i.get("n", 0)
    rows = N if i["model"] == "iid" else n
    names = ("L",) if i["model"] == "iid" else ("W_K", "W_Q")
    grids, uniform, distinct = {}, {}, {}
    for k in names:
        x = i[k]
        limits.over("entry laws", rows * N, limits.MAX_INLINE_ENTRIES, "MAX_INLINE_ENTRIES")
        if "index" not in x:   # one law for every entry
            law = _law(x)
            grids[k], uniform[k], distinct[k] = [[law] * N for _ in range(rows)], law, [law] if rows * N else []
            continue
        table = [_law(l) for l in x["laws"]]   # the distinct laws once; each entry an index into them
        idx = [[int(i) for i in r.split(",")] if r else [] for r in x["index"]]   # the schema's pattern: digits
        require(all(i < len(table) for r in idx for i in r), "input", f"{k}: an index is past its laws")
        g = [[table[i] for i in r] for r in idx]
        require(len(g) == rows and all(len(r) == N for r in g), "input", f"{k} must be {rows}×{N} laws")
        grids[k], uniform[k] = g, None
        used = {i for r in idx for i in r}
        distinct[k] = [table[i] for i in sorted(used)]
    copies: dict = {}
    for c in i.get("copies", []):
        t, s = tuple(c["entry"]), tuple(c["of"])
        for e in (t, s):
            require(e[0] in names and e[1] < rows and e[2] < N, "input", f"copy endpoint {list(e)} is outside the matrices")
        require(t != s and t not in copies, "input", f"entry {list(t)} is copied twice, or from itself")
        copies[t] = (s, c["sign"])
    for t, (s, sign) in copies.items():
        require(s not in copies, "input", f"entry {list(s)} is itself a copy")
        src = grids[s[0]][s[1]][s[2]]
        want = src if sign == 1 else negated(src)
        require(want is not None and want == grids[t[0]][t[1]][t[2]], "input",
                f"entry {list(t)} is ±{list(s)}: its stated law must be that law")
    mc = i.get("monte_carlo")
    if mc is not None:
        d = rat(mc["delta"])
        require(d.p == 1 and 20 <= d.q <= 10 ** 12, "input", "monte_carlo.delta must be 1/k with 20 ≤ k ≤ 10^12")
    return Args(N=N, n=n, model=i["model"], laws=grids, uniform=uniform, distinct=distinct, copies=copies,
                monte_carlo=mc)


@kind("attention_function")
def _attention_function(i: dict) -> Args:
    """σ : C^k → ℝ^k (k scores), w : C^k → ℝ^k (k weights), φ : ℝ^k → ℝ."""
    k = i["k"]
    require(len(i["scores"]) == k, "input", f"scores: k = {k} expressions are needed")
    pot, wts = i["potential"], i["weights"]
    if "quadratic" in pot:
        Q = square(pot["quadratic"]["Q"], "Q", k)
        require(Q == Q.transpose(), "input", "the quadratic potential's Q must be symmetric")
        vector(pot["quadratic"]["b"], "b", k)
    if "softmax" in wts:
        require(len(wts["softmax"]["scores"]) == k, "input", f"softmax scores: k = {k} expressions are needed")
    else:
        require(len(wts["polynomial"]) == k, "input", f"weights: k = {k} expressions are needed")
    return Args(k=k, N=i["N"])


@kind("biaffine")
def _biaffine(i: dict) -> Args:
    N = i["N"]
    a = Args(N=N)
    if "decomposition" in i:
        d = i["decomposition"]
        a["B"], a["L"], a["R"] = square(d["B"], "B", N), vector(d["L"], "L", N), vector(d["R"], "R", N)
        a["D"] = rat(d["D"])
    return a


@kind("forms")
def _forms(i: dict) -> Args:
    """B : ℕ → bilinear forms on H = ℝ^n (k Gram matrices, one n); S ∈ End(H) when given."""
    Gs = [square(B, f"B[{d}]") for d, B in enumerate(i["B"])]
    n = Gs[0].nrows()
    require(all(G.nrows() == n for G in Gs), "input", "the forms must be n × n of one n (one space H)")
    k = i.get("k", len(Gs))
    require(k <= len(Gs), "input", f"k = {k} but only B_0 … B_{len(Gs) - 1} are given")
    a = Args(G=Gs, n=n, k=k)
    if "S" in i:
        a["S"] = square(i["S"], "S", n)
    return a


@kind("rope_weights")
def _rope_weights(i: dict) -> Args:
    (a, b), (c, d), cols = i["W_Q"]["rows"], i["W_K"]["rows"], i["cols"]
    n = b - a
    require(a < b and d - c == n, "input", "W_Q and W_K must be slices of n rows each")
    require(len(set(cols)) == len(cols) == n, "input", "cols: n distinct columns of C")
    return Args(n=n, k=i["k"])


@kind("transformer")
def _transformer(i: dict) -> Args:
    """Tokens x : C^ℓ (ℓ × N), heads (weights ℓ × ℓ, or W_Q, W_K n × N), value maps
    W_V (d × N), W_O (N × d), M(y) = W_2 act(W_1 y + b_1) + b_2; inline parts checked here,
    tensor parts when read (:func:`shape`)."""
    a = Args()
    if isinstance(i["x"], list):
        X = matrix(i["x"], "x (tokens as rows)")
        a["x"], a["ell"], a["N"] = X, X.nrows(), X.ncols()
    for h, head in enumerate(i["heads"]):
        if "weights" in head and "ell" in a:
            square(head["weights"], f"heads[{h}].weights", a["ell"])
    if "positions" in i and "ell" in a:
        a["positions"] = matrix(i["positions"], "positions", a["ell"], a["N"])
    if "alpha" in i and "ell" in a:
        a["alpha"] = vector(i["alpha"], "alpha", a["ell"])
    return a


@kind("triple")
def _triple(i: dict) -> Args:
    """Q, K : k × d, V : d × d."""
    Q = matrix(i["Q"], "Q")
    k, d = Q.nrows(), Q.ncols()
    return Args(Q=Q, K=matrix(i["K"], "K", k, d), V=square(i["V"], "V", d))


@kind("user")
def _user(i: dict) -> Args:
    return Args()


# -- per-declaration argument types (thm(..., args=...)) ------------------------------


def shape(X: fmpq_mat, rows: int | None, cols: int | None, what: str) -> fmpq_mat:
    """X after checking its shape (a matrix read from a weights file)."""
    require((rows is None or X.nrows() == rows) and (cols is None or X.ncols() == cols), "input",
            f"{what} is {X.nrows()} × {X.ncols()}, its type needs {rows or '?'} × {cols or '?'}")
    return X


def even_x(q: Any) -> None:
    """x : Fin (2m) → ℝ (Appendices B, C)."""
    require(len(q.arg("x")) % 2 == 0, "input", f"x has length {len(q.arg('x'))}, not 2m")


def needs(*names: str) -> Callable[[Any], None]:
    """The declaration takes these fields of the input (e.g. y, c, S of a vector input)."""
    def check(q: Any) -> None:
        miss = [k for k in names if k not in q.args]
        if miss:
            raise Invalid("input", f"this declaration needs the input's {', '.join(miss)}")
    return check


def S_of_x(q: Any) -> None:
    """S : Matrix (Fin (2m)) (Fin (2m)) ℝ with x : Fin (2m) → ℝ (Lemma 9)."""
    needs("S")(q)
    require(q.arg("S").nrows() == len(q.arg("x")), "input", "S must be n × n for x of length n")
