import pytest
import torch

from compendium.core import probe as E
from compendium.ssl.train import BudgetSampler


def _blobs(n=300, d=5, c=3, seed=0, sep=4.0):
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(n) % c
    centers = torch.randn(c, d, generator=g) * sep
    return centers[y] + torch.randn(n, d, generator=g), y


def test_linear_probe_learns_separable_data_and_reports_last_three():
    x, y = _blobs()
    xt, yt = _blobs(seed=0)
    r = E.linear_probe(x, y, xt, yt, 3, epochs=30, lr=1e-2, batch_size=32)
    assert len(r.test_acc_per_epoch) == 30 and r.final > 0.95
    mean, std = r.last_k(3)
    assert mean == pytest.approx(sum(r.test_acc_per_epoch[-3:]) / 3)
    assert std >= 0
    again = E.linear_probe(x, y, xt, yt, 3, epochs=30, lr=1e-2, batch_size=32)
    assert again.test_acc_per_epoch == r.test_acc_per_epoch  # seeded


def test_knn_on_blobs_and_random_labels():
    x, y = _blobs()
    assert E.knn_accuracy(x, y, x, y, 3, k=5) > 0.95
    g = torch.Generator().manual_seed(1)
    yr = torch.randint(0, 3, (300,), generator=g)
    xt, _ = _blobs(seed=5)
    assert E.knn_accuracy(x, yr, xt, torch.randint(0, 3, (300,), generator=g), 3, k=5) < 0.5


def test_budget_sampler_dynamic_vs_static():
    s = BudgetSampler(100, 0.1, "dynamic", seed=0)
    a, b = s.epoch_indices(), s.epoch_indices()
    assert len(a) == 10 and len(set(a.tolist())) == 10 and set(a.tolist()) != set(b.tolist())
    st = BudgetSampler(100, 0.1, "static", seed=0)
    assert set(st.epoch_indices().tolist()) == set(st.epoch_indices().tolist())
    assert s.steps_per_epoch(4) == 2 and len(list(s.batches(4))) == 2
    assert len(list(s.batches(4, drop_last=False))) == 3
    # coverage: dynamic subsets visit (almost) all examples over many epochs, static never leaves its subset
    seen = set()
    for _ in range(100):
        seen |= set(s.epoch_indices().tolist())
    assert len(seen) > 95
    with pytest.raises(ValueError):
        BudgetSampler(10, 0.0)


def test_extract_features_uses_eval_mode():
    net = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2), torch.nn.Flatten())
    net.train()
    imgs = torch.randint(0, 256, (10, 1, 5, 5), dtype=torch.uint8)
    f = E.extract_features(net, imgs, 0.5, 0.5, batch_size=3)
    assert f.shape == (10, 18) and net.training
    f1 = E.extract_features(net, imgs[:1], 0.5, 0.5)
    assert torch.allclose(f[:1], f1, atol=1e-6)  # eval mode: a sample's features do not depend on its batch
    assert E.seed_summary([0.5, 0.7]) == pytest.approx((0.6, 0.1414213562), rel=1e-6)
