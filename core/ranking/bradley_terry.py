"""Bradley–Terry fits (docs/methods.md §2): the MM reference, identifiability, Elo, and a batched Newton
solver for bootstrap replicates.

Model: P(i beats j) = π_i / (π_i + π_j), θ = ln π, ties count half a win to each side. Strengths are
reported with mean(π) = 1 and Elo = 400·log10(π) + 1500 (docs/methods.md §2, "Elo conversion").

References: Zermelo (1929); Ford (1957) for existence; Hunter (2004), "MM algorithms for generalized
Bradley–Terry models", Ann. Statist. 32:384, for the MM update.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

ELO_SCALE = 400.0 / np.log(10.0)
ELO_BASE = 1500.0
MM_TOL = 1e-6  # docs/methods.md §2: stop when max |π' − π| < 1e-6
MM_MAX_ITER = 10_000
NONIDENTIFIABLE_PRIOR = 0.5  # one virtual tie against a fixed reference (docs/methods.md §2, "Remedy")
# Newton stops once a step is below this; convergence is quadratic, so the θ error left after that
# last step is ~ its square (≈ 1e-14): the exact MLE, one iteration sooner than a 1e-10 rule.
NEWTON_TOL = 1e-7
NEWTON_MAX_ITER = 100
MAX_NEWTON_STEP = 5.0  # cap |Δθ| per step so a cold start cannot overshoot into overflow


class ConvergenceError(RuntimeError):
    """A solver stopped at its iteration limit without meeting its tolerance."""

    def __init__(self, message: str, iterations: int):
        super().__init__(f"{message} (after {iterations} iterations)")
        self.iterations = iterations


@dataclass(frozen=True)
class BTFit:
    """One Bradley–Terry fit and the settings that produced it."""

    models: tuple[str, ...]
    pi: np.ndarray = field(repr=False)  # strengths, mean 1
    identifiable: bool  # False: the comparison graph is not strongly connected (prior refit)
    prior: float  # virtual ties per model against the reference (0 = pure MLE)
    iterations: int
    converged: bool
    n_components: int  # strongly connected components of the "i beat j" graph
    method: str = "mm"
    tol: float = MM_TOL

    @property
    def theta(self) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(self.pi)

    @property
    def elo(self) -> np.ndarray:
        return elo_from_pi(self.pi)


def check_win_matrix(w: np.ndarray) -> np.ndarray:
    w = np.asarray(w, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"the win matrix must be square, not of shape {w.shape}")
    if np.any(~np.isfinite(w)) or np.any(w < 0):
        raise ValueError("the win matrix must hold finite, non-negative counts")
    if np.any(np.diag(w) != 0):
        raise ValueError("the win matrix must have a zero diagonal (a model does not play itself)")
    return w


def strong_components(w: np.ndarray) -> int:
    """Number of strongly connected components of the graph with an edge i -> j when W[i, j] > 0.

    A finite MLE exists, unique up to scale, iff this is 1 (Ford 1957; Hunter 2004, Assumption 1).
    Tarjan's algorithm (iterative), O(K + edges); plain Python because K is the number of models, and
    scipy.sparse.csgraph would cost more to import than this costs to run.
    """
    edges = np.asarray(w) > 0
    k = len(edges)
    if is_strongly_connected(edges):
        return 1 if k else 0
    successors = [np.flatnonzero(row).tolist() for row in edges]
    index = [-1] * k  # discovery order
    low = [0] * k
    on_stack = [False] * k
    stack: list[int] = []
    count = counter = 0
    for root in range(k):
        if index[root] >= 0:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        work = [(root, 0)]  # (node, next successor to visit)
        while work:
            node, next_edge = work[-1]
            if next_edge < len(successors[node]):
                work[-1] = (node, next_edge + 1)
                succ = successors[node][next_edge]
                if index[succ] < 0:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack[succ] = True
                    work.append((succ, 0))
                elif on_stack[succ]:
                    low[node] = min(low[node], index[succ])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:  # node roots a component: pop it
                count += 1
                while True:
                    member = stack.pop()
                    on_stack[member] = False
                    if member == node:
                        break
    return count


def is_strongly_connected(w: np.ndarray) -> bool:
    """Whether every model reaches every other along edges i -> j (W[i, j] > 0): model 0 reaches all,
    and all reach model 0. Breadth-first, one vectorised step per level."""
    edges = np.asarray(w) > 0
    k = len(edges)
    if k == 0:
        return False
    for graph in (edges, edges.T):
        reached = np.zeros(k, dtype=bool)
        reached[0] = True
        frontier = reached.copy()
        while frontier.any():
            frontier = graph[frontier].any(axis=0) & ~reached
            reached |= frontier
        if not reached.all():
            return False
    return True


def mm(w: np.ndarray, prior: float = 0.0, tol: float = MM_TOL, max_iter: int = MM_MAX_ITER
       ) -> tuple[np.ndarray, int, bool]:
    """Hunter's MM for BT, exactly as docs/methods.md §2 specifies; returns (π with mean 1, iterations, converged).

    prior = 0: Jacobi update π_i' = W_i / Σ_{j≠i, N_ij>0} N_ij / (π_i + π_j), then π' /= mean(π').
    prior = c > 0: every model also has c virtual wins and c virtual losses against a reference with
    π_R = 1, π_i' = (W_i + c) / (Σ_j N_ij / (π_i + π_j) + 2c / (π_i + 1)), no normalisation inside the
    loop (R fixes the scale), convergence on the raw π.
    """
    w = check_win_matrix(w)
    k = len(w)
    n = w + w.T
    wins = w.sum(axis=1)
    pi = np.ones(k)
    if k == 0:
        return pi, 0, True
    for iteration in range(1, max_iter + 1):
        with np.errstate(divide="ignore", invalid="ignore"):
            pair = np.where(n > 0, n / (pi[:, None] + pi[None, :]), 0.0)  # zero diagonal: N_ii = 0
            denom = pair.sum(axis=1)
            if prior > 0:
                new = (wins + prior) / (denom + 2.0 * prior / (pi + 1.0))
            else:
                new = np.where(denom > 0, wins / denom, 0.0)
                new = new / new.mean()
        done = np.max(np.abs(new - pi)) < tol
        pi = new
        if done:
            return pi / pi.mean(), iteration, True
    return pi / pi.mean(), max_iter, False


def fit(w: np.ndarray, models, prior: float | None = None, tol: float = MM_TOL, max_iter: int = MM_MAX_ITER,
        weight_scale: float = 1.0) -> BTFit:
    """Fit BT by MM with the identifiability policy of docs/methods.md §2.

    ``prior=None`` (the default policy): the pure MLE when the graph is strongly connected, otherwise
    a refit with one virtual tie (c = 0.5) and ``identifiable=False``. ``weight_scale`` rescales a
    weighted W so that weights have mean 1 and c keeps its meaning (no effect on the pure MLE).
    """
    w = check_win_matrix(w) * weight_scale
    models = tuple(models)
    if len(models) != len(w):
        raise ValueError(f"{len(models)} model names for a {len(w)}×{len(w)} win matrix")
    components = strong_components(w)
    identifiable = components == 1
    c = (0.0 if identifiable else NONIDENTIFIABLE_PRIOR) if prior is None else float(prior)
    if c < 0:
        raise ValueError(f"prior must be >= 0, not {prior}")
    pi, iterations, converged = mm(w, c, tol, max_iter)
    return BTFit(models, pi, identifiable, c, iterations, converged, components, "mm", tol)


def elo_from_pi(pi: np.ndarray, anchor: tuple[int, float] | None = None) -> np.ndarray:
    """Elo = 400·log10(π) + 1500 (π with mean 1); anchored: 400·log10(π/π_a) + R_a."""
    with np.errstate(divide="ignore"):
        log_pi = np.log(np.asarray(pi, dtype=np.float64))
    if anchor is None:
        return ELO_SCALE * log_pi + ELO_BASE
    index, rating = anchor
    return ELO_SCALE * (log_pi - log_pi[..., index, None]) + rating


def elo_from_theta(theta: np.ndarray) -> np.ndarray:
    """Elo of each row of θ after mean(π) = 1 normalisation (works for (K,) and (B, K))."""
    theta = np.asarray(theta, dtype=np.float64)
    top = theta.max(axis=-1, keepdims=True)
    log_mean = top + np.log(np.mean(np.exp(theta - top), axis=-1, keepdims=True))
    return ELO_SCALE * (theta - log_mean) + ELO_BASE


def predicted_win_rates(elo: np.ndarray) -> np.ndarray:
    """P(i beats j) = 1 / (1 + 10^((Elo_j − Elo_i)/400)); the diagonal is NaN."""
    elo = np.asarray(elo, dtype=np.float64)
    p = 1.0 / (1.0 + np.power(10.0, (elo[None, :] - elo[:, None]) / 400.0))
    np.fill_diagonal(p, np.nan)
    return p


def win_matrix_from_rates(rates: np.ndarray, counts: np.ndarray | None = None) -> tuple[np.ndarray, list[str]]:
    """W from a win-rate matrix (docs/methods.md §2, "From a win-rate matrix"): W_ij = r̃_ij · n_ij.

    r̃_ij = (r_ij + 1 − r_ji) / 2 where r_ij + r_ji ≠ 1 (beyond 1e-9); a pair given from one side
    only takes the complement for the other; missing or zero n is no edge. Without counts every
    observed pair counts once, which is a different estimator (the notes say so).
    """
    r = np.array(rates, dtype=np.float64)
    np.fill_diagonal(r, np.nan)
    notes = []
    both = ~np.isnan(r) & ~np.isnan(r.T)
    off = both & (np.abs(r + r.T - 1.0) > 1e-9)
    if off.any():
        notes.append(f"{int(off.sum()) // 2} pairs symmetrised: r_ij + r_ji != 1")
        r = np.where(off, (r + 1.0 - r.T) / 2.0, r)
    r = np.where(np.isnan(r), 1.0 - r.T, r)  # NaN stays NaN where neither side is given
    observed = ~np.isnan(r)
    if counts is None:
        n = observed.astype(np.float64)
        notes.append("no counts: every observed pair counts as one comparison")
    else:
        n = np.nan_to_num(np.asarray(counts, dtype=np.float64))
    w = np.where(observed & (n > 0), np.nan_to_num(r) * n, 0.0)
    np.fill_diagonal(w, 0.0)
    return w, notes


def pair_form(w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Unordered pairs i < j of a win matrix (K, K) or batch (B, K, K): (i, j, wins of i over j, n_ij)."""
    k = w.shape[-1]
    i, j = np.triu_indices(k, 1)
    wins = w[..., i, j]
    return i, j, wins, wins + w[..., j, i]


def newton(w: np.ndarray, theta0: np.ndarray | None = None, prior: float = 0.0, tol: float = NEWTON_TOL,
           max_iter: int = NEWTON_MAX_ITER) -> tuple[np.ndarray, np.ndarray, int]:
    """Newton's method on θ for one win matrix (K, K) or a batch (B, K, K); the fast solver.

    Returns (θ, converged, iterations) with θ of the batch's shape. See :func:`newton_pairs`.
    """
    w = np.asarray(w, dtype=np.float64)
    single = w.ndim == 2
    i, j, wins, n = pair_form(w[None] if single else w)
    theta, converged, iterations = newton_pairs(i, j, wins, n, w.shape[-1], theta0, prior, tol, max_iter)
    return (theta[0] if single else theta), (converged[0] if single else converged), iterations


def newton_pairs(i: np.ndarray, j: np.ndarray, wins: np.ndarray, n: np.ndarray, k: int,
                 theta0: np.ndarray | None = None, prior: float = 0.0, tol: float = NEWTON_TOL,
                 max_iter: int = NEWTON_MAX_ITER) -> tuple[np.ndarray, np.ndarray, int]:
    """Batched Newton on pair data: ``wins``/``n`` are (B, P) over the unordered pairs (i[p], j[p]).

    Without a prior θ_0 is held at 0 (the likelihood only sees differences); with a prior c > 0 the
    virtual reference fixes the scale and all K parameters move. The log-likelihood is concave, and
    from a warm start (the full-data fit) three or four steps reach the MLE to 1e-10. Working on the
    K(K−1)/2 pairs rather than K×K matrices halves every elementwise pass.
    """
    b = len(wins)
    theta = np.zeros((b, k)) if theta0 is None else np.array(np.broadcast_to(theta0, (b, k)), dtype=np.float64)
    free = slice(0, k) if prior > 0 else slice(1, k)
    if prior == 0:
        theta -= theta[:, :1]
    # Work pair-major, (P, B): rows are gathered by pair, and per-model sums read whole rows.
    wins_t = np.ascontiguousarray(np.asarray(wins, dtype=np.float64).T)
    n_t = np.ascontiguousarray(np.asarray(n, dtype=np.float64).T)
    theta_t = np.ascontiguousarray(theta.T)
    rounds = _model_pair_rounds(i, j, k)
    # The information matrix is built only over the free parameters: pairs touching a fixed θ_0
    # add to the other model's diagonal alone.
    first = free.start
    inner = (i >= first) & (j >= first)
    fi, fj = i[inner] - first, j[inner] - first
    size = k - first
    diag_index = np.arange(size)
    converged = np.zeros(b, dtype=bool)
    for iterations in range(1, max_iter + 1):  # noqa: B007 - the count is returned after the loop
        act = np.flatnonzero(~converged)
        every = len(act) == b
        th = theta_t if every else theta_t[:, act]
        w_act, n_act = (wins_t, n_t) if every else (wins_t[:, act], n_t[:, act])
        p = 1.0 / (1.0 + np.exp(th[j] - th[i]))  # P(i beats j), (P, B)
        curv = n_act * p * (1.0 - p)
        grad, degree_curv = _sums_over_pairs(rounds, w_act - n_act * p, curv, k)  # (K, B) each
        info = np.zeros((len(act), size, size))
        inner_curv = curv[inner].T
        info[:, fi, fj] = -inner_curv
        info[:, fj, fi] = -inner_curv
        info[:, diag_index, diag_index] = degree_curv[first:].T
        if prior > 0:
            sig = 1.0 / (1.0 + np.exp(-th))
            grad += prior * (1.0 - 2.0 * sig)
            info[:, diag_index, diag_index] += (2.0 * prior * sig * (1.0 - sig)).T
        step = np.zeros((k, len(act)))
        step[first:] = np.linalg.solve(info, grad[first:].T[..., None])[..., 0].T
        largest = np.max(np.abs(step), axis=0, keepdims=True)
        step *= np.minimum(1.0, MAX_NEWTON_STEP / np.maximum(largest, 1e-300))
        theta_t[:, act] = th + step
        converged[act] = np.max(np.abs(step), axis=0) < tol
        if converged.all():
            break
    theta = theta_t.T.copy()
    return theta, converged, iterations


def _model_pair_rounds(i: np.ndarray, j: np.ndarray, k: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The pairs of each model in ascending pair order, dealt out in rounds: round t holds (models,
    their t-th pair, +1 where the model is the pair's first and −1 where it is the second)."""
    p = len(i)
    model = np.concatenate([i, j]).astype(np.int64)
    pair = np.concatenate([np.arange(p), np.arange(p)])
    sign = np.concatenate([np.ones(p), -np.ones(p)])
    order = np.lexsort((pair, model))
    model, pair, sign = model[order], pair[order], sign[order]
    position = np.arange(len(model)) - np.searchsorted(model, model)  # t: the pair's place in its model's list
    by_round = np.argsort(position, kind="stable")
    bounds = np.searchsorted(position[by_round], np.arange(1, position.max(initial=-1) + 2))
    return [(model[r], pair[r], sign[r]) for r in np.split(by_round, bounds[:-1])]


def _sums_over_pairs(rounds, signed: np.ndarray, plain: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per model, (K, B) each: the sum of ``signed`` (P, B) over its pairs with sign +1 as the pair's
    first model and −1 as its second, and the plain sum of ``plain`` (P, B). Each model adds its pairs
    one at a time in ascending pair order: the order of a sparse incidence-matrix product, so the sums
    are bit for bit scipy's (tests/test_bradley_terry.py) without importing scipy."""
    b = signed.shape[1]
    both = np.concatenate([signed, plain], axis=1)
    out = np.zeros((k, 2 * b))
    for models, pairs, signs in rounds:
        gathered = both[pairs]
        gathered[:, :b] *= signs[:, None]
        out[models] += gathered
    return out[:, :b], out[:, b:]


def covariance(left: np.ndarray, right: np.ndarray, s: np.ndarray, count: np.ndarray, weight: np.ndarray,
               theta: np.ndarray, kind: str = "sandwich", prior: float = 0.0) -> np.ndarray:
    """Covariance of θ (θ_0 held at 0 unless a prior fixes the scale) at a fit, from cell data.

    ``observed``: inverse observed information H⁻¹ of the weighted log-likelihood (plus the prior's
    curvature). ``sandwich``: H⁻¹ J H⁻¹ with J = Σ_votes w² g gᵀ, robust to weights and to a misfit
    of the BT model (the covariance arena-rank reports). Each vote's score vector is
    (s − p)(e_left − e_right), so J, like H, is a graph Laplacian over the pairs.
    """
    if kind not in ("observed", "sandwich"):
        raise ValueError(f"kind must be 'observed' or 'sandwich', not {kind!r}")
    k = len(theta)
    p = 1.0 / (1.0 + np.exp(theta[right] - theta[left]))  # P(left beats right)
    h = _laplacian(left, right, count * weight * p * (1.0 - p), k)
    if prior > 0:
        sig = 1.0 / (1.0 + np.exp(-theta))
        h[np.diag_indices(k)] += 2.0 * prior * sig * (1.0 - sig)
    free = slice(0, k) if prior > 0 else slice(1, k)
    h_inv = np.zeros((k, k))
    h_inv[free, free] = np.linalg.pinv(h[free, free])
    if kind == "observed":
        return h_inv
    j = _laplacian(left, right, count * weight ** 2 * (s - p) ** 2, k)
    return h_inv @ j @ h_inv


def _laplacian(left: np.ndarray, right: np.ndarray, value: np.ndarray, k: int) -> np.ndarray:
    """Σ value · (e_l − e_r)(e_l − e_r)ᵀ."""
    off = np.bincount(left * k + right, weights=value, minlength=k * k).reshape(k, k)
    off = off + off.T
    return np.diag(off.sum(axis=1)) - off


def elo_covariance(theta: np.ndarray, cov_theta: np.ndarray, anchor: int | None = None) -> np.ndarray:
    """Covariance of the Elo ratings by the delta method: Elo = ELO_SCALE·(θ − ln mean e^θ) + 1500,
    or ELO_SCALE·(θ − θ_anchor) + R when anchored."""
    k = len(theta)
    if anchor is None:
        pi = np.exp(theta - theta.max())
        jac = np.eye(k) - (pi / pi.sum())[None, :]
    else:
        jac = np.eye(k)
        jac[:, anchor] -= 1.0
    jac *= ELO_SCALE
    return jac @ cov_theta @ jac.T
