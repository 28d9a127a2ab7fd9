import math

import numpy as np
import pytest
import torch

from compendium.theory import gaussian as G


def train_loop_reference(
    seed: int, sigma: float, steps: int, generator: torch.Generator, lr: float = 0.002, momentum: float = 0.98
) -> list[torch.Tensor]:
    """One plain ``nn.Sequential`` + ``torch.optim.SGD`` run the reference that :func:`compendium.theory.gaussian.train_mlps` must reproduce."""
    torch.manual_seed(seed)
    net = torch.nn.Sequential(
        torch.nn.Linear(2, G.HIDDEN), torch.nn.ReLU(), torch.nn.Linear(G.HIDDEN, 1), torch.nn.Sigmoid()
    ).double()
    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=momentum)
    for _ in range(steps):
        x, y = G.sample_mixture(1, sigma, generator)
        loss = torch.nn.functional.mse_loss(net(x)[:, 0], y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return [p.detach() for p in net.parameters()]


def test_batched_training_equals_plain_pytorch_loops():
    steps = 25
    seeds, sigmas = [3, 4], [0.1, 0.8]
    res = G.train_mlps(
        G.init_mlps(seeds), torch.tensor(sigmas, dtype=torch.float64), steps, torch.Generator().manual_seed(7)
    )
    for r, (s, sig) in enumerate(zip(seeds, sigmas)):
        ref = train_loop_reference(s, sig, steps, torch.Generator().manual_seed(7))
        got = res.final.index(r)
        for a, b in zip(got.tensors(), ref):
            assert torch.allclose(a, b.reshape(a.shape), atol=1e-10)


def test_flat_roundtrip_and_forward_shapes():
    m = G.init_mlps([0, 1, 2])
    assert m.flat().shape == (3, 201)
    back = G.MLPs.from_flat(m.flat())
    assert all(torch.equal(a, b) for a, b in zip(m.tensors(), back.tensors()))
    x, y = G.sample_mixture(10, torch.tensor([0.1, 0.5, 1.0], dtype=torch.float64), torch.Generator().manual_seed(0))
    assert x.shape == (3, 10, 2) and m.forward(x).shape == (3, 10)
    # common random numbers: the runs differ only by Sigma
    assert torch.allclose((x[0] - x[1]) / (0.1 - 0.5), (x[0] - x[2]) / (0.1 - 1.0))


def test_filter_normalization_per_neuron():
    center = G.init_mlps([0]).flat()[0]
    d = G.filter_normalized_directions(center, torch.Generator().manual_seed(1))
    c, d1 = G.MLPs.from_flat(center[None]), G.MLPs.from_flat(d[:1])
    assert torch.allclose(d1.w1.norm(dim=-1), c.w1.norm(dim=-1))
    assert torch.allclose(d1.w2.norm(dim=-1), c.w2.norm(dim=-1))
    assert torch.all(d1.b1 == 0) and torch.all(d1.b2 == 0)
    pts = center + torch.tensor([[0.3, -1.2], [2.0, 0.5]], dtype=center.dtype) @ d
    assert torch.allclose(G.project(pts, center, d), torch.tensor([[0.3, -1.2], [2.0, 0.5]], dtype=center.dtype))


@pytest.mark.parametrize("sigma", [0.1, 0.5, 1.0])
def test_theorem1_closed_form_matches_monte_carlo(sigma):
    reps, eta, t = 20000, 0.05, 150
    th = G.linear_sgd_mc(sigma, eta, t, 0.0, reps, torch.Generator().manual_seed(11))
    sq = (th + 1.5) ** 2
    mc, se = float(sq.mean()), float(sq.std() / math.sqrt(reps))
    assert abs(mc - G.theorem1_closed_form(sigma, eta, t, 0.0)) < 4 * se
    # v1's printed equality multiplies the noise by (1-eta)^{2t}: far off
    assert abs(mc - G.theorem1_v1_printed(sigma, eta, t, 0.0)) > 50 * se


@pytest.mark.parametrize("sigma,rho", [(1.0, 0.0), (1.0, 0.5), (1.0, 1.0), (0.5, 0.3)])
def test_theorem2_variance_closed_form_matches_monte_carlo(sigma, rho):
    v, _, se = G.theorem2_noise_mc(rho, sigma, 400000, torch.Generator().manual_seed(5))
    assert abs(v - float(G.theorem2_variance(rho, sigma))) < 4 * se


def test_theorem2_minimiser_is_the_argmin():
    for s in (0.5, 1.0):
        grid = np.linspace(0, 1, 100001)
        assert abs(grid[np.argmin(G.theorem2_variance(grid, s))] - G.theorem2_rho_star(s)) < 1e-4


def test_bayes_boundary_is_the_midpoint_for_every_sigma():
    for s in (0.1, 0.5, 2.0):
        w, b = G.bayes_offset(sigma=s)
        assert G.diagonal_crossing(w, b) == pytest.approx(1.5)


def test_diagonal_boundary_bisection():
    m = G.init_mlps([0])
    t = G.diagonal_boundary(m)
    if not torch.isnan(t[0]):
        x = torch.stack([t, t], -1)[:, None, :]
        assert abs(float(m.forward(x)[0, 0]) - 0.5) < 1e-9


def test_zero_one_risk_minimum_and_curvature():
    star = -1.5
    for s in (0.2, 1.0):
        grid = np.linspace(-3, 0, 30001)
        assert abs(grid[np.argmin(G.zero_one_risk(grid, s))] - star) < 1e-3
        assert G.curvature_constant(s) > 0
    assert G.is_monotone([1, 2, 2, 3]) and not G.is_monotone([1, 3, 2])


# ----------------------------------------------------------------------------- App B for any shape beta


@pytest.mark.parametrize("beta", [1.0, 1.5, 3.0, 4.0])
def test_generalised_gaussian_moments(beta):
    from scipy.stats import gennorm

    a = 0.8
    assert float(G.gg_variance(a, beta)) == pytest.approx(gennorm.var(beta, scale=a), rel=1e-12)
    assert float(G.gg_variance(G.gg_alpha(0.3, beta), beta)) == pytest.approx(0.3)
    m1, m2 = G.gg_noise_moments(a, beta)
    assert abs(m1) < 1e-10 and m2 == pytest.approx(float(G.gg_noise_second_moment(a, beta)), rel=1e-9)
    draws = G.gg_standard_draws(beta, 400000, np.random.default_rng(0))
    assert draws.var() == pytest.approx(float(G.gg_variance(1.0, beta)), rel=0.02)


def test_beta_two_reduces_to_the_gaussian_case():
    sigma = 0.6
    a = sigma * math.sqrt(2)  # N(mu, alpha, 2) = N(mu, alpha^2 / 2)
    assert G.gg_theorem1_closed_form(a, 2.0, 0.05, 40, 0.0) == pytest.approx(
        G.theorem1_closed_form(sigma, 0.05, 40, 0.0)
    )
    th = np.linspace(-3, 0, 7)
    assert np.allclose(G.gg_zero_one_risk(th, a, 2.0), G.zero_one_risk(th, sigma))
    c = G.gg_curvature(0.5 * math.sqrt(2), 2.0)
    assert c["limit"] == pytest.approx(G.curvature_constant(0.5), rel=1e-4)


@pytest.mark.parametrize("beta", [1.0, 3.0])
def test_generalised_gaussian_sgd_matches_b3_and_b1_constants(beta):
    sig = [0.25, 1.0]
    th = G.gg_linear_sgd_mc(G.gg_alpha(np.array(sig) ** 2, beta), beta, 0.05, 80, 0.0, 20000, seed=5)
    for s, t in zip(sig, th):
        sq = (t + 1.5) ** 2
        closed = G.gg_theorem1_closed_form(float(G.gg_alpha(s * s, beta)), beta, 0.05, 80, 0.0)
        assert abs(sq.mean() - closed) < 4 * sq.std() / math.sqrt(len(sq))
    c = G.gg_curvature(float(G.gg_alpha(0.25, beta)), beta)
    assert c["argmin"] == pytest.approx(-1.5, abs=1e-3) and c["min_excess"] >= 0
    assert np.isfinite(c["C1"]) and c["C1"] >= c["limit"] * (1 - 1e-6) and c["printed_vs_exact"] < 1e-12
    rows = G.gg_appendix_b_rows([beta], [0.25, 1.0], 0.05, 60, 2000, seed=1)
    assert rows[0]["0-1 excess on G"] < rows[1]["0-1 excess on G"]


def test_theorem1_rows_and_excess_risk_rows():
    rows, chains = G.theorem1_rows([0.1, 1.0], 0.05, 30, 500, seed=3)
    assert [r["sigma"] for r in rows] == [0.1, 1.0] and set(chains) == {0.1, 1.0}
    r = rows[1]
    assert r["closed - MC (s.e.)"] == pytest.approx(
        (r["closed form (camera-ready B.3)"] - r["MC E[(θ_T-θ*)²]"]) / r["MC s.e."]
    )
    risk = G.excess_risk_rows(chains)
    assert risk[0]["quadratic excess ½E(θ-θ*)²"] < risk[1]["quadratic excess ½E(θ-θ*)²"]
