"""Bias of the bilevel gradient under sampled augmentation (SSDD, ICLR 2025, Sec. 3.3, after KRR-ST).

The inner problem is ridge regression, the closed-form head of KRR-ST / SSDD (eq. 3):
W*(X, Y) = argmin_W ||X W - Y||^2 + lam ||W||^2 = (X^T X + lam I)^{-1} X^T Y. The outer loss is the
MSE of the real targets under W*: L_outer(W) = ||X_r W - Y_r||^2 / n_r.

With a fixed set of A views tau_1..tau_A of the synthetic inputs (here feature permutations, the
stand-in for rot90), two gradients of the outer loss with respect to the synthetic inputs X_s:

* sampled: draw one view a per step and differentiate L_outer(W*(tau_a(X_s), Y_s));
  its expectation is the mean over a (:func:`sampled_gradients`);
* enumerated: the inner problem is the uniform mixture over all views, i.e. ridge on the stacked
  views, as SSDD's predefined augmentation does (:func:`enumerated_gradient`).

The expectation of the sampled gradient is the gradient of E_a[L_outer(W*_a)], a different
objective from L_outer(W*_all), because W* is nonlinear in the inner data. :func:`relative_bias`
measures ||E[g_sampled] - g_enum|| / ||g_enum||.

:func:`krr_predict_dual` and :func:`krr_predict_primal` are the two forms of the KRR head
(the primal/dual identity).
"""

from __future__ import annotations

import torch


def ridge(x: torch.Tensor, y: torch.Tensor, lam: float) -> torch.Tensor:
    """W* = (X^T X + lam I)^{-1} X^T Y (primal form)."""
    d = x.shape[1]
    return torch.linalg.solve(x.T @ x + lam * torch.eye(d, dtype=x.dtype), x.T @ y)


def krr_predict_primal(f_real, f_syn, y_syn, lam: float):
    return f_real @ ridge(f_syn, y_syn, lam)


def krr_predict_dual(f_real, f_syn, y_syn, lam: float):
    """F_r F_s^T (F_s F_s^T + lam I_m)^{-1} Y_s, eq. 3 of SSDD (KRR-ST's form)."""
    m = f_syn.shape[0]
    return f_real @ f_syn.T @ torch.linalg.solve(f_syn @ f_syn.T + lam * torch.eye(m, dtype=f_syn.dtype), y_syn)


def outer_loss(w, x_real, y_real):
    return (x_real @ w - y_real).pow(2).sum(1).mean()


class Toy:
    """A seeded problem: real data from a noisy linear teacher, synthetic inputs drawn from the same
    distribution, A - 1 random feature permutations plus the identity as the predefined views."""

    def __init__(
        self,
        d: int = 16,
        m: int = 8,
        k: int = 4,
        n_real: int = 200,
        views: int = 4,
        lam: float = 0.1,
        noise: float = 0.1,
        seed: int = 0,
        identity_views: bool = False,
    ):
        g = torch.Generator().manual_seed(seed)
        dt = torch.float64
        self.lam = lam
        self.w_true = torch.randn(d, k, generator=g, dtype=dt)
        self.x_real = torch.randn(n_real, d, generator=g, dtype=dt)
        self.y_real = self.x_real @ self.w_true + noise * torch.randn(n_real, k, generator=g, dtype=dt)
        self.x_syn = torch.randn(m, d, generator=g, dtype=dt)
        self.y_syn = self.x_syn @ self.w_true
        perms = [torch.arange(d)]
        for _ in range(views - 1):
            perms.append(torch.arange(d) if identity_views else torch.randperm(d, generator=g))
        self.perms = perms

    def view(self, x: torch.Tensor, a: int) -> torch.Tensor:
        return x[:, self.perms[a]]

    def loss_one_view(self, x_syn: torch.Tensor, a: int) -> torch.Tensor:
        return outer_loss(ridge(self.view(x_syn, a), self.y_syn, self.lam), self.x_real, self.y_real)

    def loss_enumerated(self, x_syn: torch.Tensor) -> torch.Tensor:
        xs = torch.cat([self.view(x_syn, a) for a in range(len(self.perms))])
        ys = self.y_syn.repeat(len(self.perms), 1)
        return outer_loss(ridge(xs, ys, self.lam * len(self.perms)), self.x_real, self.y_real)


def _grad(fn, x):
    x = x.detach().clone().requires_grad_(True)
    (g,) = torch.autograd.grad(fn(x), x)
    return g


def sampled_gradients(toy: Toy, x_syn=None) -> torch.Tensor:
    """The gradient for each view a (stacked, A x m x d); their mean is E[g_sampled]."""
    x_syn = toy.x_syn if x_syn is None else x_syn
    return torch.stack([_grad(lambda x, a=a: toy.loss_one_view(x, a), x_syn) for a in range(len(toy.perms))])


def enumerated_gradient(toy: Toy, x_syn=None) -> torch.Tensor:
    x_syn = toy.x_syn if x_syn is None else x_syn
    return _grad(toy.loss_enumerated, x_syn)


def relative_bias(toy: Toy, x_syn=None) -> float:
    ge = enumerated_gradient(toy, x_syn)
    gs = sampled_gradients(toy, x_syn).mean(0)
    return float((gs - ge).norm() / ge.norm())


def monte_carlo_sampled(toy: Toy, draws: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """The running mean of ``draws`` sampled-view gradients and the per-draw views (a Monte Carlo
    estimate of E[g_sampled], which converges to the mean over views, not to g_enum)."""
    per_view = sampled_gradients(toy)
    g = torch.Generator().manual_seed(seed)
    a = torch.randint(len(toy.perms), (draws,), generator=g)
    running = per_view[a].cumsum(0) / torch.arange(1, draws + 1, dtype=per_view.dtype).reshape(-1, 1, 1)
    return running, a


def descend(toy: Toy, mode: str, steps: int, lr: float, seed: int = 0) -> list[float]:
    """Gradient descent on X_s with the ``sampled`` (one random view per step) or ``enumerated``
    gradient. Returns the enumerated (augmentation-averaged) outer loss after each step."""
    g = torch.Generator().manual_seed(seed)
    x = toy.x_syn.clone()
    trace = [float(toy.loss_enumerated(x))]
    for _ in range(steps):
        if mode == "sampled":
            a = int(torch.randint(len(toy.perms), (1,), generator=g))
            grad = _grad(lambda z: toy.loss_one_view(z, a), x)
        elif mode == "enumerated":
            grad = _grad(toy.loss_enumerated, x)
        else:
            raise ValueError(f"mode must be 'sampled' or 'enumerated', got {mode!r}")
        x = x - lr * grad
        trace.append(float(toy.loss_enumerated(x)))
    return trace
