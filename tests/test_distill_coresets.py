import pytest
import torch

from compendium.distill import coresets as cs
from compendium.distill.sets import DistilledSet


def covering_radius(x: torch.Tensor, centres: torch.Tensor) -> float:
    """max_i min_j ||x_i - x_centres[j]||: the k-center objective (Sener & Savarese 2018, eq. 3)."""
    return float(torch.cdist(x.double(), x[centres].double()).min(1).values.max())


MEAN, STD = (0.3,), (0.35,)


def _data(n_per_class=(12, 15, 10), size=8, seed=0):
    """uint8 images whose brightness depends on the class (learnable), labels shuffled."""
    g = torch.Generator().manual_seed(seed)
    labels = torch.cat([torch.full((n,), c) for c, n in enumerate(n_per_class)])
    labels = labels[torch.randperm(len(labels), generator=g)]
    base = (labels.float() * 80 + 20).view(-1, 1, 1, 1)
    noise = torch.randint(-20, 21, (len(labels), 1, size, size), generator=g).float()
    return (base + noise).clamp(0, 255).to(torch.uint8), labels


def _features(labels, d=6, seed=1):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(len(labels), d, generator=g) + labels[:, None].float()


def _running_mean_error(x, order):
    x = x.double()
    k = torch.arange(1, len(order) + 1, dtype=torch.float64)[:, None]
    return (torch.cumsum(x[order], 0) / k - x.mean(0)).norm(dim=1)


# ---------------------------------------------------------------------------------------------- herding


def test_herding_1d_toy_order_by_hand():
    # mean 3.2. k=1: 3 (closest). k=2: want 2*3.2-3 = 3.4 -> 2. k=3: 9.6-5 = 4.6 -> 1 (|3.6| < |5.4|).
    # k=4: 12.8-6 = 6.8 -> 10 (|3.2| < |6.8|), not 0 as "closest to the mean first" would give. k=5: 0.
    x = torch.tensor([[0.0], [1.0], [2.0], [3.0], [10.0]])
    assert cs.herding_order(x, 5).tolist() == [3, 2, 1, 4, 0]
    assert cs.herding_order(x, 2).tolist() == [3, 2]


def test_herding_error_bound_and_beats_random():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(300, 8, generator=g)
    order = cs.herding_order(x, 300)
    assert sorted(order.tolist()) == list(range(300))  # no repeats: the whole pool at k = n
    err = _running_mean_error(x, order)
    k = torch.arange(1, 301, dtype=torch.float64)
    radius = (x.double() - x.double().mean(0)).norm(dim=1).max()
    # ||k mu - S_k||^2 grows by at most R^2 a step (a remaining sample with w.(x - mu) >= 0 always exists)
    assert (err <= radius / k.sqrt() + 1e-9).all()
    assert err[-1] < 1e-9  # the full pool's mean is the mean
    assert err[9] < err[0] / 4 and err[49] < err[9]  # non-increasing on a coarse scale
    rand = torch.stack(
        [_running_mean_error(x, torch.randperm(300, generator=torch.Generator().manual_seed(s))) for s in range(20)]
    ).mean(0)
    assert (err[:50] < rand[:50]).all()


def test_herding_indices_per_class_and_normalize():
    imgs, labels = _data()
    f = _features(labels)
    idx = cs.herding_indices(f, labels, 4, 3)
    for c in range(3):
        members = (labels == c).nonzero().flatten()
        assert idx[4 * c : 4 * c + 4].tolist() == members[cs.herding_order(f[members], 4)].tolist()
    # normalize=True is herding on the unit-norm features (iCaRL)
    fn = f / f.norm(dim=1, keepdim=True)
    assert torch.equal(cs.herding_indices(f, labels, 4, 3, normalize=True), cs.herding_indices(fn, labels, 4, 3))


def test_herding_feature_fn_module_and_callable_match_given_features():
    imgs, labels = _data()
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 5))
    from compendium.core.probe import extract_features

    f = extract_features(net, imgs, MEAN, STD)
    a = cs.herding(f, labels, 3, imgs, 3, MEAN, STD)
    b = cs.herding(None, labels, 3, imgs, 3, MEAN, STD, feature_fn=net)
    c = cs.k_center(None, labels, 3, imgs, 3, MEAN, STD, feature_fn=lambda u8: extract_features(net, u8, MEAN, STD))
    assert torch.equal(a.source_index, b.source_index) and b.params["features"] == "feature_fn"
    assert torch.equal(c.source_index, cs.k_center_indices(f, labels, 3, 3))


# ---------------------------------------------------------------------------------------------- k-center


def test_k_center_matches_brute_force_farthest_point():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(60, 5, generator=g)
    order = cs.k_center_order(x, 12).tolist()
    xd = x.double()
    assert order[0] == int((xd - xd.mean(0)).norm(dim=1).argmin())  # start rule
    for t in range(1, 12):
        dmin = torch.cdist(xd, xd[order[:t]]).min(1).values
        assert order[t] == int(dmin.argmax()), t
    assert len(set(order)) == 12


def test_k_center_radius_not_worse_than_random():
    g = torch.Generator().manual_seed(4)
    x = torch.randn(200, 2, generator=g)
    for k in (5, 10, 20):
        r = covering_radius(x, cs.k_center_order(x, k))
        rand = [
            covering_radius(x, torch.randperm(200, generator=torch.Generator().manual_seed(s))[:k]) for s in range(20)
        ]
        assert r <= min(rand), (k, r, min(rand))
    # k = n covers everything; duplicates of a point are never chosen twice
    dup = torch.cat([x[:5], x[:5]])
    o = cs.k_center_order(dup, 10)
    assert sorted(o.tolist()) == list(range(10)) and covering_radius(dup, o) == 0.0


# ---------------------------------------------------------------------------------------------- forgetting


def test_count_forgetting_events_by_hand():
    T, F = True, False
    h = torch.tensor(
        [
            # ex0 learned, never forgotten; ex1 forgotten twice; ex2 never learned; ex3 forgotten once (at the end);
            # ex4 learned late (F->T is learning, not forgetting)
            [T, T, F, T, F],
            [T, F, F, T, F],
            [T, T, F, T, F],
            [T, F, F, T, T],
            [T, T, F, F, T],
        ]
    )
    assert cs.count_forgetting_events(h).tolist() == [0, 2, 5, 1, 0]
    # a single presentation: no transitions; never-learned still ranks highest
    assert cs.count_forgetting_events(torch.tensor([[True, False]])).tolist() == [0, 1]
    with pytest.raises(ValueError, match="bool"):
        cs.count_forgetting_events(torch.zeros(3, 2))


def test_top_score_indices_takes_maxima_with_seeded_ties():
    labels = torch.tensor([0] * 6 + [1] * 6)
    scores = torch.tensor([1, 5, 5, 5, 0, 2, 3, 3, 3, 3, 9, 0])
    picks = {tuple(cs.top_score_indices(scores, labels, 2, 2, seed=s).tolist()) for s in range(12)}
    for p in picks:
        assert set(p[:2]) <= {1, 2, 3} and len(set(p[:2])) == 2  # two of the three 5s
        assert p[2] == 10 and p[3] in {6, 7, 8, 9}  # the 9 first, then one of the 3s
    assert len(picks) > 1  # ties really are broken by the seed
    assert torch.equal(
        cs.top_score_indices(scores, labels, 2, 2, seed=5), cs.top_score_indices(scores, labels, 2, 2, seed=5)
    )


def test_forgetting_history_trains_seeded_and_selection_uses_it():
    imgs, labels = _data((40, 40, 40))
    cfg = cs.ForgettingConfig(epochs=4, width=4, norm="batch", batch_size=16, lr=0.05)
    h = cs.forgetting_history(imgs, labels, 3, MEAN, STD, cfg, seed=0)
    assert h.shape == (4, 120) and h.dtype == torch.bool
    assert torch.equal(h, cs.forgetting_history(imgs, labels, 3, MEAN, STD, cfg, seed=0))
    assert h[-1].float().mean() > h[0].float().mean() and h[-1].float().mean() > 0.8  # it learns
    s = cs.forgetting(imgs, labels, 2, 3, MEAN, STD, seed=0, cfg=cfg)
    counts = cs.count_forgetting_events(h)
    for c in range(3):
        chosen = s.source_index[s.labels == c]
        assert counts[chosen].min() >= counts[labels == c].topk(2).values.min()
    # a given history skips training: a never-learned example is picked first in its class
    h2 = torch.ones(3, 120, dtype=torch.bool)
    h2[:, 7] = False
    s2 = cs.forgetting(imgs, labels, 1, 3, MEAN, STD, history=h2)
    assert 7 in s2.source_index.tolist() and s2.params["never_learned"] == 1
    with pytest.raises(ValueError, match="at least 2 epochs"):
        cs.forgetting_history(imgs, labels, 3, MEAN, STD, cs.ForgettingConfig(epochs=1))


# ---------------------------------------------------------------------------------------------- k-means


def test_kmeans_ipc1_is_class_mean_and_set_holds_centroids():
    imgs, labels = _data()
    s = cs.kmeans_centroids(imgs, labels, 1, 3, MEAN, STD, seed=2)
    a = cs.class_average(imgs, labels, 1, 3, MEAN, STD)
    for c in range(3):
        mean_c = imgs[labels == c].float().div(255).mean(0)
        assert torch.allclose(s.pixels()[c], mean_c.clamp(0, 1), atol=1e-5)
        assert torch.allclose(a.pixels()[c], mean_c, atol=1e-5)
    assert s.labels.tolist() == [0, 1, 2] and s.source_index is None and s.method == "kmeans"


def test_kmeans_recovers_blobs_and_lowers_inertia():
    g = torch.Generator().manual_seed(5)
    centres = torch.randn(4, 10, generator=g) * 6
    x = centres.repeat_interleave(50, 0) + torch.randn(200, 10, generator=g)
    r = cs.kmeans(x, 4, torch.Generator().manual_seed(0))
    truth = torch.arange(4).repeat_interleave(50)
    # same partition as the truth (up to relabelling)
    assert all(len(set(r.assign[truth == c].tolist())) == 1 for c in range(4))
    assert len(set(r.assign.tolist())) == 4
    assert abs(r.inertia - float((x - r.centroids[r.assign]).pow(2).sum())) < 1e-2 * r.inertia
    # Lloyd never increases the inertia: 0, 1, 2, ... updates from the same seeds
    inert = [cs.kmeans(x, 4, torch.Generator().manual_seed(1), max_iter=m).inertia for m in range(5)]
    assert all(b <= a * (1 + 1e-6) for a, b in zip(inert, inert[1:]))
    # tol=0 runs to a fixed point: centroids are their clusters' means, points sit at their nearest centroid
    x2 = torch.randn(150, 3, generator=g)
    f = cs.kmeans(x2, 6, torch.Generator().manual_seed(2), max_iter=500, tol=0.0)
    assert f.iterations < 500
    assert torch.equal(f.assign, torch.cdist(x2, f.centroids).argmin(1))
    for j in range(6):
        assert torch.allclose(f.centroids[j], x2[f.assign == j].mean(0), atol=1e-5)
    # better than k random points as centroids, on average over seeds
    rand = []
    for s in range(10):
        c = x[torch.randperm(200, generator=torch.Generator().manual_seed(s))[:4]]
        rand.append(float(torch.cdist(x, c).min(1).values.pow(2).sum()))
    assert r.inertia < sum(rand) / len(rand) and r.inertia <= min(rand)


def test_kmeans_pp_init_distinct_and_handles_duplicates():
    x = torch.tensor([[0.0, 0.0]] * 5 + [[1.0, 1.0]])
    idx = cs.kmeans_pp_init(x, 4, torch.Generator().manual_seed(0))
    assert len(set(idx.tolist())) == 4 and 5 in idx.tolist()  # the lone point has all the D^2 mass


def test_kmeans_nearest_and_class_average_splits():
    imgs, labels = _data()
    s = cs.kmeans_nearest(imgs, labels, 3, 3, MEAN, STD, seed=0)
    fits = cs._kmeans_per_class(imgs, labels, 3, 3, 0, 100, 1e-4)
    for c, (members, r) in enumerate(fits):
        x = imgs[members].flatten(1).float() / 255
        chosen = s.source_index[s.labels == c]
        assert torch.equal(chosen, members[cs.nearest_distinct(x, r.centroids)])
        assert int(torch.cdist(r.centroids[:1].double(), x.double()).argmin()) == int((members == chosen[0]).nonzero())
    a = cs.class_average(imgs, labels, 4, 3, MEAN, STD, seed=1)
    for c, n in enumerate((12, 15, 10)):
        sizes = torch.tensor([len(p) for p in torch.tensor_split(torch.arange(n), 4)], dtype=torch.float32)
        weighted = (a.pixels()[a.labels == c] * sizes.view(-1, 1, 1, 1)).sum(0) / n
        assert torch.allclose(weighted, imgs[labels == c].float().div(255).mean(0), atol=1e-5)
    assert not torch.equal(a.images, cs.class_average(imgs, labels, 4, 3, MEAN, STD, seed=2).images)


# ---------------------------------------------------------------------------------------------- every method


@pytest.mark.parametrize("name", sorted(cs.METHODS))
@pytest.mark.parametrize("ipc", [1, 3])
def test_every_selector_ipc_per_class_unique_deterministic(name, ipc):
    imgs, labels = _data()
    kw = {"features": _features(labels)} if name in cs.FEATURE_METHODS else {}
    if name == "forgetting":
        kw["cfg"] = cs.ForgettingConfig(epochs=2, width=4, batch_size=16)
    s = cs.select(name, imgs, labels, ipc, 3, MEAN, STD, seed=7, **kw)
    assert isinstance(s, DistilledSet) and s.per_class.tolist() == [ipc] * 3 and len(s) == 3 * ipc
    assert s.images.shape[1:] == imgs.shape[1:] and s.seed == 7 and s.synthesis_seconds > 0
    if s.source_index is not None:
        assert len(set(s.source_index.tolist())) == len(s)
        assert torch.equal(labels[s.source_index], s.labels)
        assert torch.allclose(s.pixels(), imgs[s.source_index].float() / 255, atol=1e-6)
    else:
        assert name in ("kmeans", "average")
    again = cs.select(name, imgs, labels, ipc, 3, MEAN, STD, seed=7, **kw)
    assert torch.equal(s.images, again.images) and torch.equal(s.labels, again.labels)


def test_random_depends_on_seed():
    imgs, labels = _data()
    picks = {tuple(cs.random_real(imgs, labels, 2, 3, MEAN, STD, seed=s).source_index.tolist()) for s in range(5)}
    assert len(picks) > 1


def test_errors():
    imgs, labels = _data()
    f = _features(labels)
    with pytest.raises(ValueError, match="unknown coreset method 'bogus'"):
        cs.select("bogus", imgs, labels, 1, 3, MEAN, STD)
    with pytest.raises(ValueError, match="ipc must be an integer >= 1"):
        cs.select("random", imgs, labels, 0, 3, MEAN, STD)
    with pytest.raises(ValueError, match="larger than class 2's size 10"):
        cs.select("kmeans", imgs, labels, 11, 3, MEAN, STD)
    with pytest.raises(ValueError, match="needs a feature space"):
        cs.select("herding", imgs, labels, 1, 3, MEAN, STD)
    with pytest.raises(ValueError, match="does not use features"):
        cs.select("random", imgs, labels, 1, 3, MEAN, STD, features=f)
    with pytest.raises(ValueError, match="features must be a tensor"):
        cs.select("k-center", imgs, labels, 1, 3, MEAN, STD, features=f[:-1])
    with pytest.raises(ValueError, match="labels must be a vector"):
        cs.random_real(imgs, labels[:-1], 1, 3, MEAN, STD)
    with pytest.raises(ValueError, match="labels outside"):
        cs.random_real(imgs, labels, 1, 2, MEAN, STD)
    with pytest.raises(ValueError, match="uint8"):
        cs.class_average(imgs.float(), labels, 1, 3, MEAN, STD)
    with pytest.raises(ValueError, match="either features or feature_fn"):
        cs.herding(f, labels, 1, imgs, 3, MEAN, STD, feature_fn=lambda u: f)
    with pytest.raises(ValueError, match="non-finite"):
        cs.herding_indices(torch.full_like(f, float("nan")), labels, 1, 3)
    # an absent class cannot give ipc images
    with pytest.raises(ValueError, match="class 3's size 0"):
        cs.random_indices(labels, 1, 4)
