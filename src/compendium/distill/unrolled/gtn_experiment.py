"""The ``dd_gtn`` stage's experiment: Generative Teaching Networks (Such, Rawal, Lehman, Stanley & Clune, ICML 2020)
with the notes' ablations (weight normalisation, curriculum) and a real-data arm, and the NAS proxies of GTN, DC
(Zhao, Mopuri & Bilen, ICLR 2021) and DSA (Zhao & Bilen, ICML 2021) ranked against a ground truth (Spearman's rho,
top-1 pick, time).

* :func:`load_proxy_sets`: the DC / DSA / DM sets of ``dd_matching`` the NAS proxies train on.
* :func:`load_splits`, :func:`gtn_arms`, :func:`pool_calls`: the one worker pool of GTN runs, the real arm and
  the NAS proxy trainings that need no GTN; :func:`load_ground_truth`: ``dd_nas``'s ground truth.
* :func:`runs_table`, :func:`meta_loss_curves`, :func:`real_rows`, :func:`arms_table`: the GTN tables.
* :func:`arm_curves`, :func:`curriculum_sets`: the figure's inputs.
* :func:`random_proxies`, :func:`gtn_proxy_rows`, :func:`nas_summary`, :func:`first_replicates`: the NAS proxies
  (several replicates each, for paired comparisons) and tables; :func:`metrics`.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
import pandas as pd
import torch

from compendium.core import data, paths
from compendium.core.probe import to_float
from compendium.distill import coresets
from compendium.distill import evaluate as E
from compendium.distill.sets import DistilledSet
from compendium.distill.unrolled import gtn as G
from compendium.distill.unrolled import nas


def proxy_set_files(proxy_sets, proxy_ipc: int) -> dict:
    """``{method: path}`` of the ``dd_matching`` sets the NAS proxies need; a FileNotFoundError names the missing."""
    files = {m: paths.find_artifact(f"distilled/matching/{m}_ipc{proxy_ipc}.pt") for m in proxy_sets}
    missing = [str(f) for f in files.values() if not f.exists()]
    if missing:
        raise FileNotFoundError(f"the NAS proxies need the dd_matching sets {missing}: run the dd_matching stage first")
    return files


def load_proxy_sets(files: dict, random_sets: dict, dataset: str = "fashion-mnist", image_shape=(1, 28, 28)) -> dict:
    """``{(proxy, replicate): set}``: the random-real proxies (``random_sets``, ``{seed: set}``) and the DC / DSA /
    DM sets of ``dd_matching`` (one each, replicate 0); a SetError for a set of another dataset, a ValueError for
    one whose images are not ``image_shape`` or that has not 10 classes."""
    proxies = {("random", int(s)): d for s, d in random_sets.items()}
    for m, f in files.items():
        d = DistilledSet.load(f, dataset)
        if tuple(d.images.shape[1:]) != tuple(image_shape) or d.num_classes != 10:
            raise ValueError(f"{f}: not a 10-class set of {tuple(image_shape)} images ({dataset})")
        proxies[(m.upper(), 0)] = d
    return proxies


def load_splits(val_n: int, test_n: int, dataset: str = "fashion-mnist", data_root: str = "") -> SimpleNamespace:
    """``dataset`` (Fashion-MNIST, shipped, or GTN's CIFAR-10 from ``data_root``): ``val_n`` held-out training
    images (the real arm's lr / momentum), the rest to fit (uint8), and ``test_n`` class-balanced test images."""
    tr, te, mean, std = data.train_test(dataset, data_root)
    if tr.num_classes != 10:
        raise ValueError(
            f"dataset: GTN's generator and the NAS proxies are built for 10 classes; {dataset!r} has {tr.num_classes}"
        )
    perm = torch.randperm(len(tr.labels), generator=torch.Generator().manual_seed(0))
    val_idx, fit_idx = perm[:val_n], perm[val_n:]
    te_x_u8, te_y = E.test_subset(te.images, te.labels, test_n)
    return SimpleNamespace(
        tr=tr,
        te=te,
        MEAN=mean,
        STD=std,
        x_val=to_float(tr.images[val_idx], mean, std),
        y_val=tr.labels[val_idx],
        fit_x=tr.images[fit_idx],
        fit_y=tr.labels[fit_idx],
        x_test=to_float(te_x_u8, mean, std),
        te_y=te_y,
    )


def gtn_arms(meta_seeds, variant_seeds, curricula) -> list[tuple]:
    """``[(weight-norm name, curriculum, weight_norm, seed)]``: full curriculum with and without WN over
    ``meta_seeds``, the other curricula (WN) over ``variant_seeds``."""
    arms = [("WN", "full", True, s) for s in meta_seeds] + [("no WN", "full", False, s) for s in meta_seeds]
    return arms + [("WN", c, True, s) for c in curricula if c != "full" for s in variant_seeds]


def pool_calls(
    d: SimpleNamespace,
    base: G.GTNConfig,
    arms,
    learners,
    codes,
    proxies: dict,
    nas_x,
    nas_y,
    *,
    seeds,
    meta_seeds,
    inner_steps: int,
    inner_batch: int,
    real_lrs,
    real_momenta,
    proxy_steps: int,
    proxy_batch: int,
    proxy_lr: float,
    device: str = "cpu",
) -> list:
    """The one pool: a GTN run per arm (:func:`nas.gtn_job`, meta-trained on ``device``), the real arm
    (:func:`nas.real_arm_job`) and every (set proxy, architecture) training; the ground truth comes from ``dd_nas``
    (:func:`load_ground_truth`)."""
    calls = [
        (
            nas.gtn_job,
            (
                d.fit_x,
                d.fit_y,
                G.GTNConfig(**{**base.__dict__, "weight_norm": wn, "curriculum": c, "seed": s}),
                d.MEAN,
                d.STD,
                learners[0],
                seeds,
                d.x_test,
                d.te_y,
            ),
            {"device": device},
        )
        for _, c, wn, s in arms
    ]
    calls.append(
        (
            nas.real_arm_job,
            (
                d.fit_x,
                d.fit_y,
                learners[0],
                inner_steps,
                inner_batch,
                real_lrs,
                real_momenta,
                d.x_val,
                d.y_val,
                d.x_test,
                d.te_y,
                d.MEAN,
                d.STD,
                seeds,
                meta_seeds,
                True,
            ),
            {},
        )
    )
    calls += [
        (nas.set_proxy_job, (c, name, ds, nas_x, nas_y, proxy_steps, proxy_batch, proxy_lr), {"replicate": rep})
        for (name, rep), ds in proxies.items()
        for c in codes
    ]
    return calls


GROUND_TRUTH_COLUMNS = ("arch", "proxy", "acc", "train seconds", "cpu seconds", "images seen")


def load_ground_truth(timings, test_images: int | None = None) -> SimpleNamespace:
    """``dd_nas``'s ground truth as measured (``timings/dd_nas/ground_truth.csv``: the NAS time fractions need
    its CPU seconds, which stay out of ``tables/``): ``rows`` (one dict per architecture), ``codes`` (its
    architectures, in its order) and ``test_n`` (the test images it was measured on). A FileNotFoundError
    names the stage that writes it; a ValueError a table without its columns, or one tested on another number
    of images than ``test_images`` (the proxies'), when given."""
    f = timings / "dd_nas" / "ground_truth.csv"
    if not f.is_file():
        raise FileNotFoundError(
            f"{f} is missing: the NAS ground truth is written by the dd_nas stage (`dvc repro dd_nas`)"
        )
    df = pd.read_csv(f)
    missing = [c for c in (*GROUND_TRUTH_COLUMNS, "test images") if c not in df.columns]
    if missing or not len(df) or (df["proxy"] != "ground truth").any():
        raise ValueError(f"{f}: not a NAS ground truth (missing columns {missing} or other rows); rerun dd_nas")
    n = int(df["test images"].iloc[0])
    if test_images is not None and n != test_images:
        raise ValueError(
            f"{f} was tested on {n} images, the proxies on {test_images}: set dd_gtn's nas_test_n and "
            "dd_nas' test_n alike (the proxies and the ground truth are tested on the same images)"
        )
    return SimpleNamespace(rows=df.to_dict("records"), codes=df["arch"].tolist(), test_n=n)


def runs_table(arms, runs) -> pd.DataFrame:
    """One row per meta-training run: accuracy of fresh learners after T steps (and from the untrained generator),
    final meta-loss (last tenth), volatility, diverged steps, learned lr and momentum, seconds. Runs stopped at
    their plateau differ in length, so the volatility of every run is measured on one stretch: the steps all
    runs reached (its second half), smoothed over a tenth of them."""
    shared = min((len(r["meta_loss"]) for r in runs), default=0)
    rows = []
    for (wn_name, c, wn, s), r in zip(arms, runs):
        curve = r["meta_loss"]
        k = max(1, len(curve) // 10)
        rows.append(
            {
                "weight norm": wn_name,
                "curriculum": c,
                "meta seed": s,
                "acc": float(np.mean(r["accs"])),
                "init acc": float(np.mean(r["init_accs"])),
                "final meta-loss": float(np.nanmean(curve[-k:])),
                "volatility": G.volatility(curve[:shared], max(2, shared // 10)),
                "diverged steps": r["diverged"],
                "lr": r["lr"],
                "momentum": r["momentum"],
                "seconds": r["seconds"],
            }
        )
    return pd.DataFrame(rows)


def meta_loss_curves(arms, runs) -> pd.DataFrame:
    """The meta-loss of every run (the claims' plateau test reads these curves)."""
    return pd.DataFrame(
        [
            {"run": f"{a[0]} {a[1]} {a[3]}", "iteration": i, "loss": v}
            for a, r in zip(arms, runs)
            for i, v in enumerate(r["meta_loss"])
        ],
        columns=["run", "iteration", "loss"],
    )


def real_rows(real: dict, meta_seeds) -> list[dict]:
    """The real arm's accuracy per meta seed."""
    return [
        {
            "weight norm": "WN learner",
            "curriculum": "real data",
            "meta seed": i,
            "acc": float(np.mean(a)),
            "lr": real["lr"],
            "momentum": real["momentum"],
        }
        for i, a in zip(meta_seeds, real["accs"])
    ]


def arms_table(runs_df: pd.DataFrame, reals: list, real: dict) -> pd.DataFrame:
    """Per arm (weight norm, curriculum): accuracy mean / std / n, volatility, diverged steps, lr, momentum and
    the cell text; the real arm last."""
    arms = (
        runs_df.groupby(["weight norm", "curriculum"], sort=False)
        .agg(
            acc_mean=("acc", "mean"),
            acc_std=("acc", "std"),
            n=("acc", "count"),
            volatility_mean=("volatility", "mean"),
            volatility_std=("volatility", "std"),
            diverged=("diverged steps", "sum"),
            lr=("lr", "mean"),
            momentum=("momentum", "mean"),
        )
        .reset_index()
    )
    real_acc = [r["acc"] for r in reals]
    arms = pd.concat(
        [
            arms,
            pd.DataFrame(
                [
                    {
                        "weight norm": "WN learner",
                        "curriculum": "real data",
                        "acc_mean": np.mean(real_acc),
                        "acc_std": np.std(real_acc, ddof=1) if len(real_acc) > 1 else 0.0,
                        "n": len(real_acc),
                        "lr": real["lr"],
                        "momentum": real["momentum"],
                    }
                ]
            ),
        ],
        ignore_index=True,
    )
    arms["cell"] = [E.cell_text(m, s, n) for m, s, n in zip(arms["acc_mean"], arms["acc_std"].fillna(0), arms["n"])]
    return arms


def arm_row(arms: pd.DataFrame, wn_name: str, c: str) -> pd.Series:
    """The summary row of one arm."""
    return arms[(arms["weight norm"] == wn_name) & (arms["curriculum"] == c)].iloc[0]


def arm_curves(arms, runs, wn_name: str, c: str) -> np.ndarray:
    """The meta-loss curves of an arm's runs, ``[runs, steps]``, each smoothed over a tenth of its length;
    a run stopped at its plateau is padded with NaN to the longest run."""
    idx = [i for i, a in enumerate(arms) if a[0] == wn_name and a[1] == c]
    curves = [G.smooth(runs[i]["meta_loss"], max(2, len(runs[i]["meta_loss"]) // 10)) for i in idx]
    n = max((len(c_) for c_ in curves), default=0)
    return np.array([c_ + [np.nan] * (n - len(c_)) for c_ in curves], dtype=float).reshape(len(curves), n)


def first_run(arms, wn_name: str, curriculum: str) -> int:
    """The index of an arm's first run."""
    return next(i for i, a in enumerate(arms) if a[:2] == (wn_name, curriculum))


def curriculum_set(gtn, mean, std) -> DistilledSet:
    """A GTN's curriculum (its batches in order) as a set, for the image grid."""
    b = G.gtn_batches(gtn)
    return DistilledSet(torch.cat([x for x, _ in b]), torch.cat([y for _, y in b]), 10, mean, std, "gtn")


def gtn_proxy_rows(gtns, codes, nas_x, nas_y) -> tuple[list, float]:
    """``(rows, wall seconds)``: every architecture trained on each GTN's curriculum (``gtns``: ``[(replicate,
    gtn)]``, one per meta-training seed), single-threaded like the pool's trainings (the thread count is restored)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    rows = [nas.gtn_proxy_job(c, "GTN", g, nas_x, nas_y, replicate=rep) for rep, g in gtns for c in codes]
    wall = time.perf_counter() - t0
    torch.set_num_threads(threads)
    return rows, wall


def nas_summary(nres: pd.DataFrame, codes, *, n_train: int) -> SimpleNamespace:
    """Each proxy instance (proxy, replicate ``seed``) against the ground truth: Spearman's rho (bootstrap sd,
    difference to the random-real proxy of the same replicate, else replicate 0), the top-1 pick, CPU-time,
    wall-time and images fractions; ``acc``: ``{(proxy, seed): accuracies in codes' order}``; ``epoch_scale``:
    the ground truth's passes over the training set."""
    gt_df = nres[nres["proxy"] == "ground truth"].set_index("arch").loc[codes]
    gt = gt_df["acc"].to_numpy()
    gt_sec, gt_img, gt_wall = gt_df["cpu seconds"].sum(), gt_df["images seen"].sum(), gt_df["train seconds"].sum()
    epoch_scale = gt_df["images seen"].mean() / n_train
    prox = nres[nres["proxy"] != "ground truth"]
    groups = {(p, int(s)): g for (p, s), g in prox.groupby(["proxy", "seed"], sort=False)}
    acc_by = {k: g.set_index("arch").loc[codes]["acc"].to_numpy() for k, g in groups.items()}
    srows = []
    for (p, s), acc in acc_by.items():
        sub = groups[(p, s)]
        sc = nas.proxy_scores(codes, gt, acc)
        rand = acc_by.get(("random", s), acc_by.get(("random", 0)))
        srows.append(
            {
                "proxy": p,
                "seed": s,
                **sc,
                "rho boot sd": nas.bootstrap_rho_delta(gt, acc),
                "rho - random": sc["rho"] - nas.spearman(rand, gt) if rand is not None else float("nan"),
                "proxy cpu seconds": sub["cpu seconds"].sum(),
                "time fraction": sub["cpu seconds"].sum() / gt_sec,
                "time fraction vs 1 epoch": sub["cpu seconds"].sum() / (gt_sec / epoch_scale),
                "wall train fraction": sub["train seconds"].sum() / gt_wall,
                "images fraction": sub["images seen"].sum() / gt_img,
                "mean acc": float(acc.mean()),
            }
        )
    return SimpleNamespace(summary=pd.DataFrame(srows), gt=gt, gt_sec=gt_sec, epoch_scale=epoch_scale, acc=acc_by)


def first_replicates(acc: dict) -> dict:
    """``{proxy: accuracies}`` of each proxy's first replicate (the scatter figure's one panel per proxy)."""
    out: dict = {}
    for p, s in sorted(acc, key=lambda k: k[1]):
        out.setdefault(p, acc[(p, s)])
    return out


def metrics(arms: pd.DataFrame, summary: pd.DataFrame) -> dict:
    """The stage's metrics (without the wall times); a NAS proxy's numbers are means over its replicates."""
    nas_mean = summary.groupby("proxy", sort=False)[["rho", "top1 gt acc", "time fraction"]].mean()
    return {
        "gtn": {
            f"{r['curriculum']} {r['weight norm']}": {"mean": r["acc_mean"], "std": r["acc_std"]}
            for _, r in arms.iterrows()
        },
        "gtn_volatility": {n: arm_row(arms, n, "full")["volatility_mean"] for n in ("WN", "no WN")},
        "gtn_diverged": {n: int(arm_row(arms, n, "full")["diverged"]) for n in ("WN", "no WN")},
        "nas": {
            p: {
                "rho": float(r["rho"]),
                "top1_gt_acc": float(r["top1 gt acc"]),
                "time_fraction": float(r["time fraction"]),
            }
            for p, r in nas_mean.iterrows()
        },
    }


def random_proxies(tr, proxy_ipc: int, mean, std, seeds) -> dict:
    """``{seed: set}``: the random-real proxy sets, one per seed (the replicates a paired NAS comparison needs)."""
    return {
        int(s): coresets.random_real(tr.images, tr.labels, proxy_ipc, 10, mean, std, seed=int(s), dataset=tr.name)
        for s in seeds
    }
