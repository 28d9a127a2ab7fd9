import math

import numpy as np
import pytest

from compendium.theory import information as I


def test_eq24_crossing_points_solve_the_equation():
    c = I.eq24_crossings()
    assert abs(float(I.nmi_eq24(c["equals_one"])) - 1) < 1e-9
    assert c["equals_one"] == pytest.approx(1 / math.sqrt(2 * math.pi * math.e), rel=1e-7)
    assert c["singular"] == pytest.approx(1 / (4 * math.sqrt(2 * math.pi * math.e)), rel=1e-6)
    assert float(I.nmi_eq24(0.1)) > 1 and float(I.nmi_eq24(0.05)) < 0


@pytest.mark.parametrize("sigma", [0.25, 0.5, 1.0])
def test_mutual_information_quadrature_vs_monte_carlo(sigma):
    mi = I.mutual_information(sigma)
    mc, se = I.mutual_information_mc(sigma, 200000, seed=3)
    assert 0 <= mi <= math.log(2) and abs(mi - mc) < 4 * se


def test_information_decreases_with_sigma_and_binned_nmi_in_unit_interval():
    s = [0.1, 0.25, 0.5, 1.0, 2.0]
    mi = [I.mutual_information(v) for v in s]
    assert all(a > b for a, b in zip(mi, mi[1:]))
    for v in s:
        for k in (10, 200):
            assert 0 <= I.binned_nmi(v, k) <= 1


def test_random_maps_nmi_at_most_one_equal_iff_injective():
    rng = np.random.default_rng(0)
    seen_injective = False
    for _ in range(300):
        n = int(rng.integers(2, 8))
        v, inj = I.random_map_nmi(n, int(rng.integers(2, n + 2)), rng)
        assert v <= 1 + 1e-12
        assert (abs(v - 1) < 1e-12) == inj
        seen_injective |= inj
    assert seen_injective


def test_frobenius_closed_form_vs_monte_carlo():
    for sigma, mu, d, m in ((0.5, 1.0, 2, 10), (1.0, 1.0, 2, 10), (2.0, 0.5, 5, 20)):
        mc, se = I.frobenius_mean_mc(sigma, mu, d, m, 40000, seed=1)
        assert abs(mc - I.frobenius_mean_closed(sigma, mu, d, m)) < 4 * se


def test_tv_bounds_the_disagreement_gap_and_ntk():
    tv = I.tv_distance(0.1, 0.5)
    assert 0 < tv < 1
    for t in np.linspace(0.5, 2.5, 9):
        gap = abs(I.disagreement(t, 1.5, 0.5) - I.disagreement(t, 1.5, 0.1))
        assert gap <= tv + 1e-9
    r = I.ntk_check(20, 0)
    assert r["relative_error"] < 1e-6 and r["hitting_time"] <= r["bound"]
