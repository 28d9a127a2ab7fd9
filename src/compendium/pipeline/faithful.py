"""The faithful profile: every stage at the papers' iteration counts and schedules, resumable stage by stage.

``python -m compendium.pipeline.faithful`` (``make faithful``) runs the stages of ``dvc.yaml`` at scale
``faithful`` (params.yaml: the ``cpu`` scale's datasets and networks, the papers' optimisation lengths) in
the order their deps and outs give, each through :func:`compendium.pipeline.nbrun.run_stage`:

* the products go to ``reports/faithful/`` (beside the default results; the claims ledger of the run is
  ``reports/faithful/claims.csv``, built from ``reports/faithful/claims/``), the heavy ones (checkpoints,
  targets, distilled sets) to ``models/faithful/``, where the stages downstream read them;
* a stage that finished leaves a done record, ``reports/faithful/done/<stage>.json``: its resolved
  parameters, DVC's hashes of the source files and notebook its dvc.yaml deps name (the entries ``dvc.lock``
  holds for them), the records of the stages it reads from, and the measured minutes. A rerun skips every
  stage whose record still matches and redoes one whose parameters, code, notebook or upstream stage changed;
* a stage interrupted midway (Ctrl-C, a killed job, a lost machine) is resumed call by call by nbrun
  (``build/resume/<stage>@<root tag>/``), so no finished training is lost.

Options: ``--stages a b`` (with every stage upstream of them, unless ``--only``), ``--hours H`` (start no new
stage after H hours: a piece of work; run the same command again to go on), ``--dry-run`` (what would run,
with an estimated time per stage; ``--write`` also writes the estimate table to
``benchmarks/faithful_estimate.md``, with a GPU column where ``benchmarks/bench_steps_{cpu,gpu}.json`` hold
per-step timings) and ``--status``.

Why a runner beside DVC: DVC keeps one lock per workspace (one scale's products in ``models/`` and
``reports/``) and runs an experiment to one commit, its products in one machine's cache; this profile's products
sit beside the default ones and its days of work advance in pieces on any machine, each committed as it
finishes. Everything but the done records comes from DVC: the stages, deps, outs and order of ``dvc.yaml``,
:mod:`compendium.pipeline.nbrun`, and DVC's hashes of a stage's code deps (:func:`sources_digest`).

The time estimates are extrapolations, not measurements: the cpu run's measured minutes of a stage times
the ratio (faithful / cpu) of the work of its dominant loop (:data:`WORK`). See :func:`estimate_rows`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import yaml

from compendium.core import integrity, paths
from compendium.pipeline import nbclean, nbrun, params, site, summary, timings

SCALE = "faithful"
ROOT = paths.REPORTS / SCALE  # the products, beside the default ones
MODELS_ROOT = paths.MODELS / SCALE  # the heavy products (checkpoints, targets, sets)
DONE = "done"  # <root>/done/<stage>.json: the done records
ESTIMATE_MD = paths.ROOT / "benchmarks" / "faithful_estimate.md"
BENCH_CPU = paths.ROOT / "benchmarks" / "bench_steps_cpu.json"  # benchmarks/bench_steps.py on 2 cores
BENCH_GPU = paths.ROOT / "benchmarks" / "bench_steps_gpu.json"  # the same on one GPU
README_START, README_END = "<!-- faithful-time:start -->", "<!-- faithful-time:end -->"  # the manual's summary
#: the manual's page on the scales, which holds the faithful summary and the paper profile's time table
SCALES_PAGE = paths.ROOT / "docs" / "scales.md"
SKIPPED = frozenset({"clean_notebooks"})  # the runner cleans each notebook itself (build/faithful/nb/)
MODULE_STAGES = ("summary",)  # the presentation stage that runs a module, not a notebook
RECORD_KEYS = ("scale", "params", "sources", "upstream")  # what a record must match to be skipped


# --- the DAG ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stage:
    name: str
    deps: tuple[str, ...]
    outs: tuple[str, ...]


def _paths_of(entries) -> tuple[str, ...]:
    """dvc.yaml's deps / outs: plain strings or one-key mappings ``{path: {options}}``."""
    out = []
    for e in entries or ():
        out += [str(k) for k in e] if isinstance(e, dict) else [str(e)]
    return tuple(out)


def read_stages(dvc: dict) -> dict[str, Stage]:
    """The stages of a parsed ``dvc.yaml`` in its order, without :data:`SKIPPED` and ``foreach`` templates."""
    out = {}
    for name, body in (dvc.get("stages") or {}).items():
        if name in SKIPPED or "foreach" in body or "matrix" in body:
            continue
        out[name] = Stage(
            name, _paths_of(body.get("deps")), _paths_of(body.get("outs")) + _paths_of(body.get("metrics"))
        )
    return out


def _under(a: str, b: str) -> bool:
    """Whether path ``a`` is ``b`` or inside it."""
    a, b = a.rstrip("/"), b.rstrip("/")
    return a == b or a.startswith(b + "/")


def upstream(stages: dict[str, Stage]) -> dict[str, set[str]]:
    """For each stage, the stages it reads from: one of its deps is, holds or lies inside another's out."""
    return {
        s.name: {
            o.name
            for o in stages.values()
            if o.name != s.name and any(_under(d, out) or _under(out, d) for d in s.deps for out in o.outs)
        }
        for s in stages.values()
    }


def dag_order(stages: dict[str, Stage], up: dict[str, set[str]]) -> list[str]:
    """The stages upstream first (Kahn's algorithm; ties in dvc.yaml's order). A cycle is an error."""
    names = list(stages)
    left = {n: set(up.get(n, ())) & set(names) for n in names}
    order: list[str] = []
    while left:
        ready = [n for n in names if n in left and not left[n]]
        if not ready:
            raise ValueError(f"dvc.yaml's stages form a cycle among {sorted(left)}")
        n = ready[0]
        order.append(n)
        del left[n]
        for deps in left.values():
            deps.discard(n)
    return order


def ancestors(names, up: dict[str, set[str]]) -> set[str]:
    """The given stages and every stage upstream of them, transitively."""
    todo, seen = list(names), set()
    while todo:
        n = todo.pop()
        if n not in seen:
            seen.add(n)
            todo += list(up.get(n, ()))
    return seen


def select(order: list[str], up: dict[str, set[str]], wanted=None, only: bool = False) -> list[str]:
    """The stages to consider, in ``order``: all of them, or ``wanted`` with everything upstream of them
    (``only``: just ``wanted``). An unknown name is an error naming the known ones."""
    if not wanted:
        return list(order)
    unknown = sorted(set(wanted) - set(order))
    if unknown:
        raise ValueError(f"unknown stage(s) {unknown}; known: {order}")
    keep = set(wanted) if only else ancestors(wanted, up)
    return [s for s in order if s in keep]


# --- done records -----------------------------------------------------------------------------------------


def file_digest(path: Path) -> str:
    """DVC's hash of a file dep (its md5, :func:`compendium.core.integrity.file_md5`); ``missing`` where absent."""
    if not path.is_file():
        return "missing"
    return integrity.file_md5(path)


def notebook_digest(stage: str) -> str:
    """DVC's hash of a stage's notebook dep, ``build/nb/<stage>.ipynb``: the md5 of the notebook as
    :func:`compendium.pipeline.nbclean.clean` strips it (outputs, execution counts and metadata, which opening and
    saving it in Jupyter changes, are left out), made in ``build/faithful/nb/`` and kept per source notebook hash;
    ``missing`` for a stage without a notebook."""
    src = paths.NOTEBOOKS / f"{stage}.ipynb"
    if not src.is_file():
        return "missing"
    cache_file = paths.BUILD / SCALE / "nb" / "digests.json"
    try:
        cache = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        cache = {}
    key = f"{stage}:{integrity.file_md5(src)}"
    if key not in cache:
        cache = {k: v for k, v in cache.items() if not k.startswith(f"{stage}:")}
        cache[key] = integrity.file_md5(clean_notebook(stage))
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        cache_file.write_text(json.dumps(cache, indent=1, sort_keys=True) + "\n")
    return cache[key]


def source_deps(stage: Stage) -> list[str]:
    """The deps of a stage that are its code, as ``dvc.yaml`` names them: ``src/`` files, its notebook
    (``build/nb/<stage>.ipynb``, the clean copy of ``notebooks/<stage>.ipynb``) and the pinned requirements.
    Data is pinned by data.dvc; the upstream models, tables and claims are covered by the upstream stages'
    records."""
    return sorted({d for d in stage.deps if d.startswith(("src/", "build/nb/")) or d == "requirements-lock.txt"})


def sources_digest(stage: Stage, root: Path | None = None) -> dict[str, str]:
    """``{dep: hash}`` of :func:`source_deps`, with DVC's hashes: the entries ``dvc.lock`` records for these deps
    when it is up to date (a test checks it), so a done record and the lock agree on what code a stage ran."""
    root = root or paths.ROOT
    return {
        d: notebook_digest(Path(d).stem) if d.startswith("build/nb/") else file_digest(root / d)
        for d in source_deps(stage)
    }


def record_file(root: Path, stage: str) -> Path:
    return root / DONE / f"{stage}.json"


def read_record(root: Path, stage: str) -> dict | None:
    f = record_file(root, stage)
    try:
        return json.loads(f.read_text())
    except (OSError, ValueError):
        return None


def record_digest(record: dict | None) -> str | None:
    """One record as a short hash (a downstream record keeps it: a redone upstream stage changes it)."""
    if record is None:
        return None
    return hashlib.sha256(json.dumps(record, sort_keys=True, default=str).encode()).hexdigest()[:16]


def fingerprint(
    stage: Stage, values: dict, up_records: dict[str, dict | None], scale: str = SCALE, root: Path | None = None
) -> dict:
    """What a done record of ``stage`` holds about its inputs (:data:`RECORD_KEYS`)."""
    return {
        "scale": scale,
        "params": values,
        "sources": sources_digest(stage, root),
        "upstream": {u: record_digest(r) for u, r in sorted(up_records.items())},
    }


def differences(record: dict | None, fp: dict) -> list[str]:
    """Why a record does not cover the inputs ``fp`` ([] when it does): what changed, named."""
    if record is None:
        return ["no record"]
    out = []
    if record.get("scale") != fp["scale"]:
        out.append(f"scale {record.get('scale')!r} -> {fp['scale']!r}")
    old, new = record.get("params") or {}, fp["params"]
    changed = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    if changed:
        out.append("params " + ", ".join(changed[:6]) + (" ..." if len(changed) > 6 else ""))
    old, new = record.get("sources") or {}, fp["sources"]
    changed = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    if changed:
        out.append("code " + ", ".join(Path(c).name for c in changed[:4]) + (" ..." if len(changed) > 4 else ""))
    old, new = record.get("upstream") or {}, fp["upstream"]
    changed = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    if changed:
        out.append("upstream " + ", ".join(changed) + " redone")
    return out


def write_record(root: Path, stage: str, fp: dict, minutes: float) -> Path:
    f = record_file(root, stage)
    f.parent.mkdir(parents=True, exist_ok=True)
    rec = {"stage": stage, **fp, "minutes": round(minutes, 2), "finished": time.strftime("%Y-%m-%d %H:%M:%S")}
    tmp = f.with_suffix(".tmp")
    tmp.write_text(json.dumps(rec, indent=2, sort_keys=True, default=str) + "\n")
    tmp.replace(f)
    return f


# --- the time estimate ------------------------------------------------------------------------------------


def _n(v, key, default=0):
    x = v.get(key, default)
    return len(x) if isinstance(x, (list, tuple)) else x


def _dc_loops(v: dict, ipc: int, key10: str = "loops_ipc10", key50: str = "loops_ipc50") -> tuple[int, int]:
    """DC/DSA (outer, inner) loops at an ipc: the stage's keys at 10 and 50, the code's (1, 1) at ipc 1."""
    if ipc == 10:
        return tuple(v[key10])
    if ipc == 50:
        return tuple(v[key50])
    return (1, 1)


def _dc_work(v: dict) -> float:
    """DC/DSA: iterations x per ipc, outer loops x (10 per-class matching steps + inner network steps)."""
    n = sum(m in ("dc", "dsa") for m in v["methods"])
    return n * v["iterations"] * sum(o * (10 + i) for o, i in (_dc_loops(v, ipc) for ipc in v["ipcs"]))


def _rela_budget_work(v: dict) -> float:
    g = v.get("grid_seeds", 1)
    arms = _n(v, "priors") * (2 if v.get("prior_only") else 1) + 1  # + ReLA (and prior only) per prior, BYOL
    rest = max(_n(v, "seeds") - g, 0)
    variant = _n(v, "seeds") * v["headline_budget"] if v.get("variant_schedule") else 0
    return v["epochs"] * (g * arms * sum(v["budgets"]) + rest * arms * v["headline_budget"] + v["full_seeds"] + variant)


def _rela_ablations_work(v: dict) -> float:
    ss, p = v.get("schedule_seeds", 1), _n(v, "priors")
    return v["epochs"] * (ss * p * (_n(v, "lambdas") + _n(v, "fractions") + 1) + _n(v, "seeds") * (1 + 2 * p) + 2)


DIGITS_TRAIN = 1347  # the cross-dataset BYOL prior's images (the digits' training split)

#: Per stage, its dominant loops: (the keys that set it, its work as a function of the resolved parameters).
#: A stage's ratio is the largest faithful / cpu ratio of its parts; stages not listed keep their cpu values
#: (ratio 1). These are cost models for an extrapolation, not measurements.
WORK: dict[str, tuple[tuple[str, Callable[[dict], float]], ...]] = {
    "priors": (
        (
            "(byol_epochs x train_n + cross_byol_epochs x 1,347) x (1 + len(replicate_seeds)) (BYOL image passes)",
            lambda v: (
                (v["byol_epochs"] * v["train_n"] + v["cross_byol_epochs"] * DIGITS_TRAIN)
                * (1 + _n(v, "replicate_seeds"))
            ),
        ),
    ),
    "rela_smoke": (("len(seeds) x epochs", lambda v: _n(v, "seeds") * v["epochs"]),),
    "rela_budget": (
        (
            "epochs x (grid_seeds x arms x sum(budgets) + other seeds x arms x headline_budget + full_seeds "
            "+ variant arms)",
            _rela_budget_work,
        ),
    ),
    "rela_arch": (
        (
            "len(seeds) x epochs x len(students) x (len(priors) + 1)",
            lambda v: _n(v, "seeds") * v["epochs"] * _n(v, "students") * (_n(v, "priors") + 1),
        ),
    ),
    "rela_methods": (
        (
            "len(seeds) x epochs x len(methods) x (len(priors) + 1)",
            lambda v: _n(v, "seeds") * v["epochs"] * _n(v, "methods") * (_n(v, "priors") + 1),
        ),
    ),
    "rela_ablations": (
        (
            "epochs x (schedule_seeds x priors x (lambdas + fractions + 1) + seeds x (1 + 2 priors) + 2)",
            _rela_ablations_work,
        ),
    ),
    "dd_teachers": (("epochs x train_n x len(teachers)", lambda v: v["epochs"] * v["train_n"] * _n(v, "teachers")),),
    "dd_coresets": (
        ("len(seeds) x eval_steps", lambda v: _n(v, "seeds") * v["eval_steps"]),
        ("forgetting_epochs x pool_n", lambda v: v["forgetting_epochs"] * v["pool_n"]),
    ),
    "dd_inversion": (
        (
            "sum(ipcs) x (iterations x methods other than G-VBSM + gvbsm_iterations with G-VBSM), x len(seeds) "
            "with replicate_syntheses: all (ladder: the ipc-1 ladder's few syntheses, not counted)",
            lambda v: (
                sum(v["ipcs"])
                * (
                    v["iterations"] * len(set(v["methods"]) - {"gvbsm"})
                    + v.get("gvbsm_iterations", 0) * ("gvbsm" in v["methods"])
                )
                * (_n(v, "seeds") if v.get("replicate_syntheses") == "all" else 1)
            ),
        ),
        ("len(seeds) x eval_steps x len(students)", lambda v: _n(v, "seeds") * v["eval_steps"] * _n(v, "students")),
    ),
    "dd_matching": (
        ("iterations x sum over ipcs of outer x (10 + inner) loops (DC, DSA)", _dc_work),
        ("dm_iterations x len(ipcs)", lambda v: v["dm_iterations"] * _n(v, "ipcs") * ("dm" in v["methods"])),
        ("len(seeds) x eval_steps", lambda v: _n(v, "seeds") * v["eval_steps"]),
    ),
    "dd_kip": (
        (
            "iterations x len(krr_seeds) x len(kernels)",
            lambda v: v["iterations"] * _n(v, "krr_seeds") * _n(v, "kernels"),
        ),
        ("len(seeds) x eval_steps", lambda v: _n(v, "seeds") * v["eval_steps"]),
    ),
    "dd_dwa": (
        (
            "iterations (recovery), x len(sweep_seeds) with replicate_syntheses (the sweep dominates the syntheses)",
            lambda v: v["iterations"] * (_n(v, "sweep_seeds") if v.get("replicate_syntheses") else 1),
        ),
        (
            "(len(seeds) + len(sweep_seeds)) x eval_steps",
            lambda v: (_n(v, "seeds") + _n(v, "sweep_seeds")) * v["eval_steps"],
        ),
    ),
    "dd_crossarch": (
        (
            "seeds x eval_steps x matrix cells (DC, DSA, DM) + table4_seeds x table4_steps x SRe2L / DWA cells",
            lambda v: (
                _n(v, "seeds")
                * v["eval_steps"]
                * len(set(v["matrix_methods"]) - {"dwa", "sre2l"})
                * _n(v, "matrix_archs")
                + _n(v, "table4_seeds")
                * v["table4_steps"]
                * 2
                * len(set(v["table4_archs"]) | set(v["table9_archs"]) | set(v["matrix_archs"]))
                * (1 + _n(v, "cross_teachers"))
            ),
        ),
    ),
    "dd_dc_arch": (
        (
            "iterations x outer x (10 x batch_real + inner x 10 x ipc) images x len(variants)",
            lambda v: (
                v["iterations"] * v["loops"][0] * 10 * (v["batch_real"] + v["loops"][1] * v["ipc"]) * _n(v, "variants")
            ),
        ),
        ("len(seeds) x eval_steps x len(variants)", lambda v: _n(v, "seeds") * v["eval_steps"] * _n(v, "variants")),
    ),
    "dd_unrolled": (
        ("iterations x steps x epochs (DD's four regimes)", lambda v: v["iterations"] * v["steps"] * v["epochs"]),
        (
            "(len(sl_seeds) + len(sl_random_seeds)) x sl_iterations x sl_epochs x len(sl_sizes)",
            lambda v: (
                (_n(v, "sl_seeds", 1) + _n(v, "sl_random_seeds", _n(v, "sl_seeds", 1)))
                * v["sl_iterations"]
                * v["sl_epochs"]
                * _n(v, "sl_sizes")
            ),
        ),
        ("pretrain_steps x (pool_size + pool_eval)", lambda v: v["pretrain_steps"] * (v["pool_size"] + v["pool_eval"])),
        ("poison_iterations x poison_pool", lambda v: v["poison_iterations"] * v["poison_pool"]),
        ("ref_steps", lambda v: v["ref_steps"]),
    ),
    "dd_labels": (
        ("rr_steps + so_steps", lambda v: v["rr_steps"] + v["so_steps"]),
        ("len(seeds) x eval_steps", lambda v: _n(v, "seeds") * v["eval_steps"]),
    ),
    "dd_mnemonics": (
        (
            "len(seeds) x (base_steps x passes + 5 inc_steps x methods of both passes)",
            lambda v: (
                _n(v, "seeds")
                * (
                    v["base_steps"] * (1 + bool(v["protocol_methods"]))
                    + 5 * v["inc_steps"] * (_n(v, "methods") + _n(v, "protocol_methods"))
                )
            ),
        ),
        (
            "len(seeds) x (mn_iterations + mn_adjust_iterations) x mn_inner_steps",
            lambda v: _n(v, "seeds") * (v["mn_iterations"] + v["mn_adjust_iterations"]) * v["mn_inner_steps"],
        ),
    ),
    "dd_gtn": (
        (
            "meta runs x iterations x inner_steps (with the plateau stop on, iterations is the cap: the most a run "
            "does, so the ratio is a lower bound when runs stop early)",
            lambda v: (
                (2 * _n(v, "meta_seeds") + _n(v, "variant_seeds") * (_n(v, "curricula") - 1))
                * v["inner_steps"]
                * v["iterations"]
            ),
        ),
        (
            "proxy_steps x (len(proxy_sets) + len(random_proxy_seeds))",
            lambda v: v["proxy_steps"] * (_n(v, "proxy_sets") + _n(v, "random_proxy_seeds")),
        ),
    ),
    "dd_nas": (("nas_n x gt_steps", lambda v: v["nas_n"] * v["gt_steps"]),),
    "dd_text": (
        (
            "len(distill_seeds) x (iterations + lstm_iterations) x epochs",
            lambda v: _n(v, "distill_seeds") * (v["iterations"] + v["lstm_iterations"]) * v["epochs"],
        ),
        ("len(seeds) x eval_steps + full_steps", lambda v: _n(v, "seeds") * v["eval_steps"] + v["full_steps"]),
    ),
    "ssdd_teacher": (("epochs x train_n", lambda v: v["epochs"] * v["train_n"]),),
    "ssdd_distill": (
        ("steps (outer, per set)", lambda v: v["steps"]),
        ("approx_steps", lambda v: v["approx_steps"]),
        ("pool_size x pool_steps (the pool's start)", lambda v: v["pool_size"] * v["pool_steps"]),
    ),
    "ssdd_eval": (
        (
            "pre_epochs x (seeds + ablation_seeds + cross_seeds x other archs)",
            lambda v: (
                v["pre_epochs"]
                * (_n(v, "seeds") + _n(v, "ablation_seeds") + _n(v, "cross_seeds") * (_n(v, "archs") - 1))
            ),
        ),
    ),
}


#: For the GPU extrapolation: the case of ``benchmarks/bench_steps.py`` (loop, variant) that stands for each
#: stage's dominant loop. A stage not listed has no GPU timing of its dominant loop (LD, Mnemonics, text DD,
#: the NAS trainings, the theory stages), so its time is the cpu one: an upper bound where the loop runs on the
#: GPU. DD's outer iteration stands for ``dd_unrolled`` and SSDD's outer step for ``ssdd_distill``, though at
#: ``faithful`` their pools' pre-training, which no case times, grows as much. GTN's meta step at the faithful
#: profile's T = 32 stands for ``dd_gtn`` (its NAS proxy trainings, a small share, are not timed).
BENCH_LOOP: dict[str, tuple[str, str]] = {
    **{
        st: ("byol", "byol")
        for st in ("priors", "rela_smoke", "rela_budget", "rela_arch", "rela_methods", "rela_ablations", "ssdd_teacher")
    },
    "dd_teachers": ("student", "resnet18"),
    **{st: ("student", "convnet") for st in ("dd_coresets", "dd_kip", "dd_crossarch", "ssdd_eval")},
    **{st: ("recovery", "sre2l/dwa") for st in ("dd_inversion", "dd_dwa")},
    **{st: ("dc", "dc") for st in ("dd_matching", "dd_dc_arch")},
    "dd_unrolled": ("dd", "dd"),
    "dd_gtn": ("gtn", "gtn T32"),
    "ssdd_distill": ("krr", "ssdd"),
}


def step_times(rows: list[dict], *, shape: str, on_gpu: bool) -> dict[tuple[str, str], float]:
    """``{(loop, variant): seconds per step}`` of the rows of ``benchmarks/bench_steps.py --out`` at ``shape``
    timed on the GPU (``on_gpu``) or on the CPU."""
    return {
        (r["loop"], r["variant"]): float(r["seconds_per_step"])
        for r in rows
        if r.get("shape") == shape and r.get("seconds_per_step") and (r.get("device") != "cpu") == on_gpu
    }


def bench_speedups(cpu_rows: list[dict], gpu_rows: list[dict], shape: str = "cpu") -> dict[str, float]:
    """Per stage of :data:`BENCH_LOOP`: the bench case's seconds per step on the CPU over those on the GPU (rows of
    ``benchmarks/bench_steps.py --out``, at ``shape``); a case missing from either, or timed on the CPU in the
    GPU run, gives no entry (1.0: no speed-up)."""
    c, g = step_times(cpu_rows, shape=shape, on_gpu=False), step_times(gpu_rows, shape=shape, on_gpu=True)
    return {st: c[case] / g[case] for st, case in BENCH_LOOP.items() if case in c and case in g}


def ratio(stage: str, cpu: dict, faithful: dict) -> tuple[float, str]:
    """(faithful / cpu work of the part of ``stage`` that grows most, that part's keys). A part whose cpu work
    is zero (not run at cpu scale) cannot be extrapolated and is left out; 1.0 for a stage without parts."""
    parts = WORK.get(stage, ())
    best, label = 1.0, parts[0][0] if parts else "none (no faithful override: its cpu values stand)"
    for name, fn in parts:
        try:
            c, f = float(fn(cpu)), float(fn(faithful))
        except (KeyError, TypeError, IndexError, ValueError):
            continue
        if c > 0 and f / c > best:
            best, label = f / c, name
    return best, label


@dataclass
class Measured:
    """A stage's measured cpu minutes and the parameters it ran with (where they come from, in words)."""

    minutes: float | None
    values: dict
    source: str


def cpu_values(raw: dict, stage: str) -> dict:
    """A section of a params tree resolved at cpu scale (no validation: an older file's keys may differ)."""
    if stage not in raw:
        return {}
    return {"scale": "cpu", **params.resolve({**raw, params.SCALE_KEY: "cpu"}, stage)}


def measured(stages: list[str], reports: Path | None = None) -> dict[str, Measured]:
    """The cpu run's minutes per stage with the parameters they were measured with (papermill's duration and
    injected parameters): the stage's executed notebook under ``reports/notebooks/`` where present, else its
    entry in ``reports/stage_minutes.json`` (:mod:`compendium.pipeline.timings`: the same, kept from its last
    run), else none (the current params.yaml at cpu scale, not measured)."""
    reports = reports or paths.REPORTS
    present = timings.from_notebooks(reports / paths.EXECUTED)
    rec, fresh = {**timings.read(reports), **present}, set(present)
    current = params.load(paths.PARAMS)
    out = {}
    for st in stages:
        r = rec.get(st)
        if r is not None and r.get("parameters"):
            where = (
                f"the executed notebook {paths.EXECUTED}/{st}.ipynb"
                if st in fresh
                else f"reports/{timings.FILE} (its last run's duration and parameters)"
            )
            out[st] = Measured(float(r["minutes"]), dict(r["parameters"]), where)
        else:
            out[st] = Measured(None, cpu_values(current, st), "not measured")
    return out


@dataclass
class Estimate:
    stage: str
    keys: str
    ratio: float
    cpu_minutes: float | None
    minutes: float | None  # the faithful estimate (None: not measured at cpu scale)


MEASURED_KEYS = "measured at this scale (its done record, run with these parameters)"


def estimate_rows(
    stages: list[str], faithful_values: dict[str, dict], cpu: dict[str, Measured], done: dict[str, dict] | None = None
) -> list[Estimate]:
    """Per stage: the measured cpu minutes times the work ratio of its dominant loop (:func:`ratio`), or,
    where ``done`` (:func:`records`) holds a record of the stage run with the same faithful parameters, the
    minutes that run measured (its ratio then the measured one)."""
    rows = []
    for st in stages:
        m = cpu.get(st)
        rec = (done or {}).get(st)
        if rec and rec.get("minutes") is not None and rec.get("params") == faithful_values.get(st):
            mins = float(rec["minutes"])
            cpu_m = m.minutes if m else None
            rows.append(Estimate(st, MEASURED_KEYS, mins / cpu_m if cpu_m else 1.0, cpu_m, mins))
            continue
        r, keys = ratio(st, m.values if m else {}, faithful_values.get(st, {}))
        mins = None if m is None or m.minutes is None else m.minutes * r
        rows.append(Estimate(st, keys, r, m.minutes if m else None, mins))
    return rows


def fmt_minutes(m: float | None) -> str:
    if m is None:
        return "–"
    return f"{m:.1f} min" if m < 90 else f"{m / 60:.1f} h"


def read_bench(path: Path) -> list[dict]:
    """The rows of a ``benchmarks/bench_steps.py --out`` file ([] when it is absent)."""
    return json.loads(path.read_text()) if path.is_file() else []


def gpu_total(rows: list[Estimate], speedups: dict[str, float]) -> tuple[float, float]:
    """(minutes on one GPU, minutes of those in stages without a GPU timing), as :func:`gpu_section`."""
    known = [r for r in rows if r.minutes is not None]
    return (
        sum(r.minutes / speedups.get(r.stage, 1.0) for r in known),
        sum(r.minutes for r in known if r.stage not in speedups),
    )


def gpu_section(rows: list[Estimate], speedups: dict[str, float], gpu: str) -> list[str]:
    """The estimate's GPU part: per stage, its faithful minutes over its bench case's speed-up (1 where none)."""
    lines = [
        "## On one GPU (extrapolated)",
        "",
        "Each stage's faithful estimate above divided by the speed-up of its dominant loop, measured with",
        f"`benchmarks/bench_steps.py` on 2 cores here (`{BENCH_CPU.name}`) and on {gpu} (`{BENCH_GPU.name}`),",
        "at the `cpu` profile's shapes. A stage without a case keeps its 2-core time: an upper bound where its",
        "loops run on the GPU (the unrolled family, LS and KRR-ST / SSDD in the notebook's own process), the",
        "time itself where they stay on the CPU (text DD, the NAS trainings, the theory stages).",
        "The whole stage is scaled by its loop's speed-up, so parts that do not speed up (data loading,",
        "figures, CPU-bound evaluation) make the real time longer. **Not a measurement of the profile.**",
        "",
        "| stage | bench case | speed-up | faithful on 2 cores | faithful on one GPU |",
        "|---|---|---:|---:|---:|",
    ]
    for r in rows:
        if r.minutes is None:
            continue
        sp = speedups.get(r.stage, 1.0)
        case = "/".join(BENCH_LOOP[r.stage]) if r.stage in speedups else "none (CPU)"
        lines.append(f"| {r.stage} | {case} | {sp:,.1f}x | {fmt_minutes(r.minutes)} | {fmt_minutes(r.minutes / sp)} |")
    total, on_cpu = gpu_total(rows, speedups)
    lines += [
        "",
        f"**Total on one GPU: about {total / 60:,.1f} hours**, {on_cpu / 60:,.1f} of them in the stages "
        "without a GPU timing.",
        "",
    ]
    return lines


def estimate_markdown(
    rows: list[Estimate],
    cpu: dict[str, Measured],
    gpu: tuple[dict[str, float], str] | None = None,
    up: dict[str, set[str]] | None = None,
) -> str:
    """The estimate page; with ``gpu`` = (:func:`bench_speedups`, the GPU's name) also its GPU section; with ``up``
    (:func:`upstream`) the stages each stage reads, which the claims ledger follows to cost a claim's rerun."""
    known = [r.minutes for r in rows if r.minutes is not None]
    total = sum(known)
    sources = sorted(
        {
            "the executed notebooks under reports/notebooks/ (papermill's duration and parameters)"
            if m.source.startswith("the executed notebook")
            else m.source
            for m in cpu.values()
            if m.minutes is not None
        }
    )
    lines = [
        "# The faithful profile: estimated time per stage",
        "",
        "Generated by `python -m compendium.pipeline.faithful --dry-run --write`; do not edit by hand.",
        "",
        "**This is an extrapolation, not a measurement.** Each stage's minutes measured at `cpu` scale on this",
        "project's 2-core machines are multiplied by the ratio (faithful / cpu) of the work of the stage's dominant",
        "loop, computed from the resolved parameters of both runs (the keys in the second column; the cost models",
        "are `compendium.pipeline.faithful.WORK`). Where a stage has several loops, the one that grows most sets",
        "the ratio and is applied to the whole measured time, including the parts that do not grow (data loading,",
        "test passes, figures): that over-estimates a stage whose dominant loop was a small share of its cpu time,",
        "and under-estimates one where other loops grow too. Per-step costs are assumed constant (the same networks",
        "and batch sizes at both scales). Seeds raised to 3 are in the work where the model counts seeds.",
        "A stage that has run at this scale with the same parameters (its done record under",
        "`reports/faithful/done/`) shows the minutes that run measured instead, on whatever host it ran.",
        "",
        f"The cpu minutes and the parameters they were measured with: {'; '.join(sources) or '-'}.",
        "",
        "| stage | reads (the stages upstream of it) | dominant loop (keys scaled) | ratio | cpu (measured) "
        "| faithful (estimated) |",
        "|---|---|---|---:|---:|---:|",
    ]
    for r in rows:
        keys = "presentation stage (a module; not measured)" if r.stage in MODULE_STAGES else r.keys
        reads = " ".join(sorted((up or {}).get(r.stage, ()))) or "–"
        lines.append(
            f"| {r.stage} | {reads} | {keys} | {r.ratio:,.1f}x | {fmt_minutes(r.cpu_minutes)} "
            f"| {fmt_minutes(r.minutes)} |"
        )
    unmeasured = [r.stage for r in rows if r.minutes is None]
    lines += [
        "",
        f"**Total: about {total / 60:,.0f} hours** ({total / 60 / 24:.1f} days) on 2 cores"
        + (f", plus {', '.join(unmeasured)} (not measured at cpu scale; minutes each)" if unmeasured else "")
        + ".",
        "",
        "`make faithful FAITHFUL_ARGS='--hours 2 --fit'` runs it in pieces of about two hours: no stage starts",
        "after two hours, nor one whose estimate would end the piece past them (the first stage of a piece always",
        "starts). A stage longer than a piece (dd_matching, dd_dc_arch, ssdd_distill and the ReLA stages above) can",
        "be stopped (Ctrl-C, `timeout`) and resumes from its completed calls; a single call (one DC/DSA synthesis at",
        "ipc 50, one 100-epoch pre-training) is not split further.",
        "",
    ]
    if gpu and gpu[0]:
        lines += gpu_section(rows, *gpu)
    return "\n".join(lines)


def readme_block(rows: list[Estimate], speedups: dict[str, float], records: dict[str, dict]) -> str:
    """The manual's faithful summary (between :data:`README_START` and :data:`README_END`): the estimated
    total on 2 cores and on one GPU, and the stages that have run (their done records: minutes, date).
    Whether a record still matches the code is ``--status``'s answer, not the page's."""
    total = sum(r.minutes for r in rows if r.minutes is not None)
    on_gpu, stays = gpu_total(rows, speedups)
    lines = [
        README_START,
        "",
        f"Estimated time: **about {total / 60:,.0f} hours on 2 cores** ({total / 60 / 24:.1f} days) and about "
        f"{on_gpu / 60:,.0f} on one GPU, {stays / 60:,.0f} of them in stages without a GPU timing "
        f"(`{ESTIMATE_MD.relative_to(paths.ROOT)}`, written by `--dry-run --write`: an extrapolation from the "
        "`cpu` run's minutes, not a measurement).",
        "",
    ]
    ran = {st: rec for st, rec in records.items() if st not in MODULE_STAGES and st != "claims_ledger"}
    if ran:
        lines += [
            "What has run at this scale (each stage's done record under `reports/faithful/done/`; "
            "`--status` says which still match the code):",
            "",
            "| stage | minutes (its last run) | finished |",
            "|---|---:|---|",
        ]
        lines += [
            f"| `{st}` | {fmt_minutes(rec.get('minutes'))} | {rec.get('finished', '?')} |" for st, rec in ran.items()
        ]
        lines += [
            "",
            f"{len(ran)} stage(s), {sum(r.get('minutes') or 0 for r in ran.values()) / 60:,.1f} hours measured "
            "in all; their verdicts are in `reports/faithful/claims.csv`.",
            "",
        ]
    else:
        lines += ["No stage has run at this scale yet.", ""]
    return "\n".join(lines + [README_END])


def records(order: list[str], root: Path = ROOT) -> dict[str, dict]:
    """The done records under ``root``, in pipeline order."""
    return {st: rec for st in order if (rec := read_record(root, st)) is not None}


def gpu_speedups() -> tuple[dict[str, float], str]:
    """Each stage's loop speed-up on the GPU of ``bench_steps_gpu.json`` (:func:`bench_speedups`), and its name."""
    gpu_rows = read_bench(BENCH_GPU)
    names = sorted({r["device"] for r in gpu_rows if r.get("device") not in (None, "cpu")})
    return bench_speedups(read_bench(BENCH_CPU), gpu_rows), " / ".join(names) or "a GPU"


def current_readme_block() -> str:
    """:func:`readme_block` from the repository as it stands: every stage's estimate, the bench files and the
    done records under ``reports/faithful/``."""
    stages = read_stages(yaml.safe_load(paths.DVC_YAML.read_text()))
    order = dag_order(stages, upstream(stages))
    rows = estimate_rows(order, {st: stage_values(st) for st in order}, measured(order), records(order))
    return readme_block(rows, gpu_speedups()[0], records(order))


def rewrite_readme(readme: Path, block: str) -> None:
    """Replace the faithful summary of ``readme`` (the manual's scales page) with ``block``."""
    text = readme.read_text()
    if README_START not in text or README_END not in text:
        raise ValueError(f"{readme} has no {README_START} ... {README_END} block")
    old = text[text.index(README_START) : text.index(README_END) + len(README_END)]
    readme.write_text(text.replace(old, block))


# --- running ----------------------------------------------------------------------------------------------


def clean_notebook(stage: str) -> Path:
    """The notebook as the pipeline runs it (:func:`compendium.pipeline.nbclean.clean`), in ``build/faithful/nb/``."""
    return nbclean.clean(stage, paths.BUILD / SCALE / "nb")


def run_one(stage: str, root: Path, models_root: Path, scale: str = SCALE) -> None:
    """Run one stage into ``root`` (artifacts in ``models_root``): a notebook stage through nbrun, the
    summary through its module."""
    if stage == "summary":
        summary.write(summary.build(root, partial=True), root)  # a piece of the profile: the stages run so far
    else:
        nbrun.run_stage(stage, output_root=root, notebook=clean_notebook(stage), scale=scale, models_root=models_root)


def stage_values(stage: str, scale: str = SCALE, params_file: Path | None = None) -> dict:
    """The resolved parameters of a stage at ``scale`` ({} for the module stages, which have none)."""
    return {} if stage in MODULE_STAGES else params.stage_params(stage, params_file, scale)


def say(msg: str) -> None:
    print(f"[faithful] {msg}", flush=True)


def run(
    selected: list[str],
    stages: dict[str, Stage],
    up: dict[str, set[str]],
    root: Path,
    models_root: Path,
    run_fn: Callable[[str, Path, Path], None],
    values_fn: Callable[[str], dict],
    hours: float | None = None,
    clock: Callable[[], float] = time.monotonic,
    estimates: dict[str, float | None] | None = None,
    scale: str = SCALE,
    fit: bool = False,
) -> dict:
    """Run ``selected`` in order: skip a stage whose done record matches its inputs, run the others with
    ``run_fn(stage, root, models_root)`` and write their records. With ``hours``, no stage starts once that
    many hours have passed; with ``fit`` too, none whose estimate (minutes) would end past them, unless it is
    the first of this run. A failing stage stops the run (the stages after it read its products). Returns
    ``{"ran": [...], "skipped": [...], "left": [...], "failed": name or None}``."""
    estimates = estimates or {}
    t0 = clock()
    out = {"ran": [], "skipped": [], "left": [], "failed": None}
    for i, st in enumerate(selected):
        fp = fingerprint(stages[st], values_fn(st), {u: read_record(root, u) for u in sorted(up.get(st, ()))}, scale)
        why = differences(read_record(root, st), fp)
        if not why:
            say(f"{i + 1}/{len(selected)} {st}: done before (its record matches), skipped")
            out["skipped"].append(st)
            continue
        elapsed = (clock() - t0) / 3600
        late = hours is not None and elapsed >= hours
        too_long = (
            hours is not None
            and fit
            and out["ran"]
            and estimates.get(st) is not None
            and elapsed + estimates[st] / 60 > hours
        )
        if late or too_long:
            out["left"] = [s for s in selected[i:]]
            why_stop = (
                f"{elapsed:.2f} h passed (--hours {hours:g})"
                if late
                else f"{st} (estimated {fmt_minutes(estimates[st])}) would end past --hours {hours:g} (--fit)"
            )
            say(
                f"stopping: {why_stop}; {len(out['left'])} stage(s) left ({', '.join(out['left'])}); "
                "run the same command again to go on"
            )
            return out
        say(
            f"{i + 1}/{len(selected)} {st}: start ({'; '.join(why)}; estimated {fmt_minutes(estimates.get(st))}; "
            f"{elapsed:.2f} h into this run)"
        )
        t = clock()
        try:
            run_fn(st, root, models_root)
        except BaseException:
            out["failed"] = st
            out["left"] = [s for s in selected[i:]]
            say(
                f"{st}: failed after {(clock() - t) / 60:.1f} min; no record written. Fix it and run the same "
                "command again: finished stages are skipped and this one resumes from its completed calls"
            )
            raise
        minutes = (clock() - t) / 60
        f = write_record(root, st, fp, minutes)
        out["ran"].append(st)
        say(f"{i + 1}/{len(selected)} {st}: done in {fmt_minutes(minutes)}; record {f}")
    say(f"finished: {len(out['ran'])} ran, {len(out['skipped'])} skipped; products in {root}")
    return out


def status_rows(
    selected: list[str],
    stages: dict[str, Stage],
    up: dict[str, set[str]],
    root: Path,
    values_fn: Callable[[str], dict],
    scale: str = SCALE,
) -> list[tuple[str, str, str]]:
    """(stage, state, detail) per stage: ``done`` (its record matches), ``to run`` (no record, or what
    changed) or ``after upstream`` (a stage it reads from runs first, so it will run too)."""
    rows, redo = [], set()
    for st in selected:
        rec = read_record(root, st)
        fp = fingerprint(stages[st], values_fn(st), {u: read_record(root, u) for u in sorted(up.get(st, ()))}, scale)
        why = differences(rec, fp)
        later = sorted(set(up.get(st, ())) & redo)
        if not why and not later:
            rows.append((st, "done", f"{fmt_minutes(rec.get('minutes'))}, finished {rec.get('finished', '?')}"))
            continue
        redo.add(st)
        if later and not why:
            rows.append((st, "after upstream", f"{', '.join(later)} run(s) first"))
        else:
            rows.append((st, "to run", "; ".join(why)))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Run the pipeline's stages at the faithful scale (the papers' "
        "iteration counts), resumable stage by stage, into reports/faithful/."
    )
    ap.add_argument("--stages", nargs="+", default=None, help="these stages and every stage upstream of them")
    ap.add_argument("--only", action="store_true", help="with --stages: just those, not their upstream stages")
    ap.add_argument("--hours", type=float, default=None, help="start no new stage after this many hours")
    ap.add_argument(
        "--fit",
        action="store_true",
        help="with --hours: nor one whose estimate would end past them (the first stage always starts)",
    )
    ap.add_argument("--dry-run", action="store_true", help="list what would run, with an estimated time per stage")
    ap.add_argument("--write", action="store_true", help=f"with --dry-run: write {ESTIMATE_MD.relative_to(paths.ROOT)}")
    ap.add_argument("--status", action="store_true", help="each stage: done, to run (and why), or after its upstream")
    ap.add_argument("--root", type=Path, default=ROOT, help="output root (default reports/faithful)")
    ap.add_argument("--models-root", type=Path, default=MODELS_ROOT, help="artifacts (default models/faithful)")
    ap.add_argument(
        "--scale",
        choices=params.SCALES,
        default=SCALE,
        help="another scale, to check the wiring quickly (smoke) into a scratch --root",
    )
    args = ap.parse_args(argv)
    stages = read_stages(yaml.safe_load(paths.DVC_YAML.read_text()))
    up = upstream(stages)
    order = dag_order(stages, up)
    try:
        selected = select(order, up, args.stages, args.only)
        values = {st: stage_values(st, args.scale) for st in (order if args.write else selected)}
    except (ValueError, params.ParamsError) as e:
        print(f"[faithful] {e}", file=sys.stderr)
        return 2
    root, models_root = args.root.resolve(), args.models_root.resolve()
    est_stages = order if args.write else selected
    cpu = measured(est_stages)
    rows = estimate_rows(est_stages, values, cpu, records(est_stages, root) if args.scale == SCALE else None)
    est = {r.stage: r.minutes for r in rows}
    if args.status or args.dry_run:
        state = status_rows(selected, stages, up, root, values.__getitem__, args.scale)
        left = [(st, s) for st, s, _ in state if s != "done"]
        width = max(len(s) for s in selected)
        for st, s, detail in state:
            e = "" if s == "done" else f"  est. {fmt_minutes(est.get(st))}"
            print(f"  {st:<{width}}  {s:<14}{e}  ({detail})")
        todo = [est.get(st) for st, _ in left]
        known = sum(m for m in todo if m is not None)
        print(
            f"[faithful] {len(left)} of {len(selected)} stage(s) to run, estimated {fmt_minutes(known)}"
            + (f" (+ {sum(m is None for m in todo)} not estimated)" if any(m is None for m in todo) else "")
            + " on 2 cores (an extrapolation from the cpu run: benchmarks/faithful_estimate.md)"
        )
        if args.hours is not None and left:
            t, fits = 0.0, []
            for st, _ in left:
                e = est.get(st) or 0.0
                if t >= args.hours * 60 or (args.fit and fits and t + e > args.hours * 60):
                    break
                fits.append(st)
                t += e
            print(f"[faithful] with --hours {args.hours:g}: starts {', '.join(fits)} (about {fmt_minutes(t)})")
        if args.write:
            ESTIMATE_MD.parent.mkdir(parents=True, exist_ok=True)
            speedups, gpu = gpu_speedups()
            ESTIMATE_MD.write_text(estimate_markdown(rows, cpu, (speedups, gpu), up))
            rewrite_readme(SCALES_PAGE, readme_block(rows, speedups, records(order)))
            print(f"[faithful] wrote {ESTIMATE_MD} and the faithful summary of {SCALES_PAGE.name}")
        return 0
    try:
        with nbrun.stage_lock(f"{SCALE}-runner"):
            result = run(
                selected,
                stages,
                up,
                root,
                models_root,
                run_fn=lambda st, r, m: run_one(st, r, m, args.scale),
                values_fn=values.__getitem__,
                hours=args.hours,
                estimates=est,
                scale=args.scale,
                fit=args.fit,
            )
    except nbrun.StageLocked as e:
        print(f"[faithful] {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "[faithful] interrupted: finished stages keep their records; the interrupted one resumes from its "
            "completed calls when the same command runs again",
            file=sys.stderr,
        )
        return 130
    except Exception as e:  # the stage's own message (nbrun names the failing cell) came first
        print(f"[faithful] stopped: {type(e).__name__}: {str(e)[:500]}", file=sys.stderr)
        return 1
    finally:
        timings.update(root, stages=order)  # every stage that ran keeps its measured minutes
        if root == ROOT and args.scale == SCALE:  # the manual lists the stages that have run
            rewrite_readme(SCALES_PAGE, current_readme_block())
    if result["ran"] and not result["left"] and (root / "claims.csv").is_file():
        say(f"the site of this profile: {site.build(reports=root)}")  # as `make repro` does after `dvc repro`
    return 0


if __name__ == "__main__":
    sys.exit(main())
