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


# ----------------------------------------------------------------------------- camera-ready Lemma 1


def test_h_divergence_over_all_subsets_is_twice_tv_so_printed_lemma1_fails():
    rng = np.random.default_rng(4)
    p, q = rng.dirichlet(np.ones(6), 50), rng.dirichlet(np.ones(6), 50)
    tv = I.tv_discrete(p, q)
    d_all = I.h_divergence(p, q, I.all_subsets(6))
    d_thr = I.h_divergence(p, q, I.threshold_sets(6))
    assert np.allclose(d_all, 2 * tv, atol=1e-12)
    assert np.all(d_thr <= d_all + 1e-12) and np.all(d_thr / 2 <= tv + 1e-12)
    r = I.lemma1_discrete(200, 5, seed=1)
    assert r["printed_holds_all"] == 0 and r["half_holds"] == 200


def test_gaussian_tv_and_threshold_divergence_closed_forms():
    from scipy import integrate
    from scipy.stats import norm

    for m1, s1, m2, s2 in ((0.0, 1.0, 1.0, 1.0), (0.0, 1.0, 0.5, 2.0), (-1.0, 0.5, 1.0, 0.7), (0.3, 1.0, 0.3, 1.5)):
        tv, dh = I.gaussian_tv_threshold_hdiv(m1, s1, m2, s2)
        quad = (
            0.5
            * integrate.quad(
                lambda x: abs(norm.pdf(x, m1, s1) - norm.pdf(x, m2, s2)),
                -30,
                30,
                limit=400,
                points=list(I.gaussian_crossings(m1, s1, m2, s2)),
            )[0]
        )
        grid = np.linspace(-20, 20, 400001)
        brute = 2 * np.abs(norm.cdf(grid, m1, s1) - norm.cdf(grid, m2, s2)).max()
        assert tv == pytest.approx(quad, abs=1e-8) and dh == pytest.approx(brute, abs=1e-6)
    # equal variances: the best set is a half-line, so thresholds reach d_H = 2 D_TV
    tv, dh = I.gaussian_tv_threshold_hdiv(0.0, 1.0, 1.0, 1.0)
    assert tv == pytest.approx(2 * norm.cdf(0.5) - 1) and dh == pytest.approx(2 * tv)
    # equal means: the best set is an interval, thresholds only reach half of it: d_H = D_TV
    tv, dh = I.gaussian_tv_threshold_hdiv(0.0, 1.0, 0.0, 2.0)
    assert dh == pytest.approx(tv, rel=1e-9)


# ----------------------------------------------------------------------------- camera-ready Lemma 4


def test_d_rep01_by_hand():
    w = np.full(4, 0.25)
    s = np.array([0.0, 1.0, 2.0, 3.0])[:, None]
    assert I.d_rep01(s, 2 * s + 1, w) == 0.0  # one affine map fits every point
    assert I.d_rep01(s, np.array([1.0, 3.0, 5.0, 0.0])[:, None], w) == pytest.approx(0.25)  # 3 collinear points
    assert I.d_rep01(s, np.array([0.0, 1.0, 0.0, 1.0])[:, None], w) == pytest.approx(0.5)  # at most 2 points fit
    # a constant representation cannot separate two points with different targets
    assert I.d_rep01(np.zeros((2, 1)), np.array([[0.0], [1.0]]), np.array([0.7, 0.3])) == pytest.approx(0.3)


def test_lemma4_holds_for_the_01_loss_and_the_search_finds_the_squared_error_violation():
    r = I.lemma4_random(40, 6, seed=2)
    assert r["violations"] == 0 and r["max_gap"] <= 1e-12 and r["nontrivial_d"] > 0
    assert I.lemma4_search(25, 2, 6, seed=3, loss="01")["best_gap"] <= 1e-12
    assert I.lemma4_search(25, 2, 6, seed=3, loss="mse")["best_gap"] > 0.1
    cx = I.mse_triangle_counterexample()
    assert cx["S->T"] == pytest.approx(1.0) and cx["S->U"] == pytest.approx(0.25) and cx["U->T"] == pytest.approx(0.5)


# ----------------------------------------------------------------------------- v1 Theorem 5


def test_gaussian_mi_and_the_eq41_map():
    rho = 0.6
    cov = np.array([[1.0, rho], [rho, 1.0]])
    assert I.gaussian_mi(cov, 1) == pytest.approx(-0.5 * math.log(1 - rho**2))
    lmap = I.eq41_map(np.diag([1.0, 9.0, 4.0]), 2)  # keeps the two largest-variance columns, standardised
    assert np.allclose(np.abs(lmap), [[0, 1 / 3, 0], [0, 0, 1 / 2]])


def test_theorem5_mi_is_ordered_but_nmi_is_not():
    ex = I.theorem5_discrete_example()
    assert ex["nmi_full"] == pytest.approx(2 / 3) and ex["nmi_reduced"] == pytest.approx(1.0)
    assert ex["mi_full"] == pytest.approx(ex["mi_reduced"]) == pytest.approx(math.log(2))
    r = I.theorem5_gaussian(30, 5, 3, 3, seed=0)
    assert r["mi_ordered"] == r["cases"] and r["nmi_ordered"] < r["nmi_cases"]


def test_notebook_tables_have_their_columns():
    rows = I.frobenius_rows(500, 0)
    assert len(rows) == 8 and all(
        abs(r["diff (s.e.)"] - (r["closed form"] - r["Monte Carlo"]) / r["MC s.e."]) < 1e-12 for r in rows
    )
    assert all(r["bound holds"] for r in I.tv_term_rows([0.2, 1.0]))
    t3 = I.theorem3_maps(30, 0)
    assert t3["all ≤ 1"] and t3["= 1 iff injective"]
    checks = I.appendix_d_checks(0, pairs=100, triples=10, models=10)
    assert not checks["lemma1_printed_holds"] and len(checks["lemma1"]) == 3
