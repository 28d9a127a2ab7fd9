"""The paper-shapes check: every stage at ``scale: paper`` on generated stand-ins of the papers' datasets, with one or
two iterations of every loop, on the CPU.

``python -m compendium.pipeline.paper_check`` (``make paper-check``) catches a shape, device or path error of the
``paper`` profile before a GPU user spends hours on it. It

1. writes stand-ins of the datasets the paper profile reads (:mod:`compendium.core.fakedata`): CIFAR-10 and CIFAR-100
   as python pickles, MNIST as gzipped IDX files, TREC's label files, each with the real image shapes and class
   counts and random contents (:data:`DATASETS`, at most 130 images per class; KIP's reads 500, :data:`LARGE`);
2. resolves every stage at ``scale: paper`` and replaces only its loop and size keys (:func:`is_loop_key`: epochs,
   steps, iterations, seeds, sample and subset sizes, the lists of arms swept) by the ``smoke`` scale's values, capped
   at one epoch, two steps or iterations and one seed (the lists of set sizes stay the smoke scale's: later stages
   load the ipc-10 sets), sample sizes within the stand-ins
   (:func:`check_values`). The networks, their widths and depths, the batch sizes, the datasets, the methods,
   teachers, students and priors stay the paper's;
3. runs the stages in ``dvc.yaml``'s order through :func:`compendium.pipeline.nbrun.run_stage` (the notebooks as
   the pipeline runs them) into ``build/paper_check/`` (its own ``params.yaml``, ``reports/`` and ``models/``),
   skipping the stages downstream of one that failed, and prints a table of stage, status and seconds.

It exits non-zero when a stage fails, naming it, the cell and the error (the partly executed notebook is in
``build/failed/<stage>.ipynb``). Nothing it computes is a result: the data are noise. ``--stages`` runs some stages
(with the stages upstream of them; ``--only``: just those); ``--device cuda`` runs the same check on a GPU;
``--write`` records a full run's times (:data:`RECORD`) and their summary on the manual's page. The stages are
compute-bound at the paper's widths: a full run takes 35 minutes on 2 cores of an AVX512 host and 91 on an AVX2-only
one (:data:`RECORD`), so CI runs the share of it
named in :data:`CI_STAGES` (with their upstream stages) besides checking the configuration and the stand-ins
(``tests/test_paper_check.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import torch
import yaml

from compendium.core import data, fakedata, paths
from compendium.pipeline import faithful, nbclean, nbrun, params, summary

SCALE = "paper"
ROOT = paths.BUILD / "paper_check"
#: ``--write``: the last full run's rows (stage, status, seconds), and the block of the manual page they fill
RECORD = paths.ROOT / "benchmarks" / "paper_check_cpu.json"
PAGE = paths.ROOT / "docs" / "at-scale.md"
START, END = "<!-- paper-check:start -->", "<!-- paper-check:end -->"

#: The generated stand-ins (images or questions per class, training and test split): the shapes and class counts of
#: the papers' datasets, enough images per class for the largest set the check distils (10 per class) and the
#: largest real batch a stage draws at the paper's batch size (KRR-ST's 1,024 on CIFAR-100, GTN's 512 on CIFAR-10,
#: the 1,024 targets of learned labels on MNIST; 20 exemplars per class of a continual-learning memory on CIFAR-100),
#: and one step of SSL pre-training at ReLA's 10% budget and batch of 128 on CIFAR-10 (1,280 images).
#: Every pass over a split costs its size at the paper's networks, so no more than that.
DATASETS = {
    "cifar10": (130, 10),
    "cifar100": (24, 2),
    "mnist": (110, 10),
    "text": (40, 1),
}
#: A stage that draws more real images per class in one batch than :data:`DATASETS` hold reads a larger stand-in
#: (its own folder, ``large/``): KIP's target batch of 5,000 CIFAR-10 images, 500 per class.
LARGE = {"dd_kip": {"cifar10": (500, 10)}}

#: Loop and size keys: their values come from the ``smoke`` scale. A key ending in one of these (and not a batch's
#: size) ...
LOOP_SUFFIX = re.compile(
    r"(seeds|epochs|steps|iterations|_every|reps|draws|samples|problems|batches|views|candidates|random_maps"
    r"|_n|_ns|_ipc|ipcs|per_class|_pool|pool_size|pool_eval|_images|_real|_size|knn_train|knn_test)$"
)
#: ... or named here (the lists of arms a stage sweeps, and single counts) is one.
LOOP_NAMES = frozenset(
    {
        "ipc",
        "size",
        "memory",
        "grid",
        "eval_inits",
        "sigmas",
        "trajectory_sigmas",
        "linear_sigmas",
        "rhos",
        "trajectory_rhos",
        "lambdas",
        "fractions",
        "budgets",
        "sweep_lambdas",
        "grid_K",
        "grid_rho",
        "sl_sizes",
        "step_mults",
        "lams",
        "ms",
        "bins",
        "min_scales",
        "phase_increments",
        "fraction_arm",
        "window",
        "patience",
        "batches",
        "probe_train",
        "n_random",
        "loops_ipc10",
        "loops_ipc50",
        "baseline_lr_grid",
        "ls_target",
        "cross_ipc_extra",
        "dpi",
    }
)
#: Keys whose values at the two scales differ for another reason than the loop's length: the paper's networks,
#: batches, datasets, code paths and optimiser settings (and the theory stages' problem sizes). They stay the
#: paper's; a key in neither class is an error of this module's tests, so every new key is classified.
SHAPE = re.compile(
    r"(dataset|data_root|corpus|width|mult|stride|patch|depth|students|teachers|archs|^arch$|backbones|priors"
    r"|_prior$|batch|_lr$|^lr$|schedule|standardize|workers|variants|methods|learners|curricula|hidden|noise_dim"
    r"|^length$|filters|jitter|base_classes|increment|coresets|augmentations|ablation_inits|replicate_syntheses"
    r"|descriptive_arms|per_seed_priors|prior_only|^k$|^dim$|^classes$|d_random|perplexity"
    r"|target_batch|head_mult)"
)
#: The caps on the smoke values: at most this many epochs, and steps or iterations, per loop (and one seed) ...
MAX_EPOCHS, MAX_STEPS = 1, 2
#: ... (lists of set sizes, ``ipcs``, keep the smoke scale's list whole: later stages load the sets of named sizes,
#: dd_gtn and dd_mnemonics the ipc-10 DC / DSA / DM / DWA sets, and the smoke lists are the ones the smoke pipeline
#: proves consistent across stages) ...
#: ... and at most this many images for a probe or monitor fitted on frozen features (each arm's pass over them
#: at the paper's networks is most of a ReLA stage's time here)
MAX_PROBE = 256
PROBE_KEYS = ("probe_train", "probe_train_n", "knn_train", "knn_test", "similarity_images")
#: The share of the check that CI runs (``tests/test_paper_check.py``): the SSL priors and ReLA's targets through
#: ResNet-18, KIP, and the label-learning stage of the reading notes on the stand-ins, 2 to 5 minutes on 2 cores (an
#: AVX512 host, an AVX2-only one). The other stages' paper paths run a step on tiny files in the distributed formats
#: (``tests/test_paper_paths_*.py``); the whole check (35 to 91 minutes) is run by ``make paper-check`` and recorded
#: (:data:`RECORD`).
CI_STAGES = ("rela_smoke", "dd_kip", "dd_labels")
#: Keys the check sets outright where the generic rule does not fit (each with why).
EXTRA: dict[str, dict] = {
    # the paper's per-seed priors (one prior trained per seed) need two seeds to run their path; smoke has one
    "rela_budget": {"seeds": [0, 1]},
    # the untrained teacher's spread over seeds is the stage's noise estimate: two at least
    "ssdd_teacher": {"untrained_seeds": [0, 1]},
    # the IOR / HLR cells of DWA's grid and real sets are paired over seeds: two at least
    "dd_dwa": {"seeds": [0, 1]},
    # the smoke scale keeps Mnemonics' three seeds, and at the paper's 2-class increments (25 phases) each seed
    # retrains every method's model per phase (over 10 minutes here): one seed, and Mnemonics' 5-phase protocol
    # (its 10-class increments, also one of the paper's), run the same code
    "dd_mnemonics": {"seeds": [0], "increment": 10},
}


def is_loop_key(key: str) -> bool:
    """Whether ``key`` sets a loop's length or a sample size (its check value comes from the smoke scale)."""
    return key in LOOP_NAMES or (LOOP_SUFFIX.search(key) is not None and "batch" not in key)


def _cap(stage: str, key: str, value):
    """``value`` at most :data:`MAX_EPOCHS` / :data:`MAX_STEPS` for an epochs / steps key, the first entry of a list
    of seeds, and not below the schema's minimum."""
    if key.endswith("seeds") and isinstance(value, list):
        return value[:1]
    if isinstance(value, bool) or not isinstance(value, int):
        return value
    cap = MAX_EPOCHS if key.endswith("epochs") else MAX_STEPS if key.endswith(("steps", "iterations")) else None
    if cap is None:
        return value
    spec = params.schemas().get(stage, {}).get(key)
    low = int(spec.low) if spec is not None and spec.low is not None else 0
    return max(min(value, cap), low)


#: The classes of each stand-in (the dataset key's value -> :data:`DATASETS`' key and class count).
CLASSES = {"cifar10": ("cifar10", 10), "cifar100": ("cifar100", 100), "mnist": ("mnist", 10)}


def _clip_sizes(stage: str, values: dict) -> dict:
    """Sample sizes (``*_n``, ``ls_target``, ``probe_train``, ``knn_train`` / ``knn_test``, ``similarity_images``)
    at most the stand-in split's size; 0 (all) stays."""
    name = CLASSES.get(values.get("dataset", ""))
    if name is None:
        return {}
    (per_train, per_test), k = {**DATASETS, **LARGE.get(stage, {})}[name[0]], name[1]
    out = {}
    for key, v in values.items():
        sized = key.endswith("_n") or key in ("ls_target", "probe_train", "knn_train", "knn_test", "similarity_images")
        if sized and is_loop_key(key) and isinstance(v, int) and not isinstance(v, bool) and v > 0:
            test = "test" in key or key == "similarity_images"  # ReLA's similarity images are test images
            # a validation split is carved out of the training split: at most a fifth of it
            n = k * per_test if test else k * per_train // 5 if key.startswith("val") else k * per_train
            out[key] = min(v, n, MAX_PROBE if key in PROBE_KEYS else v)
    return out


def check_values(raw: dict, stage: str, data_root: str = "") -> dict:
    """The values the check runs ``stage`` with: the paper scale's, with every loop key that the smoke scale shrinks
    at the smoke scale's value (capped), sizes within the stand-ins, then :data:`EXTRA`; ``data_root`` (where set at
    paper scale) pointed at the stand-ins."""
    paper = params.resolve(dict(raw, **{params.SCALE_KEY: SCALE}), stage)
    smoke = params.resolve(dict(raw, **{params.SCALE_KEY: "smoke"}), stage)
    out = {k: (_cap(stage, k, smoke[k]) if is_loop_key(k) and smoke[k] != v else v) for k, v in paper.items()}
    out.update(_clip_sizes(stage, out))
    out.update(EXTRA.get(stage, {}))
    if data_root and out.get("data_root"):
        out["data_root"] = str(Path(data_root) / ("large" if stage in LARGE else "standard"))
    return out


def unclassified(raw: dict) -> list[str]:
    """``stage.key`` for every key whose paper and smoke values differ and that neither :func:`is_loop_key` nor
    :data:`SHAPE` classifies (the tests require none)."""
    out = []
    for stage, body in raw.items():
        if not isinstance(body, dict):
            continue
        paper = params.resolve(dict(raw, **{params.SCALE_KEY: SCALE}), stage)
        smoke = params.resolve(dict(raw, **{params.SCALE_KEY: "smoke"}), stage)
        out += [
            f"{stage}.{k}" for k in paper if paper[k] != smoke.get(k) and not is_loop_key(k) and not SHAPE.search(k)
        ]
    return out


def write_params(raw: dict, dest: Path, data_root: str, device: str | None = None) -> Path:
    """A ``params.yaml`` at ``scale: paper`` whose every section resolves to :func:`check_values`."""
    out = {params.SCALE_KEY: SCALE}
    for stage, body in raw.items():
        if stage == params.SCALE_KEY:
            continue
        if not isinstance(body, dict):
            out[stage] = body
            continue
        values = check_values(raw, stage, data_root)
        if device is not None and "device" in values:
            values["device"] = device
        base = {k: v for k, v in body.items() if k != params.OVERRIDES_KEY}
        out[stage] = {**base, params.OVERRIDES_KEY: {SCALE: values}}
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(yaml.safe_dump(out, sort_keys=False))
    return dest


def write_datasets(folder: Path) -> Path:
    """The stand-ins under ``folder``: those of :data:`DATASETS` in ``standard/`` (the ``data_root`` of every stage
    but those of :data:`LARGE`) and the larger ones of :data:`LARGE` in ``large/``."""
    stamp = folder / "sizes.json"
    sizes = json.dumps({"standard": DATASETS, "large": LARGE}, sort_keys=True)
    if stamp.is_file() and stamp.read_text() == sizes:
        return folder  # written before with these sizes (the stand-ins are seeded: the same files)
    shutil.rmtree(folder, ignore_errors=True)
    std, large = folder / "standard", folder / "large"
    std.mkdir(parents=True)
    fakedata.write_cifar10(std, *DATASETS["cifar10"])
    fakedata.write_cifar100(std, *DATASETS["cifar100"])
    fakedata.write_mnist(std, *DATASETS["mnist"])
    fakedata.write_text_corpora(std, per_class=DATASETS["text"][0], trec_repeats=DATASETS["text"][0], filler=4)
    writers = {"cifar10": fakedata.write_cifar10, "cifar100": fakedata.write_cifar100, "mnist": fakedata.write_mnist}
    for name, (per_train, per_test) in {n: z for ins in LARGE.values() for n, z in ins.items()}.items():
        writers[name](large, per_train, per_test)
    stamp.write_text(sizes)
    return folder


@dataclass
class Row:
    stage: str
    status: str  # passed, failed, skipped (an upstream stage failed)
    seconds: float
    detail: str = ""


def say(msg: str) -> None:
    print(f"[paper-check] {msg}", flush=True)


def run_stage(stage: str, params_file: Path, root: Path) -> None:
    """One stage of the check: a notebook through nbrun, the summary through its module."""
    reports, models = root / "reports", root / "models"
    if stage in faithful.MODULE_STAGES:
        summary.write(summary.build(reports, partial=True), reports)
        return
    nb = nbclean.clean(stage, root / "nb")
    nbrun.run_stage(
        stage,
        params_file=params_file,
        output_root=reports,
        notebook=nb,
        scale=SCALE,
        models_root=models,
        progress=False,
    )


def run(selected: list[str], up: dict[str, set[str]], params_file: Path, root: Path, runner=run_stage) -> list[Row]:
    """Run ``selected`` in order; a stage whose upstream failed (or was skipped) is skipped. Returns the rows."""
    rows, bad = [], set()
    for i, st in enumerate(selected):
        blocked = sorted(up.get(st, set()) & bad)
        if blocked:
            rows.append(Row(st, "skipped", 0.0, f"upstream {', '.join(blocked)} failed"))
            bad.add(st)
            say(f"{i + 1}/{len(selected)} {st}: skipped (upstream {', '.join(blocked)} failed)")
            continue
        say(f"{i + 1}/{len(selected)} {st}: start")
        t = time.perf_counter()
        try:
            runner(st, params_file, root)
        except Exception as e:  # a stage's failure is the check's finding; the others still run
            secs = time.perf_counter() - t
            last = (str(e).strip().splitlines() or [type(e).__name__])[-1][:300]
            rows.append(Row(st, "failed", secs, f"{type(e).__name__}: {last}"))
            bad.add(st)
            say(f"{i + 1}/{len(selected)} {st}: FAILED after {secs:.0f} s: {type(e).__name__}: {last}")
            traceback.print_exc(limit=3)
            continue
        secs = time.perf_counter() - t
        rows.append(Row(st, "passed", secs))
        say(f"{i + 1}/{len(selected)} {st}: passed in {secs:.0f} s")
    return rows


def table(rows: list[Row]) -> str:
    width = max(len(r.stage) for r in rows)
    lines = [f"  {r.stage:<{width}}  {r.status:<7}  {r.seconds:6.0f} s  {r.detail}".rstrip() for r in rows]
    total = sum(r.seconds for r in rows)
    passed = sum(r.status == "passed" for r in rows)
    return "\n".join([*lines, f"  {passed} of {len(rows)} stage(s) passed in {total / 60:.1f} min"])


def cpu_features() -> str:
    """The CPU's bf16 matrix units, which set the ReLA stages' speed (they run bf16 autocast where native):
    ``"AMX"``, ``"AVX512-BF16, no AMX"`` or ``"no native bf16"``."""
    if torch.cpu._is_amx_tile_supported():
        return "AMX"
    return "AVX512-BF16, no AMX" if torch.cpu._is_avx512_bf16_supported() else "no native bf16"


def record(rows: list[Row], threads: int) -> dict:
    """What ``--write`` keeps of a full run: the machine, its bf16 units, its threads and each stage's status and
    seconds."""
    return {
        "machine": platform.processor() or platform.machine(),
        "cpu": cpu_features(),
        "threads": threads,
        "stand_ins": {k: {"train_per_class": a, "test_per_class": b} for k, (a, b) in DATASETS.items()},
        "rows": [{"stage": r.stage, "status": r.status, "seconds": round(r.seconds, 1)} for r in rows],
    }


def merge_rerun(rec: dict, rows: list[Row]) -> dict:
    """The record with the rows of stages rerun alone (``--only --write``, after a fix, on the recorded run's
    products) in place of theirs, each marked ``rerun``."""
    new = {r.stage: {"stage": r.stage, "status": r.status, "seconds": round(r.seconds, 1), "rerun": True} for r in rows}
    return {**rec, "rows": [new.get(r["stage"], r) for r in rec["rows"]]}


def page_block(rec: dict) -> str:
    """The page's summary of a recorded run: the total, and the five slowest stages."""
    rows = rec["rows"]
    total = sum(r["seconds"] for r in rows)
    passed = sum(r["status"] == "passed" for r in rows)
    slow = sorted(rows, key=lambda r: -r["seconds"])[:5]
    rerun = [r["stage"] for r in rows if r.get("rerun") and r["status"] == "passed"]
    return "\n".join(
        [
            START,
            f"The last recorded run (`benchmarks/{RECORD.name}`, written by `python -m "
            f"compendium.pipeline.paper_check --write`): {passed} of {len(rows)} stages passed in "
            f"{total / 60:.1f} min on {rec['threads']} CPU thread(s)"
            + (f" ({rec['cpu']})" if rec.get("cpu") else "")
            + "; the slowest were "
            + ", ".join(f"{r['stage']} ({r['seconds']:.0f} s)" for r in slow)
            + "."
            + (
                f" {len(rerun)} of them ({', '.join(rerun)}) passed when rerun alone on that run's products after a"
                " fix (`--only`)."
                if rerun
                else ""
            ),
            END,
        ]
    )


def write_page(rec: dict, page: Path = PAGE) -> None:
    text = page.read_text()
    if START not in text or END not in text:
        raise ValueError(f"{page} has no {START} ... {END} block")
    old = text[text.index(START) : text.index(END) + len(END)]
    page.write_text(text.replace(old, page_block(rec)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Run every stage at scale paper on generated stand-ins of the papers' datasets, one or two "
        "iterations of every loop, to catch shape, device and path errors before a GPU run."
    )
    ap.add_argument("--stages", nargs="+", default=None, help="these stages and every stage upstream of them")
    ap.add_argument("--only", action="store_true", help="with --stages: just those (their upstream products present)")
    ap.add_argument("--root", type=Path, default=ROOT, help=f"work folder (default {ROOT.relative_to(paths.ROOT)})")
    ap.add_argument("--device", default=None, help="the stages' device key (default: the paper scale's, auto)")
    ap.add_argument(
        "--write",
        action="store_true",
        help=f"after a full run: record it in benchmarks/{RECORD.name} and its summary in docs/{PAGE.name}",
    )
    ap.add_argument("--from-record", action="store_true", help=f"only rewrite docs/{PAGE.name}'s block from the record")
    args = ap.parse_args(argv)
    if args.from_record:
        write_page(json.loads(RECORD.read_text()))
        return 0
    stages = faithful.read_stages(yaml.safe_load(paths.DVC_YAML.read_text()))
    up = faithful.upstream(stages)
    order = faithful.dag_order(stages, up)
    try:
        selected = faithful.select(order, up, args.stages, args.only)
    except ValueError as e:
        say(str(e))
        return 2
    root = args.root.resolve()
    if not args.only:
        shutil.rmtree(root, ignore_errors=True)
    t0 = time.perf_counter()
    folder = write_datasets(root / "datasets")
    os.environ[data.GENERATED_ENV] = str(folder)
    params_file = write_params(params.load(), root / "params.yaml", str(folder), args.device)
    for st in selected:  # every stage's values and cross-key checks, before any compute
        if st not in faithful.MODULE_STAGES:
            params.stage_params(st, params_file, SCALE)
    say(
        f"stand-ins in {folder}, parameters in {params_file} ({time.perf_counter() - t0:.0f} s); {len(selected)} stages"
    )
    rows = run(selected, up, params_file, root)
    print(table(rows), flush=True)
    rec = None
    if args.write and selected == order:
        rec = record(rows, int(os.environ.get("OMP_NUM_THREADS") or 0) or torch.get_num_threads())
    elif (
        args.write and args.only and RECORD.is_file()
    ):  # stages rerun alone after a fix, on the recorded run's products
        rec = merge_rerun(json.loads(RECORD.read_text()), rows)
    if rec is not None:
        RECORD.write_text(json.dumps(rec, indent=1) + "\n")
        write_page(rec)
        say(f"recorded in {RECORD} and {PAGE}")
    failed = [r.stage for r in rows if r.status == "failed"]
    if failed:
        say(f"failed: {', '.join(failed)} (partly executed notebooks in build/failed/)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
