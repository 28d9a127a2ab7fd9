"""Streaming ("batch") PCA and ReLA's target pre-processing.

:class:`BatchPCA` follows camera-ready App L / v1 App N (Algorithm 2): it centres the data,
accumulates the scatter matrix batch by batch, divides by n − 1, eigendecomposes and projects
batch by batch. Memory is O(d²) whatever the number of rows. The sums are accumulated in float64
around a shift (the first batch's mean), so one pass suffices and stays exact:
sum (x − s)(x − s)ᵀ − n (μ − s)(μ − s)ᵀ = sum (x − μ)(x − μ)ᵀ.

ReLA-D's targets (camera-ready eq. 10) come in two orders:

* ``"code"`` (canonical, the released code): project the centred targets onto the top-k
  eigenvectors, then z-score each component with its population std (PCA whitening);
* ``"paper"`` (eq. 10 as printed): standardise each column first, then project with the
  eigenvectors of the centred, unstandardised covariance.

A third map, ``"correlation"`` (PCA of the standardised data, i.e. of the correlation matrix),
is provided for comparison.
"""

from __future__ import annotations

from typing import Iterable

import torch

ORDERS = ("code", "paper", "correlation")


class BatchPCA:
    """Accumulate with :meth:`partial_fit` (any number of batches), then :meth:`finalize`."""

    def __init__(self, n_components: int):
        if n_components < 1:
            raise ValueError(f"n_components must be >= 1, got {n_components}")
        self.k = n_components
        self.n = 0
        self.shift: torch.Tensor | None = None
        self.sum: torch.Tensor | None = None
        self.scatter: torch.Tensor | None = None
        self.mean = self.components = self.eigenvalues = self.col_std = None

    def partial_fit(self, batch: torch.Tensor) -> "BatchPCA":
        x = batch.detach().to(torch.float64).reshape(batch.shape[0], -1)
        if self.shift is None:
            d = x.shape[1]
            self.shift = x.mean(0)
            self.sum = torch.zeros(d, dtype=torch.float64, device=x.device)
            self.scatter = torch.zeros(d, d, dtype=torch.float64, device=x.device)
        xc = x - self.shift
        self.sum += xc.sum(0)
        self.scatter += xc.t() @ xc
        self.n += x.shape[0]
        return self

    def finalize(self) -> "BatchPCA":
        if self.n < 2:
            raise ValueError("PCA needs at least two rows")
        d = self.sum.shape[0]
        if self.k > d:
            raise ValueError(f"n_components {self.k} exceeds the dimension {d}")
        delta = self.sum / self.n
        self.mean = self.shift + delta
        cov = (self.scatter - self.n * torch.outer(delta, delta)) / (self.n - 1)
        cov = (cov + cov.t()) / 2
        evals, evecs = torch.linalg.eigh(cov)  # ascending
        order = torch.argsort(evals, descending=True)[: self.k]
        self.eigenvalues = evals[order].clamp_min(0)
        self.components = evecs[:, order]  # [d, k]
        self.col_std = torch.diagonal(cov).clamp_min(0).sqrt() * ((self.n - 1) / self.n) ** 0.5  # population
        self.cov = cov
        return self

    def transform(self, batch: torch.Tensor) -> torch.Tensor:
        x = batch.detach().to(torch.float64).reshape(batch.shape[0], -1)
        return (x - self.mean) @ self.components

    @classmethod
    def fit(cls, batches: Iterable[torch.Tensor], n_components: int) -> "BatchPCA":
        pca = cls(n_components)
        for b in batches:
            pca.partial_fit(b)
        return pca.finalize()


class TargetMap:
    """ReLA-D's map from raw prior features to targets, fitted by :meth:`fit` in one streaming pass."""

    def __init__(self, pca: BatchPCA, order: str):
        if order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
        self.pca, self.order = pca, order
        if order == "correlation":
            std = pca.col_std.clamp_min(1e-12) * (pca.n / (pca.n - 1)) ** 0.5  # sample std for the correlation
            corr = pca.cov / torch.outer(std, std)
            evals, evecs = torch.linalg.eigh((corr + corr.t()) / 2)
            idx = torch.argsort(evals, descending=True)[: pca.k]
            self.corr_components, self.corr_eigenvalues = evecs[:, idx], evals[idx].clamp_min(0)

    @classmethod
    def fit(cls, batches: Iterable[torch.Tensor], n_components: int, order: str = "code") -> "TargetMap":
        return cls(BatchPCA.fit(batches, n_components), order)

    @property
    def dim(self) -> int:
        return self.pca.k

    def transform(self, batch: torch.Tensor) -> torch.Tensor:
        p = self.pca
        x = batch.detach().to(torch.float64).reshape(batch.shape[0], -1)
        if self.order == "code":
            pop_std = (p.eigenvalues * (p.n - 1) / p.n).sqrt().clamp_min(1e-12)
            return ((x - p.mean) @ p.components) / pop_std
        z = (x - p.mean) / p.col_std.clamp_min(1e-12)
        if self.order == "paper":
            return z @ p.components
        return z @ self.corr_components


def svd_pca(x: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Reference PCA by SVD of the centred matrix: (components [d, k], projected rows [n, k])."""
    x = x.to(torch.float64)
    xc = x - x.mean(0)
    _, _, vt = torch.linalg.svd(xc, full_matrices=False)
    v = vt[:k].t()
    return v, xc @ v


def align_signs(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Flip the columns of ``a`` to agree in sign with those of ``b`` (components are defined up to sign)."""
    s = torch.sign((a * b).sum(0))
    s[s == 0] = 1
    return a * s


def principal_angles(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Principal angles (radians) between the column spaces of ``a`` and ``b``."""
    qa, _ = torch.linalg.qr(a.to(torch.float64))
    qb, _ = torch.linalg.qr(b.to(torch.float64))
    s = torch.linalg.svdvals(qa.t() @ qb).clamp(-1, 1)
    return torch.arccos(s)


def batches_of(x: torch.Tensor, size: int):
    for i in range(0, x.shape[0], size):
        yield x[i : i + size]
