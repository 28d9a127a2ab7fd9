"""KRR-ST and SSDD (compendium.distill.ssdd): the KRR solve (dual = primal, gradient check), the float
budget, the predefined views, the parameterisations, the approximation networks, the model pool."""

import pytest
import torch
from torch import nn

from compendium.core import models
from compendium.distill import ssdd as S


def _feats(n, d, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g, dtype=torch.float64)


def test_krr_dual_equals_primal_and_ridge_head():
    fs, fq, ys = _feats(12, 30, 0), _feats(50, 30, 1), _feats(12, 5, 2)
    dual = S.krr_predict(fq, fs, ys, lam_rel=1e-3)
    primal = S.krr_predict_primal(fq, fs, ys, lam_rel=1e-3)
    assert torch.allclose(dual, primal, atol=1e-8)
    # without the bias column, too; and the head fits the synthetic set almost exactly at a tiny lambda
    assert torch.allclose(
        S.krr_predict(fq, fs, ys, 1e-3, bias=False), S.krr_predict_primal(fq, fs, ys, 1e-3, bias=False), atol=1e-8
    )
    assert torch.allclose(S.krr_predict(fs, fs, ys, 1e-9), ys, atol=1e-5)


def test_krr_gradient_check():
    fs = _feats(6, 8, 3).requires_grad_()
    ys = _feats(6, 3, 4).requires_grad_()
    fq = _feats(10, 8, 5)
    assert torch.autograd.gradcheck(lambda a, b: S.krr_predict(fq, a, b, 1e-2, detach_trace=False), (fs, ys))
    # KRR-ST's detached trace: the gradient treats lambda as a constant, so it differs from the full one
    g_det = torch.autograd.grad(S.krr_predict(fq, fs, ys, 1e-2).sum(), fs)[0]
    g_full = torch.autograd.grad(S.krr_predict(fq, fs, ys, 1e-2, detach_trace=False).sum(), fs)[0]
    assert not torch.allclose(g_det, g_full)
    # lambda does not depend on the targets: the detached form's target gradient passes the check
    assert torch.autograd.gradcheck(lambda b: S.krr_predict(fq, fs.detach(), b, 1e-2), (ys,))


def test_krr_rejects_mismatched_shapes():
    with pytest.raises(S.SSDDError):
        S.krr_predict(_feats(4, 5, 0), _feats(3, 6, 1), _feats(3, 2, 2))


def test_float_budget_matches_the_spec_arithmetic():
    # CIFAR-100, N = 100: U = V = 200 over 16x16x3 and 512-d; m = 114 with Q counted, 128 without (spec 2.5)
    budget = 100 * 3 * 32 * 32
    assert S.images_for_budget(budget, 200, 200, 768, 512, 3, "q", 4) == 114
    assert S.images_for_budget(budget, 200, 200, 768, 512, 3, "same") == 128
    assert (
        S.ssdd_floats(114, 200, 200, 768, 512, 3, "q", 4) <= budget < S.ssdd_floats(115, 200, 200, 768, 512, 3, "q", 4)
    )
    # Fashion-MNIST, N = 10, U = V = 20, 14x14 and 128-d: 7,832 of 7,840 floats at m = 20 (spec 6.3)
    assert S.images_for_budget(7840, 20, 20, 196, 128, 3) == 20
    assert S.ssdd_floats(20, 20, 20, 196, 128, 3) == 7832
    assert S.approx_floats("q", 20, 3, 4) == 552 and S.approx_floats("bias", 20, 3) == 60
    assert S.approx_floats("ideal", 20, 3, m=7) == 3 * 7 * 20 and S.approx_floats("same", 20, 3) == 0
    # the baselines' two accounting modes
    assert S.free_images_for_budget(7840, 784, 128, count_targets=False) == 10
    assert S.free_images_for_budget(7840, 784, 128, count_targets=True) == 8
    with pytest.raises(S.SSDDError, match="no image"):
        S.images_for_budget(1000, 20, 20, 196, 128, 3)
    with pytest.raises(S.SSDDError):
        S.approx_floats("mlp", 20, 3)


def test_views_are_the_predefined_permutations():
    x = torch.arange(2 * 1 * 4 * 4, dtype=torch.float32).reshape(2, 1, 4, 4)
    rot = S.views(x, "rotation")
    assert len(rot) == 3 and torch.equal(torch.rot90(rot[2], 1, (2, 3)), x)  # rot90^4 = identity
    lr, tb, both = S.views(x, "jigsaw")
    assert torch.equal(S.views(lr, "jigsaw")[1], both) and torch.equal(S.views(lr, "jigsaw")[0], x)
    assert sorted(lr.flatten().tolist()) == sorted(x.flatten().tolist())
    crops = S.views(torch.randn(3, 1, 28, 28), "crop")
    assert len(crops) == 5 and all(c.shape == (3, 1, 28, 28) for c in crops) and S.crop_size(28) == 18
    assert S.views(x, "none") == [] and S.augment_set(x, "rotation").shape[0] == 8
    assert [S.num_views(k) for k in S.AUGMENTATIONS] == [0, 3, 3, 5]
    with pytest.raises(S.SSDDError):
        S.views(x, "mixup")


def test_views_are_differentiable_permutations():
    x = torch.randn(2, 1, 6, 6, requires_grad=True)
    w = torch.randn(2, 1, 6, 6)
    (S.views(x, "rotation")[0] * w).sum().backward()
    # the gradient of a permutation is the inverse permutation of the upstream gradient
    assert torch.allclose(x.grad, torch.rot90(w, -1, (2, 3)))


def _teacher(d_y=6):
    torch.manual_seed(0)
    net = models.convnet(1, 8, width=4, depth=2, norm="batch", global_pool=True)
    head = nn.Linear(net.feature_dim, d_y)
    model = nn.Sequential(net, head).eval()
    return lambda x: model(x).detach()


def _real(n=40):
    return torch.randn(n, 1, 8, 8, generator=torch.Generator().manual_seed(7))


@pytest.mark.parametrize("init", S.INITS)
def test_basis_set_shapes_and_pca_init(init):
    real = _real()
    t = _teacher()
    y = t(real)
    s = S.init_basis_set(real, y, t, m=5, u=6, v=4, s=2, augmentation="rotation", init=init, seed=0)
    xs, ys = s.build()
    assert xs.shape == (20, 1, 8, 8) and ys.shape == (20, 6) and s.m == 5
    assert s.floats("q", 4) == S.ssdd_floats(5, 6, 4, 16, 6, 3, "q", 4)
    if init == "pca":  # orthonormal bases; coefficients are projections
        assert torch.allclose(s.bx @ s.bx.T, torch.eye(6), atol=1e-5)
        assert torch.allclose(s.by @ s.by.T, torch.eye(4), atol=1e-5)


def test_basis_set_with_identity_bases_is_krr_st():
    """check 5: A = 0, identity bases at full dimension (s = 1, U = d_x, V = d_y) give KRR-ST's loss."""
    real, t = _real(), _teacher()
    y = t(real)
    m = 6
    x0, y0 = real[:m], y[:m]
    free = S.FreeSet(x0, y0)
    basis = S.BasisSet(torch.eye(64), x0.reshape(m, -1), torch.eye(6), y0, torch.zeros(0, m, 6), (1, 8, 8), 1, "none")
    torch.manual_seed(0)
    bb = models.convnet(1, 8, width=4, depth=2, norm="batch")
    a = S.outer_loss(free, bb, real[10:30], y[10:30])
    b = S.outer_loss(basis, bb, real[10:30], y[10:30])
    assert torch.allclose(a, b, atol=1e-6)
    a.backward()
    assert free.x.grad is not None and free.y.grad is not None


def test_approximation_networks():
    g = torch.Generator().manual_seed(0)
    cy = torch.randn(30, 8, generator=g)
    cya = torch.stack([cy + 0.5 * torch.tanh(cy @ torch.randn(8, 8, generator=g)) for _ in range(3)])
    same = S.fit_approx(cy, cya, "same")[1]
    bias = S.fit_approx(cy, cya, "bias", steps=150)[1]
    q, q_mse = S.fit_approx(cy, cya, "q", hidden=4, steps=300)
    ideal = S.fit_approx(cy, cya, "ideal")[1]
    assert ideal == 0.0 and q_mse < bias <= same + 1e-6
    assert q(cy).shape == (3, 30, 8) and q.floats() == S.approx_floats("q", 8, 3, 4)
    with pytest.raises(S.SSDDError):
        S.Approx("ideal", 8, 3)


def test_release_adds_the_predicted_shifts():
    real, t = _real(), _teacher()
    s = S.init_basis_set(real, t(real), t, m=4, u=5, v=3, s=2)
    approx, _ = S.fit_approx(s.cy, s.cya, "ideal")
    x, y = S.release(s, approx)
    xb, yb = s.build()
    assert torch.allclose(x, xb) and torch.allclose(y, yb, atol=1e-5)  # ideal = the distilled C^y_a


def test_model_pool_resets_at_Z():
    x, y = torch.randn(8, 1, 8, 8), torch.randn(8, 3)

    def factory(i):
        torch.manual_seed(100 + i)
        return S.InnerModel(models.convnet(1, 8, width=4, depth=2, norm="batch"), 3)

    pool = S.ModelPool(factory, S.PoolConfig(size=2, max_steps=3), x, y, seed=0)
    assert all(1 <= z < 3 for z in pool.z) and pool.initial_steps == sum(pool.z)
    first = pool.models[0]
    while pool.z[0] < 3:
        pool.update(0, x, y)
    pool.update(0, x, y)
    assert pool.z[0] == 0 and pool.models[0] is not first


def _pool_model(i):
    """Inner model i of a test pool (seeded by i)."""
    torch.manual_seed(i)
    return S.InnerModel(models.convnet(1, 8, width=4, depth=2, norm="batch"), 6)


def test_distill_lowers_the_outer_loss():
    real, t = _real(64), _teacher()
    y = t(real)
    s = S.init_basis_set(real, y, t, m=6, u=8, v=4, s=2, init="random", seed=1)

    cfg = S.DistillConfig(steps=20, lr=0.05, real_batch=32, pool=S.PoolConfig(size=1, max_steps=5), seed=0)
    out = S.distill(s, real, y, _pool_model, cfg)
    first, last = sum(out["losses"][:5]) / 5, sum(out["losses"][-5:]) / 5
    assert last < first
    with pytest.raises(S.SSDDError):
        S.distill(s, real, y[:3], _pool_model, cfg)


def test_distill_runs_the_set_and_every_pool_model_on_its_device(request):
    real, t = _real(32), _teacher()
    y = t(real)
    s = S.init_basis_set(real, y, t, m=4, u=6, v=4, s=2, init="random", seed=1)

    cfg = S.DistillConfig(steps=6, lr=0.05, real_batch=16, pool=S.PoolConfig(size=2, max_steps=3), seed=0)
    ref = S.distill(S.init_basis_set(real, y, t, m=4, u=6, v=4, s=2, init="random", seed=1), real, y, _pool_model, cfg)
    moves = request.getfixturevalue("module_moves")  # recorded from here on
    out = S.distill(s, real, y, _pool_model, S.DistillConfig(**{**cfg.__dict__, "device": "cpu"}))
    # the set out and home again, and each pool model (two at the start, one re-initialised after 3 steps) on it
    assert moves.count(("BasisSet", "cpu")) == 2 and moves.count(("InnerModel", "cpu")) >= 3, moves
    assert out["losses"] == ref["losses"]  # on the CPU the device changes nothing


def test_evaluate_set_trains_and_probes_on_the_pretraining_device(request):
    x, y = torch.randn(8, 1, 28, 28), torch.randn(8, 4)
    spec = S.ProbeSpec(targets=("digits",), train_n=50, test_n=50, epochs=1)
    kw = dict(in_channels=1, image_size=28, width=4, depth=2, norm="batch", global_pool=True)
    pre = S.PretrainConfig(epochs=2, batch_size=8, lr=0.01)
    ref = S.evaluate_set(x, y, "convnet", kw, pre, spec)
    moves = request.getfixturevalue("module_moves")  # recorded from here on
    out = S.evaluate_set(x, y, "convnet", kw, S.PretrainConfig(**{**pre.__dict__, "device": "cpu"}), spec)
    assert moves == [("Backbone", "cpu"), ("InnerModel", "cpu")], moves  # the student, then it with its head
    assert out["acc"] == ref["acc"] and out["final_loss"] == ref["final_loss"]


def test_pretrain_student_fits_the_targets():
    x, y = torch.randn(16, 1, 8, 8), torch.randn(16, 4)
    bb = models.convnet(1, 8, width=8, depth=2, norm="batch", global_pool=True)
    out = S.pretrain_student(bb, x, y, S.PretrainConfig(epochs=60, batch_size=16, lr=0.05))
    assert out["losses"][-1] < out["losses"][0]


def test_target_set_roundtrip_and_errors(tmp_path):
    ts = S.TargetSet(torch.randn(4, 1, 8, 8), torch.randn(4, 3), "ssdd", floats=100, params={"u": 2})
    p = ts.save(tmp_path / "a.pt")
    back = S.TargetSet.load(p)
    assert torch.equal(back.images, ts.images) and back.params == {"u": 2}
    with pytest.raises(S.SSDDError, match="no target set"):
        S.TargetSet.load(tmp_path / "missing.pt")
    (tmp_path / "bad.pt").write_bytes(b"not a torch file")
    with pytest.raises(S.SSDDError, match="not a readable"):
        S.TargetSet.load(tmp_path / "bad.pt")
    with pytest.raises(S.SSDDError):
        S.TargetSet(torch.randn(4, 1, 8, 8), torch.randn(3, 3), "x", floats=1)


def test_parse_approx():
    assert S.parse_approx("q8") == ("q", 8) and S.parse_approx("bias") == ("bias", 0)
    for bad in ("q", "q0", "mlp"):
        with pytest.raises(S.SSDDError):
            S.parse_approx(bad)


@pytest.mark.parametrize("method", ["ssdd", "krr_st", "random", "kmeans"])
def test_synthesize_fills_the_budget(method):
    real, t = _real(48), _teacher()
    y = t(real)
    teacher = t  # any callable: the teacher's representations of the initial views (C^y_a)
    job = dict(
        name=method,
        method=method,
        budget=10 * 64,
        n=10,
        augmentation="rotation",
        init="pca",
        u=6,
        v=4,
        s=2,
        approx=[["q", 2], ["same", 0]],
        approx_steps=20,
        steps=2,
        lr=1e-3,
        seed=0,
        count_targets=False,
    )
    inner = {"arch": "convnet", "kwargs": dict(in_channels=1, image_size=8, width=4, depth=2, norm="batch")}
    cfg = S.DistillConfig(real_batch=16, pool=S.PoolConfig(size=1, max_steps=3))
    out = S.synthesize(job, real, y, teacher, inner, cfg)
    for ts in out:
        assert ts.floats <= job["budget"] and ts.method == method
        assert len(ts.images) == len(ts.targets)
    if method == "ssdd":
        assert [ts.extra["name"] for ts in out] == ["ssdd", "ssdd / same"]
        m = out[0].extra["m"]
        assert m == S.images_for_budget(640, 6, 4, 16, 6, 3, "q", 2) and len(out[0].images) == 4 * m
    else:
        assert len(out) == 1 and len(out[0].images) == 10
