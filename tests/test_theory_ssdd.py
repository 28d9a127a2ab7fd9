import torch

from compendium.theory import ssdd


def test_krr_primal_equals_dual_and_hypergradient_passes_gradcheck():
    g = torch.Generator().manual_seed(0)
    fr = torch.randn(20, 6, generator=g, dtype=torch.float64)
    fs = torch.randn(4, 6, generator=g, dtype=torch.float64)
    ys = torch.randn(4, 3, generator=g, dtype=torch.float64)
    assert torch.allclose(ssdd.krr_predict_primal(fr, fs, ys, 0.3), ssdd.krr_predict_dual(fr, fs, ys, 0.3), atol=1e-10)
    fs.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda z: ssdd.krr_predict_dual(fr, z, ys, 0.3).pow(2).sum(), (fs,))


def test_sampled_view_gradient_is_biased_and_enumeration_is_exact():
    toy = ssdd.Toy(seed=1)
    assert ssdd.relative_bias(toy) > 0.05
    # enumerated gradient = finite difference of the averaged objective
    ge = ssdd.enumerated_gradient(toy)
    e = torch.zeros_like(toy.x_syn)
    e[2, 5] = 1e-6
    fd = (toy.loss_enumerated(toy.x_syn + e) - toy.loss_enumerated(toy.x_syn - e)) / 2e-6
    assert abs(float(fd) - float(ge[2, 5])) < 1e-6 * max(1.0, abs(float(fd)))


def test_no_bias_when_every_view_is_the_identity():
    toy = ssdd.Toy(seed=1, identity_views=True)
    assert ssdd.relative_bias(toy) < 1e-10


def test_monte_carlo_converges_to_the_mean_over_views_not_to_the_enumerated_gradient():
    toy = ssdd.Toy(seed=2)
    running, _ = ssdd.monte_carlo_sampled(toy, 4000)
    mean_views = ssdd.sampled_gradients(toy).mean(0)
    ge = ssdd.enumerated_gradient(toy)
    assert float((running[-1] - mean_views).norm() / mean_views.norm()) < 0.1
    assert float((running[-1] - ge).norm() / ge.norm()) > 0.05


def test_descent_modes():
    toy = ssdd.Toy(seed=0)
    t = ssdd.descend(toy, "enumerated", 20, 0.01)
    assert t[-1] < t[0]
    import pytest

    with pytest.raises(ValueError):
        ssdd.descend(toy, "other", 1, 0.1)
