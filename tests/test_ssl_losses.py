import math

import pytest
import torch
import torch.nn.functional as F

from compendium.ssl import losses as L

torch.manual_seed(0)


def test_byol_and_simsiam_hand_cases_and_symmetry():
    e1, e2 = torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 1.0]])
    assert L.byol_loss(e1, e1, e1, e1).item() == pytest.approx(0.0)
    assert L.byol_loss(e1, e2, e1, e2).item() == pytest.approx(2.0)  # orthogonal: 2 - 2*0
    assert L.byol_loss(e1, -e1, e1, -e1).item() == pytest.approx(4.0)  # p1 vs z2=-e1 and p2 vs z1
    assert L.simsiam_loss(e1, e1, e1, e1).item() == pytest.approx(-1.0)
    p1, p2, z1, z2 = (torch.randn(8, 5) for _ in range(4))
    assert L.byol_loss(p1, p2, z1, z2).item() == pytest.approx(L.byol_loss(p2, p1, z2, z1).item())
    assert L.byol_loss(3 * p1, p2, z1, 0.5 * z2).item() == pytest.approx(L.byol_loss(p1, p2, z1, z2).item(), rel=1e-5)


def test_stop_gradient_on_targets():
    p, z = torch.randn(4, 3, requires_grad=True), torch.randn(4, 3, requires_grad=True)
    L.byol_loss(p, p, z, z).backward()
    assert z.grad is None and p.grad is not None


def test_nt_xent_matches_a_direct_computation():
    z1, z2 = torch.randn(4, 6), torch.randn(4, 6)
    t = 0.3
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    total = 0.0
    for i in range(8):
        j = (i + 4) % 8
        num = math.exp(float(z[i] @ z[j]) / t)
        den = sum(math.exp(float(z[i] @ z[k]) / t) for k in range(8) if k != i)
        total += -math.log(num / den)
    assert L.nt_xent_loss(z1, z2, t).item() == pytest.approx(total / 8, rel=1e-5)
    assert L.nt_xent_loss(z1, z2, t).item() == pytest.approx(L.nt_xent_loss(z2, z1, t).item(), rel=1e-6)


def test_infonce_queue_perfect_key_and_no_negatives_limit():
    q = torch.randn(5, 8)
    queue = torch.randn(16, 8)
    good = L.infonce_queue_loss(q, q, queue, 0.05).item()
    bad = L.infonce_queue_loss(q, -q, queue, 0.05).item()
    assert good < 0.1 < bad
    # one negative equal to the positive: loss = log 2
    assert L.infonce_queue_loss(q[:1], q[:1], q[:1], 0.2).item() == pytest.approx(math.log(2), rel=1e-5)


def test_barlow_twins_identity_and_collapse():
    z = torch.randn(256, 4)
    z = (z - z.mean(0)) / z.std(0, unbiased=False)
    # identical views of decorrelated dims: diagonal 1, off-diagonal ~ sample correlations only
    c = z.t() @ z / 256
    off = (c.pow(2).sum() - torch.diagonal(c).pow(2).sum()).item()
    assert L.barlow_twins_loss(z, z, lambd=0.5).item() == pytest.approx(0.5 * off, abs=1e-4)
    # fully collapsed embedding (same vector every sample): C = 0, loss = D
    collapsed = torch.ones(16, 4)
    assert L.barlow_twins_loss(collapsed, collapsed).item() == pytest.approx(4.0, abs=1e-3)


def test_vicreg_terms():
    z = torch.randn(512, 8) * 3
    inv_only = L.vicreg_loss(z, z, sim_weight=1, var_weight=0, cov_weight=0)
    assert inv_only.item() == pytest.approx(0.0)
    collapsed = torch.zeros(32, 8)
    # std 0 < gamma: hinge = gamma - sqrt(eps) per dim, averaged over the two views
    v = L.vicreg_loss(collapsed, collapsed, sim_weight=0, var_weight=1, cov_weight=0).item()
    assert v == pytest.approx(1 - math.sqrt(1e-4), rel=1e-5)
    assert L.vicreg_loss(z, z, sim_weight=0, var_weight=1, cov_weight=0).item() == pytest.approx(0.0)


def _official_vicreg(x, y, sim_coeff=25.0, std_coeff=25.0, cov_coeff=1.0):
    """VICReg's loss as the official code writes it (facebookresearch/vicreg main_vicreg.py,
    ``VICReg.forward``, one process so ``FullGatherLayer`` is the identity)."""
    batch_size, num_features = x.shape

    def off_diagonal(m):
        n, k = m.shape
        assert n == k
        return m.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()

    repr_loss = F.mse_loss(x, y)
    x = x - x.mean(dim=0)
    y = y - y.mean(dim=0)
    std_x = torch.sqrt(x.var(dim=0) + 0.0001)
    std_y = torch.sqrt(y.var(dim=0) + 0.0001)
    std_loss = torch.mean(F.relu(1 - std_x)) / 2 + torch.mean(F.relu(1 - std_y)) / 2
    cov_x = (x.T @ x) / (batch_size - 1)
    cov_y = (y.T @ y) / (batch_size - 1)
    cov_loss = off_diagonal(cov_x).pow_(2).sum().div(num_features) + off_diagonal(cov_y).pow_(2).sum().div(num_features)
    return sim_coeff * repr_loss + std_coeff * std_loss + cov_coeff * cov_loss


def test_vicreg_equals_the_official_code():
    g = torch.Generator().manual_seed(3)
    # per-dimension scales around 1 so that the hinge is active on some dimensions, not all
    z1 = torch.randn(16, 6, generator=g, dtype=torch.float64) * torch.linspace(0.2, 1.6, 6, dtype=torch.float64)
    z2 = z1 + 0.5 * torch.randn(16, 6, generator=g, dtype=torch.float64)
    ref = _official_vicreg(z1, z2)
    assert L.vicreg_loss(z1, z2).item() == pytest.approx(ref.item(), rel=1e-12)
    # each term on its own, at the official weights 25 / 25 / 1
    for sim, std, cov in ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)):
        ours = L.vicreg_loss(z1, z2, sim_weight=sim, var_weight=std, cov_weight=cov).item()
        assert ours == pytest.approx(_official_vicreg(z1, z2, sim, std, cov).item(), rel=1e-12)


def _official_barlow_twins(z1, z2, lambd):
    """Barlow Twins' loss as the official code writes it (facebookresearch/barlowtwins main.py,
    ``BarlowTwins.forward``, one process so ``all_reduce`` is the identity)."""
    batch_size, d = z1.shape
    bn = torch.nn.BatchNorm1d(d, affine=False).to(z1.dtype)  # training mode: biased batch variance, eps 1e-5

    def off_diagonal(m):
        n, k = m.shape
        return m.flatten()[:-1].view(n - 1, n + 1)[:, 1:].flatten()

    c = bn(z1).T @ bn(z2)
    c.div_(batch_size)
    on_diag = torch.diagonal(c).add_(-1).pow_(2).sum()
    off_diag = off_diagonal(c).pow_(2).sum()
    return on_diag + lambd * off_diag


def test_barlow_twins_standardises_as_the_official_batchnorm():
    g = torch.Generator().manual_seed(5)
    # small per-dimension spreads (std 0.003-0.1), where sqrt(var + eps) and std + eps differ visibly
    scale = torch.linspace(0.003, 0.1, 5, dtype=torch.float64)
    z1 = torch.randn(32, 5, generator=g, dtype=torch.float64) * scale + 2.0
    z2 = z1 + 0.3 * torch.randn(32, 5, generator=g, dtype=torch.float64) * scale
    lambd = 5e-3
    # the cross-correlation of nn.BatchNorm1d(affine=False)'s training-mode outputs
    a = F.batch_norm(z1, None, None, training=True, eps=1e-5)
    b = F.batch_norm(z2, None, None, training=True, eps=1e-5)
    c = a.T @ b / 32
    by_hand = ((torch.diagonal(c) - 1) ** 2).sum() + lambd * (c.pow(2).sum() - torch.diagonal(c).pow(2).sum())
    ours = L.barlow_twins_loss(z1, z2, lambd=lambd).item()
    assert ours == pytest.approx(by_hand.item(), rel=1e-10)
    assert ours == pytest.approx(_official_barlow_twins(z1, z2, lambd).item(), rel=1e-10)


def test_dino_loss_value_and_center():
    k = 5
    s = torch.randn(2, 3, k)
    t = torch.randn(2, 3, k)
    c = torch.zeros(k)
    pt = F.softmax(t / 0.04, -1)
    ls = F.log_softmax(s / 0.1, -1)
    ref = 0.5 * ((-(pt[0] * ls[1]).sum(-1)).mean() + (-(pt[1] * ls[0]).sum(-1)).mean())
    assert L.dino_loss(s, t, c).item() == pytest.approx(ref.item(), rel=1e-5)
    # uniform teacher (after centring a constant output): loss = cross-entropy to uniform
    c2 = L.dino_center_update(torch.zeros(k), torch.ones(2, 3, k), momentum=0.0)
    assert torch.allclose(c2, torch.ones(k))


def test_sinkhorn_equipartition_and_swav():
    # SwAV's scores are cosines between normalised embeddings and prototypes
    scores = F.normalize(torch.randn(64, 16), dim=1) @ F.normalize(torch.randn(8, 16), dim=1).t()
    q = L.sinkhorn_knopp(scores.double(), epsilon=0.05, iterations=200)
    assert torch.allclose(q.sum(1), torch.ones(64, dtype=q.dtype), atol=1e-4)
    assert torch.allclose(q.sum(0), torch.full((8,), 64 / 8, dtype=q.dtype), atol=1e-2)
    s1 = torch.randn(16, 8, requires_grad=True)
    loss = L.swav_loss(s1, s1.detach() + 0.01 * torch.randn(16, 8))
    loss.backward()
    assert s1.grad is not None and torch.isfinite(loss)
    a, b = torch.randn(16, 8), torch.randn(16, 8)
    assert L.swav_loss(a, b).item() == pytest.approx(L.swav_loss(b, a).item(), rel=1e-5)


def test_rela_loss_is_one_minus_cosine():
    y = torch.randn(6, 4)
    assert L.rela_loss(y, 2 * y, y).item() == pytest.approx(0.0, abs=1e-6)
    assert L.rela_loss(-y, -y, y).item() == pytest.approx(2.0, abs=1e-6)
    e1, e2 = torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 1.0]])
    assert L.rela_loss(e1, e2, e1).item() == pytest.approx(0.5)
