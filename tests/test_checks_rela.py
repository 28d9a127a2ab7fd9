"""The ReLA family's preconditions and claim rows on synthetic runs (compendium.pipeline.checks.rela)."""

import dataclasses

import pandas as pd
import pytest

from compendium.verdicts import claims, ledger, rule
from compendium.core import records
from compendium.pipeline import paper_tables as PT
from compendium.pipeline import stagedeps
from compendium.pipeline.checks import rela as _CR
from judging import Judged, judge

CR = Judged(_CR)
from compendium.rela import records as RR
from compendium.rela import schedule as rela_schedule

RAND, STRONG = "rand", "trained:priors/fmnist_supervised.pt"


def _row(seed, probe, prior="", budget=0.1, untrained=False, steps=138, switch=None, schedule="switch", w=0.0, **kw):
    return {
        "arm": kw.pop("arm", "x"),
        "seed": seed,
        "probe": probe,
        "prior": prior,
        "budget": budget,
        "untrained": untrained,
        "steps": 0 if untrained else steps,
        "switch step": switch,
        "schedule": schedule,
        "w": w,
        "train seconds": 1.0,
        "budget_mode": "dynamic",
        "order": "code",
        "transfer_trainable": True,
        **kw,
    }


def test_min_switch_steps_is_algorithm_1_on_a_flat_loss():
    # camera-ready Algorithm 1 (l_s = 2, l_f = 1, EMAs 0.99 / 0.999, threshold 0.995), code order: 528 steps
    assert CR.min_switch_steps() == 528
    s = rela_schedule.EMASwitch()
    for _ in range(527):
        s.update(1.0)
    assert not s.switched


def test_ssl_phase_steps_from_the_records():
    assert RR.ssl_phase_steps(_row(0, 0.7)) == 138  # plain BYOL: every step
    assert RR.ssl_phase_steps(_row(0, 0.7, prior=RAND)) == 0  # switch never fired
    assert RR.ssl_phase_steps(_row(0, 0.7, prior=RAND, steps=4000, switch=1000)) == 3000
    assert RR.ssl_phase_steps(_row(0, 0.7, prior=RAND, schedule="first", w=0.2, switch=28)) == 110
    assert RR.ssl_phase_steps(_row(0, 0.7, prior=RAND, schedule="v1")) == 138
    assert RR.ssl_phase_steps(_row(0, 0.7, prior=RAND, schedule="constant", w=1.0)) == 0
    assert RR.ssl_phase_steps(_row(0, 0.7, prior=RAND, schedule="constant", w=0.4)) == 138
    assert RR.ssl_phase_steps({**_row(0, 0.7), "prior": float("nan")}) == 138  # prior read back from CSV


def test_ssl_phase_ran_met_and_unmet():
    never = pd.DataFrame([_row(s, 0.75, prior=RAND) for s in range(3)])
    p = CR.ssl_phase_ran(never)
    assert not p.met and "fired in 0 of 3" in p.measured and "3,900" in p.needs and "138" in p.needs
    assert p.measured.startswith("the camera-ready switch: ")  # the ledger names the switch the arms ran
    fired = pd.DataFrame([_row(s, 0.75, prior=RAND, steps=3900, switch=1200 + s) for s in range(3)])
    assert CR.ssl_phase_ran(fired).met
    one_late = pd.DataFrame(
        [_row(0, 0.75, prior=RAND, steps=3900, switch=1200), _row(1, 0.75, prior=RAND, steps=3900, switch=3900)]
    )
    assert not CR.ssl_phase_ran(one_late).met  # fired on the last step: no SSL step ran
    assert not CR.ssl_phase_ran(never.iloc[:0]).met


def test_above_untrained_uses_matched_seeds():
    byol = {0: 0.70, 1: 0.65, 2: 0.70}
    un = {0: 0.70, 1: 0.68, 2: 0.69, 3: 0.10}
    p = CR.above_untrained("BYOL above", {"BYOL 10%": (byol, un)})
    assert not p.met and "NOT above" in p.measured and "seeds 0,1,2" in p.measured  # seed 3 (BYOL absent) ignored
    assert CR.above_untrained("BYOL above", {"BYOL 10%": ({0: 0.72, 2: 0.71}, un)}).met
    assert not CR.above_untrained("BYOL above", {"BYOL": ({5: 0.9}, un)}).met


def _budget_runs(seeds=(0, 1, 2), fired=False, byol10=0.66, steps=138):
    rows = []
    for s in seeds:
        rows.append(_row(s, 0.68, untrained=True, arm="untrained"))
        rows.append(_row(s, 0.74 + 0.001 * s, budget=1.0, steps=10 * steps))
        for b in (0.1, 0.5):
            st = steps if b == 0.1 else 5 * steps
            sw = (st // 3) if fired else None
            rows.append(_row(s, (byol10 if b == 0.1 else 0.71) + 0.002 * s, budget=b, steps=st))
            rows.append(
                _row(s, 0.73 + 0.003 * s + (0.02 if b == 0.5 else 0), prior=RAND, budget=b, steps=st, switch=sw)
            )
            rows.append(
                _row(s, 0.76 + 0.002 * s + (0.02 if b == 0.5 else 0), prior=STRONG, budget=b, steps=st, switch=sw)
            )
    return pd.DataFrame(rows)


def _by_location(rows):
    return {r.location: r for r in rows}


def test_budget_claims_not_tested_without_the_ssl_phase_and_tested_with_it():
    kw = dict(
        priors=[RAND, STRONG],
        budgets=[0.1, 0.5],
        same=STRONG,
        cross=RAND,
        headline=0.1,
        gap_goal=0.9,
        cost_goal=0.5,
        strength={"Rand.": 0.70, "strong (supervised)": 0.80},
    )
    rows = _by_location(CR.budget_claims(_budget_runs(byol10=0.70), **kw))
    for r in rows.values():
        assert r.verdict == claims.NOT_TESTED and "SSL phase" in r.condition
    assert "ReLA-only" in rows["Table 1 (CF-10, 10%)"].ours
    rows = _by_location(CR.budget_claims(_budget_runs(fired=True, byol10=0.70, steps=4000), **kw))
    assert rows["Table 1"].verdict == claims.HOLDS and rows["Table 1"].seeds == "0,1,2"
    assert rows["Table 1 (Rand. column)"].verdict == claims.HOLDS
    assert rows["Fig. 4c"].verdict == claims.HOLDS  # strong beats Rand. at every budget
    assert rows["Table 1 (CF-10, 10%)"].verdict == claims.HOLDS  # ReLA 76 vs BYOL 70, BYOL* 74: closes > 90%
    assert "ReLA-only" not in rows["Table 1 (CF-10, 10%)"].ours
    assert rows["abstract; Table 1 (IN-1K, CF10-T, 50%)"].verdict == claims.HOLDS  # Rand. at 50%: 75 vs BYOL* 74
    runs = _budget_runs(fired=True, byol10=0.70, steps=4000)
    cell = (runs["prior"] == RAND) & (runs["budget"] == 0.1)
    runs.loc[cell, "probe"] = (
        0.71 + 0.002 * runs.loc[cell, "seed"]
    )  # ReLA 71 vs BYOL 70, BYOL* 74: a quarter of the gap
    kw["same"] = RAND
    assert _by_location(CR.budget_claims(runs, **kw))["Table 1 (CF-10, 10%)"].verdict == claims.FAILS
    # BYOL at 10% below the untrained network: not tested even with the SSL phase
    rows = _by_location(CR.budget_claims(_budget_runs(fired=True, byol10=0.60, steps=4000), **kw))
    assert (
        rows["Table 1"].verdict == claims.NOT_TESTED
        and "BYOL above the untrained network unmet" in rows["Table 1"].condition
    )


def test_half_cost_claim_reads_the_cost_goal_cell_outside_the_grid():
    runs = _budget_runs(fired=True, byol10=0.70, steps=4000)
    grid_only = runs[~((runs["budget"] == 0.5) & (runs["prior"] != RAND))]  # the 50% cell of Rand. alone, no BYOL 50%
    r = CR.half_cost_claim(grid_only, RAND, STRONG, [0.1], 0.5)
    assert r.tested == "yes" and r.verdict == claims.HOLDS and r.seeds == "0,1,2"  # Rand. at 50%: 75 vs BYOL* 74
    r = CR.half_cost_claim(runs[runs["budget"] != 0.5], RAND, STRONG, [0.1], 0.5)
    assert r.verdict == claims.NOT_TESTED and "the 50% cell of the cross-dataset prior unmet" in r.condition


def test_gap_closures_and_cost_use_matched_seeds():
    runs = _budget_runs(byol10=0.70, fired=True, steps=4000)
    runs = pd.concat(
        [runs, pd.DataFrame([_row(9, 0.10), _row(9, 0.99, prior=RAND, steps=4000, switch=100)])]
    )  # no BYOL*
    g = RR.gap_closures(runs, [RAND], [0.1], label=PT.prior_label)
    assert g.loc[0, "seeds"] == "0-2" and g.loc[0, "ReLA-only seeds"] == 0
    assert g.loc[0, "gap closure (ours)"] == pytest.approx((0.733 - 0.702) / (0.741 - 0.702))
    cost = RR.cost_table(runs, [RAND, STRONG], [0.1, 0.5], label=PT.prior_label).set_index("arm")
    assert cost.loc["+ReLA strong (supervised)", "matching budget"] == 0.1
    assert cost.loc["+ReLA Rand.", "matching budget"] == 0.5
    assert pd.isna(cost.loc["BYOL", "matching budget"])


def test_gap_closure_and_matching_budget_only_from_runs_with_an_ssl_phase():
    runs = _budget_runs(byol10=0.70, fired=True, steps=4000)
    cell = (runs["prior"] == RAND) & (runs["budget"] == 0.1) & (runs["seed"] == 1)
    runs.loc[cell, "switch step"] = None  # seed 1's Rand. run at 10% never switched: ReLA only
    g = RR.gap_closures(runs, [RAND], [0.1], label=PT.prior_label)
    assert g.loc[0, "seeds"] == "0,2" and g.loc[0, "ReLA-only seeds"] == 1
    assert g.loc[0, "gap closure (ours)"] == pytest.approx((0.733 - 0.702) / (0.741 - 0.702))  # seeds 0 and 2
    cost = RR.cost_table(runs, [RAND], [0.1, 0.5], label=PT.prior_label).set_index("arm")
    assert cost.loc["+ReLA Rand.", "seeds"] == "0,2"
    none = _budget_runs(byol10=0.70)  # no run switched: no closure, no matching budget
    assert pd.isna(RR.gap_closures(none, [RAND], [0.1], label=PT.prior_label).loc[0, "gap closure (ours)"])
    assert pd.isna(
        RR.cost_table(none, [RAND], [0.1, 0.5], label=PT.prior_label)
        .set_index("arm")
        .loc["+ReLA Rand.", "matching budget"]
    )


def test_the_scaled_switch_counts_as_a_switch():
    row = _row(0, 0.7, prior=RAND, steps=4000, switch=500, schedule="switch_scaled")
    assert RR.ssl_phase_steps(row) == 3500
    pre = CR.ssl_phase_ran(pd.DataFrame([row, _row(1, 0.7, prior=RAND, steps=4000, schedule="switch_scaled")]))
    assert not pre.met and "fired in 1 of 2 runs" in pre.measured
    assert "scaled to the run (our variant, switch_scaled): the switch fired" in pre.measured  # the variant is stated


def test_transport_claim_over_seeds():
    out, inn = {0: 0.70, 1: 0.72, 2: 0.71}, {0: 0.65, 1: 0.66, 2: 0.66}
    r = CR.transport_claim(out, inn, "strong", 0.80, {"BYOL 10%": {0: 0.7, 1: 0.7, 2: 0.7}})
    assert r.verdict == claims.HOLDS and r.tested == "yes"
    r = CR.transport_claim(out, inn, "strong", 0.60, {"BYOL 10%": {0: 0.7, 1: 0.7, 2: 0.7}})
    assert r.verdict == claims.NOT_TESTED and "the source is stronger than" in r.condition
    assert CR.transport_claim({0: 0.7}, {0: 0.6}, "s", 0.8, {"b": {0: 0.7}}).verdict == claims.NOT_TESTED


def _arch_runs(fired, mobile_byol):
    rows = []
    for s in range(3):
        for arch, byol in (("convnet", 0.72), ("mobilenet_v2", mobile_byol)):
            rows.append(_row(s, 0.30 if arch == "mobilenet_v2" else 0.69, arch=arch, untrained=True))
            rows.append(_row(s, byol + 0.001 * s, arch=arch, steps=4000))
            for p in (RAND, STRONG):
                rows.append(_row(s, 0.75 + 0.002 * s, arch=arch, prior=p, steps=4000, switch=1000 if fired else None))
    return pd.DataFrame(rows)


def test_arch_claims_need_byol_above_the_untrained_student():
    students = {"convnet": "ConvNet", "mobilenet_v2": "MobileNet-V2"}
    assert CR.arch_claims(_arch_runs(True, 0.40), students, [RAND, STRONG])[0].verdict == claims.HOLDS
    r = CR.arch_claims(_arch_runs(True, 0.15), students, [RAND, STRONG])[0]  # BYOL near chance, below untrained
    assert r.verdict == claims.NOT_TESTED and "MobileNet-V2 BYOL 15.1" in r.condition and "NOT above" in r.condition
    assert CR.arch_claims(_arch_runs(False, 0.40), students, [RAND, STRONG])[0].verdict == claims.NOT_TESTED


def test_methods_claims_rand_row_is_non_inferiority():
    rows = []
    for s in range(3):
        rows.append(_row(s, 0.69, untrained=True, method="byol"))
        for m in ("simclr", "moco"):
            rows.append(_row(s, 0.72 + 0.001 * s, method=m, steps=4000))
            rows.append(
                _row(s, 0.718 + 0.0015 * s, method=m, prior=RAND, steps=4000, switch=1000)
            )  # -0.2 points: no harm
            rows.append(_row(s, 0.75 + 0.002 * s, method=m, prior=STRONG, steps=4000, switch=1000))
    out = _by_location(CR.methods_claims(pd.DataFrame(rows), {"simclr": "SimCLR", "moco": "MoCo"}, [RAND, STRONG]))
    assert out["Table 3 (CLIP-RN50 row)"].verdict == claims.HOLDS
    assert out["Table 3 (Rand. row)"].verdict == claims.HOLDS


def _ablation_runs(seeds=(0, 1, 2), static_gain=0.01, strong_slope=0.02, weak_slope=-0.02, fired=False):
    rows = []
    for s in seeds:
        rows.append(_row(s, 0.69, untrained=True))
        rows.append(_row(s, 0.71 + 0.001 * s))
        for p, slope in ((RAND, weak_slope), (STRONG, strong_slope)):
            noise = 0.003 * s
            rows.append(_row(s, 0.75 + noise, prior=p, steps=4000 if fired else 138, switch=1000 if fired else None))
            rows.append(
                {
                    **_row(
                        s,
                        0.75 + noise - static_gain,
                        prior=p,
                        steps=4000 if fired else 138,
                        switch=1000 if fired else None,
                    ),
                    "budget_mode": "static",
                }
            )
            for lam in (0.2, 1.0):
                rows.append(_row(s, 0.74 + slope * lam + noise, prior=p, schedule="constant", w=lam))
            for w, sw in ((0.2, 28), (0.8, 110)):
                rows.append(_row(s, 0.73 + slope * w + noise, prior=p, schedule="first", w=w, switch=sw))
    return pd.DataFrame(rows)


def test_ablation_claims():
    rows = _by_location(
        CR.ablation_claims(_ablation_runs(), [RAND, STRONG], [0.2, 1.0], [0.0, 0.2, 0.8, 1.0], epochs=3)
    )
    assert rows["Fig. 4a"].verdict == claims.HOLDS and "ReLA loss alone" in rows["Fig. 4a"].ours
    assert rows["Fig. 4b"].verdict == claims.NOT_TESTED and "λ switch fired" in rows["Fig. 4b"].condition
    assert rows["Fig. 4b; v1 Fig. 4b"].verdict == claims.HOLDS
    rows = _by_location(
        CR.ablation_claims(
            _ablation_runs(static_gain=-0.01, strong_slope=-0.02, weak_slope=0.02),
            [RAND, STRONG],
            [0.2, 1.0],
            [0.0, 0.2, 0.8, 1.0],
            epochs=3,
        )
    )
    assert rows["Fig. 4a"].verdict == claims.FAILS and rows["Fig. 4b; v1 Fig. 4b"].verdict == claims.FAILS
    one = _by_location(
        CR.ablation_claims(_ablation_runs(seeds=(0,)), [RAND, STRONG], [0.2, 1.0], [0.0, 0.2, 0.8, 1.0], epochs=3)
    )
    assert one["Fig. 4b; v1 Fig. 4b"].verdict == claims.NOT_TESTED  # an argmax on one seed is not a verdict
    assert (
        CR.ablation_claims(_ablation_runs(), [RAND, STRONG], [0.2, 1.0], [0.0, 0.2, 0.8, 1.0], epochs=1)[0].verdict
        == claims.NOT_TESTED
    )  # one epoch: the dynamic subset is never redrawn
    fired = _by_location(
        CR.ablation_claims(_ablation_runs(fired=True), [RAND, STRONG], [0.2, 1.0], [0.0, 0.2, 0.8, 1.0], epochs=3)
    )
    assert fired["Fig. 4b"].tested == "yes" and "ReLA loss alone" not in fired["Fig. 4a"].ours


# --- claims_ledger: the ReLA stages judged from their tables ----------------------------------------------------


def _write_stage(folder, tables: dict, settings: dict):
    """Write as the stages do: the judged tables exactly (``runs`` read back with NaN priors and switch steps)."""
    folder.mkdir(parents=True)
    for name, df in tables.items():
        df.to_csv(folder / f"{name}.csv", index=False, float_format=records.EXACT)
    records.settings_table(**settings).to_csv(folder / "settings.csv", index=False)


def test_the_ledger_judges_each_rela_stage_from_its_tables_as_from_memory(tmp_path):
    """Each ReLA stage, written to disk as its notebook writes it and read back by claims_ledger, gives the rows
    the check gives on the runs in memory (probes such as 0.7330000000000001 survive the round trip)."""
    budget = _budget_runs(byol10=0.70, fired=True, steps=4000)
    variant = budget[(budget["prior"] == STRONG) & (budget["budget"] == 0.1)].assign(arm="x [switch]", probe=0.1)
    per_seed = pd.DataFrame(
        [
            {"seed": s, "student": st, "out": 0.7 + 0.01 * s, "in": 0.66 + 0.003 * s, "probe": 0.7}
            for s in (0, 1, 2)
            for st in ("BYOL 10%", "+ReLA 10%")
        ]
    )
    strength = {PT.prior_label(RAND): 0.31, PT.prior_label(STRONG): 0.8912345678901234}
    bkw = dict(
        priors=[RAND, STRONG], budgets=[0.1, 0.5], same=STRONG, cross=RAND, headline=0.1, gap_goal=0.9, cost_goal=0.5
    )
    _write_stage(
        tmp_path / "rela_budget",
        {"runs": pd.concat([budget, variant]), "transport_per_seed": per_seed},
        {**{k: v for k, v in bkw.items() if k != "gap_goal"}, "strength": strength},
    )  # as the stage records
    students = {"convnet": "ConvNet", "mobilenet_v2": "MobileNet-V2"}
    arch = _arch_runs(True, 0.40)
    _write_stage(tmp_path / "rela_arch", {"runs": arch}, dict(students=students, priors=[RAND, STRONG]))
    mrows = [_row(s, 0.69, untrained=True, method="byol") for s in range(3)]
    mrows += [
        _row(s, 0.72 + 0.001 * s, method=m, prior=p, steps=4000, switch=1000 if p else None)
        for s in range(3)
        for m in ("simclr", "moco")
        for p in ("", RAND, STRONG)
    ]
    methods = pd.DataFrame(mrows)
    _write_stage(
        tmp_path / "rela_methods",
        {"runs": methods},
        dict(methods={"simclr": "SimCLR", "moco": "MoCo"}, priors=[RAND, STRONG]),
    )
    abl = _ablation_runs(fired=True)
    akw = dict(priors=[RAND, STRONG], lambdas=[0.2, 1.0], fractions=[0.0, 0.2, 0.8, 1.0], epochs=3, schedule="switch")
    _write_stage(tmp_path / "rela_ablations", {"runs": abl}, akw)
    g = per_seed.groupby("seed")
    want = {
        "rela_budget": _CR.budget_claims(budget, strength=strength, **bkw)
        + [
            _CR.transport_claim(
                g["out"].mean().to_dict(),
                g["in"].mean().to_dict(),
                PT.prior_label(STRONG),
                strength[PT.prior_label(STRONG)],
                {k: dict(zip(d["seed"], d["probe"])) for k, d in per_seed.groupby("student")},
            )
        ],
        "rela_arch": _CR.arch_claims(arch, students, [RAND, STRONG]),
        "rela_methods": _CR.methods_claims(methods, {"simclr": "SimCLR", "moco": "MoCo"}, [RAND, STRONG]),
        "rela_ablations": _CR.ablation_claims(
            abl, akw["priors"], akw["lambdas"], akw["fractions"], 3, schedule="switch"
        ),
    }
    assert any(r.tested == "yes" for rows in want.values() for r in judge(rows))
    for stage, rows in want.items():
        got = CR.rela_stage_claims(tmp_path, [stage], gap_goal=0.9)  # the judge's own parameter
        rows = judge(  # without the study's table every budget comparison carries an unmet regime check
            [
                r if r.claim in _CR.NOT_BUDGET else _CR.with_precondition(r, _CR.regime_precondition(stage, None))
                for r in rows
            ]
        )
        assert ledger.to_frame(got).to_dict("records") == ledger.to_frame(rows).to_dict("records"), stage
    (tmp_path / "rela_arch" / "runs.csv").unlink()
    with pytest.raises(FileNotFoundError, match="dvc repro -s rela_arch"):
        CR.rela_stage_claims(tmp_path, gap_goal=0.9)


def test_the_rela_stages_judge_nothing():
    """The ReLA comparison stages import no check module: claims_ledger judges them."""
    for stage in CR.RELA_STAGES:
        assert not any("pipeline/checks" in str(p) for p in stagedeps.stage_sources(stage)), stage
    assert any("pipeline/checks/rela.py" in str(p) for p in stagedeps.stage_sources("claims_ledger"))


def test_settings_read_back_exactly(tmp_path):
    t = records.settings_table(priors=["rand", "x"], strength={"Rand.": 0.1 + 0.2}, epochs=3, goal=0.9)
    t.to_csv(tmp_path / "settings.csv", index=False)
    back = records.read_settings(pd.read_csv(tmp_path / "settings.csv", dtype=str, keep_default_na=False))
    assert back == {"priors": ["rand", "x"], "strength": {"Rand.": 0.30000000000000004}, "epochs": 3, "goal": 0.9}


def test_table1_rows_state_what_the_ssl_phase_adds_to_the_prior_alone():
    split = pd.DataFrame(
        [
            {
                "prior": "CF10-T*",
                "budget": "10%",
                "seeds": 6,
                "+ReLA": 80.0,
                "prior alone (λ = 1)": 79.0,
                "BYOL": 75.0,
                "SSL-phase share of +ReLA": 0.5,
                "prior alone − BYOL": 4.0,
                "prior alone − BYOL, 95% interval": "[+3.0, +5.0]",
                "+ReLA − prior alone": 1.0,
                "+ReLA − prior alone, 95% interval": "[-0.5, +2.5]",
            },
            {
                "prior": "Rand.",
                "budget": "10%",
                "seeds": 6,
                "+ReLA": 74.0,
                "prior alone (λ = 1)": 70.0,
                "BYOL": 75.0,
                "SSL-phase share of +ReLA": 0.8,
                "prior alone − BYOL": -5.0,
                "prior alone − BYOL, 95% interval": "[-6.0, -4.0]",
                "+ReLA − prior alone": 4.0,
                "+ReLA − prior alone, 95% interval": "[+3.0, +5.0]",
            },
        ]
    )
    row = claims.Claim("ReLA", "camera-ready", "Table 1 (Rand. column)", "c", "k", "inconclusive", ours="x")
    out = _CR.with_prior_split(row, split, ("CF10-T*", "10%"))
    assert "Rand. 10%: prior alone − BYOL -5.0 [-6.0, -4.0], +ReLA − prior alone +4.0 [+3.0, +5.0]" in out.ours
    assert "CF10-T*" not in out.ours
    head = _CR.with_prior_split(dataclasses.replace(row, location="Table 1 (CF-10, 10%)"), split, ("CF10-T*", "10%"))
    assert "CF10-T* 10%" in head.ours and "Rand." not in head.ours
    other = dataclasses.replace(row, location="Fig. 4c")
    assert _CR.with_prior_split(other, split, ("CF10-T*", "10%")) == other
    assert _CR.with_prior_split(row, pd.DataFrame(), ("CF10-T*", "10%")) == row


def test_a_rela_stage_outside_the_studys_regime_is_not_tested_and_says_what_would_be():
    base = {"stage": "rela_budget", "view": "pooled", "labels": 10000, "width": 16, "full epochs": 10, "budget": 0.1,
            "measured": True, "seeds": 5, "full gain": 0.078, "full gain lo": 0.067, "full gain hi": 0.088,
            "10% gain": 0.031, "10% gain lo": 0.014, "10% gain hi": 0.047, "meets goals": False,
            "nearest": "width 16, 30 epochs: full +8.7 [+6.8, +10.7]", "chosen": "", "goal full": 0.1,
            "goal low": 0.0}  # fmt: skip
    pre = CR.regime_precondition("rela_budget", pd.DataFrame([base]))
    assert not pre.met and "+7.8 [+6.7, +8.8] at the full budget" in pre.measured
    assert "none of its measured regimes meets them" in pre.needs and "+8.7" in pre.needs
    assert "no measured setting's means meet them either" in pre.needs and "GPU" in pre.needs
    cand = CR.regime_precondition(
        "rela_budget", pd.DataFrame([{**base, "candidate": "pooled features with 1,000 ..."}])
    )
    assert "the nearest on any probe: pooled features with 1,000 ..., then the ReLA stages" in cand.needs
    failed = CR.regime_precondition(
        "rela_budget",
        pd.DataFrame([{**base, "confirmation": "the confirmation plan's regime ...: does not meet the goals"}]),
    )
    assert failed.needs.count("so no regime on two cores is known") == 1 and "GPU" in failed.needs
    held = "the confirmation plan's regime ...: meets both goals by its lower bounds"
    assert (
        "no regime on two cores"
        not in CR.regime_precondition("rela_budget", pd.DataFrame([{**base, "confirmation": held}])).needs
    )
    read_back = CR.regime_precondition("rela_budget", pd.DataFrame([{**base, "chosen": float("nan")}]))
    assert read_back.needs == pre.needs  # an empty cell of the CSV comes back as NaN
    met = CR.regime_precondition("rela_budget", pd.DataFrame([{**base, "meets goals": True}]))
    assert met.met
    chosen = CR.regime_precondition("rela_budget", pd.DataFrame([{**base, "chosen": "width 32, 20 epochs: ..."}]))
    assert "the study's chosen regime (width 32, 20 epochs" in chosen.needs
    off = CR.regime_precondition("rela_budget", pd.DataFrame([{**base, "measured": False}]))
    assert not off.met and "no curve at this setting" in off.measured
    assert not CR.regime_precondition("rela_arch", pd.DataFrame([base])).met  # no row for the stage
    # a comparison row gets the check in its evidence; the ledger then says why it is not tested
    row = _CR.budget_claims(
        _budget_runs(byol10=0.70, fired=True, steps=4000),
        priors=[RAND, STRONG], budgets=[0.1, 0.5], same=STRONG, cross=RAND, headline=0.1, gap_goal=0.9, cost_goal=0.5,
        strength={PT.prior_label(RAND): 0.31, PT.prior_label(STRONG): 0.9},
    )[0]  # fmt: skip
    judged = rule.judged(_CR.with_precondition(row, pre))
    assert judged.verdict == claims.NOT_TESTED and CR.IN_REGIME + " unmet" in judged.condition
    assert rule.judged(_CR.with_precondition(row, met)).condition.count(CR.IN_REGIME) == 0
