import doctest

import pandas as pd
import pytest
import yaml

from compendium.core import paths, plateau
from compendium.pipeline import report
from compendium.verdicts import claims, ledger, rule
from compendium.verdicts.claims import Claim


def _row(**kw):
    base = dict(
        paper="ReLA", version="camera-ready", location="Thm 1", claim="c", check="mc", verdict="holds", ours="0.1"
    )
    base.update(kw)
    return Claim(**base)


def test_verdicts_are_computed_and_validated():
    assert claims.verdict(True) == ("holds", "")
    assert claims.verdict(False) == ("fails", "")
    assert claims.verdict(False, True, "validated on G") == ("holds only under a condition", "validated on G")
    with pytest.raises(ValueError):
        claims.verdict(False, True)
    with pytest.raises(ValueError, match="verdict"):
        _row(verdict="mostly")
    with pytest.raises(ValueError, match="condition"):
        _row(verdict="holds only under a condition")
    with pytest.raises(ValueError, match="'ours' is empty"):
        _row(ours=" ")


def test_reporter_rows_roundtrip(tmp_path):
    report.Reporter("theory_a", root=tmp_path).claims([_row(location="Thm 2"), _row(verdict="fails")])
    report.Reporter("theory_b", root=tmp_path).claims([_row(paper="DWA", ours="x, y; z")])
    df = ledger.read_stage_rows(sorted((tmp_path / paths.CLAIMS).glob("*.csv")))
    assert list(df.columns) == list(claims.STAGE_COLUMNS)
    assert df["stage"].tolist() == ["theory_a", "theory_a", "theory_b"]
    assert df.loc[2, "ours"] == "x, y; z"
    (tmp_path / paths.CLAIMS / "bad.csv").write_text(pd.DataFrame([{"paper": "x"}]).to_csv(index=False))
    with pytest.raises(ValueError, match="lacks columns"):
        ledger.read_stage_rows(sorted((tmp_path / paths.CLAIMS).glob("*.csv")))


def test_every_claims_file_feeds_the_ledger_stage():
    dvc = yaml.safe_load(paths.DVC_YAML.read_text())
    deps = set(dvc["stages"]["claims_ledger"]["deps"])
    for name, stage in dvc["stages"].items():
        for out in stage.get("outs", []):
            path = out if isinstance(out, str) else next(iter(out))
            if path.startswith("reports/claims/"):
                assert path in deps, f"{name} writes {path}, which claims_ledger does not depend on"


def test_paper_names_are_canonical():
    assert _row(paper="DC (Zhao et al.)").paper == "DC"
    assert _row(paper="DSA (Zhao & Bilen)").paper == _row(paper="DSA").paper == "DSA"
    assert _row(paper="SLDD/TDD (Sucholutsky & Schonlau)").paper == "SLDD/TDD"
    with pytest.raises(ValueError, match="unknown paper"):
        _row(paper="Dataset Distillation, the sequel")


def _eff(deltas, label="A - B"):
    return claims.Effect(label, deltas)


def test_effect_interval_and_mde_match_a_paired_t_test():
    from scipy import stats

    a = {0: 0.70, 1: 0.72, 2: 0.69, 7: 0.5}
    b = {0: 0.60, 1: 0.65, 2: 0.61}
    e = claims.Effect.paired("A - B", a, b)
    assert e.seeds == (0, 1, 2)  # seed 7 ran on one arm only: left out, never compared
    d = [0.10, 0.07, 0.08]
    lo, hi = stats.t.interval(0.95, 2, loc=sum(d) / 3, scale=stats.sem(d))
    assert e.interval == pytest.approx((lo, hi))
    # the paired t-test rejects exactly when the interval excludes zero
    assert (stats.ttest_1samp(d, 0).pvalue < 0.05) == (lo > 0)
    # at a true effect equal to the MDE, a one-sided t at the same level has power 0.8 (noncentral t)
    nc = e.mde / (e.sd / 3**0.5)
    crit = stats.t.ppf(0.975, 2)
    assert 1 - stats.nct.cdf(crit, 2, nc) == pytest.approx(0.8, abs=1e-6)
    with pytest.raises(ValueError, match="share no seed"):
        claims.Effect.paired("x", {0: 1}, {1: 1})
    with pytest.raises(ValueError, match="finite"):
        _eff([float("nan"), 1.0])


def decide(effects, pre=(), **kw):
    return rule.decide(effects, pre, **kw)


def test_decide_gives_each_verdict():
    big = [0.10, 0.11, 0.09]
    V = "verdict_all_seeds"  # three seeds: decided on all of them, not replicated
    assert decide(_eff(big))[V] == claims.HOLDS
    assert decide(_eff([-x for x in big]))[V] == claims.FAILS
    assert decide(_eff([0.02, -0.01, 0.03]))[V] == claims.INCONCLUSIVE
    kw = decide([_eff(big, "ipc 10"), _eff([-x for x in big], "ipc 1")])
    assert kw[V] == claims.CONDITIONAL
    # one cell within noise and none failing: "every" is not established
    assert decide([_eff(big), _eff([0.02, -0.01, 0.03])])[V] == claims.INCONCLUSIVE
    # a non-inferiority claim (does not hurt by more than 0.5 points)
    assert decide(_eff([-0.001, 0.0, 0.001]), margin=0.005)[V] == claims.HOLDS
    assert decide(_eff([-0.001, 0.0, 0.001]))[V] == claims.INCONCLUSIVE
    # three seeds leave no disjoint set to replicate on: not a test of the claim, the verdict of all seeds kept beside
    kw = decide(_eff(big))
    assert kw["verdict"] == claims.NOT_TESTED and "replication on a disjoint seed set unmet" in kw["condition"]
    assert kw["replication"].startswith("not possible")


def test_decide_refuses_a_verdict_outside_the_regime():
    big = [0.10, 0.11, 0.09]
    pre = [
        claims.reached("DC outer iterations", 10, 1000, "DC: 1,000 outer iterations", "{:.0f}"),
        claims.above(
            "baseline above untrained", {0: 0.70, 1: 0.71, 2: 0.70}, {0: 0.60, 1: 0.60, 2: 0.61}, "more BYOL steps"
        ),
    ]
    kw = decide(_eff(big), pre)
    assert kw["verdict"] == claims.NOT_TESTED and kw["tested"] == "no"
    assert "DC: 1,000 outer iterations" in kw["condition"] and "10 of 1000" in kw["condition"]
    assert "baseline above untrained" not in kw["condition"]  # met conditions are reported, not blamed
    assert "baseline above untrained: met" in kw["preconditions"]
    # two seeds never decide, however large the effect; one seed gives no interval at all
    for d in ([0.5, 0.6], [0.5]):
        kw = decide(_eff(d))
        assert kw["verdict"] == claims.NOT_TESTED and ">= 3 matched seeds" in kw["condition"]
    Claim("DC", "v", "loc", "c", "check", ours="x", **claims.compare(_eff([0.5, 0.6])))  # a valid row
    with pytest.raises(ValueError, match="decided by the claims_ledger"):
        Claim("DC", "v", "loc", "c", "check", ours="x", **{**claims.compare(_eff([0.5, 0.6])), "verdict": "holds"})
    with pytest.raises(ValueError, match="state the setting"):
        claims.Precondition("x", False, "y")


def test_decide_is_inconclusive_when_disjoint_seed_halves_disagree():
    # the first three seeds show a clear gain, the last three a clear loss: all six pooled straddle zero,
    # and an effect that one half confirms and the other rejects is no verdict
    d = [0.10, 0.11, 0.09, -0.10, -0.11, -0.09]
    assert decide(_eff(d))["verdict"] == claims.INCONCLUSIVE
    # a gain confirmed on both halves holds
    assert decide(_eff([0.10, 0.11, 0.09, 0.10, 0.12, 0.08]))["verdict"] == claims.HOLDS
    # both halves hold but the pooled six show a different thing cannot happen for one effect; for
    # "every" over two effects, halves agreeing with the pooled verdict keep it
    kw = decide(_eff([0.10, 0.11, 0.09, 0.02, 0.01, 0.03]))
    assert kw["verdict"] == claims.INCONCLUSIVE and "not replicated" in kw["condition"]
    assert (kw["verdict_seeds_a"], kw["verdict_seeds_b"], kw["replication"]) == (
        "holds",
        "inconclusive",
        "not replicated",
    )


def test_preconditions_are_computed_from_the_run():
    flat = [1.0 / (1 + t) for t in range(1, 11)] + [0.09] * 40
    assert claims.plateaued("loss plateau", flat, "more steps").met
    falling = [1.0 - 0.01 * t for t in range(50)]
    assert not claims.plateaued("loss plateau", falling, "more steps").met
    assert not claims.plateaued("loss plateau", [1.0, 0.9], "more steps").met
    p = claims.same_evaluation(
        "one evaluation",
        {"DSA": {"aug": "dsa", "steps": 75}, "DC": {"aug": None, "steps": 75}},
        "evaluate DC and DSA with the same augmentation",
    )
    assert not p.met and "aug" in p.measured and "steps" not in p.measured
    assert claims.below_ceiling("headroom", {0: 0.70, 1: 0.71, 2: 0.70}, 0.90, 0.05, "x").met
    assert not claims.below_ceiling("headroom", {0: 0.88, 1: 0.87, 2: 0.88}, 0.90, 0.05, "x").met


def test_plateau_sees_a_noisy_trend_and_a_noisy_floor():
    import numpy as np

    rng = np.random.default_rng(0)
    t = np.arange(100)
    # still falling (1.45 -> 1.32) with noise of the size of the last windows' difference
    assert not claims.plateaued("p", 1.45 - 0.0013 * t + rng.normal(0, 0.01, 100), "more steps").met
    assert claims.plateaued("p", np.r_[np.linspace(2, 1.3, 40), 1.3 + rng.normal(0, 0.01, 60)], "more steps").met


def test_the_early_stop_and_the_precondition_share_one_plateau_test():
    import numpy as np

    from compendium.core import plateau

    rng = np.random.default_rng(1)
    curves = [
        np.r_[np.linspace(2, 1.3, 40), 1.3 + rng.normal(0, 0.01, 60)],
        1.45 - 0.0013 * np.arange(100),
        [1.0, 0.9],
        [float("nan")] * 3 + [1.0 / (1 + t) for t in range(30)],
    ]
    for c in curves:
        assert plateau.is_plateau(c) == claims.plateaued("p", c, "x").met
    assert (
        plateau.trend_ratio([1.0, 0.9, 0.8]) is None
        and claims.plateaued("p", [1.0, 0.9], "x").measured == "2 points logged"
    )
    assert not plateau.is_plateau(curves[0], rel_tol=0.0)  # the tolerance is the caller's to tighten


def test_the_plateau_is_an_equivalence_test_on_the_remaining_trend():
    import numpy as np

    from compendium.core import plateau

    rng = np.random.default_rng(0)
    drop = np.linspace(2.0, 1.0, 50)
    # a level tail with noise as large as a fifth of the total decrease: whatever its point estimate, the
    # interval of its trend is wide, so it is not called a plateau (DD's oscillating outer loss)
    noisy = np.r_[drop, 1.0 + rng.normal(0, 0.2, 100)]
    r, se = plateau.trend_interval(noisy)
    assert se > 0.05 and not plateau.is_plateau(noisy)
    assert not plateau.is_plateau(noisy, rel_tol=abs(r) + 0.5 * plateau.Z * se)
    # a smooth tail still falling by about 4% of the total decrease per window passes a ±5% margin, not ±2%
    slow = np.r_[drop, 1.0 - 0.00125 * np.arange(1, 101)]
    r, se = plateau.trend_interval(slow)
    assert -0.05 < r < -0.03 and se < 1e-9
    assert plateau.is_plateau(slow) and not plateau.is_plateau(slow, rel_tol=0.02)
    p = claims.plateaued("run", slow, "x")
    assert p.met and "% ± 0.0% (s.e.) of the total decrease, 90% interval within ±5%" in p.measured
    assert "not within" in claims.plateaued("run", noisy, "x").measured


def test_the_early_stop_tests_the_plateau_every_so_many_steps_from_a_minimum():
    assert doctest.testmod(plateau).failed == 0
    flat = [2.0 - min(i, 20) / 20 for i in range(100)]
    assert plateau.stop_at_plateau(flat[:60], 10, 50) and not plateau.stop_at_plateau(flat[:59], 10, 50)
    assert not plateau.stop_at_plateau(flat[:40], 10, 50)  # before min_steps
    assert not plateau.stop_at_plateau([1.0 - 0.01 * i for i in range(60)], 10)  # still falling
    with pytest.raises(ValueError):
        plateau.stop_at_plateau(flat, -1)


def test_nested_effect_separates_the_synthesis_from_the_students():
    # three syntheses whose DWA - SRe2L gap is +2, -1 and +3 points; each trained on by three students within ±0.1
    gap = {0: 0.02, 1: -0.01, 2: 0.03}
    d = {(u, s): gap[u] + 0.001 * (s - 1) for u in gap for s in range(3)}
    ne = claims.nested_effect("DWA - SRe2L", d)
    assert [e.n for e in ne.per_unit] == [3, 3, 3] and ne.across_units.n == 3
    assert abs(ne.across_units.mean - 0.04 / 3) < 1e-12
    assert abs(ne.within_sd - 0.001) < 1e-12 and ne.between_sd > 10 * ne.within_sd
    # one synthesis with its three students "holds" (a narrow interval); over the syntheses the sign is open
    assert ne.per_unit[0].judge() == claims.HOLDS and ne.per_unit[1].judge() == claims.FAILS
    assert ne.across_units.judge() == claims.INCONCLUSIVE


def test_claims_examples():
    assert doctest.testmod(claims).failed == 0
