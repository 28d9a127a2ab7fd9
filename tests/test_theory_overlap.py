import numpy as np
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
