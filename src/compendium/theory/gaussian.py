"""ReLA's Gaussian-mixture toy task and its theory (camera-ready §3.2, Thm 1-2, App B, C, E;
v1 §3.2, Thm 1-2, App A, B, G).

Task (Tables 6-7 / 7-8): y ~ Bernoulli(1/2), x = mu_y + Sigma eps with mu_0 = (1, 1),
mu_1 = (2, 2), eps ~ N(0, I_2); model 2 -> 50 (ReLU) -> 1 (sigmoid); MSE; SGD lr 0.002, momentum
0.98, 1,000 steps of batch 1 with fresh samples. Many runs (seeds x Sigma or rho) train at once:
their parameters are stacked along a leading "run" axis and updated in one batched step, which
is exactly a loop of independent PyTorch models (tested).

The proofs use a different, 1-D model: y in {-1, +1}, x ~ N(mu_y, Sigma^2), classifier
sign(x + theta), loss (1/2)(1 - y(x + theta))^2, online SGD theta <- theta - eta (theta + x - y).
Camera-ready App B.1-B.3 prove it for generalised Gaussians of any shape beta (the ``gg_`` functions).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import norm

MU0 = (1.0, 1.0)
MU1 = (2.0, 2.0)
HIDDEN = 50


# ----------------------------------------------------------------------------- data


def sample_mixture(
    n: int, sigma, generator: torch.Generator, mu0=MU0, mu1=MU1, dtype=torch.float64
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` samples per run: ``sigma`` is a float or a ``[R]`` tensor; returns x ``[R, n, 2]`` (or
    ``[n, 2]`` for a float) and y ``[R, n]`` in {0, 1}. All runs share the labels and the noise
    (common random numbers), so runs differ only by Sigma."""
    y = (torch.rand(n, generator=generator, dtype=dtype) < 0.5).to(dtype)
    eps = torch.randn(n, 2, generator=generator, dtype=dtype)
    m0, m1 = torch.tensor(mu0, dtype=dtype), torch.tensor(mu1, dtype=dtype)
    mean = m0 + y[:, None] * (m1 - m0)
    s = torch.as_tensor(sigma, dtype=dtype)
    if s.ndim == 0:
        return mean + s * eps, y
    return mean[None] + s[:, None, None] * eps[None], y[None].expand(len(s), n)


# ----------------------------------------------------------------------------- batched MLP


@dataclass
class MLPs:
    """``R`` independent 2-50-1 MLPs: w1 ``[R, 50, 2]``, b1 ``[R, 50]``, w2 ``[R, 1, 50]``, b2 ``[R, 1]``."""

    w1: torch.Tensor
    b1: torch.Tensor
    w2: torch.Tensor
    b2: torch.Tensor

    @property
    def runs(self) -> int:
        return self.w1.shape[0]

    def tensors(self) -> list[torch.Tensor]:
        return [self.w1, self.b1, self.w2, self.b2]

    def flat(self) -> torch.Tensor:
        """``[R, 201]`` parameter vectors (w1, b1, w2, b2 order)."""
        return torch.cat([t.reshape(self.runs, -1) for t in self.tensors()], dim=1)

    @staticmethod
    def from_flat(v: torch.Tensor) -> "MLPs":
        r = v.shape[0]
        sizes = [HIDDEN * 2, HIDDEN, HIDDEN, 1]
        parts = torch.split(v, sizes, dim=1)
        return MLPs(
            parts[0].reshape(r, HIDDEN, 2),
            parts[1].reshape(r, HIDDEN),
            parts[2].reshape(r, 1, HIDDEN),
            parts[3].reshape(r, 1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x ``[R, n, 2]`` (or ``[n, 2]``, shared) -> sigmoid outputs ``[R, n]``."""
        if x.ndim == 2:
            x = x[None].expand(self.runs, *x.shape)
        h = torch.relu(torch.einsum("rhi,rni->rnh", self.w1, x) + self.b1[:, None, :])
        return torch.sigmoid(torch.einsum("roh,rnh->rno", self.w2, h)[..., 0] + self.b2)

    def index(self, idx) -> "MLPs":
        return MLPs(*(t[idx] for t in self.tensors()))

    def clone(self) -> "MLPs":
        return MLPs(*(t.detach().clone() for t in self.tensors()))


def init_mlps(seeds: list[int], dtype=torch.float64) -> MLPs:
    """PyTorch's default ``nn.Linear`` initialisation, one model per seed (``torch.manual_seed(s)``)."""
    ps = []
    for s in seeds:
        torch.manual_seed(s)
        l1, l2 = torch.nn.Linear(2, HIDDEN), torch.nn.Linear(HIDDEN, 1)
        ps.append([l1.weight, l1.bias, l2.weight, l2.bias])
    return MLPs(*(torch.stack([p[i].detach().to(dtype) for p in ps]) for i in range(4)))


@dataclass
class TrainResult:
    final: MLPs
    trajectory: torch.Tensor | None  # [steps + 1, R, 201] when recorded
    eval_steps: list[int]
    val_loss: dict  # name -> [len(eval_steps), R]


def train_mlps(
    init: MLPs,
    sigma: torch.Tensor,
    steps: int,
    generator: torch.Generator,
    lr: float = 0.002,
    momentum: float = 0.98,
    target_fn=None,
    val_sets: dict | None = None,
    eval_every: int = 10,
    record_trajectory: bool = False,
) -> TrainResult:
    """SGD with momentum (PyTorch's rule: buf <- m buf + g; p <- p - lr buf), batch 1, fresh samples.

    ``sigma`` ``[R]`` is each run's Sigma. ``target_fn(x, y) -> [R, 1]`` replaces the hard label
    (relabelled targets of Thm 2). ``val_sets`` maps a name to ``(x [n, 2] or [R, n, 2], t [n] or
    [R, n])``; the mean MSE on each is recorded every ``eval_every`` steps.
    """
    params = [t.detach().clone().requires_grad_(True) for t in init.tensors()]
    bufs = [torch.zeros_like(p) for p in params]
    traj = [torch.cat([p.detach().reshape(init.runs, -1) for p in params], 1)] if record_trajectory else None
    val_sets = val_sets or {}
    evals, losses = [], {k: [] for k in val_sets}

    def evaluate(step):
        evals.append(step)
        for k, v in evaluate_sets(MLPs(*(p.detach() for p in params)), val_sets).items():
            losses[k].append(v)

    evaluate(0)
    for step in range(1, steps + 1):
        x, y = sample_mixture(1, sigma, generator, dtype=params[0].dtype)
        t = y if target_fn is None else target_fn(x, y)
        out = MLPs(*params).forward(x)
        loss = ((out - t) ** 2).sum()  # runs are independent: the sum's gradient is each run's own
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, b, g in zip(params, bufs, grads):
                b.mul_(momentum).add_(g)
                p.sub_(lr * b)
        if record_trajectory:
            traj.append(torch.cat([p.detach().reshape(init.runs, -1) for p in params], 1))
        if step % eval_every == 0 or step == steps:
            evaluate(step)
    final = MLPs(*(p.detach() for p in params))
    return TrainResult(
        final, torch.stack(traj) if record_trajectory else None, evals, {k: torch.stack(v) for k, v in losses.items()}
    )


def evaluate_sets(m: MLPs, sets: dict) -> dict:
    """Mean squared error of every run on each validation set (evaluated in float32 for speed)."""
    m32 = MLPs(*(t.float() for t in m.tensors()))
    with torch.no_grad():
        return {k: ((m32.forward(vx.float()) - vt.float()) ** 2).mean(-1).double() for k, (vx, vt) in sets.items()}


def _head(sets: dict, n: int) -> dict:
    return {k: (vx[..., :n, :], vt[..., :n]) for k, (vx, vt) in sets.items()}


# ----------------------------------------------------------------------------- landscapes


def filter_normalized_directions(center: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Two random directions ``[2, 201]`` normalised per neuron (Li et al. 2018, filter
    normalisation; for this MLP a "filter" is a row of a weight matrix): each row of a random
    Gaussian direction is rescaled to the norm of the same row of ``center``; biases are not
    perturbed (zero), as Li et al. do."""
    c = MLPs.from_flat(center[None])
    dirs = []
    for _ in range(2):
        d = MLPs.from_flat(torch.randn(1, center.numel(), generator=generator, dtype=center.dtype))
        w1 = d.w1 / d.w1.norm(dim=-1, keepdim=True) * c.w1.norm(dim=-1, keepdim=True)
        w2 = d.w2 / d.w2.norm(dim=-1, keepdim=True) * c.w2.norm(dim=-1, keepdim=True)
        dirs.append(MLPs(w1, torch.zeros_like(d.b1), w2, torch.zeros_like(d.b2)).flat()[0])
    return torch.stack(dirs)


def pca_directions(trajectories: torch.Tensor, center: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-2 principal directions of the stacked ``(theta_t - center)`` and their explained variance ratio."""
    a = (trajectories.reshape(-1, trajectories.shape[-1]) - center).double()
    _, s, vt = torch.linalg.svd(a - a.mean(0), full_matrices=False)
    return vt[:2].to(center.dtype), (s[:2] ** 2 / (s**2).sum())


def project(points: torch.Tensor, center: torch.Tensor, directions: torch.Tensor) -> torch.Tensor:
    """Least-squares coordinates ``[..., 2]`` of points in the plane ``center + span(directions)``."""
    d = directions.t()
    gram = directions @ d
    return torch.linalg.solve(gram, ((points - center) @ d).unsqueeze(-1)).squeeze(-1)


def landscape(
    center: torch.Tensor,
    directions: torch.Tensor,
    a: torch.Tensor,
    b: torch.Tensor,
    val_x: torch.Tensor,
    val_t: torch.Tensor,
    chunk: int = 512,
) -> torch.Tensor:
    """Validation MSE on the grid ``center + a_i d_1 + b_j d_2`` -> ``[len(b), len(a)]``."""
    aa, bb = torch.meshgrid(a, b, indexing="xy")
    coords = torch.stack([aa.flatten(), bb.flatten()], 1).to(center.dtype)
    thetas = center + coords @ directions
    out = []
    with torch.no_grad():
        for i in range(0, thetas.shape[0], chunk):
            m = MLPs.from_flat(thetas[i : i + chunk])
            out.append(((m.forward(val_x) - val_t) ** 2).mean(-1))
    return torch.cat(out).reshape(aa.shape)


def diagonal_boundary(m: MLPs, lo: float = -2.0, hi: float = 5.0, iters: int = 60) -> torch.Tensor:
    """Where each model's output crosses 1/2 along the diagonal x1 = x2 = t (bisection); NaN if it
    does not cross in [lo, hi]. The Bayes boundary crosses at t = 1.5 (x1 + x2 = 3)."""
    r = m.runs
    dt = m.w1.dtype

    def f(t):
        x = torch.stack([t, t], -1)[:, None, :]
        return m.forward(x)[:, 0] - 0.5

    lo_t, hi_t = torch.full((r,), lo, dtype=dt), torch.full((r,), hi, dtype=dt)
    flo, fhi = f(lo_t), f(hi_t)
    ok = (flo * fhi) < 0
    for _ in range(iters):
        mid = (lo_t + hi_t) / 2
        fm = f(mid)
        left = (fm * flo) <= 0
        hi_t = torch.where(left, mid, hi_t)
        lo_t = torch.where(left, lo_t, mid)
        flo = torch.where(left, flo, fm)
    return torch.where(ok, (lo_t + hi_t) / 2, torch.full_like(lo_t, float("nan")))


# ----------------------------------------------------------------------------- Bayes rule (App E)


def bayes_offset(mu0=MU0, mu1=MU1, sigma: float = 0.5) -> tuple[np.ndarray, float]:
    """The equal-covariance Gaussian log-likelihood ratio is linear: w.x + b with
    w = (mu1 - mu0)/Sigma^2, b = (|mu0|^2 - |mu1|^2)/(2 Sigma^2); the boundary w.x + b = 0 is the
    hyperplane through (mu0 + mu1)/2 orthogonal to mu1 - mu0, whatever Sigma. Returns (w, b)."""
    m0, m1 = np.asarray(mu0, float), np.asarray(mu1, float)
    return (m1 - m0) / sigma**2, float((m0 @ m0 - m1 @ m1) / (2 * sigma**2))


def diagonal_crossing(w: np.ndarray, b: float) -> float:
    """t where w.(t, t) + b = 0."""
    return -b / float(np.sum(w))


# ----------------------------------------------------------------------------- 1-D linear model (Thm 1, 2)


def linear_sgd_mc(
    sigma: float,
    eta: float,
    steps: int,
    theta0: float,
    reps: int,
    generator: torch.Generator,
    mu1: float = 1.0,
    mu2: float = 2.0,
    rho: float = 0.0,
) -> torch.Tensor:
    """Monte Carlo of theta_{t+1} = theta_t - eta (theta_t + x_t - y'_t) over ``reps`` chains
    (float64). y in {-1, +1} with x ~ N(mu_y, Sigma^2) (mu_{-1} = mu1, mu_{+1} = mu2);
    y' = rho sign(x + theta*) + (1 - rho) y (Thm 2; rho = 0 is Thm 1)."""
    theta = torch.full((reps,), float(theta0), dtype=torch.float64)
    star = -(mu1 + mu2) / 2
    for _ in range(steps):
        y = torch.where(torch.rand(reps, generator=generator, dtype=torch.float64) < 0.5, 1.0, -1.0)
        x = torch.where(y > 0, mu2, mu1) + sigma * torch.randn(reps, generator=generator, dtype=torch.float64)
        yp = rho * torch.sign(x + star) + (1 - rho) * y
        theta = theta - eta * (theta + x - yp)
    return theta


def theorem1_closed_form(sigma: float, eta: float, t: int, theta0: float, mu1: float = 1.0, mu2: float = 2.0) -> float:
    """E[(theta_t - theta*)^2] = (1-eta)^{2t}(theta0-theta*)^2 + eta/(2-eta)(1-(1-eta)^{2t}) V with
    V = E[(x - y + theta*)^2] = Sigma^2 + (1 - (mu2 - mu1)/2)^2 (camera-ready App B.3, Gaussian case)."""
    star = -(mu1 + mu2) / 2
    v = sigma**2 + (1 - (mu2 - mu1) / 2) ** 2
    q = (1 - eta) ** (2 * t)
    return q * (theta0 - star) ** 2 + eta / (2 - eta) * (1 - q) * v


def theorem1_v1_printed(sigma: float, eta: float, t: int, theta0: float, mu1: float = 1.0, mu2: float = 2.0) -> float:
    """v1 App A.3's final equality, (1-eta)^{2t}(C2 + C3 Sigma^2) with C1 = 1, which scales the
    noise term by (1-eta)^{2t} as well."""
    star = -(mu1 + mu2) / 2
    c2 = (theta0 - star) ** 2 + eta / (2 - eta) * (1 - (mu2 - mu1) / 2) ** 2
    c3 = eta / (2 - eta)
    return (1 - eta) ** (2 * t) * (c2 + c3 * sigma**2)


def zero_one_risk(theta, sigma: float, mu1: float = 1.0, mu2: float = 2.0):
    """0-1 risk of sign(x + theta) on the 1-D mixture with std ``sigma`` (exact, Gaussian CDFs)."""
    theta = np.asarray(theta, dtype=float)
    return 0.5 * norm.cdf((-theta - mu2) / sigma) + 0.5 * norm.sf((-theta - mu1) / sigma)


def curvature_constant(sigma: float, mu1: float = 1.0, mu2: float = 2.0, umax: float = 5.0, n: int = 20001) -> float:
    """C1(Sigma) = sup_u [L(theta* + u) - L(theta*)] / u^2 for the 0-1 risk (numerically on a grid)."""
    star = -(mu1 + mu2) / 2
    u = np.linspace(-umax, umax, n)
    u = u[np.abs(u) > 1e-6]
    return float(np.max((zero_one_risk(star + u, sigma, mu1, mu2) - zero_one_risk(star, sigma, mu1, mu2)) / u**2))


def noise_terms(sigma: float, mu1: float = 1.0, mu2: float = 2.0) -> dict:
    """For z = x - (mu1+mu2)/2, d = (mu2-mu1)/2: c = E[sign(z) y] = 2 Phi(d/Sigma) - 1 and
    E|z| = Sigma sqrt(2/pi) exp(-d^2/(2 Sigma^2)) + d (1 - 2 Phi(-d/Sigma))."""
    d = (mu2 - mu1) / 2
    return {
        "d": d,
        "c": 2 * norm.cdf(d / sigma) - 1,
        "abs_z": sigma * math.sqrt(2 / math.pi) * math.exp(-d * d / (2 * sigma * sigma))
        + d * (1 - 2 * norm.cdf(-d / sigma)),
    }


def theorem2_variance(rho, sigma: float, mu1: float = 1.0, mu2: float = 2.0):
    """V(rho) = E[(x - y' + theta*)^2] for y' = rho sign(x + theta*) + (1 - rho) y:
    Sigma^2 + d^2 + rho^2 + (1-rho)^2 + 2 rho (1-rho) c - 2 rho E|z| - 2 (1-rho) d (derived in
    the notebook; zero-mean noise, so E[(theta_t - theta*)^2] -> eta/(2-eta) V(rho))."""
    k = noise_terms(sigma, mu1, mu2)
    rho = np.asarray(rho, dtype=float)
    return (
        sigma**2
        + k["d"] ** 2
        + rho**2
        + (1 - rho) ** 2
        + 2 * rho * (1 - rho) * k["c"]
        - 2 * rho * k["abs_z"]
        - 2 * (1 - rho) * k["d"]
    )


def theorem2_rho_star(sigma: float, mu1: float = 1.0, mu2: float = 2.0) -> float:
    """The minimiser of the convex quadratic V(rho): (1 - c + E|z| - d) / (2 (1 - c))."""
    k = noise_terms(sigma, mu1, mu2)
    return (1 - k["c"] + k["abs_z"] - k["d"]) / (2 * (1 - k["c"]))


def theorem2_noise_mc(
    rho: float, sigma: float, n: int, generator: torch.Generator, mu1: float = 1.0, mu2: float = 2.0
) -> tuple[float, float, float]:
    """Monte Carlo of V(rho), E|x - y' + theta*| and its standard error."""
    y = torch.where(torch.rand(n, generator=generator, dtype=torch.float64) < 0.5, 1.0, -1.0)
    x = torch.where(y > 0, mu2, mu1) + sigma * torch.randn(n, generator=generator, dtype=torch.float64)
    star = -(mu1 + mu2) / 2
    yp = rho * torch.sign(x + star) + (1 - rho) * y
    e = x - yp + star
    v = e**2
    return float(v.mean()), float(e.abs().mean()), float(v.std() / math.sqrt(n))


def epsilon0(sigma: float, n: int, generator: torch.Generator, mu1: float = 1.0, mu2: float = 2.0) -> float:
    """Thm 2's epsilon_0 = E|x - y + theta*| - E|x - f*(x) + theta*| (Monte Carlo)."""
    return (
        theorem2_noise_mc(0.0, sigma, n, generator, mu1, mu2)[1]
        - theorem2_noise_mc(1.0, sigma, n, generator, mu1, mu2)[1]
    )


def theorem1_rows(sigmas, eta: float, steps: int, reps: int, seed: int, theta0: float = 0.0) -> tuple[list[dict], dict]:
    """Thm 1's linear model: Monte Carlo of E[(theta_T - theta*)^2] (one generator, seeded ``seed``, drawn
    Sigma after Sigma) against the camera-ready closed form and v1's printed form, in standard errors.
    Returns the rows and the final chains per Sigma."""
    gen = torch.Generator().manual_seed(seed)
    rows, chains = [], {}
    for s in sigmas:
        th = linear_sgd_mc(s, eta, steps, theta0, reps, gen)
        chains[s] = th
        sq = (th + 1.5) ** 2
        mc, se = float(sq.mean()), float(sq.std() / math.sqrt(reps))
        closed, v1 = theorem1_closed_form(s, eta, steps, theta0), theorem1_v1_printed(s, eta, steps, theta0)
        rows.append(
            {
                "sigma": s,
                "MC E[(θ_T-θ*)²]": mc,
                "MC s.e.": se,
                "closed form (camera-ready B.3)": closed,
                "v1 printed (A.3)": v1,
                "closed - MC (s.e.)": (closed - mc) / se,
                "v1 - MC (s.e.)": (v1 - mc) / se,
            }
        )
    return rows, chains


def excess_risk_rows(chains: dict, sigma_ref: float = 0.5) -> list[dict]:
    """The quadratic and 0-1 excess risks of the final chains, on G'(Sigma) and on G (``sigma_ref``), and C1(Sigma)."""
    rows = []
    for s, th in chains.items():
        t = th.numpy()
        rows.append(
            {
                "sigma": s,
                "quadratic excess ½E(θ-θ*)²": 0.5 * float(((th + 1.5) ** 2).mean()),
                "0-1 excess on G'(Σ)": float(np.mean(zero_one_risk(t, s)) - zero_one_risk(-1.5, s)),
                "0-1 excess on G (Σ=0.5)": float(np.mean(zero_one_risk(t, sigma_ref)) - zero_one_risk(-1.5, sigma_ref)),
                "C1(Σ) = sup ΔL/u²": curvature_constant(s),
            }
        )
    return rows


def is_monotone(values, increasing: bool = True, tol: float = 0.0) -> bool:
    v = np.asarray(values, dtype=float)
    diff = np.diff(v)
    return bool(np.all(diff >= -tol)) if increasing else bool(np.all(diff <= tol))


# ----------------------------------------------------------------------------- experiment drivers


@dataclass
class Sweep:
    """Runs ordered value-major: run ``i * len(seeds) + j`` has ``values[i]`` and ``seeds[j]``."""

    values: list[float]
    seeds: list[int]
    result: TrainResult
    final: dict  # name -> [R] validation MSE of the final models on the full validation sets

    def final_loss(self, name: str) -> np.ndarray:
        """``[len(values), len(seeds)]`` validation MSE after training (full validation set)."""
        return self.final[name].reshape(len(self.values), len(self.seeds)).numpy()

    def curves(self, name: str) -> np.ndarray:
        """``[len(values), len(seeds), len(eval_steps)]``."""
        v = self.result.val_loss[name]
        return v.t().reshape(len(self.values), len(self.seeds), -1).numpy()


def sigma_sweep(
    sigmas: list[float],
    seeds: list[int],
    steps: int,
    val_size: int,
    seed: int,
    lr: float = 0.002,
    momentum: float = 0.98,
    eval_every: int = 10,
    sigma_val: float = 0.5,
    record_trajectory: bool = False,
    curve_size: int = 2000,
) -> Sweep:
    """Thm 1 / Fig. 2: train on G'(Sigma) for every Sigma and seed (shared init per seed).
    Validation: ``G`` = the original data (Sigma = 0.5, hard labels, one fixed set for all runs),
    ``G'`` = each run's own Sigma."""
    sig = torch.tensor([s for s in sigmas for _ in seeds], dtype=torch.float64)
    init = init_mlps([s for _ in sigmas for s in seeds])
    gv = torch.Generator().manual_seed(seed + 1000)
    vx, vy = sample_mixture(val_size, sigma_val, gv)
    ox, oy = sample_mixture(val_size, sig, torch.Generator().manual_seed(seed + 2000))
    sets = {"G": (vx, vy), "G'": (ox, oy)}
    res = train_mlps(
        init,
        sig,
        steps,
        torch.Generator().manual_seed(seed),
        lr,
        momentum,
        val_sets=_head(sets, curve_size),
        eval_every=eval_every,
        record_trajectory=record_trajectory,
    )
    return Sweep(list(sigmas), list(seeds), res, evaluate_sets(res.final, sets))


def relabel(teacher: MLPs, rho: torch.Tensor):
    """``target_fn`` for Thm 2: y' = rho f*(x) + (1 - rho) y with a frozen teacher (one model)."""

    def fn(x, y):
        with torch.no_grad():
            f = teacher.forward(x.reshape(-1, 2))[0].reshape(y.shape)
        return rho[:, None] * f + (1 - rho[:, None]) * y

    return fn


def rho_sweep(
    teacher: MLPs,
    rhos: list[float],
    seeds: list[int],
    steps: int,
    val_size: int,
    seed: int,
    sigma_train: float = 1.0,
    lr: float = 0.002,
    momentum: float = 0.98,
    eval_every: int = 10,
    record_trajectory: bool = False,
    curve_size: int = 2000,
) -> Sweep:
    """Thm 2 / Fig. 3: train on Sigma = 1 samples with relabelled targets for every rho and seed.
    Validation: ``G`` (Sigma 0.5, hard labels: primary), ``G_sigma1`` (Sigma 1, hard labels),
    ``G'`` (Sigma 1, the run's relabelled targets)."""
    rho = torch.tensor([r for r in rhos for _ in seeds], dtype=torch.float64)
    sig = torch.full_like(rho, sigma_train)
    init = init_mlps([s for _ in rhos for s in seeds])
    vx, vy = sample_mixture(val_size, 0.5, torch.Generator().manual_seed(seed + 1000))
    wx, wy = sample_mixture(val_size, sigma_train, torch.Generator().manual_seed(seed + 2000))
    with torch.no_grad():
        ft = teacher.forward(wx)[0]
    relabelled = rho[:, None] * ft[None] + (1 - rho[:, None]) * wy[None]
    sets = {"G": (vx, vy), "G_sigma1": (wx, wy), "G'": (wx, relabelled)}
    res = train_mlps(
        init,
        sig,
        steps,
        torch.Generator().manual_seed(seed),
        lr,
        momentum,
        target_fn=relabel(teacher, rho),
        val_sets=_head(sets, curve_size),
        eval_every=eval_every,
        record_trajectory=record_trajectory,
    )
    return Sweep(list(rhos), list(seeds), res, evaluate_sets(res.final, sets))


def train_teacher(
    sigma: float, seed: int, steps: int, data_seed: int, lr: float = 0.002, momentum: float = 0.98
) -> MLPs:
    """The teacher f* of Thm 2: "the model trained on the data in Figure 1(c)" (Sigma = 0.1)."""
    res = train_mlps(
        init_mlps([seed]),
        torch.tensor([sigma], dtype=torch.float64),
        steps,
        torch.Generator().manual_seed(data_seed),
        lr,
        momentum,
    )
    return res.final


def landscape_panel(
    sweep: Sweep, run_index: list[int], val_name: str, val_set, grid: int, kind: str, seed: int, margin: float = 0.2
):
    """Centre = final parameters of the first listed run; directions ``filter`` (random,
    filter-normalised) or ``pca`` (of the trajectories). Returns a dict for plotting."""
    traj = sweep.result.trajectory[:, run_index]  # [T+1, k, P]
    center = traj[-1, 0]
    if kind == "filter":
        dirs = filter_normalized_directions(center, torch.Generator().manual_seed(seed))
        explained = None
    else:
        dirs, explained = pca_directions(traj, center)
    coords = project(traj.reshape(-1, traj.shape[-1]), center, dirs).reshape(traj.shape[0], traj.shape[1], 2)
    lo, hi = coords.reshape(-1, 2).min(0).values, coords.reshape(-1, 2).max(0).values
    span = (hi - lo).clamp_min(1e-3)
    a = torch.linspace(float(lo[0] - margin * span[0]), float(hi[0] + margin * span[0]), grid, dtype=torch.float64)
    b = torch.linspace(float(lo[1] - margin * span[1]), float(hi[1] + margin * span[1]), grid, dtype=torch.float64)
    z = landscape(center, dirs, a, b, *val_set)
    return {
        "a": a.numpy(),
        "b": b.numpy(),
        "loss": z.numpy(),
        "coords": coords.numpy(),
        "explained": None if explained is None else explained.numpy(),
    }


def trend(values, losses: np.ndarray, z: float = 3.0) -> dict:
    """How the loss depends on a swept value: ``losses`` is ``[len(values), seeds]``.

    Runs share their initialisation and noise across values (paired), so consecutive values are
    compared by paired differences: a step counts as a significant decrease (increase) when the mean
    paired difference is below (above) ``-z`` (``z``) standard errors. ``monotone_from`` is the
    smallest value from which the mean curve never significantly decreases."""
    from scipy.stats import spearmanr

    values = np.asarray(values, float)
    mean = losses.mean(1)
    diffs = np.diff(losses, axis=0)
    n = losses.shape[1]
    se = diffs.std(1, ddof=1) / np.sqrt(n) if n > 1 else np.full(len(diffs), np.inf)
    tstat = np.where(se > 0, diffs.mean(1) / np.where(se > 0, se, 1), 0.0)
    dec, inc = tstat < -z, tstat > z
    start = 0
    for i in range(len(dec)):
        if dec[i]:
            start = i + 1
    rho = float(spearmanr(values, mean).statistic) if len(values) > 2 else float("nan")
    return {
        "spearman": rho,
        "significant_decreases": int(dec.sum()),
        "significant_increases": int(inc.sum()),
        "monotone_from": float(values[start]),
        "argmin": float(values[int(np.argmin(mean))]),
        "mean": mean,
    }


# ----------------------------------------------------------------------------- App B.1-B.3 for any shape beta
#
# Camera-ready App B proves Theorem 1 for the generalised Gaussian N(mu, alpha, beta) with pdf
# beta / (2 alpha Gamma(1/beta)) exp(-(|x - mu| / alpha)^beta) (scipy's gennorm with scale alpha);
# beta = 2 is N(mu, alpha^2 / 2). The 1-D model and SGD are those of linear_sgd_mc, y in {-1, +1},
# N_0 = N(mu1, alpha, beta) for y = -1 and N_1 = N(mu2, alpha, beta) for y = +1.

GG_BETAS = (1.0, 1.5, 3.0, 4.0)


def gg_variance(alpha, beta):
    """B.3's variance of N(mu, alpha, beta): alpha^2 Gamma(3/beta) / Gamma(1/beta)."""
    from scipy.special import gammaln

    return np.asarray(alpha, float) ** 2 * np.exp(gammaln(3 / beta) - gammaln(1 / beta))


def gg_alpha(variance, beta):
    """The scale alpha whose generalised Gaussian of shape beta has the given variance."""
    return np.sqrt(np.asarray(variance, float) / gg_variance(1.0, beta))


def gg_noise_moments(alpha: float, beta: float, mu1: float = 1.0, mu2: float = 2.0) -> tuple[float, float]:
    """E[x - y + theta*] and E[(x - y + theta*)^2] for (x, y) ~ G'(alpha, beta), by adaptive quadrature
    of the pdf (independent of the Gamma-function closed form)."""
    from scipy import integrate
    from scipy.stats import gennorm

    star = -(mu1 + mu2) / 2
    m1 = m2 = 0.0
    for y, mu in ((-1.0, mu1), (1.0, mu2)):
        for k in (1, 2):
            f = lambda x, k=k, y=y, mu=mu: (x - y + star) ** k * gennorm.pdf(x, beta, loc=mu, scale=alpha)  # noqa: E731
            v = sum(
                integrate.quad(f, lo, hi, limit=200, epsabs=1e-13, epsrel=1e-11)[0]
                for lo, hi in ((-np.inf, mu), (mu, np.inf))
            )
            if k == 1:
                m1 += 0.5 * v
            else:
                m2 += 0.5 * v
    return m1, m2


def gg_noise_second_moment(alpha, beta, mu1: float = 1.0, mu2: float = 2.0):
    """B.3: E[(x - y + theta*)^2] = alpha^2 Gamma(3/beta)/Gamma(1/beta) + (1 - (mu2 - mu1)/2)^2."""
    return gg_variance(alpha, beta) + (1 - (mu2 - mu1) / 2) ** 2


def gg_theorem1_closed_form(
    alpha: float, beta: float, eta: float, t: int, theta0: float, mu1: float = 1.0, mu2: float = 2.0
) -> float:
    """B.3: E[(theta_t - theta*)^2] = (1-eta)^{2t}(theta0-theta*)^2 + eta/(2-eta)(1-(1-eta)^{2t}) E[(x-y+theta*)^2]."""
    star = -(mu1 + mu2) / 2
    q = (1 - eta) ** (2 * t)
    return float(q * (theta0 - star) ** 2 + eta / (2 - eta) * (1 - q) * gg_noise_second_moment(alpha, beta, mu1, mu2))


def gg_standard_draws(beta: float, size, rng: np.random.Generator) -> np.ndarray:
    """Draws of N(0, 1, beta): |s|^beta ~ Gamma(1/beta, 1) with a random sign."""
    return rng.choice([-1.0, 1.0], size=size) * rng.gamma(1 / beta, 1.0, size=size) ** (1 / beta)


def gg_linear_sgd_mc(
    alphas,
    beta: float,
    eta: float,
    steps: int,
    theta0: float,
    reps: int,
    seed: int = 0,
    mu1: float = 1.0,
    mu2: float = 2.0,
) -> np.ndarray:
    """B.2's online SGD theta <- theta - eta (theta + x - y) with x ~ N(mu_y, alpha, beta), for every alpha
    in ``alphas`` with common random numbers (the same labels and standardised noise): ``[len(alphas), reps]``."""
    rng = np.random.default_rng(seed)
    a = np.asarray(alphas, float)[:, None]
    theta = np.full((len(a), reps), float(theta0))
    for _ in range(steps):
        y = rng.choice([-1.0, 1.0], size=reps)
        x = np.where(y > 0, mu2, mu1) + a * gg_standard_draws(beta, reps, rng)
        theta -= eta * (theta + x - y)
    return theta


def gg_zero_one_risk(theta, alpha: float, beta: float, mu1: float = 1.0, mu2: float = 2.0):
    """0-1 risk of sign(x + theta) on the mixture with shape beta and scale alpha (exact CDFs)."""
    from scipy.stats import gennorm

    theta = np.asarray(theta, float)
    return 0.5 * gennorm.cdf((-theta - mu2) / alpha, beta) + 0.5 * gennorm.sf((-theta - mu1) / alpha, beta)


def gg_excess_printed(theta, alpha0: float, beta0: float, mu1: float = 1.0, mu2: float = 2.0):
    """B.1's excess risk (int_{-d}^{d} dF - int_{-(theta+mu2)/alpha0}^{-(theta+mu1)/alpha0} dF) / 2 with
    d = (mu2 - mu1) / (2 alpha0) and F the CDF of N(0, 1, beta0)."""
    from scipy.stats import gennorm

    theta = np.asarray(theta, float)
    d = (mu2 - mu1) / (2 * alpha0)
    inner = gennorm.cdf(-(theta + mu1) / alpha0, beta0) - gennorm.cdf(-(theta + mu2) / alpha0, beta0)
    return 0.5 * (gennorm.cdf(d, beta0) - gennorm.cdf(-d, beta0) - inner)


def gg_curvature(
    alpha0: float, beta0: float, mu1: float = 1.0, mu2: float = 2.0, umax: float = 5.0, n: int = 40001
) -> dict:
    """B.1's constant C1 = sup_u [L(theta* + u) - L(theta*)] / u^2 on a grid, the argmin of the risk on
    a theta grid, and the limit at u -> 0, beta0 d^{beta0-1} f(d) / (2 alpha0^2) with f the pdf of
    N(0, 1, beta0) and d = (mu2 - mu1)/(2 alpha0) (finite for every beta0 > 0, so h is bounded)."""
    from scipy.stats import gennorm

    star = -(mu1 + mu2) / 2
    u = np.linspace(-umax, umax, n)
    u = u[np.abs(u) > 1e-4]
    risk = gg_zero_one_risk(star + u, alpha0, beta0, mu1, mu2)
    base = float(gg_zero_one_risk(star, alpha0, beta0, mu1, mu2))
    d = (mu2 - mu1) / (2 * alpha0)
    grid = np.linspace(star - umax, star + umax, n)
    return {
        "C1": float(np.max((risk - base) / u**2)),
        "min_excess": float(np.min(risk - base)),
        "limit": float(beta0 * d ** (beta0 - 1) * gennorm.pdf(d, beta0) / (2 * alpha0**2)),
        "argmin": float(grid[np.argmin(gg_zero_one_risk(grid, alpha0, beta0, mu1, mu2))]),
        "printed_vs_exact": float(np.max(np.abs(gg_excess_printed(star + u, alpha0, beta0, mu1, mu2) - (risk - base)))),
    }


def gg_appendix_b_rows(
    betas,
    sigmas,
    eta: float,
    steps: int,
    reps: int,
    seed: int = 0,
    theta0: float = 0.0,
    sigma_ref: float = 0.5,
    mu1: float = 1.0,
    mu2: float = 2.0,
) -> list[dict]:
    """App B.3 for every shape beta and every standard deviation Sigma (alpha set so the variance is
    Sigma^2): the noise moments by quadrature against B.3's closed form, Monte Carlo of E[(theta_T -
    theta*)^2] against the closed form, and the 0-1 excess risk of the same chains on the original data
    G (shape beta, standard deviation ``sigma_ref``), whose growth with Sigma is B.3's conclusion."""
    star = -(mu1 + mu2) / 2
    rows = []
    for b in betas:
        alphas = gg_alpha(np.asarray(sigmas, float) ** 2, b)
        theta = gg_linear_sgd_mc(alphas, b, eta, steps, theta0, reps, seed, mu1, mu2)
        a_ref = float(gg_alpha(sigma_ref**2, b))
        base = float(gg_zero_one_risk(star, a_ref, b, mu1, mu2))
        for s, a, th in zip(sigmas, alphas, theta):
            m1, m2 = gg_noise_moments(float(a), b, mu1, mu2)
            sq = (th - star) ** 2
            mc, se = float(sq.mean()), float(sq.std() / math.sqrt(reps))
            closed = gg_theorem1_closed_form(float(a), b, eta, steps, theta0, mu1, mu2)
            rows.append(
                {
                    "beta": b,
                    "sigma": s,
                    "alpha": float(a),
                    "E[ξ] (quadrature)": m1,
                    "E[ξ²] (quadrature)": m2,
                    "E[ξ²] (B.3)": float(gg_noise_second_moment(a, b, mu1, mu2)),
                    "MC E[(θ_T-θ*)²]": mc,
                    "MC s.e.": se,
                    "closed form (B.3)": closed,
                    "closed - MC (s.e.)": (closed - mc) / se,
                    "0-1 excess on G": float(np.mean(gg_zero_one_risk(th, a_ref, b, mu1, mu2)) - base),
                }
            )
    return rows
