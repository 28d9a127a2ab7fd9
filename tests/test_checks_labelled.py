"""compendium.pipeline.checks.labelled: the regime preconditions of the labelled-distillation comparisons, computed
from synthetic records, met and unmet, and the rows they give."""

import doctest
import math

import numpy as np
import pandas as pd
import pytest
import torch

from compendium.core.probe import to_float
from compendium.distill import evaluate as E
from compendium.distill import runner
from compendium.distill.sets import DistilledSet
from compendium.pipeline import stagedeps
from compendium.verdicts import claims, ledger, rule
from compendium.distill import records as R
from compendium.pipeline.checks import labelled as _L
from judging import Judged

L = Judged(_L)

MEAN, STD = (0.5,), (0.25,)


def _real(n_per_class=6, classes=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    images = torch.randint(0, 256, (n_per_class * classes, 1, 4, 4), generator=g, dtype=torch.uint8)
    labels = torch.arange(classes).repeat(n_per_class)
    return images, labels


def _set(images, labels, idx, shift_grey=0.0, **params):
    """A set that started from ``images[idx]`` and moved by ``shift_grey`` grey levels on every pixel."""
    idx = torch.as_tensor(idx)
    x = to_float(images[idx], MEAN, STD) + shift_grey / (255.0 * STD[0])
    return DistilledSet(
        x, labels[idx].clone(), int(labels.max()) + 1, MEAN, STD, "m", params={"init_index": idx.tolist(), **params}
    )


def test_displacement_is_the_rms_change_in_grey_levels():
    images, labels = _real()
    idx = [0, 1, 2, 3, 4, 5]
    assert R.displacement(_set(images, labels, idx, 3.0), images) == pytest.approx(3.0, rel=1e-4)
    assert R.displacement(_set(images, labels, idx, 0.0), images) == pytest.approx(0.0, abs=1e-4)
    noise = DistilledSet(torch.zeros(3, 1, 4, 4), torch.arange(3), 3, MEAN, STD, "sre2l", params={"init_index": None})
    assert math.isnan(R.displacement(noise, images))
    bad = _set(images, labels, idx)
    bad.params["init_index"] = [0, 1, 2]
    with pytest.raises(ValueError, match="init_index"):
        R.displacement(bad, images)


def test_init_set_gives_the_starting_images_and_their_prefix():
    images, labels = _real()
    d = _set(images, labels, [0, 1, 2, 3, 4, 5], 10.0)  # i-major: images 0-2 are index 0 of classes 0-2
    init = R.init_set(d, images, labels)
    assert torch.allclose(init.images, to_float(images[:6], MEAN, STD)) and init.method == "m init (real)"
    one = R.init_set(d, images, labels, ipc=1, method=R.REAL_INIT)
    assert one.source_index.tolist() == [0, 1, 2] and one.method == R.REAL_INIT
    d.dataset = "cifar100"  # the real images are of the set's dataset (dd_crossarch tests each set on its own)
    assert R.init_set(d, images, labels).dataset == "cifar100"
    wrong = _set(images, labels, [0, 1, 2])
    wrong.labels = torch.tensor([1, 1, 2])
    with pytest.raises(ValueError, match="labels"):
        R.init_set(wrong, images, labels)
    assert (
        len(R.ceiling_set(images, labels, 5, MEAN, STD)) == 5
        and len(R.ceiling_set(images, labels, 99, MEAN, STD)) == 18
    )


def test_loss_curves_of_every_family():
    images, labels = _real()
    inv = _set(images, labels, [0, 1, 2], loss_curve=[3.0, 2.0, 1.5])
    dc = _set(images, labels, [0, 1, 2], loss_trace=[0.9, 0.8])
    kip = _set(images, labels, [0, 1, 2], loss_trace=[[0, 0.5], [10, 0.25]])
    assert R.loss_curve(inv) == [3.0, 2.0, 1.5] and R.loss_curve(dc) == [0.9, 0.8] and R.loss_curve(kip) == [0.5, 0.25]
    t = R.curves_table({("a", 1): inv, ("b", 1): kip})
    assert len(t) == 5 and list(t.columns) == ["method", "ipc", "key", "point", "loss"]
    r = R.regime_table({("a", 1): _set(images, labels, [0, 1, 2], 2.0, iterations=7, init="real")}, images)
    assert r.loc[0, "iterations"] == 7 and r.loc[0, "displacement"] == pytest.approx(2.0, rel=1e-4)


def test_set_facts_read_back_from_the_tables_are_the_sets_own(tmp_path):
    """A judge stage reads what a set stage recorded: keys of any shape (strings, ints, floats) and the facts
    round-trip through the CSV files exactly."""
    images, labels = _real()
    sets = {
        ("sweep", "dwa", "decoupled", 0.11): _set(images, labels, [0, 1, 2], 2.5, iterations=30, loss_curve=[3.0, 2.0]),
        ("grid", 0, 0.0): _set(images, labels, [3, 4, 5], 0.0, iterations=1000, loss_trace=[0.9, 0.8, 0.7]),
        ("inv", "sre2l"): _set(images, labels, [0, 1, 2], loss_curve=[1.0 / 3.0]),
    }
    sets[("inv", "sre2l")].params["init_index"] = None  # from noise: no displacement
    want = R.set_facts(sets, images)
    assert want[("sweep", "dwa", "decoupled", 0.11)].iterations == 30 and want[("grid", 0, 0.0)].curve == (
        0.9,
        0.8,
        0.7,
    )
    for name, df in (
        ("regime", R.regime_table(sets, images, ["part"])),
        ("loss_curves", R.curves_table(sets, ["part"])),
    ):
        df.to_csv(tmp_path / f"{name}.csv", index=False)
    got = R.facts_from_tables(pd.read_csv(tmp_path / "regime.csv"), pd.read_csv(tmp_path / "loss_curves.csv"))
    assert list(got) == list(want)
    for k in want:
        assert got[k].iterations == want[k].iterations and got[k].curve == want[k].curve
        assert got[k].displacement == want[k].displacement or (
            math.isnan(got[k].displacement) and math.isnan(want[k].displacement)
        )
    st = R.settings_table(
        ipc=10, lambdas=[0.01, 0.11], cells=[("convnet", "mlp", 10)], spread={"dwa": np.float64(0.25)}, pool=None
    )
    st.to_csv(tmp_path / "settings.csv", index=False)
    back = R.read_settings(pd.read_csv(tmp_path / "settings.csv", dtype=str, keep_default_na=False))
    assert back == {
        "ipc": 10,
        "lambdas": [0.01, 0.11],
        "cells": [["convnet", "mlp", 10]],
        "spread": {"dwa": 0.25},
        "pool": None,
    }


def test_matching_regime_needs_the_iterations_or_a_moved_set_above_its_init():
    init = {0: 0.70, 1: 0.71, 2: 0.72}
    near = {0: 0.705, 1: 0.712, 2: 0.718}  # within a point of its initialisation: still the real images
    above = {0: 0.76, 1: 0.765, 2: 0.775}  # 5.5-6 points above its init on every seed: the interval clears 1
    assert not L.matching_regime(
        "DC", 10, 1000, 5.0, near, init
    ).met  # the paper's 1,000 iterations, not above its init
    assert L.matching_regime("DC", 10, 10, 5.0, above, init).met  # moved and beats its init
    p = L.matching_regime("DC", 10, 10, 5.0, near, init)
    assert not p.met and "1,000 outer iterations" in p.needs and "10 of 1,000" in p.measured
    assert not L.matching_regime("DC", 10, 10, 0.5, above, init).met  # did not move measurably
    assert not L.matching_regime("DM", 10, 25, 5.0, above, {}).met  # its init was not evaluated
    assert not L.matching_regime("DM", 10, 20000, 0.0, near, init).met  # every method must beat where it started
    assert L.matching_regime("DM", 10, 20000, 0.0, above, init).met


def test_sre2l_regime_needs_a_set_above_one_real_image_per_class():
    real1 = {0: 0.50, 1: 0.49, 2: 0.51}
    flat = [2.0, 1.0, 0.5, 0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2]
    falling = [10.0 - i for i in range(10)]
    noise = {0: 0.18, 1: 0.17, 2: 0.20}
    good = {0: 0.60, 1: 0.61, 2: 0.62}
    assert not L.sre2l_regime(10, 30, flat, noise, real1).met  # plateaued, still noise
    assert L.sre2l_regime(10, 30, flat, good, real1).met  # plateaued and above the floor
    assert not L.sre2l_regime(10, 30, falling, good, real1).met  # neither 1,000 iterations nor a plateau
    assert L.sre2l_regime(10, 1000, falling, good, real1).met
    assert "1,000 recovery iterations" in L.sre2l_regime(10, 30, flat, noise, real1).needs


def test_sre2l_regime_without_a_logged_curve_is_judged_on_its_iterations():
    real1 = {0: 0.50, 1: 0.49, 2: 0.51}
    good = {0: 0.60, 1: 0.61, 2: 0.62}
    full, short = L.sre2l_regime(10, 1000, [], good, real1), L.sre2l_regime(10, 30, [], good, real1)
    assert full.met and not short.met
    assert "loss" not in full.measured and "points logged" not in short.measured
    assert "plateaued" in L.sre2l_regime(10, 1000, [2.0, 1.0, 0.5], good, real1).measured


def test_dwa_and_kip_regimes():
    init = {0: 0.65, 1: 0.66, 2: 0.64}
    assert L.dwa_regime(10, 30.0, {0: 0.69, 1: 0.70, 2: 0.69}, init, 30).met
    assert not L.dwa_regime(10, 30.0, {0: 0.655, 1: 0.66, 2: 0.645}, init, 30).met
    assert not L.dwa_regime(10, 0.2, {0: 0.69, 1: 0.70, 2: 0.69}, init).met
    # the paper's 1,000 recovery iterations are not enough: like every method, DWA must beat its real images
    at_paper = L.dwa_regime(10, 30.0, {0: 0.655, 1: 0.66, 2: 0.645}, init, 1000)
    assert not at_paper.met and "1,000 of 1,000 iterations" in at_paper.measured
    assert "1,000 recovery iterations (paper, Table 6; 30 here)" in L.dwa_regime(10, 0.2, init, init, 30).needs
    # at its paper's iterations and still not above its images: more iterations are not what it needs; a set short
    # of them that moved still needs them
    assert "not more iterations" in at_paper.needs and "paper_estimate" in at_paper.needs
    below = L.dwa_regime(10, 30.0, {0: 0.60, 1: 0.61, 2: 0.60}, init, 1000).needs
    assert "its set is below those images" in below and "not clear of those images by 1 point" in at_paper.needs
    assert "(paper, Table 6; 30 here)" in L.dwa_regime(10, 30.0, init, init, 30).needs
    # what DWA's own setting costs comes from the committed paper estimate, summed over its stages
    assert "at the `paper` scale, about " in at_paper.needs and " h on one GPU by benchmarks/paper_estimate.md" in (
        at_paper.needs
    )
    dc = L.matching_regime("DC", 1, 1000, 60.0, {0: 0.60, 1: 0.61, 2: 0.60}, init)
    assert not dc.met and "DC's optimisation adds" in dc.needs and "not more iterations" in dc.needs
    assert "1,000 outer iterations (paper; 10 here)" in L.matching_regime("DC", 10, 10, 0.2, init, init).needs
    assert L.kip_regime("KIP fc ipc 1", [4.0, 5.0, 6.0], 50).met
    assert not L.kip_regime("KIP fc ipc 1", [4.0, 0.1], 50).met and not L.kip_regime("x", [], 50).met


def test_dwa_setting_sums_the_paper_estimate(tmp_path):
    est = tmp_path / "estimate.md"
    est.write_text(
        "| stage | x | paper, one GPU (estimated) |\n|---|---|---:|\n"
        "| dd_teachers | a | 30.0 min |\n| dd_inversion | b | 2.5 h |\n| dd_dwa | c | 9 h |\n"
    )
    assert "`dd_teachers` and `dd_inversion` at the `paper` scale, about 3.0 h on one GPU by " in L.dwa_setting(est)
    est.write_text("| stage | x | y |\n|---|---|---:|\n| dd_teachers | a | 30.0 min |\n")
    assert "about" not in L.dwa_setting(est) and "its cost by" in L.dwa_setting(est)


def test_merge_ceiling_and_synthesis_seeds():
    a, b = claims.Precondition("x (ipc 1)", True, "fine"), claims.Precondition("x (ipc 10)", False, "bad", "more")
    m = L.merge("x", [a, b])
    assert not m.met and m.needs == "more" and "ipc 1: fine" in m.measured and L.merge("x", [a]) is a
    assert L.ceiling_cells("c", {"x": ({"a": {0: 0.5}}, [])}, None, "n") is None
    # below the ceiling by CEILING_HEADROOM: met whatever the effect
    assert L.ceiling_cells("c", {"x": ({"a": {0: 0.60}, "b": {0: 0.70}}, [])}, {0: 0.80, 1: 0.80}, "n").met
    a, b = {0: 0.71, 1: 0.72, 2: 0.71}, {0: 0.60, 1: 0.61, 2: 0.62}
    resolved, unresolved = claims.Effect.paired("r", a, b), claims.Effect.paired("u", a, {0: 0.70, 1: 0.73, 2: 0.71})
    assert resolved.judge() == claims.HOLDS and unresolved.judge() == claims.INCONCLUSIVE
    top = {0: 0.72, 1: 0.72}
    # at the ceiling: met only where every effect of the cell is decided (its interval excludes zero)
    assert L.ceiling_cells("c", {"x": ({"a": a, "b": b}, [resolved])}, top, "n").met
    p = L.ceiling_cells("c", {"x": ({"a": a, "b": b}, [resolved]), "y": ({"a": a}, [unresolved])}, top, "n")
    assert (
        not p.met
        and "x: 71.3%, at it, difference resolved" in p.measured
        and "y: 71.3%, at it, difference unresolved" in p.measured
    )
    assert not L.ceiling_cells("c", {"x": ({"a": a}, [])}, top, "n").met  # no effect measured: nothing resolved
    assert not L.ceiling_cells("c", {"x": ({"a": a}, [None])}, top, "n").met
    # a non-inferiority claim: decided against its margin
    close = claims.Effect.paired("c", a, {0: 0.705, 1: 0.72, 2: 0.705})
    assert not L.ceiling_cells("c", {"x": ({"a": a}, [close])}, top, "n").met
    assert L.ceiling_cells("c", {"x": ({"a": a}, [close])}, top, "n", margin=0.02).met
    assert not L.synthesis_seeds(1).met and L.synthesis_seeds(3).met
    assert doctest.testmod(_L).failed == 0


def test_evaluation_records_and_same_evaluation():
    images, labels = _real()
    d = _set(images, labels, [0, 1, 2])
    base = E.EvalConfig(steps=5, batch_size=4, label_mode="hard")
    dsa = base.replace(augmentation="dsa", dsa=runner.dsa_eval_augment)
    jobs = [
        runner.Job({"method": m, "ipc": 1}, d, cfg, s)
        for m, cfg in (("DC", base), ("DSA", dsa), ("random", base))
        for s in (0, 1)
    ]
    ev = R.evaluation_table(jobs, 100)
    assert len(ev) == 3 and "temperature" not in ev.columns and set(ev["test_n"]) == {"100"}
    assert L.same_evaluation(
        "e", ev, {"DC": {"method": "DC", "ipc": 1}, "random": {"method": "random", "ipc": 1}}, "n"
    ).met
    p = L.same_evaluation("e", ev, {"DC": {"method": "DC", "ipc": 1}, "DSA": {"method": "DSA", "ipc": 1}}, "n")
    assert not p.met and "augmentation" in p.measured
    assert not L.same_evaluation("e", ev, {"DC": {"method": "DC", "ipc": 1}, "x": {"method": "x", "ipc": 1}}, "n").met


def test_per_seed_matches_numbers_and_strings():
    df = pd.DataFrame(
        [
            {"part": "continual", "set": "dwa", "task": 1.0, "seed": 0, "acc": 0.5},
            {"part": "grid", "set": "12 / 0.015", "task": float("nan"), "seed": 0, "acc": 0.6},
            {"part": "continual", "set": "dwa", "task": 1.0, "seed": 1, "acc": 0.7},
        ]
    )
    assert L.per_seed(df, part="continual", set="dwa", task=1) == {0: 0.5, 1: 0.7}
    assert L.per_seed(df, part="grid", set="12 / 0.015") == {0: 0.6}
    with pytest.raises(ValueError, match="several rows"):
        L.per_seed(df.assign(seed=0), part="continual")


# --------------------------------------------------------------------------- dd_tables' rows end to end


def _records(sre2l_acc=0.18, dc_gain=0.002, seeds=(0, 1, 2), ceiling=0.80):
    """Synthetic records of the four set stages: DWA 5 points above its real images, SRe2L at ``sre2l_acc``
    (one real image per class: 0.50), DC ``dc_gain`` above its real init after 10 of 1,000 iterations."""
    rows, ev, reg, cur = [], [], [], []
    noise = {0: 0.0, 1: 0.004, 2: -0.004, 3: 0.002, 4: -0.002, 5: 0.001}

    def add(stage, m, i, st, lab, acc, cfg="teacher"):
        for s in seeds:
            rows.append(
                {"method": m, "ipc": i, "student": st, "labels": lab, "seed": s, "acc": acc + noise[s], "stage": stage}
            )
        ev.append({"method": m, "ipc": str(i), "student": st, "labels": lab, "augmentation": cfg, "stage": stage})

    for st in ("convnet", "resnet18"):
        add("dd_coresets", R.CEILING, 0, st, "teacher", ceiling)
        for i in (1, 10):
            add("dd_inversion", "sre2l", i, st, "teacher", sre2l_acc)
            add("dd_inversion", "dwa", i, st, "teacher", 0.65 + 0.01 * i / 10 + 0.05)
            add("dd_inversion", "rded", i, st, "teacher", 0.60)
            add("dd_inversion", R.REAL_INIT, i, st, "teacher", 0.50 if i == 1 else 0.65)
            add("dd_coresets", R.RELA, i, st, "teacher", 0.62)
        add("dd_inversion", L.LADDER["E"], 10, st, "teacher", 0.68)
        add("dd_inversion", L.LADDER["F"], 10, st, "teacher", 0.66)
    add("dd_coresets", R.CEILING, 0, "convnet", "hard", ceiling)
    for i in (1, 10):
        for c in L.CORESETS:
            add("dd_coresets", c, i, "convnet", "hard", 0.60, "crop_flip")
        for m in ("DC", "DSA"):
            add("dd_matching", m, i, "convnet", "hard", 0.62 + dc_gain, "dsa" if m == "DSA" else "crop_flip")
            add("dd_matching", R.init_name(m), i, "convnet", "hard", 0.62, "dsa" if m == "DSA" else "crop_flip")
            reg.append({"method": m, "ipc": i, "iterations": 10, "init": "real", "displacement": 4.0})
        add("dd_matching", R.DC_DSA_EVAL, i, "convnet", "hard", 0.62 + dc_gain, "dsa")
        reg += [
            {"method": "sre2l", "ipc": i, "iterations": 30, "init": "noise", "displacement": float("nan")},
            {"method": "dwa", "ipc": i, "iterations": 30, "init": "real", "displacement": 20.0},
        ]
        cur += [{"method": "sre2l", "ipc": i, "point": p, "loss": max(3.0 - p, 0.5)} for p in range(30)]
    krr = []
    for k in ("fc", "rbf"):
        for s in seeds:
            krr += [
                {"set": "random real, one-hot", "kernel": k, "ipc": 1, "seed": s, "KRR test acc": 0.50 + noise[s]},
                {"set": f"KIP {k}", "kernel": k, "ipc": 1, "seed": s, "KRR test acc": 0.68 + noise[s] / 2},
                {"set": f"KIP {k} p=0.5", "kernel": k, "ipc": 1, "seed": s, "KRR test acc": 0.6},
                {"set": f"LS {k}", "kernel": k, "ipc": 1, "seed": s, "KRR test acc": 0.45 - noise[s]},
            ]
            reg.append({"method": f"KIP {k}", "kernel": k, "ipc": 1, "seed": s, "iterations": 50, "displacement": 9.0})
    return {
        "results": pd.DataFrame(rows),
        "evaluation": pd.DataFrame(ev),
        "regime": pd.DataFrame(reg),
        "loss_curves": pd.DataFrame(cur),
        "krr": pd.DataFrame(krr),
    }


def _ladder_at(rec, acc):
    """``rec`` with the ladder's arms E and F at ``acc`` on average, seed by seed off G's noise (G − F and G − E:
    0, +0.8 and −0.8 points on seeds 0, 1, 2: a difference whose interval covers zero)."""
    r = rec["results"]
    ef = r["method"].isin([L.LADDER["E"], L.LADDER["F"]])
    rec["results"] = r.assign(acc=r["acc"].where(~ef, acc + r["seed"].map({0: 0.0, 1: -0.004, 2: 0.004})))
    return rec


def _by_location(rows):
    """Rows by location; ReLA Table 5's rows (one per baseline) as ``Table 5 <baseline>``."""
    return {f"{r.location} {r.claim.split()[2]}" if r.location == "Table 5" else r.location: r for r in rows}


def test_tables_claims_are_not_tested_where_the_methods_are_out_of_their_regime():
    rows = _by_location(L.tables_claims(_records()))
    for loc in ("Table 1; abstract", "Table 5 SRe2L"):
        assert rows[loc].verdict == claims.NOT_TESTED and "SRe2L in its regime" in rows[loc].condition
    dc = rows["DC results (ipc 10, 50)"]  # ipc 1 is dd_dc_arch's row
    assert (
        dc.verdict == claims.NOT_TESTED and "DC: 1,000 outer iterations" in dc.condition and "ipc 1: " not in dc.effect
    )
    dsa = rows["DSA results (ipc 10, 50)"]  # ipc 1 ("comparable or worse") is dd_dc_arch's row
    assert (
        dsa.verdict == claims.NOT_TESTED
        and "one evaluation: met" in dsa.preconditions
        and dsa.claim == "DSA beats DC at 10 and 50 ipc"
    )
    # DWA in its regime (moved, 5 points above its real images), 3 seeds, room below the ceiling: tested
    t3 = rows["Table 3"]
    assert t3.tested == "yes" and t3.verdict == claims.HOLDS, t3.condition
    kip = [r for r in L.tables_claims(_records()) if r.paper == "KIP"]
    # KIP against many more natural images needs KIP at two sizes (this fixture has one)
    assert [r.verdict for r in kip] == [claims.NOT_TESTED, claims.FAILS] and "two sizes" in kip[0].condition


def test_tables_claims_follow_the_run():
    rows = _by_location(L.tables_claims(_records(sre2l_acc=0.75, dc_gain=0.05)))
    assert rows["Table 1; abstract"].tested == "yes" and rows["Table 1; abstract"].verdict == claims.FAILS
    assert rows["DC results (ipc 10, 50)"].tested == "yes" and rows["DC results (ipc 10, 50)"].verdict == claims.HOLDS
    # the ladder at its ceiling (0.70; G 0.71): its differences (G 5 points above F and 3 above E on every seed)
    # are resolved there, so it is tested; differences of zero at the ceiling are not
    t3 = _by_location(L.tables_claims(_records(ceiling=0.70)))["Table 3"]
    assert t3.verdict == claims.HOLDS and "difference resolved" in t3.preconditions, t3.condition
    t3 = _by_location(L.tables_claims(_ladder_at(_records(ceiling=0.70), 0.71)))["Table 3"]
    assert t3.verdict == claims.NOT_TESTED and "difference unresolved" in t3.condition
    # two seeds: nothing is tested
    two = L.tables_claims(_records(seeds=(0, 1)))
    assert all(r.verdict == claims.NOT_TESTED for r in two)


def test_arms_of_different_datasets_are_not_compared(tmp_path):
    """At paper scale the set stages run on different datasets (dd_matching CIFAR-10, dd_inversion CIFAR-100,
    dd_coresets Fashion-MNIST): a comparison across them fails its one-evaluation precondition."""
    rec = _records(sre2l_acc=0.75, dc_gain=0.05)
    for name in ("results", "evaluation", "regime", "loss_curves"):
        df = rec[name] if "stage" in rec[name] else rec[name].assign(stage="dd_matching")
        for st, part in df.groupby("stage"):
            (tmp_path / st).mkdir(exist_ok=True)
            part.drop(columns="stage").to_csv(tmp_path / st / f"{name}.csv", index=False)
    (tmp_path / "dd_kip").mkdir(exist_ok=True)
    rec["krr"].to_csv(tmp_path / "dd_kip" / "krr_accuracy.csv", index=False)
    same = _by_location(L.tables_claims(L.load_records(tmp_path, datasets={s: "fashion-mnist" for s in L.UPSTREAM})))
    assert same["DC results (ipc 10, 50)"].verdict == claims.HOLDS
    mixed = L.load_records(tmp_path, datasets={"dd_matching": "cifar10", "dd_inversion": "cifar100"})
    rows = _by_location(L.tables_claims(mixed))
    dc = rows["DC results (ipc 10, 50)"]  # DC (dd_matching, CIFAR-10) against dd_coresets' coresets (Fashion-MNIST)
    assert dc.verdict == claims.NOT_TESTED and "dataset" in dc.condition, dc.condition
    t1 = "Table 1; abstract"  # DWA against SRe2L, both dd_inversion's: one dataset
    assert rows[t1].verdict == same[t1].verdict == claims.FAILS
    assert (
        rows["Table 3"].verdict == claims.NOT_TESTED and "dataset" in rows["Table 3"].condition
    )  # its ceiling: dd_coresets'


def test_dwa_table1_is_judged_at_the_papers_ipcs():
    # SRe2L below one real image per class at ipc 1 only: DWA Table 1 (ipcs 10 and 50) is tested at ipc 10;
    # ReLA Table 5 (ipcs 1, 10, 50) is judged where SRe2L is in its regime (ipc 10), its ipc-1 cells shown
    rec = _records()
    r = rec["results"]
    at10 = (r["method"] == "sre2l") & (r["ipc"] == 10)
    rec["results"] = r.assign(acc=r["acc"].where(~at10, 0.60 + (r["acc"] - 0.18)))
    rows = _by_location(L.tables_claims(rec))
    t1 = rows["Table 1; abstract"]
    assert t1.tested == "yes" and t1.verdict == claims.HOLDS and "(10;" in t1.check, (t1.condition, t1.check)
    t5 = rows["Table 5 SRe2L"]
    assert t5.tested == "yes" and t5.verdict == claims.HOLDS, t5.condition  # ReLA 0.62 against SRe2L 0.60
    assert "ipc 1:" not in t5.effect and "convnet ipc 10" in t5.effect and "resnet18 ipc 10" in t5.effect
    assert "convnet ipc 1 shown, not judged (SRe2L not in its regime: 30 of 1,000 recovery iterations" in t5.ours
    assert "SRe2L in its regime (convnet, ipc 10): met" in t5.preconditions and "shown, not judged" in t5.check
    assert L.DWA_TABLE1_IPCS == (10, 50)


def test_rela_table5_judges_a_recovery_from_noise_cell_by_cell():
    # SRe2L out of its regime at every cell: not tested, the merged regimes name every ipc
    t5 = _by_location(L.tables_claims(_records()))["Table 5 SRe2L"]
    assert t5.verdict == claims.NOT_TESTED and "ipc 1: " in t5.condition and "ipc 10: " in t5.condition
    assert "shown, not judged" not in t5.ours
    # in its regime at ipc 10 on the ConvNet only: the ResNet-18 student drops out, the ConvNet is judged at ipc 10
    rec = _records()
    r = rec["results"]
    at = (r["method"] == "sre2l") & (r["ipc"] == 10) & (r["student"] == "convnet")
    rec["results"] = r.assign(acc=r["acc"].where(~at, 0.70 + (r["acc"] - 0.18)))
    t5 = _by_location(L.tables_claims(rec))["Table 5 SRe2L"]
    assert t5.tested == "yes" and t5.verdict == claims.FAILS and t5.effect == "convnet ipc 10: -8.0", t5.effect
    assert "resnet18 ipc 1 shown, not judged" in t5.ours and "resnet18 ipc 10 shown, not judged" in t5.ours
    # RDED (no recovery from noise) is judged on every cell as before
    rded = _by_location(L.tables_claims(rec))["Table 5 RDED"]
    assert "resnet18 ipc 1" in rded.effect and "shown, not judged" not in rded.ours


def test_rela_table5_has_one_row_per_baseline_under_one_evaluation():
    rows = [r for r in L.tables_claims(_records()) if r.location == "Table 5"]
    assert [r.claim for r in rows] == [f"ReLA beats {b} at equal ipc" for b in ("RDED", "SRe2L", "G-VBSM")]
    rded, sre2l, gvbsm = rows
    # G-VBSM not run (dd_inversion at cpu scale): a row that names the setting, not a verdict
    assert gvbsm.verdict == claims.NOT_TESTED and "`methods` with gvbsm" in gvbsm.condition and "not run" in gvbsm.ours
    # SRe2L out of its regime (below one real image per class) leaves only its own row untested
    assert rded.tested == "yes" and rded.verdict == claims.HOLDS and "SRe2L" not in rded.preconditions, rded.condition
    assert sre2l.verdict == claims.NOT_TESTED and "SRe2L in its regime" in sre2l.condition
    rec = _records()
    ev = rec["evaluation"]
    rec["evaluation"] = ev.assign(augmentation=ev["augmentation"].where(ev["method"] != R.RELA, "steps 75"))
    rded = next(r for r in L.tables_claims(rec) if r.claim == "ReLA beats RDED at equal ipc")
    assert (
        rded.verdict == claims.NOT_TESTED and "one evaluation (convnet, with its ceiling): UNMET" in rded.preconditions
    )


def _with_gvbsm(acc, iterations=4000):
    """:func:`_records` plus dd_inversion's G-VBSM sets at ``acc`` (every ipc and student, 3 seeds)."""
    rec = _records()
    rows = [
        {
            "method": "gvbsm",
            "ipc": i,
            "student": st,
            "labels": "teacher",
            "seed": s,
            "acc": acc,
            "stage": "dd_inversion",
        }
        for st in ("convnet", "resnet18")
        for i in (1, 10)
        for s in (0, 1, 2)
    ]
    ev = [
        {
            "method": "gvbsm",
            "ipc": str(i),
            "student": st,
            "labels": "teacher",
            "augmentation": "teacher",
            "stage": "dd_inversion",
        }
        for st in ("convnet", "resnet18")
        for i in (1, 10)
    ]
    rec["results"] = pd.concat([rec["results"], pd.DataFrame(rows)], ignore_index=True)
    rec["evaluation"] = pd.concat([rec["evaluation"], pd.DataFrame(ev)], ignore_index=True)
    rec["regime"] = pd.concat(
        [
            rec["regime"],
            pd.DataFrame(
                [
                    {
                        "method": "gvbsm",
                        "ipc": i,
                        "iterations": iterations,
                        "init": "noise",
                        "displacement": float("nan"),
                    }
                    for i in (1, 10)
                ]
            ),
        ]
    )
    rec["loss_curves"] = pd.concat(
        [
            rec["loss_curves"],
            pd.DataFrame([{"method": "gvbsm", "ipc": i, "point": p, "loss": 2.0} for i in (1, 10) for p in range(30)]),
        ]
    )
    return rec


def test_rela_against_gvbsm_needs_gvbsm_in_its_regime():
    # G-VBSM at its 4,000 iterations and above one real image per class (0.50): judged, ReLA (0.62) below it fails
    row = _by_location(L.tables_claims(_with_gvbsm(0.70)))["Table 5 G-VBSM"]
    assert (
        row.tested == "yes"
        and row.verdict == claims.FAILS
        and "G-VBSM in its regime (convnet): met (ipc 1: 4,000 of 4,000" in row.preconditions
    )
    # below one real image per class: not tested, whatever ReLA's margin
    row = _by_location(L.tables_claims(_with_gvbsm(0.30)))["Table 5 G-VBSM"]
    assert row.verdict == claims.NOT_TESTED and "G-VBSM in its regime" in row.condition and "4,000" in row.condition
    # short of 4,000 iterations without a plateau: not in its regime either
    rec = _with_gvbsm(0.70, iterations=30)
    rec["loss_curves"] = rec["loss_curves"].assign(
        loss=lambda c: c["loss"].where(c["method"] != "gvbsm", 3.0 - c["point"] / 10)
    )
    row = _by_location(L.tables_claims(rec))["Table 5 G-VBSM"]
    assert row.verdict == claims.NOT_TESTED and "30 of 4,000 recovery iterations" in row.preconditions


def _with_inversion_ceiling(acc, cfg="teacher", seeds=(0, 1, 2)):
    """:func:`_records` plus dd_inversion's own ceiling (the ladder's schedule) at ``acc``, evaluated with ``cfg``."""
    rec = _records()
    rows = [
        {
            "method": R.CEILING,
            "ipc": 0,
            "student": st,
            "labels": "teacher",
            "seed": s,
            "acc": acc,
            "stage": "dd_inversion",
        }
        for st in ("convnet", "resnet18")
        for s in seeds
    ]
    ev = [
        {
            "method": R.CEILING,
            "ipc": "0",
            "student": st,
            "labels": "teacher",
            "augmentation": cfg,
            "stage": "dd_inversion",
        }
        for st in ("convnet", "resnet18")
    ]
    rec["results"] = pd.concat([rec["results"], pd.DataFrame(rows)], ignore_index=True)
    rec["evaluation"] = pd.concat([rec["evaluation"], pd.DataFrame(ev)], ignore_index=True)
    return rec


def test_the_ladder_uses_the_ceiling_of_its_own_schedule():
    # dd_coresets' ceiling (0.80) leaves room; dd_inversion's own (0.70, the ladder's schedule) does not, and
    # there the ladder's differences of zero are unresolved: not tested
    rec = _ladder_at(_with_inversion_ceiling(0.70), 0.71)
    t3 = _by_location(L.tables_claims(rec))["Table 3"]
    assert t3.verdict == claims.NOT_TESTED and "ceiling 70.0%" in t3.condition
    rec = _ladder_at(_with_inversion_ceiling(0.80), 0.71)
    assert _by_location(L.tables_claims(rec))["Table 3"].verdict == claims.INCONCLUSIVE  # room, no difference
    assert _by_location(L.tables_claims(_with_inversion_ceiling(0.80)))["Table 3"].verdict == claims.HOLDS
    # a ceiling evaluated otherwise than the ladder: not tested
    t3 = _by_location(L.tables_claims(_with_inversion_ceiling(0.80, cfg="other")))["Table 3"]
    assert t3.verdict == claims.NOT_TESTED and "with its ceiling" in t3.condition
    # the other rows keep dd_coresets' ceiling (no "several rows per seed")
    assert (
        _by_location(L.tables_claims(_with_inversion_ceiling(0.70)))["DC results (ipc 10, 50)"].verdict
        == claims.NOT_TESTED
    )


def test_rela_table5_judges_a_cell_at_the_ceiling_only_where_its_difference_is_resolved():
    # ReLA (0.62) at dd_inversion's own ceiling (0.63, the baselines' stage; dd_coresets' 0.80 is not used),
    # RDED (0.60) 2 points below it on every seed: resolved there, so the row is judged
    rec = _with_inversion_ceiling(0.63)
    rded = _by_location(L.tables_claims(rec))["Table 5 RDED"]
    assert rded.tested == "yes" and rded.verdict == claims.HOLDS, rded.condition
    assert (
        "clear of the convnet student's ceiling: met (ceiling 63.0%; ipc 1: 62.0%, at it, difference resolved"
        in rded.preconditions
    )
    assert "one evaluation (convnet, with its ceiling): met" in rded.preconditions
    # RDED level with ReLA, seed by seed off its noise: a difference whose interval covers zero at the ceiling
    r = rec["results"]
    at = r["method"] == "rded"
    rec["results"] = r.assign(acc=r["acc"].where(~at, 0.62 + r["seed"].map({0: 0.0, 1: -0.004, 2: 0.004})))
    rded = _by_location(L.tables_claims(rec))["Table 5 RDED"]
    assert rded.verdict == claims.NOT_TESTED and "difference unresolved" in rded.condition
    # the same arms with room below the ceiling: judged (inconclusive)
    rec["results"] = rec["results"].assign(acc=lambda d: d["acc"].where(d["method"] != R.CEILING, 0.80))
    assert _by_location(L.tables_claims(rec))["Table 5 RDED"].verdict == claims.INCONCLUSIVE


# --------------------------------------------------------------------------- dd_dc_arch's rows


def test_dc_arch_claims_need_dc_in_its_regime():
    images, labels = _real()
    sets = {
        v: _set(images, labels, [0, 1, 2, 3, 4, 5], 4.0, iterations=10)
        for v in ("default", "leaky_relu", "max_pool", "batch_norm")
    }
    acc = {"default": 0.71, "leaky_relu": 0.72, "max_pool": 0.69, "batch_norm": 0.70}

    def res(gain):
        return pd.DataFrame(
            [
                {"variant": v, "set": name, "seed": s, "acc": a + (gain if name == "DC" else 0) + 0.001 * s}
                for v, a in acc.items()
                for name in ("DC", R.init_name("DC"))
                for s in (0, 1, 2)
            ]
        )

    rows = L.dc_arch_claims(res(0.002), R.set_facts(sets, images), ipc=2)
    assert len(rows) == 3 and all(r.verdict == claims.NOT_TESTED for r in rows)
    assert all("DC: 1,000 outer iterations" in r.condition for r in rows)
    rows = L.dc_arch_claims(res(0.05), R.set_facts(sets, images), ipc=2, syntheses=3)  # moved, 5 points above init
    assert [r.verdict for r in rows] == [claims.HOLDS] * 3
    # the same with one synthesis shared by the 3 student seeds: the seeds replicate the student, not the set
    rows = L.dc_arch_claims(res(0.05), R.set_facts(sets, images), ipc=2)
    assert all(r.verdict == claims.NOT_TESTED and "a DC synthesis per seed unmet" in r.condition for r in rows)
    assert all("DC sets per variant: 1 behind 3 seeds" in r.condition for r in rows)


def test_an_ablation_whose_variants_did_not_run_is_a_row_that_names_them():
    images, labels = _real()
    sets = {v: _set(images, labels, [0, 1, 2, 3, 4, 5], 4.0, iterations=1000) for v in ("default", "leaky_relu")}
    res = pd.DataFrame(
        [
            {"variant": v, "set": name, "seed": s, "acc": a + 0.05 * (name == "DC") + 0.001 * s}
            for v, a in {"default": 0.71, "leaky_relu": 0.72}.items()
            for name in ("DC", R.init_name("DC"))
            for s in (0, 1, 2)
        ]
    )
    rows = L.dc_arch_claims(res, R.set_facts(sets, images), ipc=1)
    assert [r.claim.split()[0] for r in rows] == ["Leaky", "Average", "Instance"]
    assert rows[0].verdict != claims.NOT_TESTED or "leaves out" not in rows[0].condition
    assert [r.verdict for r in rows[1:]] == [claims.NOT_TESTED] * 2
    assert "`variants` leaves out max_pool" in rows[1].condition
    assert "leaves out batch_norm, layer_norm, group_norm" in rows[2].condition


def test_dcs_table1_cell_is_judged_from_dcs_own_protocol_once_three_seeds_reach_1000_iterations():
    def table(dc=0.70, herding=0.60, seeds=(0, 1, 2), snapshots=(500, 1000)):
        rows = [
            {"method": "dc", "ipc": 1, "seed": s, "iterations": k, "acc": dc - 0.01 * (k < 1000) + 0.002 * s}
            for s in seeds
            for k in snapshots
        ]
        rows += [
            {"method": m, "ipc": 1, "seed": s, "iterations": 0, "acc": a - 0.001 * s}
            for m, a in (("random", 0.53), ("herding", herding), ("k_center", herding), ("forgetting", 0.15))
            for s in (0, 1, 2, 3, 4, 5)
        ]
        return pd.DataFrame(rows)

    (r,) = L.dc_protocol_claims(table())
    assert r.verdict == claims.HOLDS and "DC − forgetting" in r.effect and "DC 70.2" in r.ours
    assert L.dc_protocol_claims(table(herding=0.75))[0].verdict == claims.CONDITIONAL  # beats random, not herding
    (r,) = L.dc_protocol_claims(table(seeds=(0, 1)))
    assert r.verdict == claims.NOT_TESTED and "2 seed(s) at 1,000" in r.preconditions
    (r,) = L.dc_protocol_claims(table(snapshots=(100, 500)))  # a run still on its way is named, not judged
    assert r.verdict == claims.NOT_TESTED and "seed 0 at 500" in r.preconditions and "not yet" in r.ours
    assert not [x for x in _L.dc_arch_claims(None, {}, ipc=1) if x.location == "DC results (ipc 1)"]


def test_the_labelled_sets_in_their_regime_decide_dwa_tables_1_and_3_and_rela_table_5(tmp_path):
    def table(dwa=0.80, sre2l=0.70, real=0.78, g_over_f=0.02, seeds=range(6), steps=4800, images=10_000):
        acc = {R.REAL_INIT: real, "sre2l": sre2l, "dwa": dwa, "rded": 0.75, "D: real init": 0.78,
               "E: + decoupled var": dwa - 0.02, "F: + random adjust": dwa - g_over_f}  # fmt: skip
        rows = [
            {
                "arm": a,
                "ipc": 10,
                "seed": s,
                "test acc": v + 0.002 * (s % 3),
                "iterations": 0 if a == R.REAL_INIT else 1000,
                "displacement": 0.0 if a == R.REAL_INIT else (float("nan") if a == "sre2l" else 20.0),
                "student steps": steps,
                "test images": images,
            }  # fmt: skip
            for a, v in acc.items()
            for s in seeds
        ]
        rows += [{**rows[0], "ipc": 1, "seed": s, "test acc": 0.55} for s in seeds]  # SRe2L's floor
        return pd.DataFrame(rows)

    plateaus = pd.DataFrame(
        [
            {
                "curve": "teacher",
                "labels": "hard",
                "seeds": 2,
                "plateau at": 10,
                "reached": True,
                "accuracy there": 0.9,
            },
            {
                "curve": "random ipc 10",
                "labels": "teacher",
                "seeds": 2,
                "plateau at": 4800,
                "reached": True,
                "accuracy there": 0.77,
            },  # fmt: skip
        ]
    )
    rows = {(r.paper, r.location.split(" (")[0], r.claim): r for r in L.labelled_protocol_claims(table(), plateaus)}
    assert rows["DWA", "Table 1", "DWA beats SRe2L"].verdict == claims.HOLDS
    t3 = rows["DWA", "Table 3", "Directed weight adjustment beats random adjustment and no adjustment"]
    assert t3.verdict == claims.HOLDS and "G − F" in t3.effect
    assert rows["ReLA", "Table 5", "ReLA beats SRe2L at equal ipc"].verdict == claims.HOLDS
    assert rows["ReLA", "Table 5", "ReLA beats RDED at equal ipc"].verdict == claims.HOLDS
    assert all(r.location.endswith("(ipc 10, teacher and students at their plateau)") for r in rows.values())

    def verdicts(**kw):
        return {r.claim: r for r in L.labelled_protocol_claims(table(**kw), plateaus)}

    # DWA below the real images it starts from: not in its regime, so DWA vs SRe2L is not tested
    r = verdicts(dwa=0.76)["DWA beats SRe2L"]
    assert r.verdict == claims.NOT_TESTED and "DWA in its regime (ipc 10) unmet" in r.condition
    assert verdicts(dwa=0.76)["ReLA beats SRe2L at equal ipc"].verdict == claims.HOLDS  # needs no DWA
    # students cut short of their plateau, or a test subset: nothing is judged
    r = verdicts(steps=300)["ReLA beats RDED at equal ipc"]
    assert r.verdict == claims.NOT_TESTED and "the students at their plateau unmet" in r.condition
    assert verdicts(images=1000)["ReLA beats RDED at equal ipc"].verdict == claims.NOT_TESTED
    # three seeds: no disjoint set to replicate on; no records at all: every row says what to run
    three = _L.labelled_protocol_claims(table(seeds=range(3)), plateaus)[-1]
    assert (
        rule.judged(three).verdict == claims.NOT_TESTED and rule.judged(three, all_seeds=True).verdict == claims.HOLDS
    )
    empty = L.labelled_protocol_claims(pd.DataFrame(), pd.DataFrame())
    assert len(empty) == 4 and all(r.verdict == claims.NOT_TESTED for r in empty)
    # the stage's judge reads the two tables dd_regime writes, at ipc 10 and (DWA's rows) at 50
    judged = L.regime_stage_claims(_tables_dir(tmp_path, table(), plateaus))[-6:]
    assert [(r.claim, r.verdict) for r in judged[:4]] == [
        (r.claim, r.verdict) for r in L.labelled_protocol_claims(table(), plateaus)
    ]
    assert [r.location for r in judged[4:]] == [
        "Table 1 (ipc 50, teacher and students at their plateau)",
        "Table 3 (ipc 50, teacher and students at their plateau)",
    ]
    assert all(r.verdict == claims.NOT_TESTED and "--ipc 50 --seeds S" in r.condition for r in judged[4:])
    assert judged[4].ours.startswith("DWA –, SRe2L –")  # no records at ipc 50: no number, not "nan"
    assert (
        "B: real images (DWA's init) at ipc 10: 6, B: real images (DWA's init) at ipc 1: 6" in judged[0].preconditions
    )


def test_dwa_at_50_images_per_class_is_judged_on_its_own_records_and_plateau():
    def table(steps50=19200):
        rows = []
        for ipc, steps, acc in ((10, 4800, {R.REAL_INIT: 0.78, "sre2l": 0.62, "dwa": 0.71}),
                                (50, steps50, {R.REAL_INIT: 0.84, "sre2l": 0.75, "dwa": 0.86,
                                               "E: + decoupled var": 0.83, "F: + random adjust": 0.84})):  # fmt: skip
            rows += [
                {
                    "arm": a,
                    "ipc": ipc,
                    "seed": s,
                    "test acc": v + 0.002 * (s % 3),
                    "iterations": 1000,
                    "displacement": float("nan") if a == "sre2l" else 20.0,
                    "student steps": steps,
                    "test images": 10_000,
                }  # fmt: skip
                for a, v in acc.items()
                for s in range(6)
            ]
        rows += [{**rows[0], "ipc": 1, "seed": s, "test acc": 0.55} for s in range(6)]  # SRe2L's floor
        return pd.DataFrame(rows)

    plateaus = pd.DataFrame(
        [
            {"curve": c, "labels": lb, "seeds": 2, "plateau at": at, "reached": True, "accuracy there": 0.8}
            for c, lb, at in (
                ("teacher", "hard", 10),
                ("random ipc 10", "teacher", 4800),
                ("random ipc 50", "teacher", 19200),
            )  # fmt: skip
        ]
    )
    at10 = {r.claim: r for r in L.labelled_protocol_claims(table(), plateaus)}
    at50 = {r.claim: r for r in L.labelled_protocol_claims(table(), plateaus, ipc=50)}
    assert len(at50) == 2 and all("ipc 50" in r.location for r in at50.values())  # DWA's rows alone
    assert at10["DWA beats SRe2L"].verdict == claims.NOT_TESTED  # below its real images at ipc 10
    assert at50["DWA beats SRe2L"].verdict == claims.HOLDS  # above them at 50
    t3 = at50["Directed weight adjustment beats random adjustment and no adjustment"]
    assert t3.verdict == claims.HOLDS and t3.paper_numbers == "CIFAR-100 R18 ipc 50: 56.1 / 56.2 / 60.3"
    # ipc 50's students short of ipc 50's plateau: its rows are not tested, whatever ipc 10's records say
    r = {x.claim: x for x in L.labelled_protocol_claims(table(steps50=4800), plateaus, ipc=50)}["DWA beats SRe2L"]
    assert r.verdict == claims.NOT_TESTED and "the students at their plateau unmet" in r.condition
    # the futility stage: DWA and its real images on seeds 0-2 alone
    stage = table()
    stage = stage[(stage["ipc"] == 50) & stage["arm"].isin([R.REAL_INIT, "dwa"]) & (stage["seed"] < 3)].copy()
    above = {x.claim: x for x in L.labelled_protocol_claims(stage, plateaus, ipc=50)}["DWA beats SRe2L"]
    assert above.verdict == claims.NOT_TESTED and "--ipc 50 --seeds S" in above.condition  # DWA clears: run on
    stage.loc[stage["arm"] == "dwa", "test acc"] -= 0.05  # DWA below its real images by the interval: the plan stops
    for row in L.labelled_protocol_claims(stage, plateaus, ipc=50):
        assert row.verdict == claims.NOT_TESTED and "DWA in its regime (ipc 50) unmet" in row.condition
        assert "futility rule stopped it" in row.condition and "--ipc 50 --seeds S" not in row.condition
    at_ten = L.labelled_protocol_claims(stage.assign(ipc=10, **{"student steps": 4800}), plateaus)
    assert "DWA in its regime (ipc 10) unmet" in at_ten[0].condition  # the rule is the ipc-50 plan's alone
    assert "futility" not in at_ten[0].condition and "labelled_protocol --seeds S" in at_ten[0].condition


def _tables_dir(d, sets, plateaus):
    """``dd_regime``'s tables the judge reads, written to ``d``."""
    sets.to_csv(d / "labelled_sets.csv", index=False)
    plateaus.to_csv(d / "plateaus.csv", index=False)
    pd.DataFrame(columns=["method", "ipc", "seed", "iterations", "acc"]).to_csv(d / "dc_vs_coresets.csv", index=False)
    return d


def test_a_comparison_without_one_of_its_arms_is_not_tested():
    rec = _records()
    rec["krr"] = rec["krr"][rec["krr"]["set"] != "LS rbf"]
    ls = [r for r in L.tables_claims(rec) if r.location == "LS"][0]
    assert ls.verdict == claims.NOT_TESTED and "every compared arm evaluated unmet" in ls.condition
    assert rule.decide(claims.Evidence.from_json(_L._decide([], [])["evidence"]))["verdict"] == claims.NOT_TESTED


def test_dsas_ipc1_cell_is_judged_from_the_papers_own_syntheses_once_three_seeds_have_both():
    def table(dsa=0.70, dc=0.70, dsa_seeds=(0, 1, 2), dsa_at=(500, 1000)):
        rows = [{"method": "dc", "ipc": 1, "seed": s, "iterations": 1000, "acc": dc + 0.001 * s} for s in range(6)]
        rows += [
            {"method": "dsa", "ipc": 1, "seed": s, "iterations": k, "acc": dsa - 0.01 * (k < 1000) + 0.002 * s}
            for s in dsa_seeds
            for k in dsa_at
        ]
        return pd.DataFrame(rows)

    (r,) = L.dsa_protocol_claims(table())  # comparable: DC − DSA about 0, interval above −1
    assert r.verdict == claims.HOLDS and r.claim == "DSA is comparable to or worse than DC at 1 ipc"
    assert "DC − DSA" in r.effect and "DSA 70.2, DC 70.1" in r.ours
    assert L.dsa_protocol_claims(table(dsa=0.66))[0].verdict == claims.HOLDS  # worse
    assert L.dsa_protocol_claims(table(dsa=0.76))[0].verdict == claims.FAILS  # 6 points better
    (r,) = L.dsa_protocol_claims(table(dsa_seeds=(0, 1)))
    assert r.verdict == claims.NOT_TESTED and "2 matched seed(s) at 1,000" in r.preconditions
    (r,) = L.dsa_protocol_claims(table(dsa_at=(100, 500)))  # on its way: named with its progress, not judged
    assert r.verdict == claims.NOT_TESTED and "seed 1 at 500" in r.preconditions and "DSA not yet" in r.ours
    (r,) = L.dsa_protocol_claims(table().iloc[:0])  # no run yet
    assert r.verdict == claims.NOT_TESTED and "--methods dsa" in r.condition
    assert not [x for x in _L.dc_arch_claims(None, {}, ipc=1) if x.paper == "DSA"]


def test_table4_has_one_row_per_distilling_model():
    images, labels = _real()
    d = _set(images, labels, [0, 1, 2, 3, 4, 5], 40.0, iterations=1000, ipc=2)
    sre2l = DistilledSet(
        d.images,
        d.labels,
        3,
        MEAN,
        STD,
        "sre2l",
        params={"init_index": None, "iterations": 1000, "loss_curve": [3.0, 2.0, 1.5, 1.4, 1.4, 1.4]},
    )
    rows = []
    for b, gain in (("convnet", 0.10), ("resnet18", 0.10)):
        for a in ("convnet", "resnet18"):
            for s in (0, 1, 2):
                rows += [
                    {
                        "method": "dwa",
                        "distilled by": b,
                        "student": a,
                        "ipc": 2,
                        "seed": s,
                        "acc": 0.7 + gain + 0.002 * s,
                    },
                    {
                        "method": "sre2l",
                        "distilled by": b,
                        "student": a,
                        "ipc": 2,
                        "seed": s,
                        "acc": (0.7 if b == "convnet" else 0.3) + 0.001 * s,
                    },
                ]
        for s in (0, 1, 2):
            rows += [
                {
                    "method": R.REAL_INIT,
                    "distilled by": b,
                    "student": "convnet",
                    "ipc": i,
                    "seed": s,
                    "acc": 0.5 if i == 1 else 0.75,
                }
                for i in (1, 2)
            ]
    cells = [(b, a, 2) for b in ("convnet", "resnet18") for a in ("convnet", "resnet18")]
    sets = {(m, b, 2): (sre2l if m == "sre2l" else d) for m in ("sre2l", "dwa") for b in ("convnet", "resnet18")}
    evals = pd.DataFrame(
        [
            {"method": m, "distilled by": b, "student": a, "ipc": "2", "augmentation": "crop_flip"}
            for m in ("sre2l", "dwa")
            for b, a, _ in cells
        ]
    )
    out = {
        r.location: r
        for r in L.crossarch_claims(
            pd.DataFrame(rows),
            evals,
            R.set_facts(sets, images),
            ipc=2,
            matrix_methods=[],
            matrix_archs=["mlp", "convnet"],
            table4=cells,
            table9=[],
        )
    }
    by_conv, by_r18 = out["Table 4 (distilled by ConvNet)"], out["Table 4 (distilled by ResNet-18)"]
    assert "convnet→resnet18" in by_conv.effect and "resnet18→" not in by_conv.effect
    assert by_conv.verdict == claims.HOLDS, by_conv.condition
    assert by_r18.verdict == claims.NOT_TESTED and "SRe2L in its regime (ipc 2, by resnet18) unmet" in by_r18.condition
    assert "by convnet" not in by_r18.preconditions and "ConvNet-128-distilled" in by_conv.paper_numbers
    # the run leaves out the ResNet-18 and ViT-BN teachers (cross_teachers: []): their rows name the setting
    conv_only = [c for c in cells if c[0] == "convnet"]
    out = {
        r.location: r
        for r in L.crossarch_claims(
            pd.DataFrame(rows),
            evals,
            R.set_facts(sets, images),
            ipc=2,
            matrix_methods=[],
            matrix_archs=["mlp", "convnet"],
            table4=conv_only,
            table9=conv_only,
        )
    }
    assert out["Table 4 (distilled by ConvNet)"].verdict == claims.HOLDS
    for loc in ("Table 4 (distilled by ResNet-18)", "Table 9"):
        assert out[loc].verdict == claims.NOT_TESTED and "`cross_teachers` leaves out" in out[loc].condition, loc
    assert "ResNet-18, ViT-BN" in out["Table 9"].condition
    assert (
        "(ipc [2])" in out["Table 4 (distilled by ResNet-18)"].check
    )  # the table's ipcs, though the block did not run


# --------------------------------------------------------------------------- dd_crossarch's DC row


def _crossarch(t2_iterations, conv_gain, seeds=(0, 1, 2), init_acc=0.6):
    images, labels = _real()
    t2 = _set(images, labels, [0, 1, 2], 4.0, iterations=t2_iterations)
    archs = ["mlp", "lenet", "convnet", "resnet18"]
    rows = [
        {
            "method": R.DC_TABLE2,
            "distilled by": "convnet",
            "student": a,
            "ipc": 1,
            "seed": s,
            "acc": 0.6 + (0 if a == "mlp" else conv_gain) + 0.002 * s,
        }
        for a in archs
        for s in seeds
    ]
    rows += [
        {
            "method": R.init_name(R.DC_TABLE2),
            "distilled by": "convnet",
            "student": "convnet",
            "ipc": 1,
            "seed": s,
            "acc": init_acc + 0.001 * s,
        }
        for s in seeds
    ]
    res = pd.DataFrame(rows)
    out = L.crossarch_claims(
        res,
        pd.DataFrame(),
        R.set_facts({(R.DC_TABLE2, "convnet", 1): t2}, images),
        ipc=10,
        matrix_methods=["dc"],
        matrix_archs=archs,
        table4=[],
        table9=[],
        table2_archs=archs,
        table2_ipc=1,
    )
    return next(r for r in out if r.location == "cross-architecture")


def test_dc_cross_architecture_row_reads_dc_table2_at_its_regime():
    row = _crossarch(1000, 0.05)
    assert row.verdict == claims.HOLDS and "DC's set at ipc 1" in row.check
    assert _crossarch(1000, -0.05, init_acc=0.5).verdict == claims.FAILS
    # 10 of 1,000 outer iterations and no gain over its real images: not in DC's regime
    row = _crossarch(10, 0.05, init_acc=0.65)
    assert row.verdict == claims.NOT_TESTED and "DC: 1,000 outer iterations" in row.condition
    # two evaluation seeds give no interval
    assert _crossarch(1000, 0.05, seeds=(0, 1)).verdict == claims.NOT_TESTED


# --------------------------------------------------------------------------- the judge reads the set stages' tables


def test_dd_tables_judges_a_set_stage_from_its_tables_as_from_memory(tmp_path):
    """dd_dc_arch records its results, its sets' facts and its settings; the rows set_stage_claims reads back
    from those files are the rows judged from the objects in memory."""
    images, labels = _real()
    sets = {
        v: _set(images, labels, [0, 1, 2, 3, 4, 5], g, iterations=1000)
        for v, g in (("default", 4.0), ("max_pool", 3.0))
    }
    dsa = _set(images, labels, [0, 1, 2, 3, 4, 5], 5.0, iterations=1000)
    accs = {
        ("default", "DC"): 0.70,
        ("default", R.init_name("DC")): 0.55,
        ("max_pool", "DC"): 0.66,
        ("max_pool", R.init_name("DC")): 0.54,
        ("default", "random"): 0.5,
        ("default", "DSA"): 0.69,
        ("default", R.init_name("DSA")): 0.56,
        ("default", R.DC_DSA_EVAL): 0.70,
    }
    res = pd.DataFrame(
        [
            {"variant": v, "set": n, "seed": s, "acc": a + 0.001 * s * (n == "DC") + 1 / 600}
            for (v, n), a in accs.items()
            for s in (0, 1, 2)
        ]
    )
    folder = tmp_path / "dd_dc_arch"
    folder.mkdir()

    class Rep:  # writes as compendium.pipeline.report.Reporter.table does
        def table(self, df, name, float_format="%.4g"):
            df.to_csv(folder / f"{name}.csv", index=False, float_format=float_format)

    rep = Rep()
    rep.table(res, "results", float_format=R.EXACT)  # as the stage writes what its judge reads
    pd.testing.assert_frame_equal(pd.read_csv(folder / "results.csv"), res)  # exactly: 457/600 is no 4-digit number
    R.record_sets(
        rep, {**{("DC", v): d for v, d in sets.items()}, ("DSA", "default"): dsa}, images, ["method", "variant"]
    )
    rep.table(R.settings_table(ipc=1, coresets=["random"], pool_n=20000), "settings")
    want = L.dc_arch_claims(res, R.set_facts(sets, images), ipc=1)
    got = L.set_stage_claims(tmp_path, ["dd_dc_arch"])
    assert [ledger.to_frame([r]).to_dict("records") for r in got] == [
        ledger.to_frame([r]).to_dict("records") for r in want
    ]
    assert not any(r.paper == "DSA" for r in got)
    assert not any(r.verdict == claims.HOLDS for r in got)  # one synthesis per variant: no row is tested
    (folder / "settings.csv").unlink()
    with pytest.raises(FileNotFoundError, match="dvc repro -s dd_dc_arch"):
        L.set_stage_claims(tmp_path, ["dd_dc_arch"])


def test_the_set_stages_judge_nothing():
    """The labelled stages that make and evaluate sets import no check module: only dd_tables (light) judges, so a
    change to a check reruns it, not the syntheses."""
    for stage in ("dd_coresets", "dd_inversion", "dd_matching", "dd_kip", "dd_dwa", "dd_dc_arch", "dd_crossarch"):
        sources = {str(p) for p in stagedeps.stage_sources(stage)}
        assert not any("pipeline/checks" in s for s in sources), stage
    assert any("pipeline/checks/labelled.py" in str(p) for p in stagedeps.stage_sources("claims_ledger"))
