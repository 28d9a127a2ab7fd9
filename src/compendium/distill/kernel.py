"""Kernel Inducing Points (KIP), Label Solve (LS) and KIP_p (Nguyen, Chen, Lee, ICLR 2021, "Dataset
Meta-Learning from Kernel Ridge-Regression").

KIP learns a small *support* set (X_s, y_s) such that kernel ridge regression (KRR) fitted on it
predicts a large *target* set well (paper eq. 7):

    L(X_s, y_s) = 1/2 || y_t - K_ts (K_ss + lambda I)^-1 y_s ||^2 .

The conventions follow the paper's released code (google-research ``kip``; read, not copied):

* **ridge**: lambda = ``reg`` x trace(K_ss) / n_s, i.e. ``reg`` is relative to the mean diagonal of
  K_ss (default 1e-6), so one ``reg`` fits every kernel scale (:func:`ridge`);
* **loss reduction**: 1/2 x the *mean* over the target rows **and** the C label columns
  (= ||.||_F^2 / (2 n_t C)); this only rescales eq. 7, so the optimum is the same (:func:`kip_loss`);
* **labels**: centred one-hot regression targets, e_y - 1/C (rows sum to 0; :func:`centred_one_hot`);
* **kernels**: the infinite-width NNGP / NTK of a fully-connected ReLU net (neural-tangents'
  ``stax.serial(Flatten, [Dense(W_std, b_std), Relu] x depth, Dense)`` in the NTK parameterisation,
  W_std = sqrt(2), b_std = 0.1 as in the KIP code) and an RBF kernel, on flattened inputs;
* **target batches**: class-balanced samples of the (normalised) training set at every step; Adam on
  the support pixels (and, optionally, on the support labels).

KIP_p (paper §3, "KIP_rho"): a fraction p of the coordinates of *each* support image is replaced by
noise (or zeros) at initialisation and frozen (their gradient is masked and they are re-imposed after
every step), so the learned set is p-corrupted.

LS (paper §3, "Label Solve"): with X_s fixed, eq. 7 is linear least squares in y_s, solved in closed
form: y_s* = argmin ||y_t - A y_s||^2 = pinv(A) y_t with A = K_ts (K_ss + lambda I)^-1.

Learned labels are real regression targets, not probabilities, so :class:`~.sets.DistilledSet` cannot
hold them as ``soft_labels`` in general; they are kept in ``params["targets"]`` (read them back with
:func:`support_targets`). They become ``soft_labels`` only if the uncentred rows (y + 1/C) happen to
be probability vectors.
"""

from __future__ import annotations

import math
from typing import Callable

import torch

from compendium.distill.sets import DistilledSet, measure

Kernel = Callable[[torch.Tensor, "torch.Tensor | None"], torch.Tensor]
KERNELS = ("fc", "ntk", "nngp", "rbf")  # 'fc' is the KIP code's default: the FC NTK
INITS = ("real", "noise")
CORRUPTIONS = ("noise", "zero")


# ----------------------------------------------------------------------------------------------------
# kernels
# ----------------------------------------------------------------------------------------------------


def _flat(x: torch.Tensor, name: str) -> torch.Tensor:
    if not isinstance(x, torch.Tensor) or x.ndim < 1 or not x.is_floating_point():
        raise ValueError(f"{name} must be a float tensor [N, ...], got {getattr(x, 'dtype', type(x))}")
    return x.reshape(x.shape[0], -1)


def _pair(x: torch.Tensor, z: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor, bool]:
    """Flattened (x, z); ``z is None`` means z = x (a Gram matrix, whose diagonal is then exact)."""
    xf = _flat(x, "x")
    if z is None:
        return xf, xf, True
    zf = _flat(z, "z")
    if zf.shape[1] != xf.shape[1]:
        raise ValueError(f"x and z have different dimensions: {xf.shape[1]} vs {zf.shape[1]}")
    return xf, zf.to(xf.dtype), False


def rbf(x: torch.Tensor, z: torch.Tensor | None = None, gamma: float = 1.0) -> torch.Tensor:
    """RBF kernel on flattened inputs, k(x, z) = exp(-gamma ||x - z||^2 / d) (d = input dimension).

    The 1/d scaling is our convention (gamma = 1 suits standardised pixels at any resolution). Computed
    in x's dtype; ``z=None`` gives the Gram matrix K(x, x) with an exact unit diagonal.
    """
    if gamma <= 0:
        raise ValueError(f"gamma must be > 0, got {gamma}")
    xf, zf, gram = _pair(x, z)
    sq = (xf * xf).sum(1)[:, None] + (zf * zf).sum(1)[None, :] - 2.0 * (xf @ zf.T)
    sq = sq.clamp_min(0.0)
    if gram:  # exact zeros on the diagonal (no cancellation error, no gradient through it)
        sq = sq * (1.0 - torch.eye(len(xf), dtype=sq.dtype, device=sq.device))
    return torch.exp(-gamma / xf.shape[1] * sq)


class _ReluDense(torch.autograd.Function):
    """One [Relu, Dense] step of the NNGP / NTK recursion (see :func:`fc_nngp_ntk`), with a hand-written
    backward: a KIP step is dominated by these elementwise maps over the n_t x n_s kernel, and autograd
    would keep about twice as many full-size temporaries.

    For (u, v) ~ N(0, [[qx, S], [S, qz]]), N = sqrt(qx qz) and c = cos t = S / N, the arc-cosine kernels
    of degree 1 and 0 (Cho & Saul 2009) give E[relu(u) relu(v)] = N j1 / (2 pi) with j1 = sin t +
    (pi - t) cos t, and E[relu'(u) relu'(v)] = (pi - t) / (2 pi); so with k = w^2 / (2 pi)

        S' = k N j1 + b^2,        T' = S' + k (pi - t) T.

    Derivatives: dj1/dc = pi - t, d(pi - t)/dc = 1 / sin t, dc/dS = 1 / N, dc/dN = -c / N, and
    dN/dqx = N / (2 qx). c is clamped to [-1 + eps, 1 - eps] (eps = 10 x machine epsilon) so that the
    1 / sin t stays finite for (near-)duplicate inputs; on the diagonal of a Gram matrix c = 1 exactly.
    Where c is clamped or on that diagonal it is a constant (no gradient through it), as autograd
    through ``clamp`` would give.
    """

    @staticmethod
    def forward(ctx, S, T, qx, qz, w2: float, b2: float, gram: bool):
        eps = 10 * torch.finfo(S.dtype).eps
        N = torch.outer(qx.sqrt(), qz.sqrt())
        c = (S / N).clamp_(-1.0 + eps, 1.0 - eps)
        if gram:
            c.diagonal().fill_(1.0)
        pit = torch.arccos(c).neg_().add_(math.pi)  # pi - t
        sin = (c * c).neg_().add_(1.0).sqrt_()  # sin t
        j1 = torch.addcmul(sin, pit, c)
        k = w2 / (2.0 * math.pi)
        S_new = torch.mul(N, j1).mul_(k).add_(b2)
        ctx.k, ctx.bound, ctx.has_t = k, 1.0 - eps, T is not None
        if T is None:
            ctx.save_for_backward(c, pit, sin, j1, N, qx, qz)
            return S_new
        ctx.save_for_backward(c, pit, sin, j1, N, qx, qz, T)
        return S_new, torch.addcmul(S_new, pit, T, value=k)

    @staticmethod
    def backward(ctx, gS, gT=None):
        c, pit, sin, j1, N, qx, qz, *rest = ctx.saved_tensors
        k = ctx.k
        free = c.abs() < ctx.bound  # c varies with S and N here
        gA = gS if gT is None else gS + gT  # T' = S' + ...
        # d/dS: k pit gA (through S') + k gT T / (sin N) (through pi - t), only where c is free
        u = None
        if ctx.has_t and gT is not None:
            u = (gT * rest[0]).div_(sin).div_(N).masked_fill_(~free, 0.0)
        g_s = (pit * gA).masked_fill_(~free, 0.0)
        if u is not None:
            g_s.add_(u)
        g_s.mul_(k)
        # d/dN: k gA (j1 - c pit) = k gA sin where c is free, k gA j1 where it is constant; minus k c u
        g_n = gA * torch.where(free, sin, j1)
        if u is not None:
            g_n.addcmul_(c, u, value=-1.0)
        g_n.mul_(k).mul_(N)  # times N: dN/dq = N / (2 q)
        g_qx = g_n.sum(1) / (2.0 * qx)
        g_qz = g_n.sum(0) / (2.0 * qz)
        g_t = None
        if ctx.has_t and gT is not None:
            g_t = (pit * gT).mul_(k)
        return g_s, g_t, g_qx, g_qz, None, None, None


def fc_nngp_ntk(
    x: torch.Tensor,
    z: torch.Tensor | None = None,
    depth: int = 1,
    w_std: float = math.sqrt(2.0),
    b_std: float = 0.1,
    activation: str = "relu",
    want_ntk: bool = True,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(NNGP, NTK) of an infinitely wide fully-connected ReLU net with ``depth`` hidden layers.

    The network is neural-tangents' ``stax.serial(Flatten, [Dense(W_std, b_std), Relu] x depth,
    Dense(W_std, b_std))`` in the NTK parameterisation (Jacot et al. 2018; Lee et al. 2018/2019):

        Sigma^0 = w^2 x.z / d + b^2,        Theta^0 = Sigma^0,
        Sigma^l = w^2 E[relu(u) relu(v)] + b^2,
        Theta^l = Sigma^l + w^2 E[relu'(u) relu'(v)] Theta^(l-1),   (u, v) ~ N(0, Sigma^(l-1)),

    returning (Sigma^depth, Theta^depth) for one output unit (Theta is None if not ``want_ntk``).
    ``depth=0`` is the linear kernel.
    Computed in x's dtype (pass float64 tensors for float64); ``z=None`` gives the Gram matrix.
    """
    if activation != "relu":
        raise ValueError(f"unknown activation {activation!r}: only 'relu' has the closed form here")
    if depth < 0:
        raise ValueError(f"depth must be >= 0, got {depth}")
    xf, zf, gram = _pair(x, z)
    w2, b2, d = float(w_std) ** 2, float(b_std) ** 2, xf.shape[1]
    nngp = w2 / d * (xf @ zf.T) + b2
    qx = w2 / d * (xf * xf).sum(1) + b2
    qz = qx if gram else w2 / d * (zf * zf).sum(1) + b2
    ntk = nngp if want_ntk else None
    for _ in range(depth):
        if want_ntk:
            nngp, ntk = _ReluDense.apply(nngp, ntk, qx, qz, w2, b2, gram)
        else:
            nngp = _ReluDense.apply(nngp, None, qx, qz, w2, b2, gram)
        qx = w2 * qx / 2.0 + b2  # E[relu(u)^2] = q / 2
        qz = qx if gram else w2 * qz / 2.0 + b2
    return nngp, ntk


def make_kernel(
    name: str = "fc", depth: int = 1, gamma: float = 1.0, w_std: float = math.sqrt(2.0), b_std: float = 0.1
) -> Kernel:
    """A kernel function ``k(x, z=None) -> [N_x, N_z]`` by name: 'fc' / 'ntk' (FC NTK), 'nngp' (FC
    NNGP) or 'rbf'."""
    if name not in KERNELS:
        raise ValueError(f"unknown kernel {name!r}; choose one of {KERNELS}")
    if name == "rbf":
        if gamma <= 0:
            raise ValueError(f"gamma must be > 0, got {gamma}")
        return lambda x, z=None: rbf(x, z, gamma)
    if depth < 0:
        raise ValueError(f"depth must be >= 0, got {depth}")
    if name == "nngp":
        return lambda x, z=None: fc_nngp_ntk(x, z, depth, w_std, b_std, want_ntk=False)[0]
    return lambda x, z=None: fc_nngp_ntk(x, z, depth, w_std, b_std)[1]


def _as_kernel(kernel: str | Kernel) -> Kernel:
    if isinstance(kernel, str):
        return make_kernel(kernel)
    if not callable(kernel):
        raise ValueError(f"kernel must be a name in {KERNELS} or a callable, got {type(kernel)}")
    return kernel


def kernel_matrix(kernel: str | Kernel, x: torch.Tensor, z: torch.Tensor, batch: int = 2048) -> torch.Tensor:
    """K(x, z) computed in row blocks of ``batch`` rows of x (bounded memory for a large x)."""
    k = _as_kernel(kernel)
    if batch < 1:
        raise ValueError(f"batch must be >= 1, got {batch}")
    return torch.cat([k(x[i : i + batch], z) for i in range(0, len(x), batch)])


# ----------------------------------------------------------------------------------------------------
# kernel ridge regression
# ----------------------------------------------------------------------------------------------------


def centred_one_hot(labels: torch.Tensor, num_classes: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """KIP's regression targets: one-hot minus 1/C (the released code's ``one_hot(center=True)``)."""
    if labels.ndim != 1 or labels.dtype != torch.int64:
        raise ValueError(f"labels must be int64 [N], got {labels.dtype} {tuple(labels.shape)}")
    if len(labels) and (int(labels.min()) < 0 or int(labels.max()) >= num_classes):
        raise ValueError(f"labels outside [0, {num_classes})")
    return torch.nn.functional.one_hot(labels, num_classes).to(dtype) - 1.0 / num_classes


def ridge(k_ss: torch.Tensor, reg: float) -> torch.Tensor:
    """K_ss + lambda I with lambda = reg x trace(K_ss) / n (KIP's code scales the ridge by the mean
    diagonal of K_ss)."""
    if reg < 0:
        raise ValueError(f"reg must be >= 0, got {reg}")
    n = k_ss.shape[0]
    lam = reg * torch.diagonal(k_ss).sum() / n
    return k_ss + lam * torch.eye(n, dtype=k_ss.dtype, device=k_ss.device)


def _spd_solve(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a^-1 b for a symmetric positive (semi)definite a: Cholesky, or LU when Cholesky fails."""
    chol, info = torch.linalg.cholesky_ex(a)
    if int(info) == 0:
        return torch.cholesky_solve(b, chol)
    return torch.linalg.solve(a, b)


def _check_krr(k_ts: torch.Tensor, k_ss: torch.Tensor, y_s: torch.Tensor) -> None:
    if k_ss.ndim != 2 or k_ss.shape[0] != k_ss.shape[1]:
        raise ValueError(f"k_ss must be square, got {tuple(k_ss.shape)}")
    if k_ts.ndim != 2 or k_ts.shape[1] != k_ss.shape[0]:
        raise ValueError(f"k_ts must be [n_t, {k_ss.shape[0]}], got {tuple(k_ts.shape)}")
    if y_s.ndim != 2 or y_s.shape[0] != k_ss.shape[0]:
        raise ValueError(f"y_s must be [{k_ss.shape[0]}, C], got {tuple(y_s.shape)}")


def krr_weights(
    k_ss: torch.Tensor, y_s: torch.Tensor, reg: float, solve_dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """alpha = (K_ss + lambda I)^-1 y_s (lambda as in :func:`ridge`), solved in ``solve_dtype``."""
    return _spd_solve(ridge(k_ss.to(solve_dtype), reg), y_s.to(solve_dtype))


def krr_predict(
    k_ts: torch.Tensor,
    k_ss: torch.Tensor,
    y_s: torch.Tensor,
    reg: float = 1e-6,
    solve_dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """KRR predictions K_ts (K_ss + lambda I)^-1 y_s with lambda = reg x trace(K_ss) / n_s (KIP code's
    convention); the solve runs in ``solve_dtype`` (Cholesky), the result comes back in k_ts's dtype."""
    _check_krr(k_ts, k_ss, y_s)
    alpha = krr_weights(k_ss, y_s, reg, solve_dtype)
    return (k_ts.to(solve_dtype) @ alpha).to(k_ts.dtype)


def _check_xy(x: torch.Tensor, y: torch.Tensor, xn: str, yn: str) -> None:
    if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.ndim < 2:
        raise ValueError(f"{xn} must be a float tensor [N, ...]")
    if y.ndim != 2 or y.shape[0] != x.shape[0]:
        raise ValueError(f"{yn} must be [{x.shape[0]}, C], got {tuple(y.shape)}")


def kip_loss(
    x_s: torch.Tensor,
    y_s: torch.Tensor,
    x_t: torch.Tensor,
    y_t: torch.Tensor,
    kernel: str | Kernel = "fc",
    reg: float = 1e-6,
) -> torch.Tensor:
    """The KIP loss (paper eq. 7), reduced as the released code: 1/2 mean((y_t - K_ts (K_ss +
    lambda I)^-1 y_s)^2) over the n_t x C entries, lambda = reg x trace(K_ss) / n_s.

    Kernels are computed in the inputs' dtype, the solve and the loss in float64; differentiable in
    x_s and y_s (and in x_t, y_t).
    """
    _check_xy(x_s, y_s, "x_s", "y_s")
    _check_xy(x_t, y_t, "x_t", "y_t")
    if y_s.shape[1] != y_t.shape[1]:
        raise ValueError(f"y_s has {y_s.shape[1]} columns, y_t {y_t.shape[1]}")
    k = _as_kernel(kernel)
    k_ss, k_ts = k(x_s, None), k(x_t, x_s)
    alpha = krr_weights(k_ss, y_s, reg)
    pred = k_ts.to(torch.float64) @ alpha
    return 0.5 * (pred - y_t.to(torch.float64)).pow(2).mean()


def label_solve(
    x_s: torch.Tensor,
    x_t: torch.Tensor,
    y_t: torch.Tensor,
    kernel: str | Kernel = "fc",
    reg: float = 1e-6,
    batch: int = 4096,
) -> torch.Tensor:
    """LS (paper §3): the labels minimising the KIP loss with X_s fixed, y_s* = pinv(A) y_t with
    A = K_ts (K_ss + lambda I)^-1 (least squares via ``torch.linalg.lstsq`` in float64; the
    minimum-norm solution if A is rank deficient). Returned in y_t's dtype."""
    _check_xy(x_t, y_t, "x_t", "y_t")
    if not x_s.is_floating_point() or x_s.ndim < 2 or x_s[0].numel() != x_t[0].numel():
        raise ValueError(
            f"x_s must be float [n_s, ...] shaped like x_t's rows, got {tuple(x_s.shape)} vs {tuple(x_t.shape)}"
        )
    k = _as_kernel(kernel)
    with torch.no_grad():
        k_ss = k(x_s, None).to(torch.float64)
        k_ts = kernel_matrix(k, x_t, x_s, batch).to(torch.float64)
        # A = K_ts R^-1 with R symmetric, so A^T = R^-1 K_st
        a = _spd_solve(ridge(k_ss, reg), k_ts.T).T
        driver = "gelsd" if a.device.type == "cpu" else None
        y = torch.linalg.lstsq(a, y_t.to(torch.float64), driver=driver).solution
    return y.to(y_t.dtype)


def krr_accuracy(
    x_s: torch.Tensor,
    y_s: torch.Tensor,
    x_test: torch.Tensor,
    y_test: torch.Tensor,
    kernel: str | Kernel = "fc",
    reg: float = 1e-6,
    batch: int = 2048,
) -> float:
    """Test accuracy of KRR fitted on (x_s, y_s): argmax of the predicted targets against ``y_test``
    (int64 class labels [N], or targets [N, C] compared by argmax). The test set is kernelised in
    blocks of ``batch`` rows."""
    _check_xy(x_s, y_s, "x_s", "y_s")
    if y_test.ndim == 2:
        y_test = y_test.argmax(1)
    if y_test.ndim != 1 or y_test.shape[0] != x_test.shape[0]:
        raise ValueError(f"y_test must be [{x_test.shape[0]}] labels, got {tuple(y_test.shape)}")
    k = _as_kernel(kernel)
    with torch.no_grad():
        alpha = krr_weights(k(x_s, None), y_s, reg)
        correct = 0
        for i in range(0, len(x_test), batch):
            pred = k(x_test[i : i + batch], x_s).to(torch.float64) @ alpha
            correct += int((pred.argmax(1).cpu() == y_test[i : i + batch].cpu()).sum())
    return correct / len(x_test)


# ----------------------------------------------------------------------------------------------------
# synthesis
# ----------------------------------------------------------------------------------------------------


def normalise(images_u8: torch.Tensor, mean, std, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """(x / 255 - mean) / std per channel, the DistilledSet space (as x / (255 std) - mean / std)."""
    m = torch.as_tensor(mean, dtype=torch.float64).view(1, -1, 1, 1)
    s = torch.as_tensor(std, dtype=torch.float64).view(1, -1, 1, 1)
    dev = images_u8.device
    return torch.addcmul((-m / s).to(dev, dtype), images_u8.to(dtype), (1.0 / (255.0 * s)).to(dev, dtype))


def class_balanced_index(
    labels: torch.Tensor, per_class: int, num_classes: int, generator: torch.Generator
) -> torch.Tensor:
    """``per_class`` distinct random indices of every class, classes in order (KIP code's
    ``class_balanced_sample``)."""
    out = []
    for c in range(num_classes):
        idx = torch.nonzero(labels == c).flatten()
        if len(idx) < per_class:
            raise ValueError(f"class {c} has {len(idx)} images, fewer than the {per_class} asked for")
        out.append(idx[torch.randperm(len(idx), generator=generator)[:per_class]])
    return torch.cat(out)


def corruption_mask(shape: tuple[int, ...], p: float, generator: torch.Generator) -> torch.Tensor:
    """KIP_p's frozen coordinates: exactly round(p x d) random coordinates of *each* of the N images
    (d = C x H x W), as a bool tensor of ``shape`` = (N, C, H, W)."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"p_corrupt must be in [0, 1), got {p}")
    n, d = shape[0], math.prod(shape[1:])
    k = round(p * d)
    ranks = torch.rand(n, d, generator=generator).argsort(1)
    return (ranks < k).reshape(shape)


def support_targets(ds: DistilledSet) -> torch.Tensor:
    """The KRR regression targets of a distilled set: the learned ones in ``params["targets"]`` if
    present, else soft labels or hard labels, centred (minus 1/C) as KIP's one-hot targets."""
    if "targets" in ds.params:
        y = torch.tensor(ds.params["targets"], dtype=torch.float32)
        if y.shape != (len(ds), ds.num_classes):
            raise ValueError(f"params['targets'] is {tuple(y.shape)}, expected {(len(ds), ds.num_classes)}")
        return y
    if ds.soft_labels is not None:
        return ds.soft_labels.float() - 1.0 / ds.num_classes
    return centred_one_hot(ds.labels, ds.num_classes)


def _as_probabilities(y: torch.Tensor, num_classes: int) -> torch.Tensor | None:
    """y + 1/C if its rows are probability vectors (within the DistilledSet tolerance), else None."""
    p = y.detach().float() + 1.0 / num_classes
    if (p >= -1e-6).all() and torch.allclose(p.sum(1), torch.ones(len(p)), atol=1e-4):
        p = p.clamp_min(0.0)
        return p / p.sum(1, keepdim=True)
    return None


def _check_dataset(images: torch.Tensor, labels: torch.Tensor, ipc: int, num_classes: int) -> None:
    if not isinstance(images, torch.Tensor) or images.dtype != torch.uint8 or images.ndim != 4:
        raise ValueError(
            f"images must be uint8 [N, C, H, W] (an ImageDataset's), got "
            f"{getattr(images, 'dtype', type(images))} {tuple(getattr(images, 'shape', ()))}"
        )
    if labels.dtype != torch.int64 or labels.shape != (images.shape[0],):
        raise ValueError(f"labels must be int64 [{images.shape[0]}], got {labels.dtype} {tuple(labels.shape)}")
    if num_classes < 2:
        raise ValueError(f"num_classes must be >= 2, got {num_classes}")
    if int(labels.min()) < 0 or int(labels.max()) >= num_classes:
        raise ValueError(f"labels outside [0, {num_classes})")
    if ipc < 1:
        raise ValueError(f"ipc must be >= 1, got {ipc}")


def kip_synthesize(
    images: torch.Tensor,
    labels: torch.Tensor,
    ipc: int,
    num_classes: int,
    mean,
    std,
    *,
    kernel: str = "fc",
    depth: int = 1,
    gamma: float = 1.0,
    w_std: float = math.sqrt(2.0),
    b_std: float = 0.1,
    reg: float = 1e-6,
    iterations: int = 1000,
    target_batch: int = 2000,
    lr: float = 0.01,
    learn_labels: bool = False,
    p_corrupt: float = 0.0,
    corruption: str = "noise",
    init: str = "real",
    seed: int = 0,
    device: str = "cpu",
    dtype: torch.dtype = torch.float32,
    dataset: str = "fashion-mnist",
) -> DistilledSet:
    """KIP (paper Algorithm 1) and KIP_p on uint8 ``images`` [N, C, H, W] with int64 ``labels``.

    The support set (``ipc`` per class) starts from class-balanced real images (``init='real'``) or
    N(0, 1) noise in the normalised space (``'noise'``), with centred one-hot labels. Each of
    ``iterations`` Adam steps (learning rate ``lr``) samples a class-balanced target batch of
    ``target_batch`` images (target_batch // C per class) and descends :func:`kip_loss` with the given
    kernel (:func:`make_kernel`) in the support pixels, and in the labels if ``learn_labels``. Kernels
    run in ``dtype`` (float32 by default; float64 as the KIP code's x64 mode), solves in float64.
    ``p_corrupt`` > 0 is KIP_p: round(p d) coordinates of each support image are set to N(0, 1) noise
    (or 0, ``corruption='zero'``) and frozen. Deterministic given ``seed`` (on CPU).

    Returns a :class:`DistilledSet` whose hard labels are the initial classes; learned labels, when
    they are not probability vectors, are kept in ``params["targets"]`` (see :func:`support_targets`).
    """
    _check_dataset(images, labels, ipc, num_classes)
    if kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}; choose one of {KERNELS}")
    if init not in INITS:
        raise ValueError(f"unknown init {init!r}; choose one of {INITS}")
    if corruption not in CORRUPTIONS:
        raise ValueError(f"unknown corruption {corruption!r}; choose one of {CORRUPTIONS}")
    if iterations < 0 or lr <= 0 or reg < 0:
        raise ValueError(f"need iterations >= 0, lr > 0, reg >= 0; got {iterations}, {lr}, {reg}")
    if target_batch < num_classes:
        raise ValueError(f"target_batch {target_batch} < num_classes {num_classes}: no class-balanced batch")
    if not 0.0 <= p_corrupt < 1.0:
        raise ValueError(f"p_corrupt must be in [0, 1), got {p_corrupt}")
    kfn = make_kernel(kernel, depth, gamma, w_std, b_std)
    dev = torch.device(device)
    g = torch.Generator().manual_seed(seed)
    per_target = target_batch // num_classes
    class_index = [torch.nonzero(labels == c).flatten() for c in range(num_classes)]
    if min(len(i) for i in class_index) < per_target:
        raise ValueError(f"a class has fewer than {per_target} images for the target batch")

    with measure(dev) as cost:
        idx = class_balanced_index(labels, ipc, num_classes, g)
        y_cls = labels[idx].clone()
        if init == "real":
            x0 = normalise(images[idx], mean, std)
        else:
            x0 = torch.randn((len(idx),) + tuple(images.shape[1:]), generator=g)
        frozen = corruption_mask(tuple(x0.shape), p_corrupt, g)
        fill = torch.randn(x0.shape, generator=g) if corruption == "noise" else torch.zeros(x0.shape)
        x0 = torch.where(frozen, fill, x0)
        x = x0.to(dev, dtype).requires_grad_(True)
        frozen, x_frozen = frozen.to(dev), x0.to(dev, dtype)
        y = centred_one_hot(y_cls, num_classes, dtype).to(dev).requires_grad_(learn_labels)
        opt = torch.optim.Adam([x, y] if learn_labels else [x], lr=lr)
        trace_every = max(1, iterations // 50)
        trace: list[list[float]] = []
        for step in range(iterations):
            t_idx = torch.cat([ci[torch.randperm(len(ci), generator=g)[:per_target]] for ci in class_index])
            x_t = normalise(images[t_idx].to(dev), mean, std, dtype)
            y_t = centred_one_hot(labels[t_idx], num_classes, dtype).to(dev)
            loss = kip_loss(x, y, x_t, y_t, kfn, reg)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if p_corrupt > 0:
                x.grad.masked_fill_(frozen, 0.0)
            opt.step()
            if p_corrupt > 0:
                with torch.no_grad():
                    x.copy_(torch.where(frozen, x_frozen, x))
            if step % trace_every == 0 or step == iterations - 1:
                trace.append([step, float(loss.detach())])

    x_out, y_out = x.detach().float().cpu(), y.detach().float().cpu()
    params = {
        "kernel": kernel,
        "depth": depth,
        "gamma": gamma,
        "w_std": w_std,
        "b_std": b_std,
        "reg": reg,
        "dtype": str(dtype).removeprefix("torch."),
        "iterations": iterations,
        "target_batch": per_target * num_classes,
        "lr": lr,
        "learn_labels": learn_labels,
        "p_corrupt": p_corrupt,
        "corruption": corruption,
        "frozen_per_image": int(frozen[0].sum()) if len(frozen) else 0,
        "init": init,
        "label_convention": "centred one-hot (e_y - 1/C)",
        "loss_trace": trace,
    }
    if init == "real":
        params["init_index"] = idx.tolist()
    soft = None
    if learn_labels:
        soft = _as_probabilities(y_out, num_classes)
        if soft is None:
            params["targets"] = y_out.tolist()
    return DistilledSet(
        x_out,
        y_cls,
        num_classes,
        tuple(mean),
        tuple(std),
        "kip_p" if p_corrupt > 0 else "kip",
        dataset,
        params,
        seed,
        soft,
        cost.seconds,
        cost.peak_memory_bytes,
    )


def ls_synthesize(
    images: torch.Tensor,
    labels: torch.Tensor,
    ipc: int,
    num_classes: int,
    mean,
    std,
    *,
    kernel: str = "fc",
    depth: int = 1,
    gamma: float = 1.0,
    w_std: float = math.sqrt(2.0),
    b_std: float = 0.1,
    reg: float = 1e-6,
    target_size: int = 10000,
    seed: int = 0,
    dataset: str = "fashion-mnist",
    batch: int = 4096,
    device: str = "cpu",
) -> DistilledSet:
    """LS as a distillation method: ``ipc`` class-balanced real images per class keep their pixels and
    get the closed-form labels of :func:`label_solve` against a class-balanced target set of
    ``target_size`` training images (all of them if ``target_size`` >= N), solved on ``device`` (the images
    drawn on the CPU; on CUDA ``lstsq`` has no ``gelsd`` and uses its default driver). The labels go to
    ``params["targets"]`` (or ``soft_labels`` if they are probability vectors)."""
    _check_dataset(images, labels, ipc, num_classes)
    if target_size < num_classes:
        raise ValueError(f"target_size {target_size} < num_classes {num_classes}")
    kfn = make_kernel(kernel, depth, gamma, w_std, b_std)
    dev = torch.device(device)
    g = torch.Generator().manual_seed(seed)
    with measure(dev) as cost:
        idx = class_balanced_index(labels, ipc, num_classes, g)
        if target_size >= len(labels):
            t_idx = torch.arange(len(labels))
        else:
            t_idx = class_balanced_index(labels, target_size // num_classes, num_classes, g)
        x_s = normalise(images[idx], mean, std)
        y_s = label_solve(
            x_s.to(dev),
            normalise(images[t_idx].to(dev), mean, std),
            centred_one_hot(labels[t_idx], num_classes).to(dev),
            kfn,
            reg,
            batch,
        ).cpu()
    params = {
        "kernel": kernel,
        "depth": depth,
        "gamma": gamma,
        "w_std": w_std,
        "b_std": b_std,
        "reg": reg,
        "target_size": len(t_idx),
        "label_convention": "centred one-hot (e_y - 1/C)",
    }
    soft = _as_probabilities(y_s, num_classes)
    if soft is None:
        params["targets"] = y_s.float().tolist()
    return DistilledSet(
        x_s,
        labels[idx].clone(),
        num_classes,
        tuple(mean),
        tuple(std),
        "kip_ls",
        dataset,
        params,
        seed,
        soft,
        cost.seconds,
        cost.peak_memory_bytes,
        idx.clone(),
    )
