import torch

from compendium.theory import dwa


def test_scalar_gradients_match_closed_form_and_paper_has_the_spurious_factor():
    g = torch.Generator().manual_seed(3)
    n = 7
    s = torch.randn(n, generator=g, dtype=torch.float64) * 1.3 + 0.4
    for mu_t, var_t in ((0.0, 1.0), (1.0, 0.2), (-0.5, 3.0)):
        gm, gv = dwa.bn_stat_grads(s, torch.tensor(mu_t, dtype=s.dtype), torch.tensor(var_t, dtype=s.dtype))
        exact = dwa.exact_grad_product(s, mu_t, var_t)
        assert torch.allclose(gm * gv, exact, rtol=1e-10, atol=1e-14)
        paper = dwa.paper_grad_product(s, mu_t, var_t)
        assert torch.allclose(paper, exact * (1 - 1 / n), rtol=1e-12)
        assert not torch.allclose(paper, exact, rtol=1e-3)
        # the sign (the paper's argument) agrees
        assert torch.equal(torch.sign(paper), torch.sign(exact))


def test_conflict_prediction_matches_autograd_in_the_unsquared_multichannel_form():
    g = torch.Generator().manual_seed(0)
    s = torch.randn(32, 6, generator=g, dtype=torch.float64)
    mu_t = torch.randn(6, generator=g, dtype=torch.float64)
    var_t = torch.rand(6, generator=g, dtype=torch.float64) * 2
    for squared in (True, False):
        gm, gv = dwa.bn_stat_grads(s, mu_t, var_t, squared=squared)
        opposed = (gm * gv).sum(1) < 0
        assert torch.equal(opposed, dwa.conflict_prediction(s, mu_t, var_t))
    assert 0 < int(opposed.sum()) < len(s)


def test_directed_adjustment_has_norm_rho_and_raises_the_batch_loss():
    x, y = dwa.gaussian_mixture(classes=3, dim=4, per_class=20, seed=1)
    net = dwa.FlatMLP(4, 6, 3)
    theta = net.init(0)
    xb, yb = x[::20], y[::20]
    delta = dwa.directed_adjustment(net, theta, xb, yb, rho=0.05, steps=5)
    assert abs(float(delta.norm()) - 0.05) < 1e-3
    assert float(net.summed_loss(theta + delta, xb, yb)) > float(net.summed_loss(theta, xb, yb))


def test_adjustment_on_a_stationary_teacher_lowers_the_rest_only_for_small_rho():
    x, y = dwa.gaussian_mixture(classes=4, dim=4, per_class=60, seed=2)
    net = dwa.FlatMLP(4, 8, 4)
    theta, gnorm, _ = dwa.train_teacher(net, x, y, weight_decay=1e-3, adam_steps=300, lbfgs_steps=400)
    assert gnorm < 1e-6
    rows = dwa.adjustment_effects(net, theta, x, y, [1e-3, 0.5], draws=4, steps=8)
    small = [r for r in rows if r["rho"] == 1e-3]
    assert all(r["dL_B"] > 0 for r in rows)
    assert sum(r["dL_rest"] < 0 for r in small) >= 3
    def first_order_error(rs):
        return max(abs(r["dL_rest"] - r["first_order_dL_rest"]) / abs(r["first_order_dL_rest"]) for r in rs)
    assert first_order_error(small) < 0.3 < first_order_error([r for r in rows if r["rho"] == 0.5])
