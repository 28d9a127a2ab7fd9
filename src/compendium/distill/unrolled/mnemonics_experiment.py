"""The ``dd_mnemonics`` stage's experiment: class-incremental learning with exemplar memories (Liu, Su, Liu, Schiele
& Sun, CVPR 2020, "Mnemonics Training"; LUCIR-style protocol) against herding, random exemplars, the distilled
memories of DC / DSA / DM / DWA and no memory, and the notes' claim that Mnemonics' boost grows with the number of
phases.

* :func:`load_memory_sets`: the distilled sets used as memories (``dd_matching`` / ``dd_inversion``);
  :func:`load_protocol_memories`: for the memory-1 pass, DC's and DSA's own syntheses at their papers' settings,
  one per seed (:mod:`compendium.distill.protocol_sets`), as the papers condense each run's memory anew.
* :func:`phase_table`, :func:`incremental_calls`, :func:`memory_calls`: the protocol and the seeds' runs (one
  worker pool).
* :func:`results_tables`, :func:`summary_table`, :func:`cell_texts`: the published tables.
* :func:`phase_gains`, :func:`exemplar_traces`, :func:`metrics`: the claims' inputs and the metrics.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from compendium.core import paths
from compendium.core.probe import to_float
from compendium.distill import protocol_sets
from compendium.distill.sets import DistilledSet
from compendium.distill.unrolled import mnemonics as MN

SET_FILES = {
    "dc": "distilled/matching/dc_ipc10.pt",
    "dsa": "distilled/matching/dsa_ipc10.pt",
    "dm": "distilled/matching/dm_ipc10.pt",
    "dwa": "distilled/inversion/dwa_ipc10.pt",
}
#: The memory-1 pass: the images per class of DC's and DSA's syntheses at their papers' settings
PROTOCOL_IPC = 1
#: the command that runs one seed's synthesis there (about 4 hours of one core a seed)
PROTOCOL_COMMAND = "python -m compendium.distill.dc_protocol --methods {m} --ipcs 1 --seeds S"


def load_memory_sets(methods, order, mean, std, files=None, dataset: str | None = None) -> tuple[dict, dict]:
    """``(sets, params)`` of the distilled memories among ``methods`` (as :func:`MN.as_memory_set`), read from
    ``files`` ({method: artifact path}; default :data:`SET_FILES`); a FileNotFoundError names the stage that
    writes a missing set, and with ``dataset`` a set made from another dataset is refused by name."""
    files = SET_FILES if files is None else files
    sets, params = {}, {}
    for m in methods:
        if m in files:
            f = paths.find_artifact(files[m])
            if not f.exists():
                stage = "dd_dc_arch" if files[m].startswith("distilled/dc_arch/") else "dd_matching / dd_inversion"
                raise FileNotFoundError(f"the {m.upper()} memory needs {f} (run the {stage} stage first)")
            d = DistilledSet.load(f, dataset)
            sets[m], params[m] = MN.as_memory_set(d, order, mean, std), d.params
    return sets, params


def load_protocol_memories(
    methods, seeds, order, mean, std, dataset: str | None = None, root=protocol_sets.ROOT
) -> tuple[dict, dict]:
    """``(sets, params)`` of the memory-1 pass: ``sets`` {seed: {method: memory}} for the synthesized methods among
    ``methods`` (``dc``, ``dsa``) and each seed of ``seeds`` whose synthesis at its paper's settings finished
    (:func:`protocol_sets.finished_sets`; a seed without one runs that pass without the method); ``params``
    {method: its first seed's stored params, with ``syntheses`` and ``seeds``, the seeds that have a set}. A method
    with no finished seed among ``seeds`` is a FileNotFoundError naming the command that makes one."""
    sets: dict = {int(s): {} for s in seeds}
    params = {}
    for m in (m for m in methods if m in ("dc", "dsa")):
        done = protocol_sets.finished_sets(m, PROTOCOL_IPC, seeds, root, dataset)
        if not done:
            raise FileNotFoundError(
                f"no finished {m.upper()} synthesis at {PROTOCOL_IPC} image per class for seeds {list(seeds)} under "
                f"{protocol_sets.set_file(m, PROTOCOL_IPC, 0, root).parent}; run `{PROTOCOL_COMMAND.format(m=m)}` "
                f"(about 4 h of one core a seed), or drop {m!r} from the pass"
            )
        for s, d in done.items():
            sets[s][m] = MN.as_memory_set(d, order, mean, std)
        first = done[min(done)]
        params[m] = {**first.params, "syntheses": len(done), "seeds": sorted(done)}
    return sets, params


def phase_table(sched, seen, classes, order, memory: int, train_per_class: int) -> pd.DataFrame:
    """The protocol: per phase its new classes, the classes seen, the memory at its start and its new images."""
    return pd.DataFrame(
        {
            "phase": range(len(sched)),
            "new classes": [", ".join(classes[order[c]] for c in s) for s in sched],
            "seen": seen,
            "memory at the start": MN.memory_sizes(sched, memory),
            "new training images": [train_per_class * len(s) for s in sched],
        }
    )


def incremental_calls(
    tr, tx, ty, methods, cfg: MN.CILConfig, seeds, sets: dict, order, mean, std, phase_increments
) -> tuple[list, list]:
    """``(calls, extra)``: :func:`MN.run_incremental` of every method per seed (the first seed keeps its
    exemplars), then random and Mnemonics only with fewer, larger phases (``extra``: ``[(increment, seed)]``)."""
    calls = memory_calls(tr, tx, ty, methods, cfg, seeds, sets, order, mean, std, keep_first=True)
    extra = [(inc, s) for inc in phase_increments for s in seeds]
    for inc, s in extra:
        calls.append(
            (
                MN.run_incremental,
                (
                    *_seed_data(tr, cfg, s, order, mean, std),
                    tx,
                    ty,
                    ["random", "mnemonics"],
                    dataclasses.replace(cfg, increment=inc),
                    s,
                    {},
                ),
                {},
            )
        )
    return calls, extra


def memory_calls(
    tr,
    tx,
    ty,
    methods,
    cfg: MN.CILConfig,
    seeds,
    sets: dict,
    order,
    mean,
    std,
    *,
    keep_first: bool = False,
    seed_sets: dict | None = None,
) -> list:
    """:func:`MN.run_incremental` of ``methods`` per seed on that seed's stratified training subset (the first
    seed keeps its exemplars with ``keep_first``). ``sets``: memories shared by every seed; ``seed_sets``: {seed:
    {method: memory}}, one synthesis per seed (:func:`load_protocol_memories`): a seed without a method's set
    runs without that method."""
    seed_sets = seed_sets or {}
    per_seed = {m for own in seed_sets.values() for m in own}
    calls = []
    for s in seeds:
        own = {**sets, **seed_sets.get(s, {})}
        ms = [m for m in methods if m not in per_seed or m in own]
        calls.append(
            (
                MN.run_incremental,
                (*_seed_data(tr, cfg, s, order, mean, std), tx, ty, ms, cfg, s, own),
                {"keep_exemplars": keep_first and s == seeds[0]},
            )
        )
    return calls


def _seed_data(tr, cfg: MN.CILConfig, seed: int, order, mean, std):
    """That seed's stratified training subset, normalised (``mean`` / ``std`` per channel), labels as positions."""
    idx = MN.stratified_subset(tr.labels, cfg.train_per_class, cfg.num_classes, seed)
    return to_float(tr.images[idx], mean, std), MN.positions(tr.labels[idx], order)


def results_tables(runs, methods, seen) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(results, per_phase)``: average incremental accuracy, forgetting and seconds per (method, seed), and the
    accuracy on the seen classes after each phase (a method a seed ran without is not listed for it)."""
    rows, phase_rows = [], []
    for r in runs:
        for m in (m for m in methods if m in r["aia"]):
            rows.append(
                {
                    "method": m,
                    "seed": r["seed"],
                    "avg incremental acc": r["aia"][m],
                    "forgetting": r["forgetting"][m],
                    "seconds": r["seconds"][m],
                }
            )
            for i, a in enumerate(MN.phase_accuracy(r["acc"][m], seen)):
                phase_rows.append({"method": m, "seed": r["seed"], "phase": i, "classes seen": seen[i], "acc": a})
    return pd.DataFrame(rows), pd.DataFrame(phase_rows)


def summary_table(res: pd.DataFrame) -> pd.DataFrame:
    """Per method: mean and std of the average incremental accuracy and the forgetting, seeds, seconds, and the
    difference to random exemplars."""
    summ = (
        res.groupby("method", sort=False)
        .agg(
            aia=("avg incremental acc", "mean"),
            aia_std=("avg incremental acc", "std"),
            forg=("forgetting", "mean"),
            forg_std=("forgetting", "std"),
            n=("seed", "count"),
            seconds=("seconds", "mean"),
        )
        .reset_index()
    )
    summ[["aia_std", "forg_std"]] = summ[["aia_std", "forg_std"]].fillna(0.0)
    summ["Δ acc vs random"] = summ["aia"] - float(summ.loc[summ["method"] == "random", "aia"].iloc[0])
    return summ


def cell_texts(cells: dict, methods) -> pd.DataFrame:
    """The displayed summary in percent (``mean ± std`` from two seeds on)."""

    def txt(m, k="aia"):
        c = cells[m]
        return f"{100 * c[k]:.1f}" if c["n"] < 2 else f"{100 * c[k]:.1f} ± {100 * c[k + '_std']:.1f}"

    return pd.DataFrame(
        {
            "method": methods,
            "average incremental accuracy (%)": [txt(m) for m in methods],
            "forgetting (%)": [txt(m, "forg") for m in methods],
            "Δ acc vs random (pts)": [f"{100 * cells[m]['Δ acc vs random']:+.1f}" for m in methods],
        }
    )


def phase_gains(
    runs, extra, extra_runs, *, n_phases: int, increment: int, base_classes: int, num_classes: int
) -> pd.DataFrame:
    """Mnemonics' gain over random exemplars per seed at the main setting and at each of the fewer-phase ones (the
    phases of the dataset's ``num_classes``)."""
    rows = [
        {
            "phases": n_phases,
            "increment": increment,
            "seed": r["seed"],
            "random": r["aia"]["random"],
            "mnemonics": r["aia"]["mnemonics"],
        }
        for r in runs
    ]
    rows += [
        {
            "phases": len(MN.phase_schedule(num_classes, base_classes, inc)),
            "increment": inc,
            "seed": r["seed"],
            "random": r["aia"]["random"],
            "mnemonics": r["aia"]["mnemonics"],
        }
        for (inc, _), r in zip(extra, extra_runs)
    ]
    gains = pd.DataFrame(rows)
    gains["gain"] = gains["mnemonics"] - gains["random"]
    return gains


def exemplar_traces(runs, extra, extra_runs, *, n_phases: int, base_classes: int, num_classes: int) -> pd.DataFrame:
    """The exemplar-level loss of every Mnemonics optimisation (the claims' plateau test reads these curves)."""
    groups = (
        (n_phases, runs),
        *[(len(MN.phase_schedule(num_classes, base_classes, inc)), [r]) for (inc, _), r in zip(extra, extra_runs)],
    )
    return pd.DataFrame(
        [
            {"run": f"seed {r['seed']} {k}-phase setting phase {i}", "iteration": j, "loss": v}
            for k, rs in groups
            for r in rs
            for i, t in enumerate(r["mn_trace"])
            for j, v in enumerate(t)
        ],
        columns=["run", "iteration", "loss"],
    )


def metrics(cells: dict, curve: pd.DataFrame, methods, runs, wall: float) -> dict:
    """The stage's metrics."""
    return {
        "avg_incremental_acc": {m: {"mean": cells[m]["aia"], "std": cells[m]["aia_std"]} for m in methods},
        "forgetting": {m: {"mean": cells[m]["forg"], "std": cells[m]["forg_std"]} for m in methods},
        "final_acc": {m: float(curve[m].iloc[-1]) for m in methods},
        "wall_seconds": wall,
        "cpu_seconds_per_seed": [r["cpu_seconds"] for r in runs],
    }
