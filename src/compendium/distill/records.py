"""What the labelled set stages record of their sets and evaluations, so that a later stage can judge them
without the sets in memory.

A stage that distils (or selects) sets and evaluates students on them writes, beside its per-seed
``results``:

* ``regime`` (:func:`regime_table`): per set, the iterations it ran, how it started (``init``), its
  displacement from the real images it started from (:func:`displacement`, RMS in 8-bit grey levels) and
  its logged loss points; ``loss_curves`` (:func:`curves_table`): those points. Both name each set by the
  stage's key columns and by ``key``, the whole key as JSON, so a key of any shape reads back exactly
  (:func:`facts_from_tables`).
* ``evaluation`` (:func:`evaluation_table`): one row per evaluated arm with the settings that change what a
  student learns, so a judge can require that compared arms share one evaluation.

:class:`SetFacts` is what the verdicts read of a set; :func:`set_facts` computes it from sets in memory
and :func:`facts_from_tables` from the two tables, to the same values.

The reference arms the stages evaluate beside the methods are named here once: the real images a set
started from (:func:`init_name`, :func:`init_set`), DWA's real-image initialisation (:data:`REAL_INIT`, arm B
of DWA's Table 3 ladder), and the student on the whole real pool with the same schedule (:data:`CEILING`,
:func:`ceiling_set`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from compendium.core.probe import to_float
from compendium.distill.sets import from_real

#: Reference arms the stages evaluate beside the methods (never rows of the method tables).
REAL_INIT = "B: real images (DWA's init)"  # arm B of the Table 3 ladder: the real images DWA starts from
CEILING = "whole pool (student ceiling)"  # the student on the real pool, the same schedule
DC_DSA_EVAL = "DC (DSA eval)"  # DC's sets under DSA's evaluation augmentation
RELA = "ReLA (random + teacher)"  # ReLA's Table 5 arm: random real images with the teacher's labels
#: DC's Table 2 arm of dd_crossarch: the ipc-1 set of dd_dc_arch (DC's default ConvNet at the paper's 1,000
#: outer iterations), evaluated on every student; its real initialisation is the regime's reference.
DC_TABLE2 = "dc table2"


def init_name(method: str) -> str:
    """The arm of the real images a method's set started from (``"DC"`` -> ``"DC init (real)"``)."""
    return f"{method} init (real)"


def is_reference(method: str) -> bool:
    """A reference arm (initialisation, ceiling, another evaluation), not a distillation method."""
    return method in (REAL_INIT, CEILING, DC_DSA_EVAL) or method.endswith(" init (real)")


def displacement(dset, images_u8: torch.Tensor) -> float:
    """RMS change of a set's images from the real images it started from (``params['init_index']``, in the
    set's order), in 8-bit grey levels; NaN for a set without a real initialisation."""
    idx = dset.params.get("init_index")
    if idx is None:
        return float("nan")
    x0 = to_float(images_u8[torch.as_tensor(idx, dtype=torch.int64)], dset.mean, dset.std)
    if x0.shape != dset.images.shape:
        raise ValueError(f"{dset.method}: init_index gives {tuple(x0.shape)}, the set is {tuple(dset.images.shape)}")
    s = torch.as_tensor(dset.std, dtype=torch.float32).view(1, -1, 1, 1)
    return float(((dset.images.float() - x0) * s).pow(2).mean().sqrt() * 255.0)


def init_set(dset, images_u8: torch.Tensor, labels: torch.Tensor, ipc: int | None = None, method: str | None = None):
    """The real images a set started from (its first ``ipc`` per class when given), as a set of their own, of the
    set's dataset: the "same images" reference of a regime check."""
    idx = torch.as_tensor(dset.params["init_index"], dtype=torch.int64)
    if not torch.equal(labels[idx], dset.labels):
        raise ValueError(f"{dset.method}: init_index does not follow the set's labels")
    if ipc is not None:
        keep = torch.cat([torch.nonzero(dset.labels == c).flatten()[:ipc] for c in range(dset.num_classes)])
        idx = idx[keep.sort().values]
    name = method or init_name(dset.method)
    return from_real(images_u8, labels, idx, dset.num_classes, dset.mean, dset.std, name, dataset=dset.dataset)


def ceiling_set(images_u8: torch.Tensor, labels: torch.Tensor, n: int, mean, std, seed: int = 0):
    """The student's ceiling set: a seeded class-mixed draw of ``min(n, N)`` real images. With ``n`` = steps x
    batch of the student's schedule every image is drawn at most once, as from the whole pool."""
    idx = torch.randperm(len(labels), generator=torch.Generator().manual_seed(seed))[: min(int(n), len(labels))]
    return from_real(images_u8, labels, idx.sort().values, int(labels.max()) + 1, mean, std, CEILING)


def loss_curve(dset) -> list[float]:
    """A set's synthesis loss per logged point: ``loss_curve`` (SRe2L / DWA), ``loss_trace`` (DC / DSA / DM
    window means, KIP ``[step, loss]`` pairs)."""
    p = dset.params
    if p.get("loss_curve") is not None:
        return [float(v) for v in p["loss_curve"]]
    return [float(t[1]) if isinstance(t, (list, tuple)) else float(t) for t in p.get("loss_trace") or []]


@dataclass(frozen=True)
class SetFacts:
    """What a regime check reads of a set: the ``iterations`` it ran, its ``displacement`` from the real images
    it started from (grey levels; NaN without a real start) and its logged loss ``curve``."""

    iterations: int
    displacement: float
    curve: tuple[float, ...]


def set_facts(sets: Mapping[tuple, object], images_u8: torch.Tensor | Mapping[str, torch.Tensor]) -> dict:
    """``{key: SetFacts}`` of sets in memory. ``images_u8``: the training images the sets were made from, or a
    mapping dataset name -> them where the sets come from several datasets (each set's ``dataset``)."""

    def images(d):
        return images_u8[d.dataset] if isinstance(images_u8, Mapping) else images_u8

    return {
        k: SetFacts(int(d.params.get("iterations", 0) or 0), displacement(d, images(d)), tuple(loss_curve(d)))
        for k, d in sets.items()
    }


def _key_json(key) -> str:
    return json.dumps(
        [v.item() if isinstance(v, np.generic) else v for v in (key if isinstance(key, tuple) else (key,))]
    )


def regime_table(
    sets: Mapping[tuple, object],
    images_u8: torch.Tensor | Mapping[str, torch.Tensor],
    names: Iterable[str] = ("method", "ipc"),
) -> pd.DataFrame:
    """Per set: its key (``names`` columns and ``key``, the whole key as JSON), the iterations it ran, its
    initialisation and its displacement from it (grey levels), the logged loss points and the last one."""
    facts = set_facts(sets, images_u8)
    rows = []
    for key, d in sets.items():
        f = facts[key]
        rows.append(
            {
                **dict(zip(names, key if isinstance(key, tuple) else (key,))),
                "key": _key_json(key),
                "iterations": f.iterations,
                "init": d.params.get("init"),
                "displacement": f.displacement,
                "loss points": len(f.curve),
                "final loss": f.curve[-1] if f.curve else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def curves_table(sets: Mapping[tuple, object], names: Iterable[str] = ("method", "ipc")) -> pd.DataFrame:
    """The synthesis loss curves, one row per (set, logged point), each set named as in :func:`regime_table`."""
    names = list(names)
    return pd.DataFrame(
        [
            {
                **dict(zip(names, key if isinstance(key, tuple) else (key,))),
                "key": _key_json(key),
                "point": i,
                "loss": v,
            }
            for key, d in sets.items()
            for i, v in enumerate(loss_curve(d))
        ],
        columns=names + ["key", "point", "loss"],
    )


def facts_from_tables(regime: pd.DataFrame, curves: pd.DataFrame) -> dict:
    """``{key: SetFacts}`` read back from a stage's ``regime`` and ``loss_curves`` tables (the keys as the stage
    built them: tuples of strings and numbers)."""
    pts: dict[str, list] = {}
    if len(curves):
        for k, g in curves.groupby("key", sort=False):
            pts[k] = [float(v) for v in g.sort_values("point")["loss"]]
    out = {}
    for r in regime.itertuples(index=False):
        key = tuple(json.loads(r.key))
        out[key] = SetFacts(int(r.iterations), float(r.displacement), tuple(pts.get(r.key, ())))
    return out


#: The ``float_format`` of the tables a judge reads back (:meth:`compendium.pipeline.report.Reporter.table`):
#: None writes every float as its shortest exact repr, so the verdicts read the values the stage computed
#: (the reading tables' default, 4 significant digits, would round accuracies such as 457/600).
EXACT = None


def record_sets(
    rep,
    sets: Mapping[tuple, object],
    images_u8: torch.Tensor | Mapping[str, torch.Tensor],
    names: Iterable[str] = ("method", "ipc"),
) -> pd.DataFrame:
    """Write a stage's ``regime`` (:func:`regime_table`) and ``loss_curves`` (:func:`curves_table`) tables,
    exactly (:data:`EXACT`), with ``rep`` (anything with ``table(df, name, float_format=...)``, e.g.
    :class:`compendium.pipeline.report.Reporter`); returns the regime table."""
    names = list(names)
    reg = regime_table(sets, images_u8, names)
    rep.table(reg, "regime", float_format=EXACT)
    rep.table(curves_table(sets, names), "loss_curves", float_format=EXACT)
    return reg


_SKIP = ("device", "eval_every", "eval_every_steps", "eval_batch_size", "channels_last")


def eval_settings(cfg, test_n: int) -> dict[str, str]:
    """An evaluation config as strings (``EvalConfig.record`` less the settings that do not change what a
    student learns; the teacher's temperature only where the labels are the teacher's)."""
    rec = {k: v for k, v in cfg.record().items() if k not in _SKIP}
    if rec["label_mode"] != "teacher":
        for k in ("temperature", "t2_scale", "teacher_train_mode"):
            rec.pop(k)
    rec["test_n"] = test_n
    return {k: json.dumps(v, sort_keys=True) if isinstance(v, (dict, list, tuple)) else str(v) for k, v in rec.items()}


def evaluation_table(jobs, test_n: int) -> pd.DataFrame:
    """One row per evaluated arm (its key, without the seed) with its evaluation settings."""
    rows = [{**{k: str(v) for k, v in j.key.items()}, **eval_settings(j.cfg, test_n)} for j in jobs]
    return pd.DataFrame(rows).drop_duplicates(ignore_index=True)


def settings_table(**values) -> pd.DataFrame:
    """A stage's settings that its judge needs (ipcs, the arms it ran), one row per name with the value as JSON,
    so that lists and numbers read back exactly (:func:`read_settings`)."""

    def plain(v):
        if isinstance(v, np.generic):
            return v.item()
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, Mapping):
            return {str(k): plain(x) for k, x in v.items()}
        return v

    return pd.DataFrame(
        [{"name": k, "value": json.dumps(plain(v))} for k, v in values.items()], columns=["name", "value"]
    )


def read_settings(table: pd.DataFrame) -> dict:
    """The values :func:`settings_table` wrote (read the CSV with ``dtype=str``)."""
    return {str(n): json.loads(v) for n, v in zip(table["name"], table["value"])}
