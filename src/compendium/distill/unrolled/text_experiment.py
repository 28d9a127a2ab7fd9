"""The ``dd_text`` stage's experiment: text dataset distillation (TDD; Sucholutsky & Schonlau 2021, "Soft-Label
Dataset Distillation and Text Dataset Distillation", Algorithm 1a on embedded sentences) on Debian's fortunes.

* :func:`load_corpus` / :func:`corpus_table`: the balanced categories, embedded as ``[L x d]`` matrices.
* :func:`tdd_kwargs`, :func:`distill_specs`, :func:`baseline_calls`: the distillation runs and the baselines
  that need no distilled set (random real, full train) under a fixed Adam recipe.
* :func:`run_names`, :func:`loss_curves`, :func:`set_file_name`: the runs' names, outer-loss curves, artifacts.
* :func:`schedule_table`, :func:`adam_table`: the two evaluation protocols' tables; :func:`decoded_table`,
  :func:`decoded_per_row`: the distilled sentences read back token by token; :func:`learner_budget`,
  :func:`metrics`.
* :func:`hard_label_calls`, :func:`ranking_frame`: DD-Ranking's hard label recovery (HLR) of the TDD sets (IOR
  is not defined: no teacher).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import torch

from compendium.core import paths, text
from compendium.distill import ranking
from compendium.distill.unrolled import textdd

SCHEDULE_KEYS = ["distilled with", "init", "ipc", "theta0", "method"]


def load_corpus(
    categories,
    *,
    max_tokens: int,
    test_fraction: float,
    entry_std: float,
    length: int,
    corpus: str = "fortunes",
    data_root: str = "",
    max_per_class: int = 0,
) -> SimpleNamespace:
    """The fortunes of ``categories`` (quotes of at most ``max_tokens`` basic tokens, a balanced test split), or
    another ``corpus`` of TDD's read from ``data_root`` (:func:`text.load_text_corpus`), word pieces embedded with
    MiniLM's scaled token table and padded / truncated to ``length`` rows; ``classes``: the class names."""
    train, test = text.load_text_corpus(
        corpus,
        data_root,
        categories=categories,
        max_tokens=max_tokens,
        test_fraction=test_fraction,
        max_per_class=max_per_class,
    )
    emb = text.load_minilm(entry_std)
    ids_tr = text.encode_texts(train.texts, emb, 10**6)
    ids_te = text.encode_texts(test.texts, emb, 10**6)
    return SimpleNamespace(
        emb=emb,
        ids_tr=ids_tr,
        ids_te=ids_te,
        x_tr=text.embed_ids(ids_tr, emb, length),
        x_te=text.embed_ids(ids_te, emb, length),
        y_tr=train.labels,
        y_te=test.labels,
        classes=tuple(train.classes),
        corpus=corpus,
    )


def corpus_table(c: SimpleNamespace, *, max_tokens: int, length: int) -> pd.DataFrame:
    """Per class: for the fortunes the quotes in the file and those short enough; train / test sizes, the median
    number of word pieces and the share truncated at L = ``length``."""
    rows = []
    for k, cat in enumerate(c.classes):
        n_wp = [len(i) for i, y in zip(c.ids_tr + c.ids_te, torch.cat([c.y_tr, c.y_te]).tolist()) if y == k]
        row = {"category": cat}
        if c.corpus == "fortunes":
            quotes = text.parse_fortunes((paths.DATA / "fortunes" / cat).read_text(encoding="utf-8", errors="replace"))
            row |= {
                "quotes in file": len(quotes),
                f"<= {max_tokens} tokens": sum(len(text.basic_tokenize(q)) <= max_tokens for q in quotes),
            }
        rows.append(
            {
                **row,
                "train": int((c.y_tr == k).sum()),
                "test": int((c.y_te == k).sum()),
                "median word pieces": float(np.median(n_wp)) if n_wp else float("nan"),
                f"truncated at L={length} (%)": 100 * np.mean(np.array(n_wp) > length) if n_wp else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def check_ipcs(ipcs, n_train: int, num_classes: int) -> None:
    """A distilled set may use at most half of the training sentences."""
    if any(ipc * num_classes > n_train // 2 for ipc in ipcs):
        raise ValueError(f"ipcs {ipcs} are too large for {n_train} training sentences")


def tdd_kwargs(
    arch: str,
    init: str,
    s: int,
    soft: bool = True,
    *,
    arch_kw: dict,
    iterations: int,
    lstm_iterations: int,
    lr0: float,
    lstm_lr0: float,
    epochs: int,
    outer_lr: float,
    lr_lr: float,
    label_init: float,
    real_batch: int,
    plateau_every: int = 0,
    min_iterations: int = 0,
) -> dict:
    """The :func:`textdd.distill_text` arguments of one run (the Bi-LSTM has its own iterations and initial rate;
    with ``plateau_every`` > 0 the iterations are caps and each run stops at its measured plateau)."""
    lstm = arch == "bilstm"
    return dict(
        arch=arch,
        arch_kwargs=arch_kw[arch],
        init=init,
        init_seed=s,
        seed=s,
        soft=soft,
        iterations=lstm_iterations if lstm else iterations,
        lr0=lstm_lr0 if lstm else lr0,
        epochs=epochs,
        outer_lr=outer_lr,
        lr_lr=lr_lr,
        label_init=label_init,
        real_batch=real_batch,
        plateau_every=plateau_every,
        min_iterations=min_iterations,
    )


def distill_specs(kw_for, *, archs, inits, distill_seeds, ipcs, dd_hard: bool) -> list[tuple[dict, dict]]:
    """``[(row, kwargs)]`` of every distillation: TDD with each learner (the Bi-LSTM first, it is the dearest),
    init and replicate at the smallest ipc; TDD with the TextConvNet at the larger ipcs, every replicate too
    (the claims pair every arm over the replicates); DD with hard labels (TextConvNet, smallest ipc).
    ``kw_for(arch, init, seed, soft=True)`` gives the kwargs."""
    ipc0 = min(ipcs)
    specs = []
    for arch in sorted(archs, key=lambda a: a != "bilstm"):
        for init in inits:
            for s in distill_seeds:
                specs.append(
                    (
                        {"method": "TDD", "distilled with": arch, "init": init, "ipc": ipc0, "rep": s},
                        kw_for(arch, init, s),
                    )
                )
    for ipc in sorted(set(ipcs) - {ipc0}):
        for init in inits:
            for s in distill_seeds:
                specs.append(
                    (
                        {"method": "TDD", "distilled with": "textconvnet", "init": init, "ipc": ipc, "rep": s},
                        kw_for("textconvnet", init, s),
                    )
                )
    if dd_hard:
        init_dd = "fixed" if "fixed" in inits else inits[0]
        for s in distill_seeds:
            specs.append(
                (
                    {
                        "method": "DD (hard labels)",
                        "distilled with": "textconvnet",
                        "init": init_dd,
                        "ipc": ipc0,
                        "rep": s,
                    },
                    kw_for("textconvnet", init_dd, s, soft=False),
                )
            )
    return specs


def distill_calls(specs, x_tr, y_tr, num_classes: int) -> list:
    """One :func:`textdd.distill_job` per spec."""
    return [(textdd.distill_job, (x_tr, y_tr, num_classes, r["ipc"]), dict(kw, method=r["method"])) for r, kw in specs]


def real_sets(x_tr, y_tr, ipcs, seeds, num_classes: int) -> dict:
    """``{ipc: {seed: (x, y)}}``: class-balanced random real sentences."""
    return {
        ipc: {s: (x_tr[i], y_tr[i]) for s in seeds for i in [textdd.class_balanced_real(y_tr, ipc, num_classes, s)]}
        for ipc in ipcs
    }


def baseline_calls(
    reals: dict, x_tr, y_tr, x_te, y_te, learners: dict, num_classes: int, seeds, adam: dict, full_steps: int
) -> list:
    """The Adam recipe on random real at each ipc and on the whole training split (``full_steps`` steps)."""
    calls = [
        (
            textdd.adam_rows,
            (
                {"method": "random real", "distilled with": "-", "init": "-", "ipc": ipc, "rep": 0},
                reals[ipc],
                learners,
                x_te,
                y_te,
                num_classes,
                adam,
            ),
            {},
        )
        for ipc in reals
    ]
    calls.append(
        (
            textdd.adam_rows,
            (
                {"method": "full train", "distilled with": "-", "init": "-", "ipc": len(y_tr) // num_classes, "rep": 0},
                {s: (x_tr, y_tr) for s in seeds},
                learners,
                x_te,
                y_te,
                num_classes,
                dict(adam, steps=full_steps),
            ),
            {},
        )
    )
    return calls


def run_name(r: dict) -> str:
    """A run's name in the loss curves: ``"TDD textconvnet fixed ipc1 rep0"``."""
    return f"{'TDD' if r['method'] == 'TDD' else 'DD'} {r['distilled with']} {r['init']} ipc{r['ipc']} rep{r['rep']}"


def loss_curves(sets) -> pd.DataFrame:
    """The outer loss of every run (the claims' plateau test reads these curves)."""
    return pd.DataFrame(
        [{"run": run_name(r), "iteration": i, "loss": v} for r, d in sets for i, v in enumerate(d.losses)],
        columns=["run", "iteration", "loss"],
    )


def set_file_name(r: dict) -> str:
    """The artifact name of a run's set under ``models/distilled/text/``."""
    tag = "tdd" if r["method"] == "TDD" else "dd"
    return f"{tag}_{r['distilled with']}_{r['init']}_ipc{r['ipc']}_rep{r['rep']}.pt"


def eval_calls(sets, reals: dict, x_te, y_te, seeds, learners: dict, adam: dict, first_seed: int) -> list:
    """One :func:`textdd.evaluate_set` per set (the Adam recipe on the first replicate only)."""
    out = []
    for r, d in sets:
        cross = learners if r["rep"] == first_seed else None
        out.append(
            (textdd.evaluate_set, (d, r, x_te, y_te, seeds), dict(real=reals[r["ipc"]], learners=cross, adam=adam))
        )
    return out


def cell(df: pd.DataFrame) -> str:
    """``"mean ± sd (n=k)"`` of the accuracies (sd 0 for one)."""
    return f"{df['acc'].mean():.3f} ± {df['acc'].std(ddof=1) if len(df) > 1 else 0.0:.3f} (n={len(df)})"


def schedule_rows(res: pd.DataFrame) -> pd.DataFrame:
    """The own-schedule rows (DD's protocol); random real through the DD (hard-label) sets' schedules stays in
    the results only, the tables use TDD's."""
    return res[res["protocol"].eq("schedule") & ~(res["set"].eq("DD (hard labels)") & res["method"].eq("random real"))]


def schedule_table(sched: pd.DataFrame) -> pd.DataFrame:
    """The own-schedule cells, one column per method."""
    return sched.groupby(SCHEDULE_KEYS, sort=False).apply(cell, include_groups=False).unstack("method")


def adam_rows(res: pd.DataFrame) -> pd.DataFrame:
    """The fixed-Adam rows, ``set`` naming the method with its learner and init (distilled sets)."""
    adam_df = res[res["protocol"] == "adam"].copy()
    adam_df["set"] = [
        f"{m}" + (f" ({w}, {i} init)" if m not in ("random real", "full train") else "")
        for m, w, i in zip(adam_df["method"], adam_df["distilled with"], adam_df["init"])
    ]
    return adam_df


def adam_table(adam_df: pd.DataFrame) -> pd.DataFrame:
    """The fixed-Adam cells, one column per learner."""
    return adam_df.groupby(["set", "ipc", "learner"], sort=False).apply(cell, include_groups=False).unstack("learner")


def decoded_rows(d, name: str, emb, categories, show_rows: int) -> list[dict]:
    """A distilled set read back: per sentence its class, top-2 soft label, nearest word piece of each of the first
    ``show_rows`` rows and their mean cosine similarity."""
    out, probs = [], d.targets() if d.soft else torch.nn.functional.one_hot(d.labels, len(categories)).float()
    ids, sim = text.nearest_tokens(d.x[:, :show_rows], emb.unit_table, emb.allowed, unit=True)
    for i in range(len(d.x)):
        toks = text.decode_rows(d.x[i, :show_rows], emb)
        top = torch.topk(probs[i], 2)
        out.append(
            {
                "set": name,
                "class": categories[int(d.hard_labels()[i])],
                "soft label (top 2)": ", ".join(
                    f"{categories[int(j)]} {float(p):.2f}" for p, j in zip(top.values, top.indices)
                ),
                "tokens": " ".join(toks),
                "mean cosine": float(sim[i].mean()),
            }
        )
    return out


def decoded_table(shown, real: tuple, emb, categories, show_rows: int) -> pd.DataFrame:
    """The decoded sentences of the ``shown`` sets ``[(row, set)]`` and the random real sentences ``real``."""
    dec = []
    for r, d in shown:
        dec += decoded_rows(d, f"TDD {r['init']} init", emb, categories, show_rows)
    xr, yr = real
    for i in range(len(yr)):
        dec.append(
            {
                "set": "random real",
                "class": categories[int(yr[i])],
                "soft label (top 2)": "-",
                "tokens": " ".join(text.decode_rows(xr[i, :show_rows], emb)),
                "mean cosine": 1.0,
            }
        )
    return pd.DataFrame(dec)


def decoded_per_row(d, emb, categories, show_rows: int) -> pd.DataFrame:
    """One column per distilled sentence (its class), one row per token position."""
    per_row = pd.DataFrame(
        {f"{categories[int(c)]}": text.decode_rows(d.x[i, :show_rows], emb) for i, c in enumerate(d.hard_labels())}
    )
    per_row.index.name = "row"
    return per_row


def learner_budget(sets, kw_for) -> dict:
    """Per learner distilled with: the outer-iteration budget (the cap, and the plateau test's interval when runs
    stop at their plateau), epochs, real batch and initial rate of its TDD runs (the claims compare learners
    only under a shared budget; whether each run reached its regime is the claims' separate test)."""
    out = {}
    for r, d in sets:
        if r["method"] == "TDD":
            kw = kw_for(r["distilled with"], "random", 0)
            out[r["distilled with"]] = {
                "outer iterations": kw["iterations"],
                "plateau test every": kw.get("plateau_every", 0),
                "epochs": d.epochs,
                "real batch": kw["real_batch"],
                "lr0": kw["lr0"],
            }
    return out


def metrics(
    res: pd.DataFrame, sched: pd.DataFrame, adam_df: pd.DataFrame, sets, *, chance: float, n_train: int, n_test: int
) -> dict:
    """The stage's metrics (without the wall time)."""
    full = res[res["method"] == "full train"].groupby("learner")["acc"].mean()
    return {
        "chance": chance,
        "train": int(n_train),
        "test": int(n_test),
        "schedule": {
            f"{w} {i} ipc{p} theta0={t} {m}": float(v)
            for (w, i, p, t, m), v in sched.groupby(SCHEDULE_KEYS)["acc"].mean().items()
        },
        "adam": {
            f"{s} ipc{p} {l}": float(v)
            for (s, p, l), v in adam_df.groupby(["set", "ipc", "learner"])["acc"].mean().items()
        },
        "full_train": {k: float(v) for k, v in full.items()},
        "distill_seconds": float(sum(d.seconds for _, d in sets)),
    }


TDD_RANKING_NOTE = (
    "own-schedule protocol (DD's); syn hard: the TDD sentences with the argmax of their learned labels "
    "through the same schedule (learned rates, the same theta_0); full hard: the stage's full-train "
    "upper bound (the same learner, fixed Adam recipe, full_steps steps, same seed)"
)


def hard_label_calls(sets, x_te, y_te, seeds) -> list:
    """One :func:`textdd.evaluate_set` per TDD set with its argmax hard labels (:func:`textdd.with_hard_labels`):
    the set's own schedule from the same theta_0 (the fixed one once, fresh draws per seed), no baselines."""
    return [
        (textdd.evaluate_set, (textdd.with_hard_labels(d), r, x_te, y_te, seeds), {})
        for r, d in sets
        if r["method"] == "TDD"
    ]


def ranking_frame(res: pd.DataFrame, hard_rows) -> pd.DataFrame:
    """The long frame of :func:`compendium.distill.ranking.matched_runs` for the TDD sets' HLR under the
    own-schedule protocol (keys method, ipc; by distilled with, init, rep, theta0; the full arm matched on the
    learner only, ``full_by=["distilled with"]``): the TDD rows of ``res`` (soft), the ``hard_rows`` of
    :func:`hard_label_calls` (hard) and the full-train rows (hard, the Adam recipe, "distilled with" = their
    learner). Columns: method, ipc, distilled with, init, rep, theta0, evaluation, set, seed, acc."""
    cols = ["method", "ipc", "distilled with", "init", "rep", "theta0", "seed", "acc"]
    hard = pd.DataFrame(hard_rows)
    syn = res[res["protocol"].eq("schedule") & res["method"].eq("TDD") & res["set"].eq("TDD")][cols]
    syn_hard = hard[hard["protocol"].eq("schedule") & hard["method"].eq(f"TDD {textdd.HARD_SUFFIX}")][cols]
    full = res[res["method"].eq("full train")]
    full = pd.DataFrame(
        {
            "method": "full train",
            "ipc": 0,
            "distilled with": full["learner"],
            "init": np.nan,
            "rep": np.nan,
            "theta0": np.nan,
            "seed": full["seed"],
            "acc": full["acc"],
        }
    )
    out = pd.concat(
        [
            syn.assign(evaluation="soft", set=ranking.DISTILLED),
            syn_hard.assign(method="TDD", evaluation=ranking.HARD, set=ranking.DISTILLED),
            full.assign(evaluation=ranking.HARD, set=ranking.FULL),
        ],
        ignore_index=True,
    )
    return out[cols[:6] + ["evaluation", "set", "seed", "acc"]]
