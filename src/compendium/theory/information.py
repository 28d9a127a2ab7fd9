"""Information-theoretic and generalisation claims of ReLA.

v1 only: Conjecture 1, Theorem 3 and App C-D (normalised mutual information, NMI). Camera-ready
App D / D.1: the Rademacher term against Sigma, the D_TV term, and the NTK convergence argument.
Spec rela.md §3.4-3.5.

The mixture is 1-D: y in {0, 1} with equal priors and x | y ~ N(mu_y, Sigma^2), mu_0 = 1, mu_1 = 2.
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
    return 2 * LOG2 / (0.5 * np.log(2 * math.pi * math.e * s ** 2) + 2 * LOG2)


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


def mutual_information_mc(sigma: float, n: int, seed: int = 0, mu0: float = 1.0, mu1: float = 2.0) -> tuple[float, float]:
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


def relabel_nmi(rho: float, sigma: float, teacher: str, bins: int, n: int, seed: int = 0,
                sharpness: float = 4.0, mu0: float = 1.0, mu1: float = 2.0) -> float:
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
    v = np.sqrt((x ** 2).sum(axis=(1, 2)))
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
    return float(0.5 * (norm.cdf(b, mu0, sigma) - norm.cdf(a, mu0, sigma)) + 0.5 * (norm.cdf(b, mu1, sigma) - norm.cdf(a, mu1, sigma)))


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
