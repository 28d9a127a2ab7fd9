"""Information-theoretic and generalisation claims of ReLA.

v1 only: Conjecture 1, Theorem 3 and App C-D (normalised mutual information, NMI). Camera-ready
App D / D.1: the Rademacher term against Sigma, the D_TV term, and the NTK convergence argument.

The mixture is 1-D: y in {0, 1} with equal priors and x | y ~ N(mu_y, Sigma^2), mu_0 = 1, mu_1 = 2.

Also: camera-ready App D, Lemma 1 (d_H <= D_TV as printed; d_H is the H-divergence of Def. 6, and v1
prints (1/2) d_H <= D_TV) and Lemma 4 (the triangle inequality of D_Rep, Def. 4 / eq. 7, with the 0-1
loss, computed exactly on finite supports); v1 App H, Theorem 5 (eq. 42: NMI of the targets reduced by
eq. 41), with closed-form Gaussian entropies and an exact discrete example.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, optimize
from scipy.special import gammaln
from scipy.stats import norm

LOG2 = math.log(2.0)


# ----------------------------------------------------------------------------- v1 eq. (24)


def nmi_eq24(sigma):
    """v1 App C eq. (24): I_O = 2 log 2 / (1/2 log(2 pi e Sigma^2) + 2 log 2). It mixes the
    differential entropy of X with discrete entropies, so it is not confined to [0, 1]."""
    s = np.asarray(sigma, dtype=float)
    return 2 * LOG2 / (0.5 * np.log(2 * math.pi * math.e * s**2) + 2 * LOG2)


def eq24_crossings() -> dict:
    """Sigma where eq. (24) equals 1 and where its denominator vanishes (found by root finding)."""
    pole = optimize.brentq(lambda s: 0.5 * math.log(2 * math.pi * math.e * s * s) + 2 * LOG2, 1e-4, 1.0)
    one = optimize.brentq(lambda s: nmi_eq24(s) - 1.0, pole * 1.001, 10.0)
    return {"equals_one": one, "singular": pole}


# ----------------------------------------------------------------------------- true mutual information


def _mixture_pdf(x, sigma, mu0=1.0, mu1=2.0):
    return 0.5 * norm.pdf(x, mu0, sigma) + 0.5 * norm.pdf(x, mu1, sigma)


def _binary_entropy(p):
    p = np.clip(p, 1e-300, 1 - 1e-16)
    return -(p * np.log(p) + (1 - p) * np.log1p(-p))


def mutual_information(sigma: float, mu0: float = 1.0, mu1: float = 2.0) -> float:
    """I(X; Y) in nats = log 2 - E_x[H(Y | x)], by adaptive quadrature."""

    def integrand(x):
        a, b = norm.pdf(x, mu0, sigma), norm.pdf(x, mu1, sigma)
        post = b / (a + b) if (a + b) > 0 else 0.5
        return (0.5 * a + 0.5 * b) * _binary_entropy(post)

    lo, hi = min(mu0, mu1) - 12 * sigma, max(mu0, mu1) + 12 * sigma
    mid = (mu0 + mu1) / 2
    h1, _ = integrate.quad(integrand, lo, mid, limit=400, epsabs=1e-12)
    h2, _ = integrate.quad(integrand, mid, hi, limit=400, epsabs=1e-12)
    return LOG2 - (h1 + h2)


def mutual_information_mc(
    sigma: float, n: int, seed: int = 0, mu0: float = 1.0, mu1: float = 2.0
) -> tuple[float, float]:
    """Monte Carlo of I(X; Y) = E[log p(y | x) + log 2] and its standard error."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    x = np.where(y == 1, mu1, mu0) + sigma * rng.standard_normal(n)
    a, b = norm.logpdf(x, mu0, sigma), norm.logpdf(x, mu1, sigma)
    logpost = np.where(y == 1, b, a) - np.logaddexp(a, b)
    v = logpost + LOG2
    return float(v.mean()), float(v.std() / math.sqrt(n))


def binned_nmi(sigma: float, bins: int, mu0: float = 1.0, mu1: float = 2.0, span: float = 4.0) -> float:
    """Exact NMI (arithmetic mean, as scikit-learn) between Y and X binned into ``bins`` equal
    bins on [min mu - span Sigma, max mu + span Sigma] (outer bins open), from Gaussian CDFs."""
    lo, hi = min(mu0, mu1) - span * sigma, max(mu0, mu1) + span * sigma
    edges = np.linspace(lo, hi, bins + 1)
    edges[0], edges[-1] = -np.inf, np.inf
    p0 = np.diff(norm.cdf(edges, mu0, sigma))
    p1 = np.diff(norm.cdf(edges, mu1, sigma))
    joint = np.stack([0.5 * p0, 0.5 * p1])  # [2, bins]
    return _nmi_from_joint(joint)


def _entropy(p):
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def _nmi_from_joint(joint: np.ndarray) -> float:
    px, py = joint.sum(1), joint.sum(0)
    hx, hy = _entropy(px), _entropy(py)
    mi = hx + hy - _entropy(joint.ravel())
    return 2 * mi / (hx + hy) if hx + hy > 0 else 1.0


def nmi_discrete(a: np.ndarray, b: np.ndarray) -> float:
    """NMI (arithmetic mean) of two discrete label arrays."""
    _, ia = np.unique(a, return_inverse=True)
    _, ib = np.unique(b, return_inverse=True)
    joint = np.zeros((ia.max() + 1, ib.max() + 1))
    np.add.at(joint, (ia, ib), 1.0)
    return _nmi_from_joint(joint / joint.sum())


def relabel_nmi(
    rho: float,
    sigma: float,
    teacher: str,
    bins: int,
    n: int,
    seed: int = 0,
    sharpness: float = 4.0,
    mu0: float = 1.0,
    mu1: float = 2.0,
) -> float:
    """v1 App C.6: NMI between binned X and binned y' = rho f(x) + (1 - rho) y, with f the sign
    teacher 1[x > (mu0+mu1)/2] or a soft sigmoid teacher; both binned into ``bins`` bins."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    x = np.where(y == 1, mu1, mu0) + sigma * rng.standard_normal(n)
    mid = (mu0 + mu1) / 2
    f = (x > mid).astype(float) if teacher == "sign" else 1 / (1 + np.exp(-sharpness * (x - mid)))
    yp = rho * f + (1 - rho) * y
    # both variables binned at their own quantiles: a monotone injective teacher then bins y'
    # exactly as x, while a teacher with few values collapses the bins of y'
    xb = np.digitize(x, np.quantile(x, np.linspace(0, 1, bins + 1)[1:-1]))
    yb = np.digitize(yp, np.unique(np.quantile(yp, np.linspace(0, 1, bins + 1)[1:-1])))
    return nmi_discrete(xb, yb)


def random_map_nmi(n_items: int, k: int, rng: np.random.Generator) -> tuple[float, bool]:
    """Thm 3 (v1): X uniform on n items, psi a random map to k labels; NMI(X, psi(X)) and whether psi is injective."""
    psi = rng.integers(0, k, n_items)
    return nmi_discrete(np.arange(n_items), psi), len(np.unique(psi)) == n_items


# ----------------------------------------------------------------------------- camera-ready App D.1


def frobenius_mean_closed(sigma: float, mu: float, d: int, m: int) -> float:
    """E||X||_F for m samples in d dimensions whose coordinates have means +-mu and std Sigma:
    ||X||_F^2 / Sigma^2 is non-central chi-square(k = d m, lambda = k mu^2 / Sigma^2), and
    E sqrt(chi'^2) = sqrt(2) Gamma((k+1)/2) / Gamma(k/2) 1F1(-1/2; k/2; -lambda/2)."""
    import mpmath  # scipy's hyp1f1 loses all accuracy for large negative arguments (it returns inf or ~1)

    k = d * m
    lam = k * mu * mu / (sigma * sigma)
    with mpmath.workdps(40):
        m1 = mpmath.hyp1f1(-0.5, k / 2, -lam / 2)
    return sigma * math.sqrt(2) * math.exp(gammaln((k + 1) / 2) - gammaln(k / 2)) * float(m1)


def frobenius_mean_mc(sigma: float, mu: float, d: int, m: int, draws: int, seed: int = 0) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    signs = rng.choice([-1.0, 1.0], size=(draws, m, 1))
    x = signs * mu + sigma * rng.standard_normal((draws, m, d))
    v = np.sqrt((x**2).sum(axis=(1, 2)))
    return float(v.mean()), float(v.std() / math.sqrt(draws))


# ----------------------------------------------------------------------------- D_TV term (Lemmas 1-2)


def tv_distance(sigma_s: float, sigma_t: float, mu0: float = 1.0, mu1: float = 2.0) -> float:
    """D_TV between the two mixtures (same means, stds sigma_s and sigma_t), by quadrature."""
    lo = min(mu0, mu1) - 12 * max(sigma_s, sigma_t)
    hi = max(mu0, mu1) + 12 * max(sigma_s, sigma_t)
    f = lambda x: abs(_mixture_pdf(x, sigma_s, mu0, mu1) - _mixture_pdf(x, sigma_t, mu0, mu1))  # noqa: E731
    pts = [mu0, mu1, (mu0 + mu1) / 2]
    val, _ = integrate.quad(f, lo, hi, points=pts, limit=400, epsabs=1e-12)
    return 0.5 * val


def disagreement(t1: float, t2: float, sigma: float, mu0: float = 1.0, mu1: float = 2.0) -> float:
    """eps_D(h, h') = P_D(h(x) != h'(x)) for threshold classifiers at t1 and t2 (exact)."""
    a, b = sorted((t1, t2))
    return float(
        0.5 * (norm.cdf(b, mu0, sigma) - norm.cdf(a, mu0, sigma))
        + 0.5 * (norm.cdf(b, mu1, sigma) - norm.cdf(a, mu1, sigma))
    )


# ----------------------------------------------------------------------------- NTK gradient flow


def ntk_check(n: int, seed: int, eps: float = 1e-3) -> dict:
    """For a random PSD kernel K, gradient flow f' = -K (f - y) has f_t - y = expm(-K t)(f_0 - y);
    it reaches ||f_t - y|| <= eps no later than (1/lambda_min) ln(||f_0 - y|| / eps)."""
    from scipy.integrate import solve_ivp
    from scipy.linalg import expm

    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n))
    k = a @ a.T / n + 0.1 * np.eye(n)
    r0 = rng.standard_normal(n)
    t_end = 5.0
    sol = solve_ivp(lambda t, r: -k @ r, (0, t_end), r0, rtol=1e-11, atol=1e-13, dense_output=True)
    exact = expm(-k * t_end) @ r0
    rel = float(np.linalg.norm(sol.y[:, -1] - exact) / np.linalg.norm(exact))
    lam_min = float(np.linalg.eigvalsh(k).min())
    bound = math.log(np.linalg.norm(r0) / eps) / lam_min
    ts = np.linspace(0, bound * 1.2, 4000)
    norms = np.array([np.linalg.norm(expm(-k * t) @ r0) for t in ts[::40]])
    hit = float(ts[::40][np.argmax(norms <= eps)]) if np.any(norms <= eps) else float("inf")
    return {"relative_error": rel, "lambda_min": lam_min, "bound": bound, "hitting_time": hit}


# ----------------------------------------------------------------------------- camera-ready Lemma 1 (App D)
#
# Def. 6 (H-divergence): d_H(D, D') = 2 sup_{h in H} |Pr_D[I(h)] - Pr_D'[I(h)]|, I(h) = {x: h(x) = 1}.
# Def. 7 (total variation): D_TV(D, D') = sup_A |Pr_D(A) - Pr_D'(A)| over all events A.
# Lemma 1 prints d_H <= D_TV; v1's Lemma 1 prints (1/2) d_H <= D_TV. Every I(h) is an event, so
# d_H <= 2 D_TV always, with equality when H contains the set {p > q}. (d_H is the H-divergence of
# Ben-David et al., not the Hellinger distance.)


def tv_discrete(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """D_TV of discrete distributions on the same points (last axis): (1/2) sum |p - q|."""
    return 0.5 * np.abs(np.asarray(p) - np.asarray(q)).sum(-1)


def all_subsets(k: int) -> np.ndarray:
    """Indicator matrix ``[2^k, k]`` of every subset of k points (the hypothesis class of all h)."""
    return ((np.arange(2**k)[:, None] >> np.arange(k)[None, :]) & 1).astype(float)


def threshold_sets(k: int) -> np.ndarray:
    """Indicators ``[k + 1, k]`` of {x >= t} on k ordered points (threshold classifiers h_t = 1[x >= t])."""
    return (np.arange(k)[None, :] >= np.arange(k + 1)[:, None]).astype(float)


def h_divergence(p: np.ndarray, q: np.ndarray, sets: np.ndarray) -> np.ndarray:
    """Def. 6 by enumeration of the class: 2 max_h |P(I(h)) - Q(I(h))|; ``sets`` is ``[n_h, k]``,
    p and q are ``[..., k]``."""
    diff = (np.asarray(p) - np.asarray(q)) @ sets.T
    return 2 * np.abs(diff).max(-1)


def lemma1_discrete(pairs: int, k: int, seed: int = 0) -> dict:
    """Lemma 1 on ``pairs`` random pairs of distributions on k points (Dirichlet(1)), with H = all
    subsets (enumerated) and H = thresholds. Returns the arrays and the worst ratios d_H / D_TV."""
    rng = np.random.default_rng(seed)
    p, q = rng.dirichlet(np.ones(k), pairs), rng.dirichlet(np.ones(k), pairs)
    tv = tv_discrete(p, q)
    d_all, d_thr = h_divergence(p, q, all_subsets(k)), h_divergence(p, q, threshold_sets(k))
    return {
        "tv": tv,
        "d_all": d_all,
        "d_thr": d_thr,
        "printed_holds_all": int(np.sum(d_all <= tv + 1e-12)),
        "printed_holds_thr": int(np.sum(d_thr <= tv + 1e-12)),
        "half_holds": int(np.sum(0.5 * np.maximum(d_all, d_thr) <= tv + 1e-12)),
        "max_ratio_all": float(np.max(d_all / tv)),
        "min_ratio_all": float(np.min(d_all / tv)),
        "max_ratio_thr": float(np.max(d_thr / tv)),
    }


def gaussian_crossings(mu1: float, s1: float, mu2: float, s2: float) -> np.ndarray:
    """Points where the densities of N(mu1, s1^2) and N(mu2, s2^2) are equal (1 or 2 real roots)."""
    if abs(s1 - s2) < 1e-15:
        return np.array([(mu1 + mu2) / 2])
    a = 1 / s2**2 - 1 / s1**2
    b = 2 * (mu1 / s1**2 - mu2 / s2**2)
    c = mu2**2 / s2**2 - mu1**2 / s1**2 + 2 * math.log(s2 / s1)
    return np.sort(np.roots([a, b, c]).real)


def gaussian_tv_threshold_hdiv(mu1: float, s1: float, mu2: float, s2: float) -> tuple[float, float]:
    """Closed forms for two 1-D Gaussians: D_TV = |P(A*) - Q(A*)| with A* = {p > q} bounded by the
    density crossings, and d_H for H = threshold classifiers: 2 max_t |F1(t) - F2(t)|, whose extrema
    are at the crossings (d/dt (F1 - F2) = p - q)."""
    r = gaussian_crossings(mu1, s1, mu2, s2)
    edges = np.concatenate([[-np.inf], r, [np.inf]])
    d = np.diff(norm.cdf(edges, mu1, s1)) - np.diff(norm.cdf(edges, mu2, s2))
    tv = float(np.abs(d).sum() / 2)
    dh = float(2 * np.max(np.abs(norm.cdf(r, mu1, s1) - norm.cdf(r, mu2, s2))))
    return tv, dh


def lemma1_gaussian(pairs: int, seed: int = 0) -> dict:
    """Lemma 1 for random Gaussian pairs (means in [-2, 2], stds in [0.3, 3]) with H = thresholds, plus
    the equal-variance family, where d_H = 2 D_TV = 2(2 Phi(|Delta mu| / 2 sigma) - 1)."""
    rng = np.random.default_rng(seed)
    mu, sd = rng.uniform(-2, 2, (pairs, 2)), rng.uniform(0.3, 3, (pairs, 2))
    res = np.array([gaussian_tv_threshold_hdiv(m[0], s[0], m[1], s[1]) for m, s in zip(mu, sd)])
    tv, dh = res[:, 0], res[:, 1]
    return {
        "tv": tv,
        "d_thr": dh,
        "printed_holds": int(np.sum(dh <= tv + 1e-12)),
        "half_holds": int(np.sum(dh / 2 <= tv + 1e-12)),
        "max_ratio": float(np.max(dh / tv)),
        "min_ratio": float(np.min(dh / tv)),
        "example": {
            "mu": (0.0, 1.0),
            "sigma": (1.0, 1.0),
            **dict(zip(("tv", "d_thr"), gaussian_tv_threshold_hdiv(0.0, 1.0, 1.0, 1.0))),
        },
    }


# ----------------------------------------------------------------------------- camera-ready Lemma 4 (App D)
#
# Def. 4, eq. (7): D_Rep(phi_S -> phi_T; D) = inf_{W, b} E_{x ~ D} l(W phi_S(x) + b, phi_T(x)) with the
# 0-1 loss l(y_hat, y) = 1(y_hat != y). On a finite support the infimum is 1 minus the largest weight
# of a set of points on which one affine map sends phi_S(x) exactly to phi_T(x).


def d_rep01(phi_s: np.ndarray, phi_t: np.ndarray, w: np.ndarray, tol: float = 1e-9) -> float:
    """Exact D_Rep with the 0-1 loss on n weighted points (n <= ~12): every subset of points is tested
    for an exact affine fit (least squares on the masked rows, batched pseudo-inverse)."""
    phi_s, phi_t, w = np.atleast_2d(phi_s.T).T, np.atleast_2d(phi_t.T).T, np.asarray(w, float)
    n = len(w)
    masks = all_subsets(n)  # [2^n, n]
    a = np.concatenate([phi_s, np.ones((n, 1))], 1)  # affine design [n, a + 1]
    am, bm = masks[:, :, None] * a[None], masks[:, :, None] * phi_t[None]
    resid = bm - am @ (np.linalg.pinv(am) @ bm)
    scale = 1.0 + np.abs(phi_t).max()
    ok = np.abs(resid).max(axis=(1, 2)) <= tol * scale
    return float(1.0 - (masks[ok] @ w).max())


def d_rep_mse(phi_s: np.ndarray, phi_t: np.ndarray, w: np.ndarray) -> float:
    """The squared-error surrogate min_{W, b} E ||W phi_S + b - phi_T||^2 (weighted least squares);
    Lemma 4's proof uses the 0-1 loss, for which a composition of exact fits is exact."""
    phi_s, phi_t, w = np.atleast_2d(phi_s.T).T, np.atleast_2d(phi_t.T).T, np.asarray(w, float)
    a = np.concatenate([phi_s, np.ones((len(w), 1))], 1) * np.sqrt(w)[:, None]
    b = phi_t * np.sqrt(w)[:, None]
    coef, *_ = np.linalg.lstsq(a, b, rcond=None)
    return float(((a @ coef - b) ** 2).sum())


def triangle_gaps(feats: list[np.ndarray], w: np.ndarray, dist=d_rep01) -> np.ndarray:
    """D(S->T) - D(S->U) - D(U->T) for all 6 orderings (S, U, T) of three representations; Lemma 4
    says every entry is <= 0."""
    d = {(i, j): dist(feats[i], feats[j], w) for i in range(3) for j in range(3) if i != j}
    out = []
    for s in range(3):
        for t in range(3):
            if t == s:
                continue
            u = 3 - s - t
            out.append(d[(s, t)] - d[(s, u)] - d[(u, t)])
    return np.array(out)


def random_triple(
    rng: np.random.Generator, n: int, levels: int = 2, max_dim: int = 2
) -> tuple[list[np.ndarray], np.ndarray]:
    """Three random integer-valued representations (entries in {-levels..levels}, 1 to ``max_dim``
    dims; small integers make partial exact fits common) of n points with Dirichlet weights."""
    feats = [rng.integers(-levels, levels + 1, (n, int(rng.integers(1, max_dim + 1)))).astype(float) for _ in range(3)]
    return feats, rng.dirichlet(np.ones(n))


def lemma4_random(triples: int, n: int, seed: int = 0) -> dict:
    """Lemma 4 on random triples: the largest D(S->T) - D(S->U) - D(U->T) over all orderings (0-1 loss)."""
    rng = np.random.default_rng(seed)
    gaps, values = [], []
    for _ in range(triples):
        feats, w = random_triple(rng, n)
        gaps.append(triangle_gaps(feats, w).max())
        values.append(d_rep01(feats[0], feats[2], w))
    gaps = np.array(gaps)
    return {
        "max_gap": float(gaps.max()),
        "violations": int(np.sum(gaps > 1e-12)),
        "triples": triples,
        "tight": int(np.sum(np.abs(gaps) < 1e-12)),
        "nontrivial_d": int(np.sum((np.array(values) > 0) & (np.array(values) < 1))),
    }


def lemma4_search(steps: int, restarts: int, n: int, seed: int = 0, loss: str = "01") -> dict:
    """Hill climbing for a counterexample to Lemma 4: mutate one entry of one representation (an
    integer for the 0-1 loss, a Gaussian step for the squared-error surrogate) and keep the change when
    the worst triangle gap max(D(S->T) - D(S->U) - D(U->T)) does not fall. Returns the best gap found."""
    rng = np.random.default_rng(seed)
    dist = d_rep01 if loss == "01" else d_rep_mse
    best_all, best_feats = -np.inf, None
    for _ in range(restarts):
        feats, w = random_triple(rng, n)
        cur = triangle_gaps(feats, w, dist).max()
        for _ in range(steps):
            cand = [f.copy() for f in feats]
            k = int(rng.integers(3))
            i, j = int(rng.integers(cand[k].shape[0])), int(rng.integers(cand[k].shape[1]))
            cand[k][i, j] = float(rng.integers(-2, 3)) if loss == "01" else cand[k][i, j] + rng.normal(0, 0.5)
            val = triangle_gaps(cand, w, dist).max()
            if val >= cur:
                feats, cur = cand, val
        if cur > best_all:
            best_all, best_feats = cur, (feats, w)
    return {"best_gap": float(best_all), "evaluations": restarts * (steps + 1), "example": best_feats}


def mse_triangle_counterexample() -> dict:
    """Closed form: a, c independent, unit variance, u = (a + c)/2. With squared error, D(S->T) = 1,
    D(S->U) = 1/4, D(U->T) = 1/2 for S = a, U = u, T = c: the surrogate breaks the triangle inequality.
    Evaluated on the four equally likely points a, c in {-1, 1}."""
    a = np.array([-1.0, -1.0, 1.0, 1.0])[:, None]
    c = np.array([-1.0, 1.0, -1.0, 1.0])[:, None]
    u, w = (a + c) / 2, np.full(4, 0.25)
    d = {"S->T": d_rep_mse(a, c, w), "S->U": d_rep_mse(a, u, w), "U->T": d_rep_mse(u, c, w)}
    d["gap"] = d["S->T"] - d["S->U"] - d["U->T"]
    return d


# ----------------------------------------------------------------------------- v1 Theorem 5 (App H, eq. 42)
#
# I_O(R_Y, R_X) >= I_O(R'_Y, R_X) for R'_Y = V_n^T ((R_Y - mu) / sigma) (eq. 41), I_O = 2 I / (H(X) + H(Y))
# (v1 App C). The data-processing inequality orders the mutual information, not its normalised form.


def eq41_map(cov_y: np.ndarray, n: int) -> np.ndarray:
    """The linear part of eq. (41): R'_Y = V_n^T D^{-1} (R_Y - mu), V from the eigendecomposition of
    the covariance of R_Y (descending eigenvalues), D = diag of the column standard deviations."""
    evals, v = np.linalg.eigh(cov_y)
    vn = v[:, np.argsort(evals)[::-1][:n]]
    return vn.T / np.sqrt(np.diag(cov_y))[None, :]


def gaussian_entropy(cov: np.ndarray) -> float:
    """Differential entropy (nats) of N(0, cov): (1/2) log((2 pi e)^d det cov)."""
    cov = np.atleast_2d(cov)
    return 0.5 * (cov.shape[0] * math.log(2 * math.pi * math.e) + np.linalg.slogdet(cov)[1])


def gaussian_mi(cov: np.ndarray, dx: int) -> float:
    """I(X; Y) of jointly Gaussian (X, Y) with X the first ``dx`` coordinates: h(X) + h(Y) - h(X, Y)."""
    return gaussian_entropy(cov[:dx, :dx]) + gaussian_entropy(cov[dx:, dx:]) - gaussian_entropy(cov)


def theorem5_gaussian(models: int, m: int, p: int, latent: int, seed: int = 0) -> dict:
    """Random linear-Gaussian models R_X = A z + e_x (p dims), R_Y = B z + e_y (m dims), z ~ N(0, I).
    For every n < m: MI and the differential-entropy NMI 2I/(h(X) + h(Y)) (the convention of v1
    eq. 24) of (R_X, R_Y) and of (R_X, R'_Y), exactly. Counts orderings over the (model, n) cases;
    the NMI is compared only where both denominators are positive."""
    rng = np.random.default_rng(seed)
    mi_ok = nmi_ok = nmi_cases = cases = 0
    worst = 0.0
    for _ in range(models):
        a, b = rng.normal(size=(p, latent)), rng.normal(size=(m, latent))
        cx = a @ a.T + np.diag(rng.uniform(0.05, 1.0, p) ** 2)
        cy = b @ b.T + np.diag(rng.uniform(0.05, 2.0, m) ** 2)
        cxy = a @ b.T
        full = np.block([[cx, cxy], [cxy.T, cy]])
        mi_full, hx, hy = gaussian_mi(full, p), gaussian_entropy(cx), gaussian_entropy(cy)
        for n in range(1, m):
            lmap = eq41_map(cy, n)
            red = np.block([[cx, cxy @ lmap.T], [lmap @ cxy.T, lmap @ cy @ lmap.T]])
            mi_red, hyr = gaussian_mi(red, p), gaussian_entropy(lmap @ cy @ lmap.T)
            cases += 1
            mi_ok += mi_red <= mi_full + 1e-10
            if hx + hy > 0 and hx + hyr > 0:
                nmi_cases += 1
                nf, nr = 2 * mi_full / (hx + hy), 2 * mi_red / (hx + hyr)
                nmi_ok += nr <= nf + 1e-12
                worst = max(worst, nr - nf)
    return {
        "cases": cases,
        "mi_ordered": int(mi_ok),
        "nmi_cases": nmi_cases,
        "nmi_ordered": int(nmi_ok),
        "max_nmi_increase": float(worst),
    }


def theorem5_discrete_example() -> dict:
    """An exact counterexample with eq. (41): R_Y = (Y1, Y2), Y1 in {-2, 2} and Y2 in {-1, 1} independent
    and uniform, R_X = Y1 / 2. Cov(R_Y) = diag(4, 1), so n = 1 keeps Y1 and R'_Y = Y1 / 2; Y2 (entropy,
    no information) is dropped. NMI(R_Y, R_X) = 2 log 2 / (log 2 + 2 log 2) = 2/3 < NMI(R'_Y, R_X) = 1."""
    y1 = np.array([-2.0, -2.0, 2.0, 2.0])
    y2 = np.array([-1.0, 1.0, -1.0, 1.0])
    ry = np.stack([y1, y2], 1)
    cov = np.cov(ry.T, bias=True)
    ry_red = (ry - ry.mean(0)) @ eq41_map(cov, 1).T
    rx = y1 / 2
    code = lambda v: np.unique(np.round(v, 9), axis=0, return_inverse=True)[1].ravel()  # noqa: E731
    return {
        "nmi_full": nmi_discrete(code(ry), code(rx)),
        "nmi_reduced": nmi_discrete(code(ry_red), code(rx)),
        "mi_full": mutual_info_discrete(code(ry), code(rx)),
        "mi_reduced": mutual_info_discrete(code(ry_red), code(rx)),
    }


def mutual_info_discrete(a: np.ndarray, b: np.ndarray) -> float:
    """I(A; B) in nats of two discrete label arrays (empirical, equal weights)."""
    _, ia = np.unique(a, return_inverse=True)
    _, ib = np.unique(b, return_inverse=True)
    joint = np.zeros((ia.max() + 1, ib.max() + 1))
    np.add.at(joint, (ia, ib), 1.0)
    joint /= joint.sum()
    return _entropy(joint.sum(1)) + _entropy(joint.sum(0)) - _entropy(joint.ravel())


def appendix_d_checks(seed: int = 0, pairs: int = 2000, triples: int = 200, models: int = 200) -> dict:
    """Every check of camera-ready Lemmas 1 and 4 and v1 Theorem 5 at fixed, CPU-cheap sizes, with
    their tables (lists of rows) under "lemma1", "lemma4" and "theorem5_v1"."""
    l1d, l1g = lemma1_discrete(pairs, 8, seed), lemma1_gaussian(pairs // 4, seed)
    l4 = lemma4_random(triples, 7, seed)
    l4s = {loss: lemma4_search(60, 3, 7, seed, loss) for loss in ("01", "mse")}
    t5g, t5d = theorem5_gaussian(models, 6, 3, 3, seed), theorem5_discrete_example()
    n_d, n_g = len(l1d["tv"]), len(l1g["tv"])
    lemma1 = [
        {
            "check": "discrete, H = all subsets",
            "cases": n_d,
            "printed d_H ≤ D_TV holds": l1d["printed_holds_all"],
            "max d_H / D_TV": l1d["max_ratio_all"],
        },
        {
            "check": "discrete, H = thresholds",
            "cases": n_d,
            "printed d_H ≤ D_TV holds": l1d["printed_holds_thr"],
            "max d_H / D_TV": l1d["max_ratio_thr"],
        },
        {
            "check": "Gaussians, H = thresholds",
            "cases": n_g,
            "printed d_H ≤ D_TV holds": l1g["printed_holds"],
            "max d_H / D_TV": l1g["max_ratio"],
        },
    ]
    for row, half in zip(lemma1, (l1d["half_holds"], l1d["half_holds"], l1g["half_holds"])):
        row["½ d_H ≤ D_TV holds"] = half
    lemma4 = [
        {
            "D_Rep": "0-1 loss (Def. 4)",
            "random triples": triples,
            "violations": l4["violations"],
            "max gap": l4["max_gap"],
            "search best gap": l4s["01"]["best_gap"],
        },
        {
            "D_Rep": "squared error (surrogate)",
            "random triples": 0,
            "violations": -1,
            "max gap": mse_triangle_counterexample()["gap"],
            "search best gap": l4s["mse"]["best_gap"],
        },
    ]
    theorem5 = [t5g | {"discrete NMI(R_Y, R_X)": t5d["nmi_full"], "discrete NMI(R'_Y, R_X)": t5d["nmi_reduced"]}]
    return {
        "l1d": l1d,
        "l1g": l1g,
        "l4": l4,
        "l4s": l4s,
        "t5g": t5g,
        "t5d": t5d,
        "lemma1": lemma1,
        "lemma4": lemma4,
        "theorem5_v1": theorem5,
        "lemma1_printed_holds": l1d["printed_holds_all"] + l1d["printed_holds_thr"] + l1g["printed_holds"]
        == 2 * n_d + n_g,
    }


# ----------------------------------------------------------------------------- the notebook's tables

FROBENIUS_CASES = ((2, 10, 1.0), (5, 20, 0.5))


def information_rows(sigmas, bins, mc_samples: int, seed: int) -> list[dict]:
    """One row per Sigma: eq. (24), the true I(X; Y) by quadrature and Monte Carlo, binned NMIs."""
    rows = []
    for i, s in enumerate(sigmas):
        mc, se = mutual_information_mc(s, mc_samples, seed + i)
        mi = mutual_information(s)
        row = {
            "sigma": s,
            "eq. (24)": float(nmi_eq24(s)),
            "true I(X;Y) nats (quadrature)": mi,
            "I Monte Carlo": mc,
            "MC s.e.": se,
            "true I / log 2": mi / math.log(2),
        }
        row.update({f"binned NMI, K={k}": binned_nmi(s, k) for k in bins})
        rows.append(row)
    return rows


def theorem3_maps(count: int, seed: int) -> dict:
    """v1 Theorem 3 on ``count`` random maps of finite sets: the largest NMI and whether NMI = 1 iff injective."""
    rng = np.random.default_rng(seed)
    maps = [random_map_nmi(int(rng.integers(2, 12)), int(rng.integers(2, 14)), rng) for _ in range(count)]
    vals, inj = np.array([v for v, _ in maps]), np.array([b for _, b in maps])
    return {
        "max NMI": float(vals.max()),
        "injective maps": int(inj.sum()),
        "all ≤ 1": bool(np.all(vals <= 1 + 1e-12)),
        "= 1 iff injective": bool(np.all((np.abs(vals - 1) < 1e-12) == inj)),
    }


def frobenius_rows(draws: int, seed: int) -> list[dict]:
    """App D.1: closed form of E||X||_F against Monte Carlo, with the difference in standard errors."""
    rows = []
    for d, m, mu in FROBENIUS_CASES:
        for s in (0.25, 0.5, 1.0, 2.0):
            mc, se = frobenius_mean_mc(s, mu, d, m, draws, seed)
            closed = frobenius_mean_closed(s, mu, d, m)
            rows.append(
                {
                    "d": d,
                    "m": m,
                    "mu": mu,
                    "sigma": s,
                    "closed form": closed,
                    "Monte Carlo": mc,
                    "MC s.e.": se,
                    "diff (s.e.)": (closed - mc) / se,
                }
            )
    return rows


def frobenius_monotone(grid) -> dict:
    """Whether the closed form of E||X||_F is non-decreasing in Sigma on ``grid``, per (d, m, mu)."""
    return {
        f"d={d}, m={m}, μ={mu}": bool(np.all(np.diff([frobenius_mean_closed(s, mu, d, m) for s in grid]) >= -1e-12))
        for d, m, mu in FROBENIUS_CASES + ((1, 1, 3.0),)
    }


def tv_term_rows(sigmas, sigma_ref: float = 0.5) -> list[dict]:
    """The D_TV term: the largest disagreement gap over thresholds against D_TV(G', G), per Sigma'."""
    rows = []
    for sp in sigmas:
        tv = tv_distance(sp, sigma_ref)
        gap = max(abs(disagreement(t, 1.5, sigma_ref) - disagreement(t, 1.5, sp)) for t in np.linspace(-1, 4, 101))
        rows.append(
            {"sigma'": sp, "D_TV(G', G)": tv, "max |ε_G − ε_G'| over thresholds": gap, "bound holds": gap <= tv + 1e-9}
        )
    return rows
