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

Everything here is float64 and seeded.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

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
    g_mean, = torch.autograd.grad(l_mean, s, retain_graph=True)
    g_var, = torch.autograd.grad(l_var, s)
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
            out.append(theta[i:i + n].reshape(shape))
            i += n
        return out

    def __call__(self, theta: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        w1, b1, w2, b2 = self.unflatten(theta)
        return torch.tanh(x @ w1.T + b1) @ w2.T + b2

    def summed_loss(self, theta: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """L = sum_i CE(f_theta(x_i), y_i): the summed loss of eqs. 12-15."""
        return F.cross_entropy(self(theta, x), y, reduction="sum")


def train_teacher(net: FlatMLP, x, y, weight_decay: float, adam_steps: int, lbfgs_steps: int, seed: int = 0,
                  lr: float = 0.01):
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
        opt = torch.optim.LBFGS([theta], lr=1.0, max_iter=lbfgs_steps, history_size=50, tolerance_grad=1e-14,
                                tolerance_change=1e-16, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = objective(theta)
            loss.backward()
            return loss

        opt.step(closure)
    theta = theta.detach()
    t = theta.clone().requires_grad_(True)
    g_obj, = torch.autograd.grad(objective(t), t)
    t = theta.clone().requires_grad_(True)
    g_sum, = torch.autograd.grad(net.summed_loss(t, x, y), t)
    return theta, float(g_obj.norm()), float(g_sum.norm())


def directed_adjustment(net: FlatMLP, theta: torch.Tensor, xb, yb, rho: float, steps: int) -> torch.Tensor:
    """Delta theta of DWA's Algorithm 1 line 8 as its code does it: ``steps`` ascent steps on the summed
    loss of the batch B, each of length rho/steps along the normalised gradient (||Delta theta|| <= rho)."""
    delta = torch.zeros_like(theta)
    for _ in range(steps):
        t = (theta + delta).requires_grad_(True)
        g, = torch.autograd.grad(net.summed_loss(t, xb, yb), t)
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
        pick = torch.stack([torch.nonzero(y == c).flatten()[torch.randint(int((y == c).sum()), (1,), generator=g)]
                            for c in range(classes)]).flatten()
        rest = torch.ones(len(y), dtype=torch.bool)
        rest[pick] = False
        xb, yb, xr, yr = x[pick], y[pick], x[rest], y[rest]
        base_b, base_r = float(net.summed_loss(theta, xb, yb)), float(net.summed_loss(theta, xr, yr))
        if base_all is None:
            base_all = base_b + base_r
        t = theta.clone().requires_grad_(True)
        grad_r, = torch.autograd.grad(net.summed_loss(t, xr, yr), t)
        for rho in rhos:
            delta = directed_adjustment(net, theta, xb, yb, rho, steps)
            rand = torch.randn(theta.shape, generator=g, dtype=theta.dtype)
            rand = rand / rand.norm() * delta.norm()
            d_b = float(net.summed_loss(theta + delta, xb, yb)) - base_b
            d_r = float(net.summed_loss(theta + delta, xr, yr)) - base_r
            rows.append({"draw": d, "rho": rho, "norm": float(delta.norm()), "dL_B": d_b, "dL_rest": d_r,
                         "ratio": d_r / d_b if d_b != 0 else float("nan"),
                         "first_order_dL_rest": float(grad_r @ delta),
                         "random_dL_rest": float(net.summed_loss(theta + rand, xr, yr)) - base_r,
                         "dL_rest_per_sample": d_r / int(rest.sum())})
    return rows
