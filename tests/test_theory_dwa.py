import functools

import pytest
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


@functools.lru_cache(maxsize=1)
def _small_teacher():
    x, y = dwa.gaussian_mixture(classes=3, dim=3, per_class=40, seed=4)
    net = dwa.FlatMLP(3, 6, 3)
    theta, _, _ = dwa.train_teacher(net, x, y, weight_decay=1e-3, adam_steps=200, lbfgs_steps=100)
    return x, y, net, theta


@pytest.mark.usefixtures("one_thread")
def test_recovered_batches_do_not_interact_and_var_loss_pulls_to_the_data():
    x, y, net, theta = _small_teacher()
    configs = [(1.0, 0.0, 0.1), (1.0, 5.0, 0.1), (1.0, 5.0, 2.0)]
    together, labels = dwa.recover_batches(net, theta, x, configs, runs=2, per_class=3, steps=60)
    for k, cfg in enumerate(configs):
        alone, _ = dwa.recover_batches(net, theta, x, [cfg], runs=2, per_class=3, steps=60)
        assert torch.allclose(alone[0], together[k], atol=1e-10)
    rows = dwa.variance_decomposition(
        net, theta, x, y, settings=((1.0, 0.0), (1.0, 5.0)), init_scales=(0.1, 3.0), runs=3, per_class=3, steps=150
    )
    v = {(r["init_std"], r["lambda_var"]): r["Var(S)"] for r in rows}
    # without L_var the diversity follows the initialisation; L_var pulls it towards the data's from both sides
    assert v[(0.1, 0.0)] < 0.2 * v[(3.0, 0.0)]
    assert v[(0.1, 0.0)] < v[(0.1, 5.0)] and v[(3.0, 5.0)] < v[(3.0, 0.0)]


@pytest.mark.usefixtures("one_thread")
def test_random_perturbation_response_matches_the_implicit_derivative():
    x, y, net, theta = _small_teacher()
    rows, per_class = dwa.perturbation_response(net, theta, x, y, [1e-3], draws=300, seed=1)
    for r, c in zip(rows, per_class):
        assert r["Newton |grad|"] < 1e-9
        assert 0.7 < r["measured beta"] / c["beta implicit"] < 1.4
        assert c["rank of grad_x grad_theta l"] <= c["d"] < c["P"]
        assert 0 < c["eq. 9 uncancelled share"] < 1


def test_t2_helpers_reproduce_the_spurious_factor_and_the_sign_rule():
    g = torch.Generator().manual_seed(0)
    t2, summary, n = dwa.t2_scalar_check(20, 5, g)
    assert len(t2) == 100 and 0 < n <= 100
    assert (
        abs(summary["paper / autograd (median)"] - 0.8) < 1e-9
        and summary["opposing gradients where the paper predicts them"] == 1.0
    )
    assert all(abs(r["paper / autograd"] - r["1 − 1/|S|"]) < 1e-9 for r in dwa.t2_factor_rows(g))
    assert dwa.t2_multichannel(5, 4, 3, g)["closed-form sign = autograd sign"] == 1.0
