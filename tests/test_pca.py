import pytest
import torch

from compendium.core import pca as P


def _data(n=1500, d=40, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(d, d, generator=g, dtype=torch.float64) * torch.linspace(3, 0.1, d, dtype=torch.float64)
    return torch.randn(n, d, generator=g, dtype=torch.float64) @ a + 5.0


@pytest.mark.parametrize("batch", [700, 333, 5000])
def test_batch_pca_equals_svd_pca(batch):
    x = _data()
    bp = P.BatchPCA.fit(P.batches_of(x, batch), 8)
    v, proj = P.svd_pca(x, 8)
    assert torch.allclose(P.align_signs(bp.components, v), v, atol=1e-9)
    y = torch.cat([bp.transform(b) for b in P.batches_of(x, batch)])
    assert torch.allclose(P.align_signs(y, proj), proj, atol=1e-8)
    assert torch.allclose(bp.mean, x.mean(0), atol=1e-10)
    assert P.principal_angles(bp.components, v).max() < 1e-6


def test_code_order_whitens_and_paper_order_differs():
    x = _data()
    code = P.TargetMap.fit(P.batches_of(x, 256), 6, "code")
    t = code.transform(x)
    assert torch.allclose(t.mean(0), torch.zeros(6, dtype=t.dtype), atol=1e-9)
    assert torch.allclose(t.std(0, unbiased=False), torch.ones(6, dtype=t.dtype), atol=1e-9)
    paper = P.TargetMap.fit(P.batches_of(x, 256), 6, "paper").transform(x)
    corr = P.TargetMap.fit(P.batches_of(x, 256), 6, "correlation").transform(x)
    assert not torch.allclose(paper, t, atol=1e-2) and not torch.allclose(paper, corr, atol=1e-2)
    # correlation order = SVD-PCA of the standardised data
    z = (x - x.mean(0)) / x.std(0, unbiased=False)
    _, ref = P.svd_pca(z, 6)
    assert torch.allclose(P.align_signs(corr, ref), ref, atol=1e-7)


def test_float32_input_and_errors():
    x = _data().float()
    bp = P.BatchPCA.fit(P.batches_of(x, 100), 4)
    v, _ = P.svd_pca(x.double(), 4)
    assert P.principal_angles(bp.components, v).max() < 1e-3
    with pytest.raises(ValueError):
        P.BatchPCA(0)
    with pytest.raises(ValueError):
        P.BatchPCA.fit([x[:1]], 2)
    with pytest.raises(ValueError):
        P.TargetMap(bp, "other")
