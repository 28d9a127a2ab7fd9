import numpy as np
import pytest
import torch

from compendium.theory import overlap as O


def test_exact_overlap_matches_monte_carlo_and_grows_with_alpha():
    alphas = [0.0, 0.25, 1.0, 2.0]
    for a in alphas:
        mc, se = O.mc_overlap(a, n=100000, seed=1)
        assert abs(mc - float(O.exact_overlap(a))) < 4 * se + 1e-4
    ex = O.exact_overlap(np.array(alphas))
    assert np.all(np.diff(ex) > 0)
    # the paper's approximate formula moves the other way
    assert np.all(np.diff(O.paper_overlap(np.array(alphas))) < 0)


def test_identical_classes_overlap_fully():
    assert abs(float(O.exact_overlap(0.0, delta_mu=0.0)) - 1.0) < 1e-12


def test_knn_mixing_separated_vs_mixed():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 100)
    far = np.concatenate([rng.normal(0, 1, (100, 2)), rng.normal(20, 1, (100, 2))])
    same = rng.normal(0, 1, (200, 2))
    assert O.knn_mixing_rate(far, y, 5) == 0.0
    assert 0.35 < O.knn_mixing_rate(same, y, 5) < 0.65
    # a duplicated point is not its own same-class neighbour when grouped
    dup = np.concatenate([same, same])
    yy, grp = np.concatenate([y, y]), np.concatenate([np.arange(200), np.arange(200)])
    assert O.knn_mixing_rate(dup, yy, 1) < 0.05 < O.knn_mixing_rate(dup, yy, 1, grp)
    m = O.overlap_measures(far, y)
    assert m["silhouette"] > 0.8 and m["intra_class_spread"] > 0


def test_augmented_views_shapes():
    imgs = torch.randint(0, 256, (5, 1, 8, 8), dtype=torch.uint8)
    v = O.augmented_views(imgs, 0.2, 3, 0)
    assert v.shape == (15, 64)
    clean = O.augmented_views(imgs, None, 2, 0)
    assert torch.allclose(clean[0], clean[1]) and torch.allclose(clean[0], imgs[0].float().flatten() / 255)


def test_random_prior_is_seeded():
    imgs = torch.randint(0, 256, (4, 1, 28, 28), dtype=torch.uint8)
    a, b = O.prior_targets(O.random_prior(3), imgs), O.prior_targets(O.random_prior(3), imgs)
    assert torch.equal(a, b) and a.shape == (4, 32 * 3 * 3)
    assert not torch.equal(a, O.prior_targets(O.random_prior(4), imgs))
    assert torch.allclose(a.norm(dim=1), torch.ones(4, dtype=a.dtype))


def test_view_target_conflicts_on_duplicated_pictures():
    g = torch.Generator().manual_seed(0)
    dark = torch.randint(0, 60, (1, 1, 28, 28), generator=g)
    bright = torch.randint(190, 256, (1, 1, 28, 28), generator=g)
    imgs = torch.cat([dark, bright, dark, bright]).to(torch.uint8)  # two pictures, each labelled once 0 and once 1
    labels = np.array([0, 0, 1, 1])
    prior = O.random_prior(0)
    targets = O.prior_targets(prior, imgs)
    clean = O.view_target_conflicts(imgs, labels, targets, None, 0, prior)
    assert clean["confusable share"] == 0.0 and clean["example"] == (-1, -1, -1)  # a sibling is identical
    found = 0
    for seed in range(8):
        crop = O.view_target_conflicts(imgs, labels, targets, 0.08, seed, prior)
        assert 0 <= crop["confusable with another class"] <= crop["confusable share"] <= 1
        if crop["confusable pairs"]:
            found += 1
            # a look-alike is a crop of the same picture: the same prior target under another label
            assert crop["target cos distance (those pairs)"] == pytest.approx(0.0, abs=1e-6)
            a, sib, other = crop["example"]
            assert sib == a ^ 1 and labels[a // 2] != labels[other // 2] and other // 2 == (a // 2 + 2) % 4
    assert found > 0
