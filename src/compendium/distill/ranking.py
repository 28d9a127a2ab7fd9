"""DD-Ranking's label-robust metrics: improvement over random (IOR), hard label recovery (HLR) and their
combined, normalised score (LRS, the "DD-Ranking score").

Source: Li et al., "DD-Ranking: Rethinking the Evaluation of Dataset Distillation" (arXiv:2505.13300, 2025)
and its code, github.com/NUS-HPC-AI-Lab/DD-Ranking (read at commit b8b09664): the README's section
"Label-Robust Score (LRS)" and ``ddranking/metrics/soft_label.py``, ``LabelRobustScoreSoft.compute_metrics``
(``hard_label.py``, ``LabelRobustScoreHard``, the same three numbers for hard-label methods, IOR then on hard
labels). Per evaluation run:

* HLR = Acc(real-hard) − Acc(syn-hard): the whole real training set with hard labels minus the distilled set
  with hard labels (``hlr = full_data_hard_label_acc - syn_data_hard_label_acc``). Lower is better;
* IOR = Acc(syn-any) − Acc(rdm-any): the distilled set under the method's own evaluation (soft or teacher
  labels) minus a random class-balanced real subset of the same size under the same evaluation, soft labels
  from the same teacher (``ior = syn_data_soft_label_acc - random_data_soft_label_acc``; DD-Ranking draws a
  fresh random subset per run). Higher is better;
* α = w·IOR − (1 − w)·HLR, w ∈ [0, 1], default w = 0.5 (``lrs_lambda``, "both equally important");
  LRS = (e^α − e^−1) / (e − e^−1) (the README's normalisation to [0, 1]; the earlier README called the same
  number the "DD-Ranking Score (DDRS)").

The reported numbers are the mean (and std) over ``num_eval`` runs of the per-run HLR, IOR and LRS: the
score of the mean is not the mean of the scores, so :func:`matched_runs` scores each seed.

**Units.** The normalisation maps α ∈ [−1, 1] onto [0, 1] only when accuracies are *fractions*: with
fractions IOR, HLR and α lie in [−1, 1]. (DD-Ranking's code measures accuracy in percent, ``correct_k *
(100.0 / batch_size)``, and applies ``np.exp`` to α as is: with percentages the score leaves [0, 1], an α of
10 points giving e^10.)
Every function here takes accuracies as fractions in [0, 1] and raises a ``ValueError`` on a value above 1,
which is almost surely a percentage.

Where a stage here departs from DD-Ranking's evaluator: DD-Ranking tunes the learning rate of the syn and
random evaluations (``hyper_param_search``), trains the hard-label arms without the method's augmentation
(``use_aug_for_hard`` False) and takes the full-data accuracy from its own recipe or a cached number; a stage
here evaluates every arm with the stage's one evaluation config, only the label mode changed, and pairs the
arms over matched seeds (:func:`matched_runs`). The table with the paired intervals over those seeds is
:func:`compendium.pipeline.ranking.ior_hlr_table` (the intervals are :class:`compendium.verdicts.claims.Effect`'s,
of a wing this one does not import).

>>> round(ior(0.62, 0.55), 4), round(hlr(0.80, 0.45), 4)
(0.07, 0.35)
>>> round(label_robust_score(0.07, 0.35), 4)   # α = 0.5·0.07 − 0.5·0.35 = −0.14
0.2134
>>> round(label_robust_score(0.0, 0.0), 4)     # = 1 / (1 + e)
0.2689
>>> ior(62.0, 55.0)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: IOR: accuracies must be fractions in [0, 1] (DD-Ranking's normalisation assumes them), got 62 ...
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

DEFAULT_WEIGHT = 0.5  # DD-Ranking's default lrs_lambda: IOR and HLR equally important
HARD = "hard"  # the label mode of HLR's two arms
DISTILLED, RANDOM, FULL = "distilled", "random", "full"  # the set kinds of the long frame
SET_KINDS = (DISTILLED, RANDOM, FULL)
RUN_COLUMNS = ("syn", "random", "syn hard", "full hard", "IOR", "HLR", "LRS")


def as_fractions(values, what: str = "accuracy") -> np.ndarray:
    """``values`` as a float array, checked to be fractions in [0, 1] (NaN passes: a missing arm). A value
    above 1 is almost surely a percentage, and DD-Ranking's normalisation is only right on fractions."""
    a = np.asarray(values, dtype=float)
    finite = a[np.isfinite(a)]
    if finite.size and finite.max() > 1.0:
        raise ValueError(
            f"{what}: accuracies must be fractions in [0, 1] (DD-Ranking's normalisation assumes "
            f"them), got {finite.max():g} (max): percentages? divide by 100"
        )
    if finite.size and finite.min() < 0.0:
        raise ValueError(f"{what}: accuracies must be fractions in [0, 1], got {finite.min():g} (min)")
    if np.isinf(a).any():
        raise ValueError(f"{what}: accuracies must be finite, got {a[np.isinf(a)][0]}")
    return a


def _out(x: np.ndarray):
    return float(x) if x.ndim == 0 else x


def ior(acc_syn, acc_random):
    """Improvement over random, IOR = Acc(syn-any) − Acc(rdm-any) (DD-Ranking README; ``soft_label.py``):
    the distilled set minus a random real subset of the same size, both under the method's evaluation
    (soft / teacher labels). Fractions in [0, 1]; scalars or arrays (elementwise, e.g. per seed)."""
    return _out(as_fractions(acc_syn, "IOR") - as_fractions(acc_random, "IOR"))


def hlr(acc_full_hard, acc_syn_hard):
    """Hard label recovery, HLR = Acc(real-hard) − Acc(syn-hard) (DD-Ranking README; ``soft_label.py``):
    the whole real training set minus the distilled set, both with hard labels; 0 means the set recovers
    the real data's accuracy. Fractions in [0, 1]; scalars or arrays (elementwise)."""
    return _out(as_fractions(acc_full_hard, "HLR") - as_fractions(acc_syn_hard, "HLR"))


def label_robust_score(ior_value, hlr_value, weight: float = DEFAULT_WEIGHT):
    """DD-Ranking's label-robust score (the README's LRS, earlier "DD-Ranking score"):
    α = w·IOR − (1 − w)·HLR and LRS = (e^α − e^−1) / (e − e^−1), in [0, 1] for IOR, HLR in [−1, 1], i.e. for
    accuracies given as fractions (a |value| above 1 raises: percentages). ``weight`` is w (default 0.5)."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"the weight w must lie in [0, 1], got {weight}")
    i, h = np.asarray(ior_value, dtype=float), np.asarray(hlr_value, dtype=float)
    for name, v in (("IOR", i), ("HLR", h)):
        if np.isfinite(v).any() and np.abs(v[np.isfinite(v)]).max() > 1.0:
            raise ValueError(
                f"{name} must lie in [-1, 1] (a difference of fractions), got "
                f"{np.abs(v[np.isfinite(v)]).max():g}: accuracies in percent? divide by 100"
            )
    alpha = weight * i - (1.0 - weight) * h
    return _out((np.exp(alpha) - math.exp(-1.0)) / (math.e - math.exp(-1.0)))


dd_ranking_score = label_robust_score  # the name of the earlier README (DDRS); the same formula


def _seed_values(df: pd.DataFrame, what: str) -> pd.Series:
    """seed -> accuracy of one arm; one row per seed."""
    dup = df["seed"][df["seed"].duplicated()]
    if len(dup):
        raise ValueError(f"{what}: more than one row for seed(s) {sorted(set(dup))}")
    return df.set_index("seed")["acc"].astype(float)


def matched_runs(
    frame: pd.DataFrame,
    keys: Sequence[str] = ("method", "ipc"),
    by: Sequence[str] = (),
    weight: float = DEFAULT_WEIGHT,
    *,
    full_by: Sequence[str] | None = None,
    ior_defined: bool = True,
) -> pd.DataFrame:
    """Per-seed HLR, IOR and LRS from a long frame of evaluations, one row per (``keys``, ``by``, seed).

    ``frame`` columns: ``keys`` (method, ipc), ``by`` (further columns every arm shares, e.g. the student),
    ``evaluation`` (the label mode: ``"hard"``, or the method's own, e.g. ``"teacher"`` / ``"soft"``),
    ``set`` (``"distilled"``, ``"random"``: a random real subset of the same size, ``"full"``: the whole real
    training set), ``seed`` and ``acc`` (a fraction in [0, 1]). A method's distilled rows hold exactly one
    non-hard evaluation E and its hard one (a hard-label method only hard rows: E is ``hard``, as
    DD-Ranking's ``LabelRobustScoreHard``); its random arm is the ``random`` rows at the same ``keys`` but
    ``method`` (the ipc) and ``by``, evaluated with E (their ``method`` is not read); its full arm the
    ``full`` rows with hard labels at the same ``by`` (their ``ipc`` is not read). Only seeds all four arms
    ran are kept (matched seeds); a missing arm raises, naming it.

    ``full_by``: the columns of ``by`` the full arm is matched on (default: all of ``by``), for a ``by``
    column the real pool does not depend on (e.g. the teacher that distilled the set: the student on the
    real pool with hard labels is the same whichever teacher relabels the sets). ``ior_defined=False``: IOR is not
    defined (no random arm under the method's evaluation, e.g. learned labels without a teacher): the
    random arm is not looked up and ``random``, ``IOR`` and ``LRS`` are NaN; HLR as always.

    Output columns: ``keys``, ``by``, ``evaluation`` (E), ``seed``, ``syn`` (Acc syn-E), ``random``
    (Acc rdm-E), ``syn hard``, ``full hard``, ``IOR``, ``HLR``, ``LRS`` (fractions; LRS in [0, 1]).

    >>> rows = [("m", 1, "teacher", "distilled", 0, .60), ("m", 1, "teacher", "distilled", 1, .64),
    ...         ("m", 1, "hard", "distilled", 0, .40), ("m", 1, "hard", "distilled", 1, .42),
    ...         ("random", 1, "teacher", "random", 0, .50), ("random", 1, "teacher", "random", 1, .50),
    ...         ("real", 0, "hard", "full", 0, .80), ("real", 0, "hard", "full", 1, .82)]
    >>> df = pd.DataFrame(rows, columns=["method", "ipc", "evaluation", "set", "seed", "acc"])
    >>> matched_runs(df)[["seed", "IOR", "HLR"]].round(3).values.tolist()
    [[0.0, 0.1, 0.4], [1.0, 0.14, 0.4]]
    """
    keys, by = list(keys), list(by)
    full_by = by if full_by is None else list(full_by)
    if extra := set(full_by) - set(by):
        raise ValueError(f"full_by {sorted(extra)} not among the by columns {by}")
    need = {*keys, *by, "evaluation", "set", "seed", "acc"}
    if missing := need - set(frame.columns):
        raise ValueError(f"the frame lacks the column(s) {sorted(missing)}")
    if bad := set(frame["set"]) - set(SET_KINDS):
        raise ValueError(f"unknown set kind(s) {sorted(bad)}; known: {SET_KINDS}")
    frame = frame.assign(acc=as_fractions(frame["acc"], "accuracy"))
    dist = frame[frame["set"] == DISTILLED]
    rand, full = frame[frame["set"] == RANDOM], frame[frame["set"] == FULL]
    rows = []
    for gkey, g in dist.groupby(keys + by, sort=False, dropna=False):
        gkey = dict(zip(keys + by, gkey if isinstance(gkey, tuple) else (gkey,)))
        name = ", ".join(f"{k} {v}" for k, v in gkey.items())
        modes = sorted(set(g["evaluation"]) - {HARD}) or [HARD]  # a hard-label method: IOR on hard labels
        if len(modes) != 1:
            raise ValueError(f"{name}: need exactly one soft/teacher evaluation besides 'hard', got {modes}")
        mode = modes[0]
        shared = np.ones(len(rand), bool)
        for k in [k for k in keys if k != "method"] + by:
            shared &= (rand[k] == gkey[k]).to_numpy()
        fshared = np.ones(len(full), bool)
        for k in full_by:
            fshared &= (full[k] == gkey[k]).to_numpy()
        arms = {
            "syn": g[g["evaluation"] == mode],
            "syn hard": g[g["evaluation"] == HARD],
            "random": rand[shared & (rand["evaluation"] == mode).to_numpy()],
            "full hard": full[fshared & (full["evaluation"] == HARD).to_numpy()],
        }
        if not ior_defined:
            del arms["random"]
        if empty := [a for a, d in arms.items() if d.empty]:
            raise ValueError(f"{name}: no rows for the arm(s) {empty} (evaluation {mode!r} / 'hard')")
        vals = {a: _seed_values(d, f"{name}, {a}") for a, d in arms.items()}
        seeds = sorted(set.intersection(*(set(v.index) for v in vals.values())))
        if not seeds:
            raise ValueError(f"{name}: the arms share no seed ({ {a: sorted(v.index) for a, v in vals.items()} })")
        for s in seeds:
            v = {"random": math.nan} | {a: float(vals[a][s]) for a in vals}
            i, h = ior(v["syn"], v["random"]), hlr(v["full hard"], v["syn hard"])
            rows.append(
                {
                    **gkey,
                    "evaluation": mode,
                    "seed": s,
                    **v,
                    "IOR": i,
                    "HLR": h,
                    "LRS": label_robust_score(i, h, weight),
                }
            )
    return pd.DataFrame(rows, columns=[*keys, *by, "evaluation", "seed", *RUN_COLUMNS])
