"""Self-attention dynamics (docs/MATH.md, Clustering regimes), simulated in floating point: *empirical* evidence.

Tokens x_1..x_n ∈ R^d move by ẋ_i = Σ_j P_ij(t) V x_j with the row-stochastic softmax
P_ij = exp⟨Qx_i, Kx_j⟩ / Σ_l exp⟨Qx_i, Kx_l⟩.  The rescaled tokens z_i = e^{−tV}x_i move by
ż_i = Σ_j P_ij V(z_j − z_i), with P still evaluated at x = e^{tV}z.

Integrators (``method`` × ``coords``), step Δt = ``dt`` up to the horizon T:

* ``euler`` in x -- the layer picture x^{k+1} = x^k + Δt Σ_j P_ij^k V x_j^k;
* ``euler`` in z -- the discrete rescaled tokens z^k = R^{−k}x^k with R = I + ΔtV, advanced
  as z^{k+1} = z^k + Δt R^{−1} Σ_j P_ij V(z_j − z_i) (P at x^k = R^k z^k): exactly the
  rescaling of the Euler layers, without their exponential growth;
* ``rk4`` in x or in z -- classical Runge–Kutta on ẋ, or on (z, E) with Ė = VE, E(t) = e^{tV}.

Everything works on batches: tokens of shape (B, n, d) (one batch entry per initial
condition).  Softmax rows are computed stably (max subtracted).  Nothing here decides a
theorem: the checks report what the simulation shows, with Δt, T and tolerances.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

METHODS = ("euler", "rk4")
COORDS = ("x", "z")


def softmax_rows(S: np.ndarray) -> np.ndarray:
    """Row-wise softmax of the last axis, stable (max subtracted).

    >>> softmax_rows(np.array([[0.0, 0.0], [1000.0, 0.0]])).round(6).tolist()
    [[0.5, 0.5], [1.0, 0.0]]
    """
    S = S - S.max(axis=-1, keepdims=True)
    E = np.exp(np.maximum(S, -300.0))  # a weight below e^-300 is 0 for every purpose; keeps products normal (fast)
    return E / E.sum(axis=-1, keepdims=True)


def attention(x: np.ndarray, Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    """P(x) for tokens x of shape (B, n, d): P[b, i, j] = softmax_j ⟨Q x_i, K x_j⟩."""
    q, k = x @ Q.T, x @ K.T
    return softmax_rows(q @ np.swapaxes(k, -1, -2))


@dataclass
class Trajectory:
    """A simulated run: times (steps+1,), tokens (steps+1, B, n, d) in the chosen
    coordinates, P (steps+1, B, n, n), and the parameters."""

    t: np.ndarray
    tokens: np.ndarray
    P: np.ndarray
    method: str
    coords: str
    dt: float
    horizon: float
    meta: dict = field(default_factory=dict)


def simulate(x0: np.ndarray, Q: np.ndarray, K: np.ndarray, V: np.ndarray, dt: float, horizon: float,
             method: str = "rk4", coords: str = "z", keep: int = 200) -> Trajectory:
    """Integrate the dynamics from x0 ((n, d) or (B, n, d)); keep about ``keep`` snapshots.

    Raises ValueError for a bad method/coords, a non-positive step or horizon, or a
    singular R = I + ΔtV (Euler in z)."""
    if method not in METHODS or coords not in COORDS:
        raise ValueError(f"method must be one of {METHODS} and coords one of {COORDS}")
    if not (dt > 0 and horizon > 0):
        raise ValueError("the step and the horizon must be positive")
    x0 = np.asarray(x0, dtype=np.float64)
    single = x0.ndim == 2
    X = x0[None] if single else x0
    d = X.shape[-1]
    Q, K, V = (np.asarray(A, dtype=np.float64) for A in (Q, K, V))
    I = np.eye(d)
    steps = int(np.ceil(horizon / dt - 1e-9))
    every = max(1, steps // keep)
    Rinv = None
    if method == "euler" and coords == "z":
        R = I + dt * V
        if abs(np.linalg.det(R)) == 0:
            raise ValueError("R = I + ΔtV is singular: the discrete rescaling is undefined")
        Rinv = np.linalg.inv(R)
    E = I.copy()
    state = X.copy()
    ts, toks, Ps = [0.0], [state.copy()], [attention(state @ E.T, Q, K)]

    def fx(x):
        return attention(x, Q, K) @ x @ V.T

    def fz(z, E):
        P = attention(z @ E.T, Q, K)
        return (P @ z - z) @ V.T

    for k in range(1, steps + 1):
        if coords == "x":
            if method == "euler":
                state = state + dt * fx(state)
            else:
                k1 = fx(state)
                k2 = fx(state + dt / 2 * k1)
                k3 = fx(state + dt / 2 * k2)
                k4 = fx(state + dt * k3)
                state = state + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        elif method == "euler":
            state = state + dt * fz(state, E) @ Rinv.T
            E = E + dt * V @ E
        else:
            a1, e1 = fz(state, E), V @ E
            a2, e2 = fz(state + dt / 2 * a1, E + dt / 2 * e1), V @ (E + dt / 2 * e1)
            a3, e3 = fz(state + dt / 2 * a2, E + dt / 2 * e2), V @ (E + dt / 2 * e2)
            a4, e4 = fz(state + dt * a3, E + dt * e3), V @ (E + dt * e3)
            state = state + dt / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
            E = E + dt / 6 * (e1 + 2 * e2 + 2 * e3 + e4)
        if k % every == 0 or k == steps:
            x = state if coords == "x" else state @ E.T
            ts.append(k * dt)
            toks.append(state.copy())
            Ps.append(attention(x, Q, K))
    tokens, P = np.array(toks), np.array(Ps)
    if single:
        tokens, P = tokens[:, 0], P[:, 0]
    return Trajectory(np.array(ts), tokens, P, method, coords, dt, steps * dt, {"steps": steps})


def cluster_count(points: np.ndarray, tol: float) -> int:
    """Clusters of the points (n, d) at distance tolerance tol·max(1, max‖p‖): connected
    components of the graph joining points closer than that (single linkage).

    >>> cluster_count(np.array([[0.0, 0.0], [1e-9, 0.0], [1.0, 1.0]]), 1e-6)
    2
    """
    n = len(points)
    scale = max(1.0, float(np.max(np.linalg.norm(points, axis=1)))) if n else 1.0
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    D = np.linalg.norm(points[:, None, :] - points[None, :, :], axis=-1)
    for i in range(n):
        for j in range(i + 1, n):
            if D[i, j] <= tol * scale:
                parent[find(i)] = find(j)
    return len({find(i) for i in range(n)})


# ---------------------------------------------------------------------------
# Theorem 2.1 (d = 1), empirically


@dataclass
class LowRankCheck:
    """The d = 1 check over many initial conditions: per sample, the rows of the final P
    that are e_1 / e_n (tokens sorted increasingly) within ``tol``, the exceptional rows,
    the numerical rank, and how much P still moved over the last unit of time."""

    n: int
    samples: int
    dt: float
    horizon: float
    tol: float
    passed: int
    exceptional_max: int
    ranks: dict
    max_last_change: float
    failures: list
    same_sign_final: int = 0  # samples whose tokens all have one sign at T (then every row is e_1, or every row e_n)


def low_rank_1d(n: int, samples: int, seed: int, dt: float = 0.05, horizon: float = 30.0,
                tol: float = 1e-6, method: str = "rk4") -> LowRankCheck:
    """Theorem 2.1 on ``samples`` random initial conditions with n tokens: x_i(0) i.i.d.
    N(0, 1) (pairwise distinct almost surely), V and QK drawn uniformly in [1/2, 2] per sample.
    Integrated in the rescaled coordinates (bounded), P(T) read at x = e^{TV}z.  A sample
    passes when every row but at most one is e_1 or e_n within ``tol`` and rank P(T) ≤ 3
    (singular values above tol·σ₁)."""
    rng = np.random.default_rng(seed)
    x0 = rng.standard_normal((samples, n, 1))
    Vs = rng.uniform(0.5, 2.0, samples)
    QKs = rng.uniform(0.5, 2.0, samples)
    # batch with per-sample scalars: scale time by V (d = 1: ż = V Σ P (z_j − z_i), P at e^{tV} z)
    # simulate each (V, QK) pair through the batch formulation with Q = QK, K = 1, V = V per sample
    steps = int(np.ceil(horizon / dt - 1e-9))
    z = x0[..., 0].copy()
    Vb, QKb = Vs[:, None], QKs[:, None, None]
    e = np.ones(samples)

    def P_of(z, e):
        x = z * e[:, None]
        return softmax_rows(QKb * x[:, :, None] * x[:, None, :])

    def f(z, e):
        P = P_of(z, e)
        return Vb * (np.einsum("bij,bj->bi", P, z) - z)

    P_prev = None
    for k in range(1, steps + 1):
        if method == "euler":
            z, e = z + dt * f(z, e) / (1 + dt * Vb), e * (1 + dt * Vs)
        else:
            a1 = f(z, e)
            a2 = f(z + dt / 2 * a1, e * np.exp(dt / 2 * Vs))
            a3 = f(z + dt / 2 * a2, e * np.exp(dt / 2 * Vs))
            a4 = f(z + dt * a3, e * np.exp(dt * Vs))
            z, e = z + dt / 6 * (a1 + 2 * a2 + 2 * a3 + a4), e * np.exp(dt * Vs)
        if abs(k * dt - (horizon - 1.0)) < dt / 2:
            P_prev = P_of(z, e)
    P = P_of(z, e)
    last = float(np.max(np.abs(P - P_prev))) if P_prev is not None else float("nan")
    order = np.argsort(x0[..., 0], axis=1)  # the theorem sorts the initial tokens (order is preserved)
    ranks: dict[int, int] = {}
    passed, exc_max, failures = 0, 0, []
    for b in range(samples):
        Pb = P[b][np.ix_(order[b], order[b])]
        first = np.abs(Pb[:, 0] - 1) <= tol
        lastc = np.abs(Pb[:, -1] - 1) <= tol
        exceptional = int(np.sum(~(first | lastc)))
        s = np.linalg.svd(Pb, compute_uv=False)
        r = int(np.sum(s > tol * s[0]))
        ranks[r] = ranks.get(r, 0) + 1
        exc_max = max(exc_max, exceptional)
        if exceptional <= 1 and r <= 3:
            passed += 1
        elif len(failures) < 5:
            failures.append({"sample": b, "exceptional_rows": exceptional, "rank": r})
    same = int(np.sum(np.all(z > 0, axis=1) | np.all(z < 0, axis=1)))
    return LowRankCheck(n, samples, dt, steps * dt, tol, passed, exc_max, dict(sorted(ranks.items())), last,
                        failures, same)


def example_d2(eps: float = 0.2, dt: float = 0.01, horizon: float = 40.0, method: str = "rk4") -> dict:
    """x_1(0) = (1, ε), x_2(0) = (1, −ε) with Q = K = V = I_2: P(t) → I_2 (rank 2) while the
    rescaled tokens end up within a tiny distance of each other (one cluster).

    By symmetry P = [[p, 1−p], [1−p, p]] and δ = x_1 − x_2 grows by δ' = (2p − 1)δ with
    2p − 1 = tanh(|δ|²/4): P leaves (1/2)11ᵀ only after t ≈ 1/(2ε²), and meanwhile the rescaled
    tokens approach each other like e^{−t}.  In float64 the score difference ε²-small against
    scores of size e^{2t} is lost below ε ≈ 0.1 (P then stays at 1/2 numerically), hence the
    default ε = 0.2 and T = 40."""
    I = np.eye(2)
    tr = simulate(np.array([[1.0, eps], [1.0, -eps]]), I, I, I, dt, horizon, method, "z")
    z = tr.tokens[-1]
    return {"eps": eps, "dt": dt, "horizon": tr.horizon, "method": method, "P_final": tr.P[-1].tolist(),
            "distance_final": float(np.linalg.norm(z[0] - z[1])), "z_final": z.tolist(),
            "rank_P_final": int(np.linalg.matrix_rank(tr.P[-1], tol=1e-6)),
            "clusters_at_tol_1e-2": cluster_count(z, 1e-2)}


def plot(tr: Trajectory, path, title: str = "") -> None:
    """PNG: the tokens' paths (the first two coordinates; start ○, end ●) and the attention
    matrix P(t) (row i: the weights token i puts on tokens j) as heat maps at three times,
    with one colour bar (0 … 1).  Written atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from ..io.outputs import atomic_savefig

    toks = tr.tokens if tr.tokens.ndim == 3 else tr.tokens[:, 0]
    P = tr.P if tr.P.ndim == 3 else tr.P[:, 0]
    n, d = toks.shape[1], toks.shape[2]
    fig = plt.figure(figsize=(14, 4.9))
    gs = fig.add_gridspec(1, 5, width_ratios=[2.3, 0.12, 1, 1, 1], wspace=0.1)
    ax = fig.add_subplot(gs[0, 0])
    for i in range(n):
        xs = toks[:, i, 0]
        ys = toks[:, i, 1] if d > 1 else tr.t
        ax.plot(xs, ys, lw=1)
        ax.plot(xs[0], ys[0], "o", mfc="none", color="k", ms=4)
        ax.plot(xs[-1], ys[-1], "o", color="k", ms=4)
    ax.set_xlabel(f"{tr.coords}_1 (first coordinate)")
    ax.set_ylabel(f"{tr.coords}_2 (second coordinate)" if d > 1 else "t")
    ax.set_title(f"{n} tokens ({'first two coordinates of ' if d > 2 else ''}{tr.coords}); {tr.method}, "
                 f"Δt = {tr.dt:g}, T = {tr.horizon:g}", fontsize=9)
    ax.legend(handles=[Line2D([], [], marker="o", mfc="none", color="k", ls="", ms=4, label="t = 0"),
                       Line2D([], [], marker="o", color="k", ls="", ms=4, label=f"t = T = {tr.horizon:g}")],
              fontsize=8, loc="best", framealpha=0.85)
    fig.add_subplot(gs[0, 1]).axis("off")  # space between the paths and the matrices
    idx = sorted({0, len(tr.t) // 2, len(tr.t) - 1})
    while len(idx) < 3:
        idx.append(idx[-1])
    ticks = list(range(n)) if n <= 12 else list(range(0, n, max(1, n // 6)))
    im = None
    heat = []
    for k, j in enumerate(idx[:3]):
        a = fig.add_subplot(gs[0, 2 + k])
        heat.append(a)
        im = a.imshow(P[j], vmin=0, vmax=1, cmap="viridis", interpolation="nearest")
        a.set_title(f"P(t = {tr.t[j]:.3g})", fontsize=9)
        a.set_xticks(ticks, [str(t) for t in ticks], fontsize=7)
        a.set_xlabel("key token j", fontsize=8)
        if k == 0:
            a.set_yticks(ticks, [str(t) for t in ticks], fontsize=7)
            a.set_ylabel("query token i", fontsize=8)
        else:
            a.set_yticks(ticks, [""] * len(ticks))
    cb = fig.colorbar(im, ax=heat, fraction=0.025, pad=0.02, shrink=0.7)
    cb.set_label("attention weight P_ij (each row sums to 1)", fontsize=8)
    cb.ax.tick_params(labelsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    atomic_savefig(fig, path, dpi=110, bbox_inches="tight")
    plt.close(fig)
