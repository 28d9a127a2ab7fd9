"""The ``dd_gtn`` stage's experiment: Generative Teaching Networks (Such, Rawal, Lehman, Stanley & Clune, ICML 2020)
with the notes' ablations (weight normalisation, curriculum) and a real-data arm, and the NAS proxies of GTN, DC
(Zhao, Mopuri & Bilen, ICLR 2021) and DSA (Zhao & Bilen, ICML 2021) ranked against a ground truth (Spearman's rho,
top-1 pick, time).

* :func:`load_proxy_sets`: the DC / DSA / DM sets of ``dd_matching`` the NAS proxies train on.
* :func:`load_splits`, :func:`gtn_arms`, :func:`pool_calls`: the one worker pool of GTN runs, the real arm and
  the NAS trainings that need no GTN.
* :func:`runs_table`, :func:`meta_loss_curves`, :func:`real_rows`, :func:`arms_table`: the GTN tables.
* :func:`arm_curves`, :func:`curriculum_sets`: the figure's inputs.
* :func:`gtn_proxy_rows`, :func:`nas_summary`: the NAS tables; :func:`metrics`.
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


def load_proxy_sets(files: dict, random_set) -> dict:
    """``{"random": random_set, "DC": ..., ...}``: the proxy sets; a ValueError for a set that is not a
    Fashion-MNIST set."""
    proxies = {"random": random_set}
    for m, f in files.items():
        d = DistilledSet.load(f)
        if d.images.shape[1:] != (1, 28, 28) or d.num_classes != 10:
            raise ValueError(f"{f}: not a Fashion-MNIST set")
        proxies[m.upper()] = d
    return proxies


def load_splits(val_n: int, test_n: int) -> SimpleNamespace:
    """Fashion-MNIST: ``val_n`` held-out training images (the real arm's lr / momentum), the rest to fit (uint8),
    and ``test_n`` class-balanced test images."""
    tr, te = data.load_fashion_mnist("train"), data.load_fashion_mnist("test")
    mean, std = (data.FASHION_MNIST_MEAN,), (data.FASHION_MNIST_STD,)
    perm = torch.randperm(len(tr.labels), generator=torch.Generator().manual_seed(0))
    val_idx, fit_idx = perm[:val_n], perm[val_n:]
    te_x_u8, te_y = E.test_subset(te.images, te.labels, test_n)
    return SimpleNamespace(tr=tr, te=te, MEAN=mean, STD=std, x_val=to_float(tr.images[val_idx], mean, std),
                           y_val=tr.labels[val_idx], fit_x=tr.images[fit_idx], fit_y=tr.labels[fit_idx],
                           x_test=to_float(te_x_u8, mean, std), te_y=te_y)


def gtn_arms(meta_seeds, variant_seeds, curricula) -> list[tuple]:
    """``[(weight-norm name, curriculum, weight_norm, seed)]``: full curriculum with and without WN over
    ``meta_seeds``, the other curricula (WN) over ``variant_seeds``."""
    arms = [("WN", "full", True, s) for s in meta_seeds] + [("no WN", "full", False, s) for s in meta_seeds]
    return arms + [("WN", c, True, s) for c in curricula if c != "full" for s in variant_seeds]


def pool_calls(d: SimpleNamespace, base: G.GTNConfig, arms, learners, codes, proxies: dict, nas_x, nas_y, *, seeds,
               meta_seeds, inner_steps: int, inner_batch: int, real_lrs, real_momenta, gt_steps: int, gt_batch: int,
               gt_lr: float, proxy_steps: int, proxy_batch: int, proxy_lr: float) -> list:
    """The one pool: a GTN run per arm (:func:`nas.gtn_job`), the real arm (:func:`nas.real_arm_job`), the ground
    truth of every architecture and every (set proxy, architecture) training."""
    calls = [(nas.gtn_job, (d.fit_x, d.fit_y, G.GTNConfig(**{**base.__dict__, "weight_norm": wn, "curriculum": c, "seed": s}),
                            d.MEAN, d.STD, learners[0], seeds, d.x_test, d.te_y), {}) for _, c, wn, s in arms]
    calls.append((nas.real_arm_job, (d.fit_x, d.fit_y, learners[0], inner_steps, inner_batch, real_lrs, real_momenta,
                                     d.x_val, d.y_val, d.x_test, d.te_y, d.MEAN, d.STD, seeds, meta_seeds, True), {}))
    calls += [(nas.ground_truth_job, (c, d.tr.images, d.tr.labels, nas_x, nas_y, d.MEAN, d.STD, gt_steps, gt_batch, gt_lr), {})
              for c in codes]
    calls += [(nas.set_proxy_job, (c, name, ds, nas_x, nas_y, proxy_steps, proxy_batch, proxy_lr), {})
              for name, ds in proxies.items() for c in codes]
    return calls


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
        rows.append({"weight norm": wn_name, "curriculum": c, "meta seed": s, "acc": float(np.mean(r["accs"])),
                     "init acc": float(np.mean(r["init_accs"])), "final meta-loss": float(np.nanmean(curve[-k:])),
                     "volatility": G.volatility(curve[:shared], max(2, shared // 10)),
                     "diverged steps": r["diverged"], "lr": r["lr"], "momentum": r["momentum"], "seconds": r["seconds"]})
    return pd.DataFrame(rows)


def meta_loss_curves(arms, runs) -> pd.DataFrame:
    """The meta-loss of every run (the claims' plateau test reads these curves)."""
    return pd.DataFrame([{"run": f"{a[0]} {a[1]} {a[3]}", "iteration": i, "loss": v} for a, r in zip(arms, runs)
                         for i, v in enumerate(r["meta_loss"])], columns=["run", "iteration", "loss"])


def real_rows(real: dict, meta_seeds) -> list[dict]:
    """The real arm's accuracy per meta seed."""
    return [{"weight norm": "WN learner", "curriculum": "real data", "meta seed": i, "acc": float(np.mean(a)),
             "lr": real["lr"], "momentum": real["momentum"]} for i, a in zip(meta_seeds, real["accs"])]


def arms_table(runs_df: pd.DataFrame, reals: list, real: dict) -> pd.DataFrame:
    """Per arm (weight norm, curriculum): accuracy mean / std / n, volatility, diverged steps, lr, momentum and
    the cell text; the real arm last."""
    arms = runs_df.groupby(["weight norm", "curriculum"], sort=False).agg(
        acc_mean=("acc", "mean"), acc_std=("acc", "std"), n=("acc", "count"), volatility_mean=("volatility", "mean"),
        volatility_std=("volatility", "std"), diverged=("diverged steps", "sum"), lr=("lr", "mean"),
        momentum=("momentum", "mean")).reset_index()
    real_acc = [r["acc"] for r in reals]
    arms = pd.concat([arms, pd.DataFrame([{"weight norm": "WN learner", "curriculum": "real data", "acc_mean": np.mean(real_acc),
                                            "acc_std": np.std(real_acc, ddof=1) if len(real_acc) > 1 else 0.0,
                                            "n": len(real_acc), "lr": real["lr"], "momentum": real["momentum"]}])],
                     ignore_index=True)
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


def gtn_proxy_rows(gtn, codes, nas_x, nas_y) -> tuple[list, float]:
    """``(rows, wall seconds)``: every architecture trained on the GTN's curriculum, single-threaded like the
    pool's trainings (the thread count is restored)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    rows = [nas.gtn_proxy_job(c, "GTN", gtn, nas_x, nas_y) for c in codes]
    wall = time.perf_counter() - t0
    torch.set_num_threads(threads)
    return rows, wall


def nas_summary(nres: pd.DataFrame, codes, proxy_names, *, gt_steps: int, gt_batch: int, n_train: int) -> SimpleNamespace:
    """Each proxy against the ground truth: Spearman's rho (bootstrap sd, difference to random real), the top-1
    pick, CPU-time, wall-time and images fractions; ``epoch_scale`` is the ground truth's passes over the
    training set."""
    gt_df = nres[nres["proxy"] == "ground truth"].set_index("arch").loc[codes]
    gt = gt_df["acc"].to_numpy()
    gt_sec, gt_img, gt_wall = gt_df["cpu seconds"].sum(), gt_df["images seen"].sum(), gt_df["train seconds"].sum()
    epoch_scale = gt_steps * gt_batch / n_train
    acc_by = {p: nres[nres["proxy"] == p].set_index("arch").loc[codes]["acc"].to_numpy() for p in proxy_names}
    srows = []
    for p, acc in acc_by.items():
        sub = nres[nres["proxy"] == p]
        sc = nas.proxy_scores(codes, gt, acc)
        srows.append({"proxy": p, **sc, "rho boot sd": nas.bootstrap_rho_delta(gt, acc),
                      "rho - random": sc["rho"] - nas.spearman(acc_by["random"], gt),
                      "proxy cpu seconds": sub["cpu seconds"].sum(), "time fraction": sub["cpu seconds"].sum() / gt_sec,
                      "time fraction vs 1 epoch": sub["cpu seconds"].sum() / (gt_sec / epoch_scale),
                      "wall train fraction": sub["train seconds"].sum() / gt_wall,
                      "images fraction": sub["images seen"].sum() / gt_img, "mean acc": float(acc.mean())})
    return SimpleNamespace(summary=pd.DataFrame(srows), gt=gt, gt_sec=gt_sec, epoch_scale=epoch_scale, acc=acc_by)


def metrics(arms: pd.DataFrame, summary: pd.DataFrame) -> dict:
    """The stage's metrics (without the wall times)."""
    return {"gtn": {f"{r['curriculum']} {r['weight norm']}": {"mean": r["acc_mean"], "std": r["acc_std"]}
                    for _, r in arms.iterrows()},
            "gtn_volatility": {n: arm_row(arms, n, "full")["volatility_mean"] for n in ("WN", "no WN")},
            "gtn_diverged": {n: int(arm_row(arms, n, "full")["diverged"]) for n in ("WN", "no WN")},
            "nas": {r["proxy"]: {"rho": r["rho"], "top1_gt_acc": r["top1 gt acc"], "time_fraction": r["time fraction"]}
                    for _, r in summary.iterrows()}}


def random_proxy(tr, proxy_ipc: int, mean, std):
    """The random-real proxy set (seed 0)."""
    return coresets.random_real(tr.images, tr.labels, proxy_ipc, 10, mean, std, seed=0)
