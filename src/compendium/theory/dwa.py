"""DWA's derivations (Diversity-Driven Synthesis via Directed Weight Adjustment, NeurIPS 2024).

* T2 (App. A.1, eqs. 17-20): the gradients of the mean term and of the variance term of the BN
  statistic loss, with respect to one synthetic instance. For scalar features and squared losses
  [mu(S) - mu(T)]^2 and [var(S) - var(T)]^2 the paper prints eq. 19 with a factor (1 - 1/|S|)
  that the exact derivative lacks (:func:`paper_grad_product` vs :func:`exact_grad_product`).
  :func:`bn_stat_grads` computes both gradients by autograd, for the squared scalar form and the
  unsquared multi-channel form of eq. 4 (the code's), so the sign argument can be checked as stated.
* T4 (Sec. 3.3, eqs. 12-15): K normalised ascent steps of total length rho on a small batch B
  (:func:`directed_adjustment`, as DWA's code does it) are claimed to lower the summed loss on the
  rest of the data. The argument is first order and needs exact stationarity of the summed loss.
  :func:`adjustment_effects` measures Delta L_B and Delta L_{T minus B} on a small softmax MLP.
* T1 (Sec. 3.1, eqs. 5-7): s_i = X_c(lam L_mean, theta_T) + xi_i with X_c deterministic, so Var(S) =
  sigma_xi^2(lam L_var). :func:`variance_decomposition` recovers batches (CE + the BN loss of eq. 4 on
  the teacher's hidden layer) with and without L_var from Gaussian initialisations of several scales.
* T3 (Sec. 3.2, eqs. 8-11): a random perturbation of theta_T moves the optimum x_c with Var(dx) =
  beta sigma_theta^2; eq. 10 writes dx with the inverse of the P x d matrix grad_x grad_theta l.
  :func:`perturbation_response` re-solves a well-posed x_c(theta) for random perturbations and compares
  the measured beta with the implicit-function derivative and with eq. 10 (as a pseudo-inverse).

Everything here is float64 and seeded.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from compendium.theory.threads import single_thread

# ---------------------------------------------------------------- T2: BN statistic gradients


def batch_stats(s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-channel mean and biased (population) variance over the batch, as BN (and DWA's hook)
    compute them. ``s`` is (n,) for scalar features or (n, C)."""
    return s.mean(0), s.var(0, unbiased=False)


def bn_stat_grads(s: torch.Tensor, mu_t: torch.Tensor, var_t: torch.Tensor, squared: bool = True):
    """Autograd gradients of L_mean and L_var with respect to every instance s_i.

    ``squared=True``: L_mean = ||mu(S) - mu_T||^2, L_var = ||var(S) - var_T||^2 (App. A.1).
    ``squared=False``: the unsquared L2 norms of eq. 4 and the code.
    Returns (g_mean, g_var), each shaped like ``s``.
    """
    s = s.detach().clone().requires_grad_(True)
    mu, var = batch_stats(s)
    dm, dv = (mu - mu_t).reshape(-1), (var - var_t).reshape(-1)
    l_mean = dm.pow(2).sum() if squared else dm.norm()
    l_var = dv.pow(2).sum() if squared else dv.norm()
    (g_mean,) = torch.autograd.grad(l_mean, s, retain_graph=True)
    (g_var,) = torch.autograd.grad(l_var, s)
    return g_mean, g_var


def exact_grad_product(s: torch.Tensor, mu_t: float, var_t: float) -> torch.Tensor:
    """(dL_mean/ds_i)(dL_var/ds_i) for scalar features and squared losses, exactly:
    (8 / |S|^2) R (s_i - mu(S)) with R = [mu(S) - mu_T][var(S) - var_T]."""
    n = s.shape[0]
    mu, var = batch_stats(s)
    r = (mu - mu_t) * (var - var_t)
    return 8.0 / n**2 * r * (s - mu)


def paper_grad_product(s: torch.Tensor, mu_t: float, var_t: float) -> torch.Tensor:
    """The paper's eq. 20: [2/|S|]^3 (|S| - 1) R (s_i - mu(S)) (it keeps eq. 19's (1 - 1/|S|))."""
    n = s.shape[0]
    mu, var = batch_stats(s)
    r = (mu - mu_t) * (var - var_t)
    return (2.0 / n) ** 3 * (n - 1) * r * (s - mu)


def conflict_prediction(s: torch.Tensor, mu_t: torch.Tensor, var_t: torch.Tensor) -> torch.Tensor:
    """The closed-form sign of <dL_mean/ds_i, dL_var/ds_i> for the multi-channel form (squared or
    unsquared norms rescale by positive factors): sign of sum_c R_c (s_ic - mu_c), with
    R_c = (mu_c - mu_T,c)(var_c - var_T,c). True where the two gradients oppose."""
    s2 = s.reshape(s.shape[0], -1)
    mu, var = batch_stats(s2)
    r = (mu - mu_t.reshape(-1)) * (var - var_t.reshape(-1))
    return ((s2 - mu) @ r) < 0


def t2_scalar_check(batches: int, batch_size: int, g: torch.Generator):
    """Eqs. 19-20 on ``batches`` random scalar batches (drawn from ``g``): one row per instance with R,
    s_i - mu(S) and the product of the two gradients by autograd, exactly and as eq. 20 prints it;
    and a summary. Returns (rows DataFrame, summary dict, number of instances with a nonzero product)."""
    import numpy as np
    import pandas as pd

    f64 = torch.float64
    rows = []
    for b in range(batches):
        s = torch.randn(batch_size, generator=g, dtype=f64) * (
            0.5 + torch.rand(1, generator=g, dtype=f64)
        ) + torch.randn(1, generator=g, dtype=f64)
        mu_t, var_t = torch.randn(1, generator=g, dtype=f64)[0], 0.1 + 2 * torch.rand(1, generator=g, dtype=f64)[0]
        gm, gv = bn_stat_grads(s, mu_t, var_t, squared=True)
        auto, exact = gm * gv, exact_grad_product(s, float(mu_t), float(var_t))
        paper = paper_grad_product(s, float(mu_t), float(var_t))
        mu, var = batch_stats(s)
        r = float((mu - mu_t) * (var - var_t))
        for i in range(batch_size):
            rows.append(
                {
                    "batch": b,
                    "i": i,
                    "R": r,
                    "s_minus_mu": float(s[i] - mu),
                    "autograd": float(auto[i]),
                    "exact": float(exact[i]),
                    "paper": float(paper[i]),
                }
            )
    t2 = pd.DataFrame(rows)
    nz = t2[t2["autograd"].abs() > 1e-12]
    predicted_opposed = np.where(nz["R"] > 0, nz["s_minus_mu"] < 0, nz["s_minus_mu"] > 0)
    summary = {
        "|S|": batch_size,
        "draws": batches,
        "instances": len(t2),
        "max rel |autograd − exact|": float(((nz["autograd"] - nz["exact"]).abs() / nz["exact"].abs()).max()),
        "paper / autograd (median)": float((nz["paper"] / nz["autograd"]).median()),
        "1 − 1/|S|": 1 - 1 / batch_size,
        "sign(paper) = sign(autograd)": float((np.sign(nz["paper"]) == np.sign(nz["autograd"])).mean()),
        "opposing gradients where the paper predicts them": float(((nz["autograd"] < 0) == predicted_opposed).mean()),
        "fraction of instances with opposing gradients": float((nz["autograd"] < 0).mean()),
    }
    return t2, summary, len(nz)


def t2_factor_rows(g: torch.Generator, sizes=(2, 3, 5, 7, 16, 64, 256)) -> list[dict]:
    """Eq. 20 / autograd for one random batch of every size: the ratio is 1 - 1/|S| whatever the data."""
    f64 = torch.float64
    rows = []
    for n in sizes:
        s = torch.randn(n, generator=g, dtype=f64)
        gm, gv = bn_stat_grads(s, torch.tensor(0.3, dtype=f64), torch.tensor(2.0, dtype=f64))
        auto = gm * gv
        keep = auto.abs() > 1e-14
        rows.append(
            {
                "|S|": n,
                "paper / autograd": float((paper_grad_product(s, 0.3, 2.0)[keep] / auto[keep]).mean()),
                "1 − 1/|S|": 1 - 1 / n,
            }
        )
    return rows


def t2_multichannel(batches: int, batch_size: int, channels: int, g: torch.Generator) -> dict:
    """The unsquared multi-channel form (eq. 4): how often :func:`conflict_prediction` matches the sign
    of the inner product of the autograd gradients, and how often they oppose."""
    f64 = torch.float64
    agree, opposed, total = 0, 0, 0
    for _ in range(batches):
        s = torch.randn(batch_size * 4, channels, generator=g, dtype=f64) * (
            0.5 + torch.rand(channels, generator=g, dtype=f64)
        )
        mu_t = torch.randn(channels, generator=g, dtype=f64) * 0.5
        var_t = 0.1 + 2 * torch.rand(channels, generator=g, dtype=f64)
        gm, gv = bn_stat_grads(s, mu_t, var_t, squared=False)
        auto = (gm * gv).sum(1) < 0
        agree += int((auto == conflict_prediction(s, mu_t, var_t)).sum())
        opposed += int(auto.sum())
        total += len(s)
    return {
        "channels": channels,
        "instances per batch": batch_size * 4,
        "draws": batches,
        "closed-form sign = autograd sign": agree / total,
        "fraction with opposing gradients": opposed / total,
    }


# ---------------------------------------------------------------- T4: directed weight adjustment


def gaussian_mixture(classes: int = 10, dim: int = 8, per_class: int = 300, spread: float = 1.0, seed: int = 0):
    """``classes`` isotropic unit Gaussians in R^dim with means drawn N(0, spread^2 I)."""
    g = torch.Generator().manual_seed(seed)
    means = torch.randn(classes, dim, generator=g, dtype=torch.float64) * spread
    y = torch.arange(classes).repeat_interleave(per_class)
    x = means[y] + torch.randn(len(y), dim, generator=g, dtype=torch.float64)
    return x, y


class FlatMLP:
    """A one-hidden-layer tanh MLP whose parameters are one flat float64 vector, so a weight
    perturbation is a vector addition."""

    def __init__(self, dim: int, hidden: int, classes: int):
        self.shapes = [(hidden, dim), (hidden,), (classes, hidden), (classes,)]
        self.size = sum(math.prod(s) for s in self.shapes)

    def init(self, seed: int) -> torch.Tensor:
        g = torch.Generator().manual_seed(seed)
        parts = []
        for shape in self.shapes:
            fan_in = shape[1] if len(shape) == 2 else 1
            scale = 1.0 / math.sqrt(fan_in) if len(shape) == 2 else 0.0
            parts.append((torch.randn(shape, generator=g, dtype=torch.float64) * scale).reshape(-1))
        return torch.cat(parts)

    def unflatten(self, theta: torch.Tensor) -> list[torch.Tensor]:
        out, i = [], 0
        for shape in self.shapes:
            n = math.prod(shape)
            out.append(theta[i : i + n].reshape(shape))
            i += n
        return out

    def __call__(self, theta: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        w1, b1, w2, b2 = self.unflatten(theta)
        return torch.tanh(x @ w1.T + b1) @ w2.T + b2

    def summed_loss(self, theta: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """L = sum_i CE(f_theta(x_i), y_i): the summed loss of eqs. 12-15."""
        return F.cross_entropy(self(theta, x), y, reduction="sum")


def train_teacher(
    net: FlatMLP, x, y, weight_decay: float, adam_steps: int, lbfgs_steps: int, seed: int = 0, lr: float = 0.01
):
    """Minimise mean CE + weight_decay * ||theta||^2 / 2 with Adam, then L-BFGS (strong Wolfe).

    Returns (theta, gradient norm of that objective, gradient norm of the summed CE alone)."""
    theta = net.init(seed).requires_grad_(True)

    def objective(t):
        return F.cross_entropy(net(t, x), y) + 0.5 * weight_decay * t.pow(2).sum()

    opt = torch.optim.Adam([theta], lr=lr)
    for _ in range(adam_steps):
        opt.zero_grad()
        objective(theta).backward()
        opt.step()
    if lbfgs_steps:
        opt = torch.optim.LBFGS(
            [theta],
            lr=1.0,
            max_iter=lbfgs_steps,
            history_size=50,
            tolerance_grad=1e-14,
            tolerance_change=1e-16,
            line_search_fn="strong_wolfe",
        )

        def closure():
            opt.zero_grad()
            loss = objective(theta)
            loss.backward()
            return loss

        opt.step(closure)
    theta = theta.detach()
    t = theta.clone().requires_grad_(True)
    (g_obj,) = torch.autograd.grad(objective(t), t)
    t = theta.clone().requires_grad_(True)
    (g_sum,) = torch.autograd.grad(net.summed_loss(t, x, y), t)
    return theta, float(g_obj.norm()), float(g_sum.norm())


def directed_adjustment(net: FlatMLP, theta: torch.Tensor, xb, yb, rho: float, steps: int) -> torch.Tensor:
    """Delta theta of DWA's Algorithm 1 line 8 as its code does it: ``steps`` ascent steps on the summed
    loss of the batch B, each of length rho/steps along the normalised gradient (||Delta theta|| <= rho)."""
    delta = torch.zeros_like(theta)
    for _ in range(steps):
        t = (theta + delta).requires_grad_(True)
        (g,) = torch.autograd.grad(net.summed_loss(t, xb, yb), t)
        delta = delta + rho / steps * g / (g.norm() + 1e-12)
    return delta


def adjustment_effects(net: FlatMLP, theta, x, y, rhos, draws: int, steps: int, seed: int = 0) -> list[dict]:
    """For each rho and each of ``draws`` random batches B (one point per class), the change of the
    summed loss on B and on T minus B under the directed Delta theta, under a random direction of the
    same norm (the control), and the first-order prediction grad L_{T minus B} . Delta theta."""
    g = torch.Generator().manual_seed(seed)
    classes = int(y.max()) + 1
    rows = []
    base_all = None
    for d in range(draws):
        pick = torch.stack(
            [
                torch.nonzero(y == c).flatten()[torch.randint(int((y == c).sum()), (1,), generator=g)]
                for c in range(classes)
            ]
        ).flatten()
        rest = torch.ones(len(y), dtype=torch.bool)
        rest[pick] = False
        xb, yb, xr, yr = x[pick], y[pick], x[rest], y[rest]
        base_b, base_r = float(net.summed_loss(theta, xb, yb)), float(net.summed_loss(theta, xr, yr))
        if base_all is None:
            base_all = base_b + base_r
        t = theta.clone().requires_grad_(True)
        (grad_r,) = torch.autograd.grad(net.summed_loss(t, xr, yr), t)
        for rho in rhos:
            delta = directed_adjustment(net, theta, xb, yb, rho, steps)
            rand = torch.randn(theta.shape, generator=g, dtype=theta.dtype)
            rand = rand / rand.norm() * delta.norm()
            d_b = float(net.summed_loss(theta + delta, xb, yb)) - base_b
            d_r = float(net.summed_loss(theta + delta, xr, yr)) - base_r
            rows.append(
                {
                    "draw": d,
                    "rho": rho,
                    "norm": float(delta.norm()),
                    "dL_B": d_b,
                    "dL_rest": d_r,
                    "ratio": d_r / d_b if d_b != 0 else float("nan"),
                    "first_order_dL_rest": float(grad_r @ delta),
                    "random_dL_rest": float(net.summed_loss(theta + rand, xr, yr)) - base_r,
                    "dL_rest_per_sample": d_r / int(rest.sum()),
                }
            )
    return rows


# ---------------------------------------------------------------- T1: the variance decomposition (Sec. 3.1, eqs. 5-7)


def hidden_preact(net: FlatMLP, theta: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """The teacher's hidden pre-activation x W1^T + b1: the layer whose batch statistics a BN layer
    would normalise, so the one whose statistics the BN loss matches here."""
    w1, b1, _, _ = net.unflatten(theta)
    return x @ w1.T + b1


def recover_batches(
    net: FlatMLP,
    theta: torch.Tensor,
    x_train: torch.Tensor,
    configs,
    runs: int = 10,
    per_class: int = 5,
    steps: int = 300,
    lr: float = 0.05,
    seed: int = 0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """SRe2L/DWA recovery (eq. 3 with eq. 4's unsquared norms) of ``runs`` independent batches S per
    configuration ``(lam_mean, lam_var, init_scale)`` in ``configs``; each batch holds ``per_class``
    instances of every class, initialised N(0, init_scale^2) (the same standardised noise for every
    configuration). Adam minimises mean_i CE(f(s_i), y_i) + lam_mean ||mu(S) - mu(T)|| + lam_var
    ||var(S) - var(T)|| with the statistics of the hidden pre-activation (those of T over the whole
    training set). All batches are independent problems optimised side by side.
    Returns S ``[len(configs), runs, n, d]`` and the labels ``[n]``."""
    w1, b1, w2, b2 = net.unflatten(theta)
    mu_t, var_t = batch_stats(hidden_preact(net, theta, x_train))
    classes, dim = w2.shape[0], w1.shape[1]
    y = torch.arange(classes).repeat(per_class)
    lam = torch.tensor([c[:2] for c in configs], dtype=theta.dtype)
    init = torch.tensor([c[2] for c in configs], dtype=theta.dtype)[:, None, None, None]
    g = torch.Generator().manual_seed(seed)
    s = (torch.randn(1, runs, len(y), dim, generator=g, dtype=theta.dtype) * init).requires_grad_(True)
    opt = torch.optim.Adam([s], lr=lr)
    for _ in range(steps):
        h = s @ w1.T + b1  # [K, runs, n, hidden]
        logits = torch.tanh(h) @ w2.T + b2
        ce = F.cross_entropy(logits.reshape(-1, classes), y.repeat(len(configs) * runs), reduction="sum") / len(y)
        l_mean = (h.mean(2) - mu_t).norm(dim=-1)  # [K, runs]
        l_var = (h.var(2, unbiased=False) - var_t).norm(dim=-1)
        loss = ce + (lam[:, 0, None] * l_mean + lam[:, 1, None] * l_var).sum()
        opt.zero_grad()
        loss.backward()  # the batches do not interact: each one's gradient is that of its own objective
        opt.step()
    return s.detach(), y


def within_class_variance(s: torch.Tensor, y: torch.Tensor) -> float:
    """Var(S) as diversity: the trace of the within-class covariance of the instances ``s`` ``[..., n, d]``
    (all leading batches pooled), averaged over classes."""
    flat = s.reshape(-1, s.shape[-1])
    yy = y.repeat(flat.shape[0] // len(y))
    return float(torch.stack([flat[yy == c].var(0).sum() for c in torch.unique(y)]).mean())


@single_thread()
def variance_decomposition(
    net: FlatMLP,
    theta: torch.Tensor,
    x_train: torch.Tensor,
    y_train: torch.Tensor,
    settings=((1.0, 0.0), (1.0, 1.0), (1.0, 5.0)),
    init_scales=(0.1, 1.0, 3.0),
    **kw,
) -> list[dict]:
    """T1: Var(S) of recovered batches for every (lam_mean, lam_var) in ``settings`` and every Gaussian
    init scale, with the within-class variance of the real data for reference. Eq. 7 predicts
    Var(S) = sigma_xi^2(lam L_var): zero without L_var (X_c deterministic) and the same for every
    initialisation."""
    configs = [(lm, lv, init) for init in init_scales for lm, lv in settings]
    s, y = recover_batches(net, theta, x_train, configs, **kw)
    real = within_class_variance(x_train, y_train)
    rows = []
    for k, (lm, lv, init) in enumerate(configs):
        flat = s[k].reshape(-1, s.shape[-1])
        acc = float((net(theta, flat).argmax(1) == y.repeat(s.shape[1])).double().mean())
        rows.append(
            {
                "init_std": init,
                "lambda_mean": lm,
                "lambda_var": lv,
                "Var(S)": within_class_variance(s[k], y),
                "Var(init)": init**2 * s.shape[-1],
                "Var(real data)": real,
                "teacher accuracy on S": acc,
            }
        )
    return rows


# ---------------------------------------------------------------- T3: random weight perturbation (Sec. 3.2, eqs. 8-11)

T3_SIGMAS = (1e-3, 1e-2, 3e-2)  # per-coordinate std of the random perturbation of theta
T3_DRAWS = 20  # perturbations per class and sigma


def _recovery_objective(net: FlatMLP, gamma: float):
    """J(theta, x; c, m) = CE(f_theta(x), c) + gamma/2 ||x - m||^2: eq. 3 for one instance without L_var,
    with an L2 anchor at the class mean m standing in for lam L_mean (it makes the optimum unique)."""

    def j(theta, x, c, m):
        return F.cross_entropy(net(theta, x[None]), c[None]) + 0.5 * gamma * ((x - m) ** 2).sum()

    return j


def _newton(j, thetas, x0, c, m, iters: int = 12):
    """Batched Newton's method in x for every row of ``thetas`` (warm start ``x0``)."""
    from torch.func import grad, hessian, vmap

    gx, hx = vmap(grad(j, argnums=1), in_dims=(0, 0, 0, 0)), vmap(hessian(j, argnums=1), in_dims=(0, 0, 0, 0))
    x = x0
    for _ in range(iters):
        x = x - torch.linalg.solve(hx(thetas, x, c, m), gx(thetas, x, c, m).unsqueeze(-1)).squeeze(-1)
    return x, float(gx(thetas, x, c, m).norm(dim=-1).max())


@single_thread()
def perturbation_response(
    net: FlatMLP,
    theta: torch.Tensor,
    x: torch.Tensor,
    y: torch.Tensor,
    sigmas,
    draws: int = T3_DRAWS,
    gamma: float = 1.0,
    seed: int = 0,
) -> tuple[list[dict], list[dict]]:
    """T3 for every class c. x_c(theta) = argmin_x J (see :func:`_recovery_objective`), solved by Newton.

    * measured: tr Cov[x_c(theta + dtheta)] over ``draws`` dtheta ~ N(0, sigma^2 I), for each sigma (eq. 11
      says it is beta sigma^2);
    * implicit function: dx_c/dtheta = -[grad_x^2 J]^{-1} grad_theta grad_x J, so beta = ||.||_F^2;
    * eq. 10 as printed, with l = CE: dx = -[grad_x grad_theta l]^{-1} grad_theta^2 l dtheta. The matrix
      grad_x grad_theta l is P x d (not square), so ^{-1} is read as the pseudo-inverse; beta_eq10 = ||.||_F^2;
    * eq. 9's requirement grad_theta^2 l dtheta + grad_x grad_theta l dx = 0: the share of
      ||grad_theta^2 l dtheta|| that no dx can cancel (the residual of its projection on the d columns).

    Returns (per class and sigma rows, per class rows)."""
    from torch.func import grad, hessian, jacrev

    j = _recovery_objective(net, gamma)
    ce = lambda th, xx, c: F.cross_entropy(net(th, xx[None]), c[None])  # noqa: E731
    classes = torch.unique(y)
    cs = classes.clone()
    ms = torch.stack([x[y == c].mean(0) for c in classes])
    thetas = theta[None].expand(len(cs), -1)
    xs, gnorm = _newton(j, thetas, ms.clone(), cs, ms)
    g = torch.Generator().manual_seed(seed)
    per_class, rows = [], []
    for k, c in enumerate(cs):
        hxx = hessian(j, argnums=1)(theta, xs[k], c, ms[k])
        hxt = jacrev(grad(j, argnums=1), argnums=0)(theta, xs[k], c, ms[k])  # d x P
        a = -torch.linalg.solve(hxx, hxt)
        mtt = hessian(ce, argnums=0)(theta, xs[k], c)  # P x P
        mtx = jacrev(grad(ce, argnums=0), argnums=1)(theta, xs[k], c)  # P x d
        pinv = torch.linalg.pinv(mtx)
        b = -pinv @ mtt
        dth = torch.randn(draws, theta.numel(), generator=g, dtype=theta.dtype)
        v = dth @ mtt.T
        resid = v - (v @ pinv.T) @ mtx.T
        per_class.append(
            {
                "class": int(c),
                "beta implicit": float((a * a).sum()),
                "beta eq. 10 (pinv)": float((b * b).sum()),
                "eq. 9 uncancelled share": float((resid.norm(dim=1) / v.norm(dim=1)).mean()),
                "rank of grad_x grad_theta l": int(torch.linalg.matrix_rank(mtx)),
                "P": theta.numel(),
                "d": x.shape[1],
            }
        )
    dth = torch.randn(len(sigmas), len(cs), draws, theta.numel(), generator=g, dtype=theta.dtype)
    sig = torch.tensor(list(sigmas), dtype=theta.dtype)[:, None, None, None]
    th = (theta + sig * dth).reshape(-1, theta.numel())
    rep = lambda t: t[None, :, None].expand(len(sigmas), -1, draws, *t.shape[1:]).reshape(-1, *t.shape[1:])  # noqa: E731
    xc, gn = _newton(j, th, rep(xs), rep(cs), rep(ms))
    xc = xc.reshape(len(sigmas), len(cs), draws, -1)
    for i, s in enumerate(sigmas):
        for k, c in enumerate(cs):
            dx = xc[i, k] - xs[k]
            rows.append(
                {
                    "sigma_theta": float(s),
                    "class": int(c),
                    "tr Cov(x_c)": float(torch.cov(dx.T).trace()),
                    "measured beta": float(torch.cov(dx.T).trace()) / float(s) ** 2,
                    "Newton |grad|": max(gn, gnorm),
                }
            )
    return rows, per_class


def summarise_adjustment(effects):
    """Per teacher and rho, over the random batches B: the median (and quartiles) of the ratio
    dL(T minus B) / dL(B), the share of batches whose rest loss falls, and the medians of the directed,
    first-order and random-direction changes (a DataFrame from :func:`adjustment_effects` rows)."""
    import numpy as np

    def q(p):
        return lambda v: float(np.quantile(v, p))

    return (
        effects.groupby(["teacher", "rho"], sort=False)
        .agg(
            ratio_median=("ratio", "median"),
            ratio_q25=("ratio", q(0.25)),
            ratio_q75=("ratio", q(0.75)),
            frac_rest_lowered=("dL_rest", lambda v: float((v < 0).mean())),
            dL_B=("dL_B", "median"),
            dL_rest=("dL_rest", "median"),
            first_order=("first_order_dL_rest", "median"),
            random_dL_rest=("random_dL_rest", "median"),
            random_frac_lowered=("random_dL_rest", lambda v: float((v < 0).mean())),
            dL_rest_per_sample=("dL_rest_per_sample", "median"),
        )
        .reset_index()
    )
