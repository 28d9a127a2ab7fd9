"""KIP / LS / KIP_p (compendium.distill.kernel): kernels against closed forms and wide random networks,
KRR and label-solve identities, and the synthesis loop's invariants (tiny tensors, a few seconds)."""

import math

import pytest
import torch

from compendium.distill import kernel as kip
from compendium.distill import sets
from compendium.distill.sets import DistilledSet

W_STD, B_STD = 1.5, 0.5  # away from the defaults so that a dropped bias or weight scale shows


pytestmark = pytest.mark.usefixtures("one_thread")


def _inputs(n=3, d=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g, dtype=torch.float64)
    if n >= 3:
        x[2] = 0.9 * x[0] + 0.3 * x[1]  # a strongly correlated pair (small angle)
    return x


def _wide_nets_autograd(x, depth, width, draws, seed):
    """Empirical NNGP and NTK of ``draws`` random FC ReLU nets (NTK parameterisation, one output),
    averaged. NNGP: the last layer's conditional covariance w^2 a(x).a(z)/n + b^2. NTK: the exact
    parameter-gradient inner product, by the chain rule over dense layers,
    sum_l (df/dh_l(x) . df/dh_l(z)) (w^2 a_(l-1)(x).a_(l-1)(z) / fan_in + b^2), df/dh_l from autograd."""
    g = torch.Generator().manual_seed(seed)
    n, d = x.shape
    x0 = x.float().requires_grad_(True)  # so that autograd records the forward graph
    a, fan, pres, acts, fans = x0.expand(draws, n, d), d, [], [], []
    for layer in range(depth + 1):
        out = width if layer < depth else 1
        w = torch.randn(draws, fan, out, generator=g)
        b = torch.randn(draws, 1, out, generator=g)
        acts.append(a)
        fans.append(fan)
        pre = W_STD / math.sqrt(fan) * torch.bmm(a, w) + B_STD * b
        pres.append(pre)
        a, fan = torch.relu(pre), width
    f = pres[-1][..., 0]  # [draws, n]
    last = acts[-1].detach()
    nngp = (W_STD**2 * torch.bmm(last, last.transpose(1, 2)) / width + B_STD**2).mean(0)
    deltas = [torch.autograd.grad(f[:, i].sum(), pres, retain_graph=True) for i in range(n)]
    ntk = torch.zeros(n, n)
    for i in range(n):
        for j in range(n):
            for layer in range(depth + 1):
                gg = (deltas[i][layer][:, i] * deltas[j][layer][:, j]).sum(-1)  # [draws]
                aa = (acts[layer][:, i].detach() * acts[layer][:, j].detach()).sum(-1)  # [draws]
                ntk[i, j] += (gg * (W_STD**2 * aa / fans[layer] + B_STD**2)).mean()
    return nngp.double(), ntk.double()


# ---------------------------------------------------------------------------------------------- kernels


def test_fc_depth1_closed_form_and_special_values():
    x = _inputs(4, 6)
    x[3] = 0.0
    x[3, 0] = 1.0
    nngp, ntk = kip.fc_nngp_ntk(x, None, depth=1, w_std=W_STD, b_std=B_STD)
    # closed form of one hidden layer (Cho & Saul arc-cosine kernels of degree 1 and 0), written out
    w2, b2, d = W_STD**2, B_STD**2, x.shape[1]
    s0 = w2 * (x @ x.T) / d + b2
    q = torch.diagonal(s0)
    c = (s0 / torch.sqrt(q[:, None] * q[None, :])).clamp(-1, 1)
    t = torch.arccos(c)
    e1 = torch.sqrt(q[:, None] * q[None, :]) * (torch.sin(t) + (math.pi - t) * torch.cos(t)) / (2 * math.pi)
    e0 = (math.pi - t) / (2 * math.pi)
    torch.testing.assert_close(nngp, w2 * e1 + b2, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(ntk, w2 * e1 + b2 + w2 * e0 * s0, rtol=1e-6, atol=1e-6)
    # diagonal: E[relu(u)^2] = q/2, E[relu'(u)^2] = 1/2
    torch.testing.assert_close(torch.diagonal(nngp), w2 * q / 2 + b2)
    torch.testing.assert_close(torch.diagonal(ntk), w2 * q / 2 + b2 + w2 * q / 2)
    # orthogonal inputs without bias: t = pi/2, E[relu relu] = sqrt(q q')/(2 pi), E[relu' relu'] = 1/4
    e = torch.eye(2, dtype=torch.float64)
    n2, t2 = kip.fc_nngp_ntk(e, None, depth=1, w_std=1.0, b_std=0.0)
    assert n2[0, 1].item() == pytest.approx(0.5 / (2 * math.pi), rel=1e-9)
    assert t2[0, 1].item() == pytest.approx(0.5 / (2 * math.pi), rel=1e-9)  # + (1/4) * 0
    # depth 0 is the first dense layer alone (NNGP = NTK = the linear kernel)
    n0, t0 = kip.fc_nngp_ntk(x, None, depth=0, w_std=W_STD, b_std=B_STD)
    torch.testing.assert_close(n0, s0)
    torch.testing.assert_close(t0, s0)


@pytest.mark.parametrize("depth,width,draws", [(1, 4096, 64), (2, 256, 256)])
def test_fc_kernels_match_wide_random_relu_networks(depth, width, draws):
    x = _inputs()
    emp_nngp, emp_ntk = _wide_nets_autograd(x, depth, width, draws, seed=depth)
    nngp, ntk = kip.fc_nngp_ntk(x, x, depth=depth, w_std=W_STD, b_std=B_STD)
    for emp, ref in ((emp_nngp, nngp), (emp_ntk, ntk)):
        scale = torch.sqrt(torch.diagonal(ref)[:, None] * torch.diagonal(ref)[None, :])
        assert ((emp - ref).abs() / scale).max() < 0.03  # errors relative to sqrt(K_ii K_jj)
    # the NTK is not the NNGP (the check above could tell them apart)
    assert ((ntk - nngp).abs() / ntk).max() > 0.2


def _reference_fc(x, z, depth, w_std, b_std):
    """The same recursion written plainly, differentiated by autograd (z=None: Gram)."""
    zz = x if z is None else z
    w2, b2, d = w_std**2, b_std**2, x.shape[1]
    s = w2 * (x @ zz.T) / d + b2
    qx, qz = w2 * (x * x).sum(1) / d + b2, w2 * (zz * zz).sum(1) / d + b2
    t = s
    for _ in range(depth):
        n = torch.sqrt(qx[:, None] * qz[None, :])
        c = (s / n).clamp(-1 + 1e-12, 1 - 1e-12)
        th = torch.arccos(c)
        e1 = n * (torch.sin(th) + (math.pi - th) * torch.cos(th)) / (2 * math.pi)
        e0 = (math.pi - th) / (2 * math.pi)
        s = w2 * e1 + b2
        t = s + w2 * e0 * t
        qx, qz = w2 * qx / 2 + b2, w2 * qz / 2 + b2
    return s, t


@pytest.mark.parametrize("gram", [False, True])
def test_fc_kernel_gradients_match_autograd_reference(gram):
    x, z = _inputs(6, 7, seed=12), _inputs(4, 7, seed=13)
    g_out = torch.randn(6, 6 if gram else 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    for pick in (0, 1):
        grads = []
        for fn in (
            lambda a, b: kip.fc_nngp_ntk(a, b, 3, W_STD, B_STD, want_ntk=pick == 1),
            lambda a, b: _reference_fc(a, b, 3, W_STD, B_STD),
        ):
            xa, za = x.clone().requires_grad_(True), z.clone().requires_grad_(True)
            out = fn(xa, None if gram else za)[pick]
            (out * g_out).sum().backward()
            grads.append((out.detach(), xa.grad, None if gram else za.grad))
        # on a Gram diagonal the reference's clamp (1 - 1e-12) shifts values by ~1e-6 relative
        tol = dict(rtol=1e-5, atol=1e-8) if gram else {}
        torch.testing.assert_close(grads[0][0], grads[1][0], **tol)
        torch.testing.assert_close(grads[0][1], grads[1][1], **tol)
        if not gram:
            torch.testing.assert_close(grads[0][2], grads[1][2])
    xa, za = x.clone().requires_grad_(True), z.clone().requires_grad_(True)
    assert torch.autograd.gradcheck(lambda a, b: kip.fc_nngp_ntk(a, None if gram else b, 2, W_STD, B_STD), (xa, za))


@pytest.mark.parametrize("name", ["fc", "nngp", "rbf"])
def test_kernels_symmetric_psd_and_gram_matches_explicit(name):
    x = _inputs(12, 20, seed=3)
    x[5] = x[4]  # an exact duplicate: finite values and gradients
    k = kip.make_kernel(name, depth=3, gamma=0.7)
    gram, explicit = k(x), k(x, x)
    torch.testing.assert_close(gram, gram.T)
    torch.testing.assert_close(gram, explicit, rtol=1e-6, atol=1e-9)
    ev = torch.linalg.eigvalsh(gram)
    assert ev.min() > -1e-10 * ev.max()
    xr = x.clone().requires_grad_(True)
    k(xr).sum().backward()
    assert torch.isfinite(xr.grad).all()


def test_rbf_against_cdist_and_batched_kernel_matrix():
    x, z = _inputs(7, 9, seed=1), _inputs(5, 9, seed=2)
    ref = torch.exp(-0.3 * torch.cdist(x, z) ** 2 / 9)
    torch.testing.assert_close(kip.rbf(x, z, 0.3), ref)
    torch.testing.assert_close(kip.kernel_matrix(kip.make_kernel("rbf", gamma=0.3), x, z, batch=2), ref)
    torch.testing.assert_close(torch.diagonal(kip.rbf(x, None, 0.3)), torch.ones(7, dtype=torch.float64))


def test_kernel_bad_input():
    x = _inputs()
    with pytest.raises(ValueError, match="activation"):
        kip.fc_nngp_ntk(x, x, activation="tanh")
    with pytest.raises(ValueError, match="unknown kernel"):
        kip.make_kernel("myrtle")
    with pytest.raises(ValueError, match="dimensions"):
        kip.rbf(x, torch.randn(2, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match="gamma"):
        kip.rbf(x, x, 0.0)


# -------------------------------------------------------------------------------------------------- KRR


def test_krr_predict_ridge_convention_and_interpolation():
    x, xt = _inputs(8, 6, seed=4), _inputs(5, 6, seed=5)
    k = kip.make_kernel("fc", depth=2)
    y = kip.centred_one_hot(torch.arange(8) % 3, 3, torch.float64)
    k_ss, k_ts = k(x), k(xt, x)
    reg = 0.1
    lam = reg * torch.trace(k_ss) / 8
    ref = k_ts @ torch.linalg.inv(k_ss + lam * torch.eye(8, dtype=torch.float64)) @ y
    torch.testing.assert_close(kip.krr_predict(k_ts, k_ss, y, reg), ref)
    # reg -> 0 interpolates the support labels
    torch.testing.assert_close(kip.krr_predict(k_ss, k_ss, y, 1e-12), y, atol=1e-6, rtol=0)
    assert (kip.krr_predict(k_ss, k_ss, y, 1e-2) - y).abs().max() > 1e-4
    with pytest.raises(ValueError, match="k_ts"):
        kip.krr_predict(k_ts.T, k_ss, y, reg)


def test_centred_one_hot():
    y = kip.centred_one_hot(torch.tensor([0, 2]), 4)
    torch.testing.assert_close(y, torch.tensor([[0.75, -0.25, -0.25, -0.25], [-0.25, -0.25, 0.75, -0.25]]))
    with pytest.raises(ValueError):
        kip.centred_one_hot(torch.tensor([4]), 4)


def test_kip_loss_value():
    x, xt = _inputs(6, 5, seed=6), _inputs(10, 5, seed=7)
    ys = kip.centred_one_hot(torch.arange(6) % 2, 2, torch.float64)
    yt = kip.centred_one_hot(torch.arange(10) % 2, 2, torch.float64)
    k = kip.make_kernel("ntk", depth=1)
    pred = kip.krr_predict(k(xt, x), k(x), ys, 1e-3)
    ref = 0.5 * ((yt - pred) ** 2).sum() / (10 * 2)
    assert kip.kip_loss(x, ys, xt, yt, k, 1e-3).item() == pytest.approx(ref.item(), rel=1e-10)


def test_label_solve_is_the_least_squares_optimum():
    xs, xt = _inputs(6, 8, seed=8), _inputs(40, 8, seed=9)
    yt = kip.centred_one_hot(torch.arange(40) % 3, 3, torch.float64)
    k = kip.make_kernel("fc", depth=2)
    ys = kip.label_solve(xs, xt, yt, k, reg=1e-3, batch=7)
    yr = ys.clone().requires_grad_(True)
    loss = kip.kip_loss(xs, yr, xt, yt, k, 1e-3)
    (grad,) = torch.autograd.grad(loss, yr)
    assert grad.abs().max() < 1e-9
    one_hot = kip.centred_one_hot(torch.arange(6) % 3, 3, torch.float64)
    assert loss.item() <= kip.kip_loss(xs, one_hot, xt, yt, k, 1e-3).item()
    for _ in range(3):  # and no nearby labels do better
        other = ys + 1e-2 * torch.randn(ys.shape, dtype=torch.float64)
        assert loss.item() < kip.kip_loss(xs, other, xt, yt, k, 1e-3).item()


def test_krr_accuracy_matches_manual_predictions():
    xs, xt = _inputs(9, 4, seed=10), _inputs(31, 4, seed=11)
    ys = kip.centred_one_hot(torch.arange(9) % 3, 3, torch.float64)
    y_test = torch.randint(0, 3, (31,), generator=torch.Generator().manual_seed(0))
    k = kip.make_kernel("rbf", gamma=2.0)
    manual = (kip.krr_predict(k(xt, xs), k(xs), ys, 1e-4).argmax(1) == y_test).double().mean().item()
    assert kip.krr_accuracy(xs, ys, xt, y_test, k, 1e-4, batch=4) == pytest.approx(manual)
    # support points classify themselves with a tiny ridge
    assert kip.krr_accuracy(xs, ys, xs, torch.arange(9) % 3, k, 1e-8) == 1.0


# ------------------------------------------------------------------------------------------- synthesis


def _toy(n_per_class=30, classes=3, size=8, noise_seed=0):
    """uint8 [N, 1, size, size] images: a fixed random template per class plus pixel noise."""
    templates = torch.rand(classes, 1, size, size, generator=torch.Generator().manual_seed(0)) * 180
    labels = torch.arange(classes).repeat_interleave(n_per_class)
    noise = torch.rand(len(labels), 1, size, size, generator=torch.Generator().manual_seed(100 + noise_seed)) * 120
    return (templates[labels] + noise).round().clamp(0, 255).to(torch.uint8), labels


MEAN, STD = (0.5,), (0.25,)


def _held_out_loss(ds, images, labels, kernel="fc", depth=2):
    k = kip.make_kernel(kernel, depth=depth)
    xt = kip.normalise(images, MEAN, STD)
    return kip.kip_loss(ds.images, kip.support_targets(ds), xt, kip.centred_one_hot(labels, 3), k, 1e-6).item()


@pytest.mark.parametrize("kernel,learn_labels", [("fc", False), ("rbf", True)])
def test_kip_decreases_held_out_loss(kernel, learn_labels):
    images, labels = _toy()
    held_images, held_labels = _toy(n_per_class=20, noise_seed=1)  # same classes, unseen images
    kw = dict(kernel=kernel, depth=2, target_batch=30, lr=0.02, seed=3, learn_labels=learn_labels)
    start = kip.kip_synthesize(images, labels, 2, 3, MEAN, STD, iterations=0, **kw)
    end = kip.kip_synthesize(images, labels, 2, 3, MEAN, STD, iterations=40, **kw)
    torch.testing.assert_close(torch.tensor(start.params["init_index"]), torch.tensor(end.params["init_index"]))
    assert _held_out_loss(end, held_images, held_labels, kernel) < 0.9 * _held_out_loss(
        start, held_images, held_labels, kernel
    )
    trace = end.params["loss_trace"]
    assert trace[-1][1] < trace[0][1]
    assert end.method == "kip" and end.ipc == 2 and end.images.shape == (6, 1, 8, 8)
    assert end.labels.tolist() == [0, 0, 1, 1, 2, 2]
    if learn_labels:
        assert "targets" in end.params and end.soft_labels is None
        y = kip.support_targets(end)
        assert y.shape == (6, 3) and not torch.allclose(y, kip.centred_one_hot(end.labels, 3))
    else:
        assert "targets" not in end.params
        torch.testing.assert_close(kip.support_targets(end), kip.centred_one_hot(end.labels, 3))


def test_kip_p_freezes_exactly_the_corrupted_coordinates():
    images, labels = _toy()
    p, d = 0.3, 64
    kw = dict(kernel="fc", depth=1, target_batch=30, lr=0.05, seed=1, p_corrupt=p)
    clean = kip.kip_synthesize(images, labels, 2, 3, MEAN, STD, iterations=0, **{**kw, "p_corrupt": 0.0})
    start = kip.kip_synthesize(images, labels, 2, 3, MEAN, STD, iterations=0, **kw)
    end = kip.kip_synthesize(images, labels, 2, 3, MEAN, STD, iterations=5, **kw)
    k = round(p * d)
    corrupted = (start.images != clean.images).flatten(1)
    assert corrupted.sum(1).tolist() == [k] * 6  # round(p d) per image, noise-filled
    unchanged = (end.images == start.images).flatten(1)
    assert torch.equal(unchanged, corrupted)  # frozen ones kept, every other one moved
    assert end.method == "kip_p" and end.params["frozen_per_image"] == k
    zero = kip.kip_synthesize(images, labels, 2, 3, MEAN, STD, iterations=0, **{**kw, "corruption": "zero"})
    assert (zero.images.flatten(1) == 0).sum(1).min() >= k


def test_corruption_mask_counts():
    m = kip.corruption_mask((5, 1, 4, 4), 0.26, torch.Generator().manual_seed(0))
    assert m.flatten(1).sum(1).tolist() == [round(0.26 * 16)] * 5
    assert not torch.equal(m[0], m[1])
    with pytest.raises(ValueError):
        kip.corruption_mask((5, 1, 4, 4), 1.0, torch.Generator())


def test_kip_deterministic_and_round_trips(tmp_path):
    images, labels = _toy()
    kw = dict(kernel="nngp", depth=1, target_batch=30, iterations=4, learn_labels=True, init="noise")
    a = kip.kip_synthesize(images, labels, 1, 3, MEAN, STD, seed=5, **kw)
    b = kip.kip_synthesize(images, labels, 1, 3, MEAN, STD, seed=5, **kw)
    c = kip.kip_synthesize(images, labels, 1, 3, MEAN, STD, seed=6, **kw)
    assert torch.equal(a.images, b.images) and a.params["targets"] == b.params["targets"]
    assert not torch.equal(a.images, c.images)
    back = DistilledSet.load(a.save(tmp_path / "kip.pt"))
    torch.testing.assert_close(kip.support_targets(back), kip.support_targets(a))
    assert back.params["kernel"] == "nngp" and "init_index" not in back.params


def test_ls_synthesize_beats_one_hot_on_its_targets():
    images, labels = _toy()
    ds = kip.ls_synthesize(images, labels, 2, 3, MEAN, STD, kernel="fc", depth=1, reg=1e-4, target_size=60)
    assert ds.method == "kip_ls" and torch.equal(ds.images, kip.normalise(images[ds.source_index], MEAN, STD))
    g = torch.Generator().manual_seed(0)
    kip.class_balanced_index(labels, 2, 3, g)  # replay the support draw
    t_idx = kip.class_balanced_index(labels, 20, 3, g)
    xt, yt = kip.normalise(images[t_idx], MEAN, STD), kip.centred_one_hot(labels[t_idx], 3)
    k = kip.make_kernel("fc", depth=1)
    ls = kip.kip_loss(ds.images, kip.support_targets(ds), xt, yt, k, 1e-4).item()
    oh = kip.kip_loss(ds.images, kip.centred_one_hot(ds.labels, 3), xt, yt, k, 1e-4).item()
    assert ls < oh


def test_ls_solves_on_its_device(monkeypatch):
    # the meta device (shapes, no data) stands in for a GPU: the solve must get every input there
    images, labels = _toy()
    seen = []

    def spy(x_s, x_t, y_t, *a):
        seen.append({t.device.type for t in (x_s, x_t, y_t)})
        return torch.zeros(x_s.shape[0], y_t.shape[1], dtype=y_t.dtype, device=y_t.device)

    monkeypatch.setattr(kip, "label_solve", spy)
    monkeypatch.setattr(torch.Tensor, "cpu", lambda t: torch.zeros(t.shape, dtype=t.dtype) if t.is_meta else t)
    ds = kip.ls_synthesize(
        images, labels, 2, 3, MEAN, STD, kernel="fc", depth=1, reg=1e-4, target_size=60, device="meta"
    )
    assert seen == [{"meta"}] and ds.images.device.type == "cpu" and len(ds.labels) == 6


def test_synthesize_bad_input():
    images, labels = _toy()
    with pytest.raises(ValueError, match="ipc"):
        kip.kip_synthesize(images, labels, 0, 3, MEAN, STD)
    with pytest.raises(ValueError, match="uint8"):
        kip.kip_synthesize(images.float(), labels, 1, 3, MEAN, STD)
    with pytest.raises(ValueError, match="unknown kernel"):
        kip.kip_synthesize(images, labels, 1, 3, MEAN, STD, kernel="myrtle")
    with pytest.raises(ValueError, match="p_corrupt"):
        kip.kip_synthesize(images, labels, 1, 3, MEAN, STD, p_corrupt=1.0)
    with pytest.raises(ValueError, match="fewer than"):
        kip.kip_synthesize(images, labels, 31, 3, MEAN, STD)
    with pytest.raises(ValueError, match="labels"):
        kip.kip_synthesize(images, labels[:-1], 1, 3, MEAN, STD)
    with pytest.raises(ValueError, match="init"):
        kip.kip_synthesize(images, labels, 1, 3, MEAN, STD, init="kmeans")


def test_float64_option_agrees_with_float32():
    images, labels = _toy()
    kw = dict(kernel="fc", depth=2, target_batch=30, iterations=5, lr=0.01, seed=2)
    a = kip.kip_synthesize(images, labels, 2, 3, MEAN, STD, **kw)
    b = kip.kip_synthesize(images, labels, 2, 3, MEAN, STD, dtype=torch.float64, **kw)
    assert a.params["dtype"] == "float32" and b.params["dtype"] == "float64" and b.images.dtype == torch.float32
    moved = b.images - kip.kip_synthesize(images, labels, 2, 3, MEAN, STD, **{**kw, "iterations": 0}).images
    assert moved.abs().max() > 0.01
    torch.testing.assert_close(a.images, b.images, atol=2e-3, rtol=0)


def test_learned_labels_become_soft_labels_only_when_probabilities():
    y = kip.centred_one_hot(torch.tensor([0, 1]), 3)
    ok = y + torch.tensor([[-0.2, 0.1, 0.1], [0.0, -0.3, 0.3]])  # rows of y + 1/3 stay probabilities
    p = kip._as_probabilities(ok, 3)
    torch.testing.assert_close(p, ok + 1 / 3)
    assert kip._as_probabilities(y * 2, 3) is None  # negative entries
    assert kip._as_probabilities(y + 0.1, 3) is None  # rows no longer sum to 1


def test_normalise_matches_the_shared_format():
    images, labels = _toy()
    ref = sets.from_real(images, labels, torch.arange(len(labels)), 3, MEAN, STD, "random").images
    torch.testing.assert_close(kip.normalise(images, MEAN, STD), ref, rtol=0, atol=1e-6)
