"""DWA's further experiments (``distill.dwa_experiments``): the named syntheses, their jobs and tables."""

import json
import math

import matplotlib
import pandas as pd
import torch

from compendium.distill import continual, inversion, plots, sets
from compendium.distill import dwa_experiments as dwa
from compendium.distill import evaluate as E
from compendium.pipeline.checks import labelled as L

matplotlib.use("Agg")


def _set(n_per_class=3, classes=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    labels = torch.arange(classes).repeat(n_per_class)  # interleaved: 0 1 2 3 0 1 2 3 ...
    return sets.DistilledSet(
        torch.randn(len(labels), 1, 6, 6, generator=g),
        labels,
        classes,
        (0.5,),
        (0.5,),
        "toy",
        params={"ipc": n_per_class},
    )


SPEC_KW = dict(
    rho=0.015,
    K=12,
    cross_teachers=["resnet18"],
    cross_ipc=1,
    cross_ipc_extra=[10],
    sweep_lambdas=[0.01, 0.11],
    sweep_ipc=2,
    grid_K=[1, 12],
    grid_rho=[0.015],
    grid_ipc=1,
    real_ipcs={1, 2, 1, 10},
)


def test_coupling_coincides_at_001():
    assert dwa.coupling(0.01, "coupled") == {"r_bn": 0.01, "r_var": 1.0}
    assert dwa.coupling(0.01, "decoupled") == {"r_bn": 0.01, "r_var": 1.0}
    assert dwa.coupling(0.11, "decoupled") == {"r_bn": 0.01, "r_var": 0.11 / 0.01}


def test_specs_name_every_set_with_its_function():
    common = dict(iterations=5, lr=0.25, jitter=2, seed=0)
    specs = dwa.synthesis_specs(common, **SPEC_KW)
    assert specs[("sre2l", "resnet18")][:3] == (inversion.sre2l_synthesize, "resnet18", 1)
    assert specs[("t4", "dwa", 10)][:3] == (inversion.dwa_synthesize, "resnet18", 10)
    assert specs[("sweep", "dwa", "decoupled", 0.11)][3]["r_var"] == 0.11 / 0.01
    assert specs[("grid", 0, 0.0)][3]["weight_adjust"] is None and specs[("grid", 12, 0.015)][3]["K"] == 12
    assert [k for k in specs if k[0] == "real"] == [("real", 1), ("real", 2), ("real", 10)]
    assert specs[("real", 2)][0] is inversion.inversion_synthesize and specs[("real", 2)][3]["iterations"] == 0
    assert len(specs) == 2 + 2 + 8 + 3 + 3
    assert specs[("dwa", "resnet18")][3]["iterations"] == 5  # cross sets default to the common count
    short = dwa.synthesis_specs(common, **SPEC_KW, cross_iterations=3)
    assert specs[("sweep", "sre2l", "coupled", 0.11)][3]["iterations"] == 5
    assert {k: v[3]["iterations"] for k, v in short.items() if k[0] in ("sre2l", "dwa", "t4")} == {
        ("sre2l", "resnet18"): 3,
        ("dwa", "resnet18"): 3,
        ("t4", "sre2l", 10): 3,
        ("t4", "dwa", 10): 3,
    }
    assert short[("grid", 12, 0.015)][3]["iterations"] == 5 and short[("real", 2)][3]["iterations"] == 0
    no_extra = dwa.synthesis_specs(common, **dict(SPEC_KW, cross_teachers=["vit_bn"]))
    assert not any(k[0] == "t4" for k in no_extra)  # Table 4's further blocks are ResNet-18's only


def _fake(teacher, images, labels, ipc, mean, std, **kw):
    return {"teacher": teacher, "ipc": ipc, **kw}


def test_synthesize_runs_identical_configurations_once_biggest_first():
    specs = {
        ("a",): (_fake, "convnet", 1, {"x": 1, "method": "a"}),
        ("b",): (_fake, "convnet", 1, {"x": 1, "method": "b"}),
        ("c",): (_fake, "other", 1, {"x": 1}),
        ("d",): (_fake, "convnet", 2, {"x": 2}),
    }
    out = dwa.synthesize(specs, {"convnet": "T0", "other": "T1"}, None, None, None, None, workers=0)
    assert out[("a",)] is out[("b",)] and out[("a",)]["method"] == "a"  # the first name's kwargs
    assert out[("c",)]["teacher"] == "T1" and out[("d",)]["ipc"] == 2
    assert list(out) == [("c",), ("d",), ("a",), ("b",)]  # a foreign teacher's ipc counts 4 times


def test_class_prefix_keeps_the_first_images_of_each_class():
    d = _set()
    m = continual.class_prefix(d, 2)
    assert m.labels.tolist() == [0, 1, 2, 3, 0, 1, 2, 3] and m.params["ipc"] == 2
    assert torch.equal(m.images, d.images[:8])


def test_seed_cell_and_tables():
    res = pd.DataFrame(
        [
            {"part": "sweep", "set": "sre2l / decoupled / 0.01", "acc": 0.4},
            {"part": "sweep", "set": "sre2l / decoupled / 0.01", "acc": 0.6},
            {"part": "grid", "set": "0 / 0.0", "seed": 0, "acc": 0.3},
            {"part": "grid", "set": "1 / 0.015", "seed": 0, "acc": 0.5},
            {"part": "continual", "set": "sre2l", "task": 1, "acc": 0.8},
            {"part": "continual", "set": "dwa", "task": 1, "acc": 0.9},
            {"part": "continual", "set": "dwa", "task": 1, "acc": 0.7},
        ]
    )
    mu, sd = dwa.seed_cell(res, "sweep", "sre2l / coupled / 0.01")  # read under its decoupled name
    assert abs(mu - 0.5) < 1e-12 and abs(sd - math.sqrt(0.02)) < 1e-12
    assert dwa.seed_cell(res, "grid", "0 / 0.0") == (0.3, 0.0)
    sweep = dwa.sweep_table(res, [0.01])
    assert sweep[sweep["method"] == "sre2l"]["mean"].round(12).tolist() == [0.5, 0.5]
    grid, none = dwa.grid_table(res, [1], [0.015])
    assert (
        none == 0.3
        and grid.iloc[0]["mean"] == 0.5
        and abs(grid.iloc[0]["delta"] - 0.2) < 1e-12
        and grid.iloc[0]["seeds"] == 1
    )
    paired = pd.DataFrame(
        [
            {"part": "grid", "set": n, "seed": s, "acc": a}
            for n, accs in (("0 / 0.0", (0.5, 0.7, 0.6)), ("1 / 0.015", (0.52, 0.71, 0.63)))
            for s, a in enumerate(accs)
        ]
    )
    d, sd, n = dwa.paired_delta(paired, "grid", "1 / 0.015", "0 / 0.0")
    assert n == 3 and abs(d - 0.02) < 1e-12 and abs(sd - 0.01) < 1e-12  # the seed noise of the pairs, not of the arms
    cl, t10 = dwa.continual_table(res, [(0, 1)])
    assert t10.set_index("method").loc["sre2l", "2 classes"] == "80.0 ± 0.0"
    assert t10.set_index("method").loc["dwa", "2 classes"] == "80.0 ± 14.1"


def test_evaluation_jobs_cover_every_arm():
    d = _set()
    setz = {
        ("sweep", "sre2l", "coupled", 0.01): d,
        ("sweep", "sre2l", "decoupled", 0.01): d,
        ("grid", 1, 0.015): d,
        ("real", 1): d,
        ("sre2l", "resnet18"): d,
    }
    cfg = E.EvalConfig(arch="convnet", steps=2, device="cpu")
    tasks = continual.task_classes(4, 2)
    jobs = dwa.evaluation_jobs(
        setz,
        {"sre2l": d},
        cfg,
        None,
        seeds=[0, 1, 2],
        sweep_seeds=[0],
        ceiling=("ceil", d),
        tasks=tasks,
        cl_ipc=1,
        eval_steps=2,
    )
    keys = [(j.key["part"], j.key["set"]) for j in jobs]
    assert keys.count(("sweep", "sre2l / decoupled / 0.01")) == 1 and ("sweep", "sre2l / coupled / 0.01") not in keys
    assert (
        keys.count(("grid", "1 / 0.015")) == 3
        and keys.count(("ceiling", "ceil")) == 3
        and keys.count(("inv", "sre2l")) == 1
    )
    cont = [j for j in jobs if j.key["part"] == "continual"]
    assert [j.key["classes"] for j in cont] == [2, 4] and len(cont[0].dset) == 2
    cl_jobs = dwa.evaluation_jobs(
        setz,
        {"sre2l": d},
        cfg,
        None,
        seeds=[0, 1, 2],
        sweep_seeds=[0],
        ceiling=("ceil", d),
        tasks=tasks,
        cl_ipc=1,
        eval_steps=2,
        cl_seeds=[3, 4],
    )
    assert [j.seed for j in cl_jobs if j.key["part"] == "continual"] == [3, 4, 3, 4]  # Table 10's own seeds


def test_feature_distance_and_figures():
    d = _set()
    z_real = torch.randn(12, 4, generator=torch.Generator().manual_seed(1))
    spread = dwa.logit_spread({"sre2l": 2 * z_real}, {"sre2l": d}, z_real, d.labels, 3)
    same = dwa.logit_spread({"sre2l": z_real}, {"sre2l": d}, z_real, d.labels, 3)
    assert list(spread["method"]) == ["sre2l"] and spread.iloc[0]["ipc"] == 3
    assert abs(spread.iloc[0, 2] - 4 * same.iloc[0, 2]) < 1e-9  # twice the logits: four times the squared spread
    fig = plots.logit_tsne(torch.randn(20, 2).numpy(), torch.randn(4, 2).numpy(), torch.randn(4, 2).numpy(), 3)
    assert fig.axes[0].get_title().startswith("DWA Fig. 1")
    sweep = pd.DataFrame(
        [
            {"method": m, "lambda": l, "weights": w, "mean": 0.5, "std": 0.1}
            for m in ("sre2l", "dwa")
            for l in (0.01, 0.11)
            for w in ("coupled", "decoupled")
        ]
    )
    assert len(plots.lambda_sweep(sweep, 2, 3).axes) == 2
    grid = pd.DataFrame(
        [{"K": 1, "rho": r, "delta": d, "delta std": 0.004, "seeds": 3} for r, d in ((0.01, 0.1), (0.02, -0.003))]
    )
    ax = plots.grid_heatmap(grid, (0.4, 0.02), 1).axes[0]
    assert "ρ = 0 gives 40.0 ± 2.0% (3 seeds)" in ax.get_title()
    assert sorted(t.get_text() for t in ax.texts) == ["+10.0 ± 0.4", "−0.3 ± 0.4"]
    assert "3 seeds" in ax.figure.axes[1].get_ylabel()


def test_fig4_seeds_add_the_coupled_and_decoupled_sets_at_its_lambda():
    common = dict(iterations=5, lr=0.25, jitter=2, seed=0)
    specs = dwa.synthesis_specs(common, **SPEC_KW, fig4_seeds=[0, 1, 2])
    extra = sorted(k for k in specs if k[0] == "fig4")
    assert extra == sorted(
        ("fig4", m, how, s) for m in ("sre2l", "dwa") for how in ("coupled", "decoupled") for s in (1, 2)
    )
    for _, m, how, s in extra:  # the sweep's set at λ 0.11, re-seeded
        fn, t, ipc, kw = specs[("fig4", m, how, s)]
        sfn, st, sipc, skw = specs[("sweep", m, how, 0.11)]
        assert (fn, t, ipc) == (sfn, st, sipc) and kw["seed"] == s
        assert {k: v for k, v in kw.items() if k not in ("seed", "method")} == {
            k: v for k, v in skw.items() if k not in ("seed", "method")
        }
    assert (
        len(dwa.synthesis_specs(common, **SPEC_KW, fig4_seeds=[0])) == len(dwa.synthesis_specs(common, **SPEC_KW)) + 2
    )
    assert dwa.fig4_lambda([0.01, 0.11, 0.23]) == 0.11 and dwa.fig4_lambda([0.01, 0.05]) == 0.05


def test_fig1_sets_are_sre2l_and_dwa_as_published_and_coincide_with_the_sweeps():
    common = dict(iterations=5, lr=0.25, jitter=2, seed=0)
    specs = dwa.synthesis_specs(common, **SPEC_KW, fig4_seeds=[0, 1, 2])
    assert sorted(k for k in specs if k[0] == "fig1") == sorted(
        ("fig1", m, s) for m in ("sre2l", "dwa") for s in (0, 1, 2)
    )
    assert specs[("fig1", "sre2l", 1)][0] is inversion.sre2l_synthesize and specs[("fig1", "dwa", 2)][3]["K"] == 12

    def sig(key):
        fn, t, ipc, kw = specs[key]
        return fn, t, ipc, {k: v for k, v in kw.items() if k != "method"}

    # seed 0: the sweep's SRe2L (coupled 0.01) and DWA (decoupled 0.11); DWA's other seeds: Fig. 4's; one synthesis each
    assert sig(("fig1", "sre2l", 0)) == sig(("sweep", "sre2l", "coupled", 0.01))
    assert sig(("fig1", "dwa", 0)) == sig(("sweep", "dwa", "decoupled", 0.11))
    assert sig(("fig1", "dwa", 2)) == sig(("fig4", "dwa", "decoupled", 2))
    uniq = {(s[0], s[1], s[2], tuple(sorted(s[3].items()))) for s in map(sig, specs)}
    # the same configuration under two names: coupled = decoupled at 0.01 (2), Fig. 1's seed 0 (2), its DWA seeds 1, 2
    # (2)
    assert len(uniq) == len(specs) - 6


def test_logit_spread_seeds_is_one_row_per_fig1_set():
    class Flat(torch.nn.Module):
        def forward(self, x):
            return x.flatten(1)

    sets_ = {("fig1", "sre2l", 0): _set(seed=1), ("fig1", "dwa", 0): _set(seed=2), ("sweep", "x"): _set(seed=3)}
    sets_[("fig1", "dwa", 1)] = sets.DistilledSet(
        2 * sets_[("fig1", "dwa", 0)].images, sets_[("fig1", "dwa", 0)].labels, 4, (0.5,), (0.5,), "toy"
    )
    real = _set(n_per_class=5, seed=4)
    out = dwa.logit_spread_seeds(torch.nn.Sequential(Flat()), sets_, real.images.flatten(1), real.labels)
    assert sorted(zip(out["method"], out["synthesis seed"])) == [("dwa", 0), ("dwa", 1), ("sre2l", 0)]
    v = dict(zip(zip(out["method"], out["synthesis seed"]), out.iloc[:, -1]))
    assert abs(v[("dwa", 1)] - 4 * v[("dwa", 0)]) < 1e-9 and set(out["ipc"]) == {3}


def test_feature_distance_table_has_one_block_per_synthesis_seed():
    class Flat(torch.nn.Module):
        def forward(self, x):
            return x.flatten(1)

    teacher = torch.nn.Sequential(Flat())
    sets_ = {("sweep", m, how, 0.11): _set(seed=1) for m in ("sre2l", "dwa") for how in ("coupled", "decoupled")}
    sets_.update(
        {
            ("fig4", m, how, 5): _set(seed=2 if how == "coupled" else 3)
            for m in ("sre2l", "dwa")
            for how in ("coupled", "decoupled")
        }
    )
    real = _set(n_per_class=5, seed=4)
    f4 = dwa.feature_distance_table(teacher, sets_, real.images.flatten(1), real.labels, 0.11)
    # one row per class of the sets (4 here: the table follows the set's classes, 100 on CIFAR-100)
    assert sorted(f4["synthesis seed"].unique()) == [0, 5] and len(f4) == 2 * 2 * 2 * 4
    assert sorted(f4["class"].unique()) == [0, 1, 2, 3] and f4["feature distance"].notna().all()
    fd = L.feature_distance_per_seed(f4)
    assert set(fd) == {(m, h) for m in ("sre2l", "dwa") for h in ("coupled", "decoupled")}
    assert set(fd[("dwa", "coupled")]) == {0, 5}
    assert fd[("dwa", "coupled")][0] == fd[("dwa", "decoupled")][0]  # the same toy set under both names at seed 0
    assert fd[("dwa", "coupled")][5] != fd[("dwa", "decoupled")][5]


class _Set:
    def __init__(self, tag):
        self.tag = tag

    def save(self, path):
        path.write_text(self.tag)


def test_save_cross_sets_keeps_exactly_this_runs_sets(tmp_path):
    """The folder is a DVC output: it exists with no foreign teacher (``sets.json`` lists nothing), and a set an
    earlier configuration saved there does not survive the next run."""
    folder = tmp_path / "dwa"
    assert dwa.save_cross_sets({}, [], 10, folder) == []
    assert json.loads((folder / "sets.json").read_text()) == [] and not list(folder.glob("*.pt"))
    sets = {(m, "vit_bn"): _Set(m) for m in dwa.METHODS}
    sets[("t4", "dwa", 50)] = _Set("t4")
    got = dwa.save_cross_sets(sets, ["vit_bn"], 10, folder)
    assert got == ["dwa_resnet18_ipc50.pt", "dwa_vit_bn_ipc10.pt", "sre2l_vit_bn_ipc10.pt"]
    assert (folder / "sre2l_vit_bn_ipc10.pt").read_text() == "sre2l"
    dwa.save_cross_sets({}, [], 10, folder)
    assert not list(folder.glob("*.pt")) and json.loads((folder / "sets.json").read_text()) == []


def test_replicated_syntheses_pair_each_student_seed_with_its_own_set():
    common = dict(iterations=2, lr=0.25, jitter=2, seed=0)
    rep = {"sweep": [0, 1, 2], "grid": [0, 1], "real": [0, 1]}
    specs = dwa.synthesis_specs(common, **SPEC_KW, fig4_seeds=[0, 1, 2], replicate_seeds=rep)
    plain = dwa.synthesis_specs(common, **SPEC_KW, fig4_seeds=[0, 1, 2])
    added = {k for k in specs if k[0] == "rep"}
    assert set(specs) - set(plain) == added and all(specs[k] == plain[k] for k in plain)  # nothing else moves
    assert ("rep", 2, "sweep", "dwa", "decoupled", 0.11) in added and ("rep", 1, "grid", 1, 0.015) in added
    assert ("rep", 1, "real", 10) in added and not any(k[1] == 0 for k in added)  # seed 0: the sets themselves
    assert not any(k[2] in ("sre2l", "dwa", "t4", "fig1", "fig4") for k in added)  # other parts keep their own
    fn, t, ipc, kw = specs[("rep", 1, "grid", 12, 0.015)]
    assert kw["seed"] == 1 and {k: v for k, v in kw.items() if k not in ("seed", "method")} == {
        k: v for k, v in plain[("grid", 12, 0.015)][3].items() if k not in ("seed", "method")
    }
    # the sweep's replica at Fig. 4's lambda is Fig. 4's own synthesis: synthesize() runs it once
    sig = lambda k: (
        specs[k][0],
        specs[k][1],
        specs[k][2],
        tuple(sorted((a, b) for a, b in specs[k][3].items() if a != "method")),
    )  # noqa: E731
    assert sig(("rep", 1, "sweep", "dwa", "decoupled", 0.11)) == sig(("fig4", "dwa", "decoupled", 1))
    d0, d1 = _set(seed=0), _set(seed=1)
    setz = {("grid", 1, 0.015): d0, ("rep", 1, "grid", 1, 0.015): d1}
    jobs = dwa.evaluation_jobs(
        setz,
        {},
        E.EvalConfig(arch="convnet", steps=2, device="cpu"),
        None,
        seeds=[0, 1, 2],
        sweep_seeds=[0],
        ceiling=("ceil", d0),
        tasks=[],
        cl_ipc=1,
        eval_steps=2,
    )
    grid = {j.seed: j.dset for j in jobs if j.key["part"] == "grid"}
    assert grid[0] is d0 and grid[1] is d1 and grid[2] is d0  # seed 2 has no replica here: the seed-0 set
    assert not any(j.key["part"] == "rep" for j in jobs)
