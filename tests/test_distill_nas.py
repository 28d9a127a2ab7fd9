"""The NAS-proxy study (compendium.distill.unrolled.nas): the search space, Spearman's rho with ties, the scores."""

import numpy as np
import pytest
import torch

from compendium.distill.networks import build_network
from compendium.distill.unrolled import nas


def test_search_space_is_deterministic_distinct_and_builds():
    codes = nas.search_space(24, seed=0)
    assert codes == nas.search_space(24, seed=0) and codes != nas.search_space(24, seed=1)
    assert len(set(codes)) == 24
    for k, values in nas.SPACE.items():  # a 24-sample of the 144 still varies every factor
        assert {nas.parse_code(c)[k] for c in codes} == set(values), k
    x = torch.randn(2, 1, 28, 28)
    for c in codes:
        kw = nas.parse_code(c)
        assert nas.arch_code(kw) == c and kw["norm"] != "batch"
        net = build_network(1, 28, 10, 0, "convnet", kw)
        out = net(x)
        assert out.shape == (2, 10) and torch.isfinite(out).all()
    assert len(nas.search_space(144)) == 144
    with pytest.raises(ValueError):
        nas.search_space(145)


def test_parse_code_rejects_bad_codes():
    for bad in (
        "w8-d2-relu-instance",
        "x8-d2-relu-instance-avg",
        "w8-d2-tanh-instance-avg",
        "w8-d9-relu-none-avg",
        "wA-d2-relu-none-avg",
    ):
        with pytest.raises(ValueError):
            nas.parse_code(bad)


def test_spearman_with_ties_matches_a_hand_computed_value_and_scipy():
    # ranks of a: [1, 2.5, 2.5, 4]; of b: [1, 3, 2, 4]; centred products 2.25 + 0 + 0 + 2.25 = 4.5,
    # sums of squares 4.5 and 5: rho = 4.5 / sqrt(22.5)
    a, b = [0.1, 0.5, 0.5, 0.9], [1.0, 3.0, 2.0, 4.0]
    assert np.allclose(nas.rankdata(a), [1, 2.5, 2.5, 4])
    assert np.isclose(nas.spearman(a, b), 4.5 / np.sqrt(22.5))
    from scipy.stats import spearmanr

    g = np.random.default_rng(0)
    x, y = g.integers(0, 5, 30).astype(float), g.normal(size=30)
    assert np.isclose(nas.spearman(x, y), spearmanr(x, y).statistic)
    assert np.isclose(nas.spearman(x, -x), -1.0) and np.isnan(nas.spearman([1, 1, 1], [1, 2, 3]))


def test_proxy_scores_and_bootstrap():
    codes = ["a", "b", "c", "d"]
    gt = [0.5, 0.8, 0.7, 0.6]
    s = nas.proxy_scores(codes, gt, [0.1, 0.3, 0.4, 0.2])  # picks c: ground-truth rank 2
    assert (
        s["top1"] == "c"
        and s["top1 gt rank"] == 2
        and np.isclose(s["regret"], 0.1)
        and np.isclose(s["top1 gt acc"], 0.7)
    )
    assert np.isclose(s["rho"], nas.spearman([0.1, 0.3, 0.4, 0.2], gt))
    g = np.random.default_rng(1)
    gt = g.normal(size=24)
    good, bad = gt + 0.1 * g.normal(size=24), g.normal(size=24)
    assert nas.bootstrap_rho_delta(gt, good, good, n_boot=50) == 0.0
    sd = nas.bootstrap_rho_delta(gt, good, bad, n_boot=200)
    assert 0.05 < sd < 0.5


def test_gtn_proxy_job_trains_an_architecture_on_the_curriculum():
    from compendium.distill.unrolled import gtn as G

    gtn = G.GTN(steps=2, batch_size=10, noise_dim=4, hidden=16, init_lr=0.05)
    test = torch.randint(0, 256, (20, 1, 28, 28), dtype=torch.uint8)
    r = nas.gtn_proxy_job("w4-d1-sigmoid-none-max", "GTN", gtn, test, torch.arange(20) % 10)
    assert r["images seen"] == 20 and 0.0 <= r["acc"] <= 1.0 and r["train seconds"] > 0
