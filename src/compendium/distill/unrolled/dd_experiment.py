"""The ``dd_unrolled`` stage's experiment: DD (Wang, Zhu, Torralba & Efros 2018, Algorithm 1) under the reading
notes' four initialisation regimes, soft-label DD (Sucholutsky & Schonlau 2021, Algorithm 1a) at several sizes,
SLDD with labels sharing mass within groups of similar classes, and DD's poisoning loss L_{K->T} (DD §3.3).

* :func:`load_splits`: Fashion-MNIST's validation / fit split, the class-balanced test subset and digits.
* :func:`pretrain_pools`: the pre-trained networks of the pre-trained regimes and of the poisoning.
* :func:`eval_thetas_by_regime`: the evaluation theta_0 of each regime and their names.
* :func:`distill_calls` / :func:`distill_all`: every distillation run (one worker pool).
* :class:`Accuracies`: the per-theta_0 accuracy rows the claims pair over.
* :func:`regimes_experiment`, :func:`sizes_experiment`, :func:`similar_experiment`, :func:`poison_experiment`:
  the notebook's tables, in the order the notebook computes them.
* :func:`sldd_ranking_frame`: DD-Ranking's hard label recovery (HLR) of SLDD's sets (IOR is not defined: no
  teacher).
* :func:`save_sets`: every distilled set under ``models/distilled/unrolled/``.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Sequence

import numpy as np
import pandas as pd
import torch

from compendium.core import data
from compendium.core.parallel import run_calls
from compendium.core.probe import to_float
from compendium.distill import coresets
from compendium.distill import evaluate as E
from compendium.distill import ranking
from compendium.distill.unrolled import dd as D
from compendium.distill.unrolled import unroll as U


def load_splits(
    seed: int, val_n: int, test_n: int, dataset: str = "fashion-mnist", data_root: str = ""
) -> SimpleNamespace:
    """``dataset`` (Fashion-MNIST, shipped, or DD's MNIST from ``data_root``: 1 x 28 x 28 either way) split by a
    seeded permutation into ``val_n`` validation images (the baselines' rates) and the fit set (uint8 ``X_u8``,
    ``Y``), ``test_n`` class-balanced test images and scikit-learn's digits (28 px; normalised with the
    dataset's statistics, as the learner sees them)."""
    tr, te, mean, std = data.train_test(dataset, data_root)
    if tuple(tr.images.shape[1:]) != (1, 28, 28):
        raise ValueError(
            f"dataset: DD's learner takes 1 x 28 x 28 images; {dataset!r} has {tuple(tr.images.shape[1:])} "
            "(use fashion-mnist or mnist)"
        )
    dg = data.load_digits("train", size=28)
    perm = torch.randperm(len(tr), generator=torch.Generator().manual_seed(seed))
    val_idx, fit_idx = perm[:val_n], perm[val_n:]
    X_u8, Y = tr.images[fit_idx], tr.labels[fit_idx]
    x_val, y_val = to_float(tr.images[val_idx], mean, std), tr.labels[val_idx]
    te_x, te_y = E.test_subset(te.images, te.labels, test_n)
    return SimpleNamespace(
        tr=tr,
        te=te,
        dg=dg,
        MEAN=mean,
        STD=std,
        X_u8=X_u8,
        Y=Y,
        x_val=x_val,
        y_val=y_val,
        x_test=to_float(te_x, mean, std),
        te_y=te_y,
    )


def pretrain_pools(
    d: SimpleNamespace,
    *,
    arch: str,
    init: str,
    pool_size: int,
    pool_eval: int,
    pretrain_steps: int,
    poison_pool: int,
    ref_steps: int,
    workers: int,
    device: str = "cpu",
) -> SimpleNamespace:
    """The pre-trained networks (:func:`dd.pretrain_job`): ``pool_size`` digits networks to distil against and
    ``pool_eval`` held out (seeds 1000...), ``poison_pool`` + ``pool_eval`` Fashion-MNIST networks of the
    poisoning (seeds 2000...), and the whole-data reference (seed 3000, ``ref_steps`` steps). Tiny pools run
    in this process (no worker start-up); ``device``: where the trainings run (in this process only)."""
    n_pool = pool_size + pool_eval
    job, kw = D.pretrain_job, dict(arch=arch, init=init, device=device)
    pre = run_calls(
        [(job, (s, d.dg.images, d.dg.labels, d.MEAN, d.STD, pretrain_steps), kw) for s in range(1000, 1000 + n_pool)]
        + [
            (job, (s, d.X_u8, d.Y, d.MEAN, d.STD, pretrain_steps), kw)
            for s in range(2000, 2000 + poison_pool + pool_eval)
        ]
        + [(job, (3000, d.X_u8, d.Y, d.MEAN, d.STD, ref_steps), kw)],
        workers=workers if pretrain_steps * n_pool >= 2000 else 0,
    )
    return SimpleNamespace(
        digit_pool=pre[:pool_size],
        digit_eval=pre[pool_size:n_pool],
        fm_pool=pre[n_pool : n_pool + poison_pool],
        fm_eval=pre[n_pool + poison_pool : -1],
        ref=pre[-1],
    )


def eval_thetas_by_regime(
    pools: SimpleNamespace, *, arch: str, init: str, seed: int, eval_inits: Sequence[int], pool_eval: int
) -> tuple[dict, dict, list]:
    """``(EVAL, THETA, rand_eval)``: the evaluation theta_0 of each regime (fixed: the own theta_0; random:
    unseen seeded inits; pre-trained: the first pool network / held-out digits networks), their names (the
    claims pair arms over the same ones), and the unseen random inits."""
    rand_eval = [U.initial_params(D.classifier(s, arch, None, init)) for s in eval_inits]
    fixed_theta = [U.initial_params(D.classifier(seed, arch, None, init))]
    ev = {
        "fixed": fixed_theta,
        "random": rand_eval,
        "fixed_pretrained": pools.digit_pool[:1],
        "random_pretrained": pools.digit_eval,
    }
    theta = {
        "fixed": ["own"],
        "random": list(eval_inits),
        "fixed_pretrained": ["own"],
        "random_pretrained": [f"digits net {i}" for i in range(pool_eval)],
    }
    return ev, theta, rand_eval


def seed_suffix(s: int, seed: int) -> str:
    """The run-name suffix of a replicate distillation: none for the stage's ``seed``, " seed <s>" otherwise
    (``"DD fixed seed 1"``; the claims gather a run's replicates by this suffix)."""
    return "" if int(s) == int(seed) else f" seed {int(s)}"


def distill_seeds(seed: int, fixed_seeds: Sequence[int] | None) -> list[int]:
    """The distillation seeds of the replicated arms: ``seed`` first, then the others of ``fixed_seeds``."""
    return [int(seed)] + [int(s) for s in (fixed_seeds or ()) if int(s) != int(seed)]


def distill_calls(
    d: SimpleNamespace,
    pools: SimpleNamespace,
    *,
    seed: int,
    arch: str,
    init: str,
    size: int,
    steps: int,
    epochs: int,
    iterations: int,
    batch_real: int,
    lr_img: float,
    lr_label: float,
    lr_lr: float,
    init_lr: float,
    label_own: float,
    sl_sizes: Sequence[int],
    sl_epochs: int,
    sl_iterations: int,
    similar_groups,
    poison_attacked: int,
    poison_target: int,
    poison_size: int,
    poison_iterations: int,
    poison_lr: float,
    fixed_seeds: Sequence[int] | None = None,
    sl_seeds: Sequence[int] | None = None,
    sl_random_seeds: Sequence[int] | None = None,
    regimes: Sequence[str] = D.REGIMES,
    plateau_every: int = 0,
    min_iterations: int = 0,
    device: str = "cpu",
) -> tuple[list, list]:
    """``(names, calls)`` of every run: DD in the initialisation ``regimes`` (default DD's four; ``size`` images,
    ``steps`` x ``epochs``); SLDD (and DD from 10 images) at ``sl_sizes`` (one batch per epoch) in the fixed and
    random regimes; SLDD with labels sharing mass within ``similar_groups``; the poisoning images against the
    Fashion-MNIST pool. ``fixed_seeds``: the distillation seeds (= fixed theta_0) of DD's fixed regime;
    ``sl_seeds`` those of the size study's fixed-regime SLDD / DD runs (default ``fixed_seeds``) and
    ``sl_random_seeds`` those of its random-regime runs (default ``sl_seeds``: the fixed − random comparison
    pairs per seed, so it needs both); the stage's ``seed`` is always one, and the replicates of seed s !=
    ``seed`` are named with :func:`seed_suffix`. ``plateau_every`` /
    ``min_iterations``: the outer loops stop at a measured plateau (:func:`dd.plateau_reached`); the
    iteration counts are then caps. ``device``: where each run unrolls (the stage's GPU when it runs them
    in its own process)."""
    base = dict(
        lr_img=lr_img,
        lr_label=lr_label,
        lr_lr=lr_lr,
        init_lr=init_lr,
        batch_real=batch_real,
        seed=seed,
        label_own=label_own,
        plateau_every=plateau_every,
        min_iterations=min_iterations,
    )
    pool_of = {"fixed_pretrained": pools.digit_pool, "random_pretrained": pools.digit_pool}
    names, calls = [], []
    unknown = [r for r in regimes if r not in D.REGIMES]
    if unknown or "fixed" not in regimes:
        raise ValueError(
            f"regimes {list(regimes)}: each must be one of {list(D.REGIMES)}, and 'fixed' among them "
            "(the fixed-init images are also judged from unseen inits)"
        )
    seeds = distill_seeds(seed, fixed_seeds)
    sl_reps = {"fixed": distill_seeds(seed, fixed_seeds if sl_seeds is None else sl_seeds)}
    sl_reps["random"] = sl_reps["fixed"] if sl_random_seeds is None else distill_seeds(seed, sl_random_seeds)

    def add(name, regime, cfg, **kw):
        names.append(name)
        kw.setdefault("fixed_seed", cfg["seed"])
        calls.append(
            (
                D.distill_job,
                (regime, cfg, d.X_u8, d.Y, d.MEAN, d.STD),
                dict(pool=pool_of.get(regime), init=init, arch=arch, device=device, **kw),
            )
        )

    for r in (r for r in D.REGIMES if r in regimes):
        for s in seeds if r == "fixed" else seeds[:1]:
            add(
                f"DD {r}{seed_suffix(s, seed)}",
                r,
                dict(base, size=size, steps=steps, epochs=epochs, iterations=iterations, seed=s),
            )
    for s in dict.fromkeys([*sl_reps["fixed"], *sl_reps["random"]]):  # the stage's seed first, then the replicates
        for r in (r for r in ("fixed", "random") if s in sl_reps[r]):
            for m in sl_sizes:
                sl = dict(base, size=m, steps=1, epochs=sl_epochs, iterations=sl_iterations, seed=s)
                add(f"SLDD M={m} {r}{seed_suffix(s, seed)}", r, dict(sl, learn_labels=True))
                if m >= 10:
                    add(f"DD M={m} {r}{seed_suffix(s, seed)}", r, sl)
    m_sim = max(m for m in sl_sizes)
    add(
        f"SLDD M={m_sim} random shared",
        "random",
        dict(
            base,
            size=m_sim,
            steps=1,
            epochs=sl_epochs,
            iterations=sl_iterations,
            learn_labels=True,
            label_mode="shared",
            groups=tuple(tuple(g) for g in similar_groups),
        ),
    )
    names.append("poison")
    calls.append(
        (
            D.distill_job,
            (
                "random_pretrained",
                dict(base, size=poison_size, steps=1, epochs=1, iterations=poison_iterations, init_lr=poison_lr),
                d.X_u8,
                d.Y,
                d.MEAN,
                d.STD,
            ),
            dict(pool=pools.fm_pool, init=init, arch=arch, poison=(poison_attacked, poison_target), device=device),
        )
    )
    return names, calls


def loss_curves(res: dict) -> pd.DataFrame:
    """The outer loss of every run, one row per outer step (the claims' plateau test reads them)."""
    return pd.DataFrame(
        [{"run": n, "iteration": i, "loss": v} for n, r in res.items() for i, v in enumerate(r.loss_trace)],
        columns=["run", "iteration", "loss"],
    )


def run_summary(res: dict) -> pd.DataFrame:
    """First / last outer loss, seconds and the mean learned rate of every run."""
    return pd.DataFrame(
        [
            {
                "run": n,
                "outer loss first": r.loss_trace[0] if r.loss_trace else float("nan"),
                "outer loss last 10": float(np.mean(r.loss_trace[-10:])) if r.loss_trace else float("nan"),
                "seconds": r.seconds,
                "learned lr (mean)": float(r.lrs.mean()),
            }
            for n, r in res.items()
        ]
    )


class Accuracies:
    """Test accuracies, one row per (experiment, regime, method, M, evaluation theta_0): the claims pair the arms
    over the same theta_0 (``theta`` names them; ``THETA`` of :func:`eval_thetas_by_regime` by default)."""

    def __init__(self, seed: int, theta_names: dict):
        self.rows, self.lr, self.seed, self.theta_names = [], {}, seed, theta_names

    def record(self, exp, regime, method, M, accs, thetas=None, grouped=None, lr=None, seed=None) -> None:
        """``seed``: the distillation's seed (a replicate; default the stage's); its rate is not kept."""
        for i, a in enumerate(accs):
            self.rows.append(
                {
                    "experiment": exp,
                    "regime": regime,
                    "method": method,
                    "M": M,
                    "seed": self.seed if seed is None else seed,
                    "theta": (thetas or self.theta_names[regime])[i],
                    "acc": a,
                    "acc grouped": grouped[i] if grouped else np.nan,
                }
            )
        if seed is None or seed == self.seed:
            self.lr[(exp, regime, method, M)] = lr

    def summary(self, exp: str, keys: list) -> pd.DataFrame:
        """Mean, population std and count of the accuracies of ``exp`` per ``keys``."""
        t = pd.DataFrame(self.rows)
        t = (
            t[t["experiment"] == exp]
            .groupby(keys, sort=False)["acc"]
            .agg(mean="mean", std=lambda s: s.std(ddof=0), n="count")
        )
        return t.reset_index()

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows)


class Baselines:
    """DD's baseline sets per images-per-class (random real, k-means, average real, and the candidates of
    optimised real), built once, and the theta_0 their constant rate is tuned from (validation split)."""

    def __init__(
        self,
        d: SimpleNamespace,
        pools: SimpleNamespace,
        ev: dict,
        *,
        seed: int,
        arch: str,
        init: str,
        opt_real_candidates: int,
    ):
        self.d, self.pools, self.ev, self.seed, self.arch, self.init = d, pools, ev, seed, arch, init
        self.candidates, self.sets = opt_real_candidates, {}

    def sets_for(self, ipc: int):
        d, seed = self.d, self.seed
        if ipc not in self.sets:
            self.sets[ipc] = (
                {
                    "random real": coresets.random_real(d.X_u8, d.Y, ipc, 10, d.MEAN, d.STD, seed=seed),
                    "k-means": coresets.kmeans_centroids(d.X_u8, d.Y, ipc, 10, d.MEAN, d.STD, seed=seed),
                    "average real": coresets.class_average(d.X_u8, d.Y, ipc, 10, d.MEAN, d.STD, seed=seed),
                },
                [
                    coresets.random_real(d.X_u8, d.Y, ipc, 10, d.MEAN, d.STD, seed=seed + 1 + k)
                    for k in range(self.candidates)
                ],
            )
        return self.sets[ipc]

    def tune_for(self, regime: str) -> list:
        """The theta_0 the baselines' constant rate is tuned from (validation split)."""
        if regime == "random_pretrained":
            return self.pools.digit_pool[:2]
        return (
            self.ev[regime][:1]
            if regime.startswith("fixed")
            else [U.initial_params(D.classifier(s, self.arch, None, self.init)) for s in (7, 8)]
        )


def fixed_theta(seed: int, arch: str, init: str):
    """The fixed regime's theta_0 of distillation seed ``seed``."""
    return U.initial_params(D.classifier(seed, arch, None, init))


def replicate_seeds(res: dict, key: str, seed: int) -> list[int]:
    """The distillation seeds of the replicates of run ``key`` in ``res`` (``seed`` first)."""
    extra = sorted(int(k[len(key) + 6 :]) for k in res if k.startswith(f"{key} seed ") and k[len(key) + 6 :].isdigit())
    return [int(seed)] + extra


def regimes_experiment(
    res: dict,
    d: SimpleNamespace,
    ev: dict,
    rand_eval: list,
    eval_inits,
    acc: Accuracies,
    bl: Baselines,
    *,
    arch: str,
    size: int,
    steps: int,
    epochs: int,
    baseline_lr_grid,
    init: str = "xavier",
    regimes: Sequence[str] = D.REGIMES,
) -> pd.DataFrame:
    """DD in each of ``regimes`` (the runs of :func:`distill_calls`) against DD's baselines (same number of GD
    steps, rate tuned on validation) and, for the pre-trained regimes, the networks without adaptation; the
    fixed-init images also trained from unseen random inits (SLDD's observation). Returns the regimes table
    (mean, std, n, rate)."""
    net = D.classifier(0, arch)

    def eval_set(x, targets, lrs, st, ep, thetas):
        return D.eval_thetas(arch, thetas, x, targets, lrs, st, ep, d.x_test, d.te_y)

    for r in (r for r in D.REGIMES if r in regimes):
        rs = res[f"DD {r}"]
        acc.record(
            "regimes",
            r,
            "DD",
            size,
            eval_set(rs.images, rs.targets, rs.lrs, steps, epochs, ev[r]),
            lr=float(rs.lrs.mean()),
        )
        for name, (a, lr) in D.baseline_accuracies(
            arch,
            *bl.sets_for(size // 10),
            bl.tune_for(r),
            ev[r],
            steps,
            epochs,
            d.x_val,
            d.y_val,
            d.x_test,
            d.te_y,
            baseline_lr_grid,
        ).items():
            acc.record("regimes", r, name, size, a, lr=lr)
        if r.endswith("pretrained"):
            acc.record(
                "regimes", r, "no adaptation", size, [D.accuracy(net, th, d.x_test, d.te_y) for th in ev[r]], lr=0.0
            )
    fx = res["DD fixed"]
    acc.record(
        "regimes",
        "fixed -> unseen random init",
        "DD",
        size,
        eval_set(fx.images, fx.targets, fx.lrs, steps, epochs, rand_eval),
        list(eval_inits),
        lr=float(fx.lrs.mean()),
    )
    # the replicate fixed-init distillations (seed s: its own theta_0), each also from the unseen random inits;
    # random real at each own theta_0 at the rate tuned for the first
    rr_lr = acc.lr.get(("regimes", "fixed", "random real", size))
    rr = bl.sets_for(size // 10)[0]["random real"]
    for s in replicate_seeds(res, "DD fixed", acc.seed)[1:]:
        fs, th = res[f"DD fixed seed {s}"], [fixed_theta(s, arch, init)]
        acc.record("regimes", "fixed", "DD", size, eval_set(fs.images, fs.targets, fs.lrs, steps, epochs, th), seed=s)
        acc.record(
            "regimes",
            "fixed -> unseen random init",
            "DD",
            size,
            eval_set(fs.images, fs.targets, fs.lrs, steps, epochs, rand_eval),
            list(eval_inits),
            seed=s,
        )
        if rr_lr is not None:
            xr, yr = D.class_cyclic(rr.images, rr.labels)
            acc.record(
                "regimes",
                "fixed",
                "random real",
                size,
                eval_set(xr, yr, torch.full((steps * epochs,), rr_lr), steps, epochs, th),
                seed=s,
            )
    regimes = acc.summary("regimes", ["regime", "method"])
    regimes["lr"] = [acc.lr[("regimes", r, m, size)] for r, m in zip(regimes["regime"], regimes["method"])]
    return regimes


def sizes_experiment(
    res: dict,
    d: SimpleNamespace,
    ev: dict,
    acc: Accuracies,
    bl: Baselines,
    *,
    arch: str,
    sl_sizes,
    sl_epochs: int,
    knn_k: int,
    baseline_lr_grid,
    whole_acc: float,
    d_A: float,
    init: str = "xavier",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """SLDD against DD and random real at equal size M (fixed and random regimes), with the distillation ratio
    r_M, the kNN accuracy of each set and the distillation size d_A (SLDD's metrics). Returns
    ``(sizes table, d_A table)``."""
    knn = {}

    def eval_set(x, targets, lrs, st, ep, thetas):
        return D.eval_thetas(arch, thetas, x, targets, lrs, st, ep, d.x_test, d.te_y)

    for r in ("fixed", "random"):
        for m in sl_sizes:
            for meth in ("SLDD", "DD"):
                if (rs := res.get(f"{meth} M={m} {r}")) is not None:
                    acc.record("sizes", r, meth, m, eval_set(rs.images, rs.targets, rs.lrs, 1, sl_epochs, ev[r]))
                    knn[(r, m, meth)] = D.knn_accuracy(rs.images, rs.targets, d.x_test, d.te_y, k=min(knn_k, m))
                    # replicate distillations: the fixed ones at their own theta_0, the random ones from the same unseen
                    # inits
                    for s in replicate_seeds(res, f"{meth} M={m} {r}", acc.seed)[1:]:
                        rx = res[f"{meth} M={m} {r} seed {s}"]
                        th = [fixed_theta(s, arch, init)] if r == "fixed" else ev[r]
                        acc.record(
                            "sizes", r, meth, m, eval_set(rx.images, rx.targets, rx.lrs, 1, sl_epochs, th), seed=s
                        )
            if m >= 10:
                rr = bl.sets_for(m // 10)[0]["random real"]
                xr, yr = D.class_cyclic(rr.images, rr.labels)
                lr = D.best_constant_lr(arch, bl.tune_for(r), xr, yr, 1, sl_epochs, d.x_val, d.y_val, baseline_lr_grid)
                acc.record(
                    "sizes", r, "random real", m, eval_set(xr, yr, torch.full((sl_epochs,), lr), 1, sl_epochs, ev[r])
                )
                knn[(r, m, "random real")] = D.knn_accuracy(xr, yr, d.x_test, d.te_y, k=min(knn_k, m))
    sizes_t = acc.summary("sizes", ["regime", "M", "method"])
    sizes_t["r_M %"] = 100 * E.distillation_ratio(sizes_t["mean"], whole_acc)
    sizes_t["kNN"] = [knn[k] for k in zip(sizes_t["regime"], sizes_t["M"], sizes_t["method"])]
    d_tab = pd.DataFrame(
        [
            {"regime": r, "method": meth, f"d_{d_A:g}": E.distillation_size(g["M"], g["mean"], whole_acc, d_A)}
            for (r, meth), g in sizes_t.groupby(["regime", "method"], sort=False)
        ]
    )
    return sizes_t, d_tab


SLDD_WHOLE = "whole data (r_M's reference)"
SLDD_RANKING_NOTE = (
    "syn hard: the SLDD images with the argmax of their learned labels through the same schedule "
    "(learned rates, the same theta_0); full hard: the stage's whole-data LeNet (r_M's denominator, "
    "one network), the same for every theta_0"
)


def sldd_ranking_frame(
    res: dict, d: SimpleNamespace, ev: dict, acc: Accuracies, whole_acc: float, *, arch: str, sl_sizes, sl_epochs: int
) -> pd.DataFrame:
    """The long frame of :func:`compendium.distill.ranking.matched_runs` for DD-Ranking's HLR of SLDD (learned
    labels, no teacher: IOR is not defined, ``ior_defined=False``), per regime (fixed, random) and size M, the theta_0
    names as the seeds: SLDD's own accuracies (``acc``'s "sizes" rows, evaluation ``soft``); the same images
    with the argmax of their learned labels (hard) trained by the same schedule (learned rates, 1 step x
    ``sl_epochs``) from the same theta_0 of ``ev``; and the whole-data LeNet's ``whole_acc`` (r_M's reference,
    one network) as the full arm of every theta_0 (its regime is NaN: match the full arm on no column).
    Columns: method, M, regime, evaluation, set, seed, acc."""
    own = acc.frame()
    own = own[(own["experiment"] == "sizes") & (own["method"] == "SLDD") & (own["seed"] == acc.seed)]
    rows = [
        {
            "method": "SLDD",
            "M": r.M,
            "regime": r.regime,
            "evaluation": "soft",
            "set": ranking.DISTILLED,
            "seed": r.theta,
            "acc": r.acc,
        }
        for r in own.itertuples()
    ]
    thetas = set()
    for r in ("fixed", "random"):
        for m in sl_sizes:
            if (rs := res.get(f"SLDD M={m} {r}")) is None:
                continue
            accs = D.eval_thetas(arch, ev[r], rs.images, rs.targets.argmax(1), rs.lrs, 1, sl_epochs, d.x_test, d.te_y)
            names = acc.theta_names[r]
            rows += [
                {
                    "method": "SLDD",
                    "M": m,
                    "regime": r,
                    "evaluation": ranking.HARD,
                    "set": ranking.DISTILLED,
                    "seed": t,
                    "acc": a,
                }
                for t, a in zip(names, accs)
            ]
            thetas |= set(names)
    rows += [
        {
            "method": SLDD_WHOLE,
            "M": 0,
            "regime": np.nan,
            "evaluation": ranking.HARD,
            "set": ranking.FULL,
            "seed": t,
            "acc": whole_acc,
        }
        for t in sorted(thetas, key=str)
    ]
    return pd.DataFrame(rows, columns=["method", "M", "regime", "evaluation", "set", "seed", "acc"])


def group_mate_mass(targets: torch.Tensor, labels: torch.Tensor, groups) -> float:
    """Mean label mass an image puts on the other members of its group of similar classes (images of grouped
    classes only)."""
    return float(
        np.mean(
            [
                targets[i, [c for c in g if c != int(labels[i])]].sum()
                for i in range(len(labels))
                for g in groups
                if int(labels[i]) in g
            ]
        )
    )


def similar_experiment(
    res: dict,
    d: SimpleNamespace,
    rand_eval: list,
    eval_inits,
    acc: Accuracies,
    *,
    arch: str,
    m_sim: int,
    sl_epochs: int,
    similar_groups,
) -> pd.DataFrame:
    """SLDD at M = ``m_sim`` (random regime) with labels initialised one-hot-like ("separate") or sharing mass
    within ``similar_groups`` ("shared"): accuracy overall and on the grouped classes, from unseen inits."""
    net = D.classifier(0, arch)
    grouped = sorted({c for g in similar_groups for c in g})
    rows = []
    for mode, key in (("separate", f"SLDD M={m_sim} random"), ("shared", f"SLDD M={m_sim} random shared")):
        rs = res[key]
        acc_all, acc_grp = [], []
        for th in rand_eval:
            p = D.train_with(net, th, rs.images, rs.targets, rs.lrs, 1, sl_epochs)
            pred = D.predict(net, p, d.x_test)
            acc_all.append(float((pred == d.te_y).float().mean()))
            acc_grp.append(float(D.class_accuracy(pred, d.te_y, 10)[grouped].mean()))
        mass = group_mate_mass(rs.targets, rs.labels, similar_groups)
        acc.record("similar", "random", mode, m_sim, acc_all, list(eval_inits), acc_grp)
        rows.append(
            {
                "label init": mode,
                "acc": np.mean(acc_all),
                "std": np.std(acc_all),
                "acc on grouped classes": np.mean(acc_grp),
                "std grouped": np.std(acc_grp),
                "final mass on group mates": mass,
            }
        )
    return pd.DataFrame(rows)


def attack_stats(pred: torch.Tensor, y: torch.Tensor, attacked: int, target: int) -> dict:
    """DD's poisoning metrics from test predictions: accuracy on class K, the share of K predicted as T, and
    the accuracy on the other classes."""
    mk = y == attacked
    return {
        "acc on K": float((pred[mk] == attacked).float().mean()),
        "K predicted as T": float((pred[mk] == target).float().mean()),
        "acc on other classes": float((pred[~mk] == y[~mk]).float().mean()),
    }


def poison_experiment(
    pz, d: SimpleNamespace, fm_eval: list, *, arch: str, attacked: int, target: int, poison_size: int
) -> pd.DataFrame:
    """DD's poisoning (§3.3): each unseen trained network before, after one GD step on the poisoning images, and
    after one step at the same learned rate on ``poison_size`` real images of class K labelled T (naive label
    flipping)."""
    net = D.classifier(0, arch)

    def stats(p):
        return attack_stats(D.predict(net, p, d.x_test), d.te_y, attacked, target)

    flip_x = to_float(d.X_u8[d.Y == attacked][:poison_size], d.MEAN, d.STD)
    flip_y = torch.full((len(flip_x),), target)
    rows = []
    for i, th in enumerate(fm_eval):
        rows.append({"network": i, "data": "before", **stats(th)})
        rows.append(
            {
                "network": i,
                "data": "DD poison (1 step)",
                **stats(D.train_with(net, th, pz.images, pz.targets, pz.lrs, 1, 1)),
            }
        )
        rows.append(
            {
                "network": i,
                "data": "label-flipped real (1 step)",
                **stats(D.train_with(net, th, flip_x, flip_y, pz.lrs, 1, 1)),
            }
        )
    return pd.DataFrame(rows)


def set_file_name(key: str) -> str:
    """The artifact name of a run's set: ``"SLDD M=10 fixed"`` -> ``"SLDD_M10_fixed.pt"``."""
    return f"{key.replace(' ', '_').replace('=', '')}.pt"


def save_sets(res: dict, out_dir: Path) -> list[Path]:
    """Every distilled set (images, labels or label distributions, learned rates) under ``out_dir``."""
    return [r.save(Path(out_dir) / set_file_name(key)) for key, r in res.items()]


def metrics(whole_acc: float, regimes: pd.DataFrame, sizes_t: pd.DataFrame, poison: pd.DataFrame) -> dict:
    """The stage's metrics (without the timing)."""
    pz_tab = poison.groupby("data", sort=False).mean(numeric_only=True)
    return {
        "whole_acc": whole_acc,
        "regimes": {
            f"{r['method']} | {r['regime']}": {"mean": r["mean"], "std": r["std"]} for _, r in regimes.iterrows()
        },
        "sldd": {
            f"{r['method']} M={r['M']} {r['regime']}": {"mean": r["mean"], "std": r["std"], "knn": r["kNN"]}
            for _, r in sizes_t.iterrows()
        },
        "poison": {k: {c: float(v) for c, v in row.items()} for k, row in pz_tab.iterrows()},
    }
