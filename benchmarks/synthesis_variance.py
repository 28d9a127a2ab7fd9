"""How much of a DWA-vs-SRe2L verdict is the randomness of one synthesis? A check of the ledger's DWA rows.

``dd_inversion`` synthesises each set once (synthesis seed 0) and trains three students on it (evaluation seeds
0-2); the ledger's intervals for DWA Table 1 (DWA − SRe2L) and Table 3 (G − F, G − E) are over those three
students. A rerun on another machine, with teachers that differed in the fourth decimal, moved Table 3's G − F
from +0.6 to −0.6 points, so the synthesis itself may vary more than the students do. This script repeats the
syntheses with synthesis seeds 0, 1, 2 at ``dd_inversion``'s ``cpu`` settings (read from ``params.yaml``) and
trains the same three students on each set, then splits each paired difference into its spread across
syntheses and across students (:func:`compendium.verdicts.claims.nested_effect`).

It needs the ``cpu`` ConvNet teacher of ``dd_teachers`` (``--teacher``; e.g. from ``python -m
compendium.pipeline.nbrun dd_teachers`` or the DVC cache). About 10 minutes on 2 cores.

    python benchmarks/synthesis_variance.py --teacher models/teachers/convnet.pt \\
        [--out benchmarks/synthesis_variance.json] [--synthesis-seeds 0 1 2] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


from compendium.core.parallel import run_calls
from compendium.distill import evaluate as E, inversion as I, runner, teachers
from compendium.pipeline import params
from compendium.verdicts import claims

#: The comparisons of the ledger's DWA rows: (label, ipc, arm A, arm B).
COMPARISONS = (
    ("Table 1: DWA − SRe2L", 10, "dwa", "sre2l"),
    ("Table 3: G − F (directed vs random adjustment)", 1, "G", "F"),
    ("Table 3: G − E (directed adjustment vs none)", 1, "G", "E"),
)


def arms(v: dict) -> dict:
    """name -> (synthesis function, keyword arguments) at the stage's settings ``v`` (dd_inversion resolved)."""
    common = dict(
        iterations=v["iterations"],
        lr=v["lr"],
        jitter=v["jitter"],
        dataset=v["dataset"],
        **I.recovery_augmentation(v["dataset"]),
    )
    r_var = float(v["dwa_r_var"])
    return {
        "sre2l": (I.sre2l_synthesize, common),
        "dwa": (I.dwa_synthesize, {**common, "rho": v["rho"], "K": v["K"], "r_var": r_var}),
        "E": (I.inversion_synthesize, {**common, "method": "sre2l+real+rvar", "init": "real", "r_var": r_var}),
        "F": (I.dwa_synthesize, {**common, "method": "dwa-random", "weight_adjust": "random", "rho": v["rho"]}),
        "G": (I.dwa_synthesize, {**common, "rho": v["rho"], "K": v["K"], "r_var": r_var}),
    }


def run(teacher_path: Path, synthesis_seeds, workers: int = 2) -> dict:
    v = params.resolve(dict(params.load(), scale="cpu"), "dd_inversion")
    teacher, meta = teachers.load(teacher_path, v["dataset"])
    tr, te = teachers.teacher_data(meta, v["dataset"], v["data_root"])
    mean, std = tuple(meta["mean"]), tuple(meta["std"])
    table = arms(v)
    needed = sorted({(a, ipc) for _, ipc, x, y in COMPARISONS for a in (x, y)})
    tasks = [(a, ipc, u) for a, ipc in needed for u in synthesis_seeds]
    t0 = time.perf_counter()
    made = run_calls(
        [
            (table[a][0], (teacher, tr.images, tr.labels, ipc, mean, std), {**table[a][1], "seed": u})
            for a, ipc, u in tasks
        ],
        workers=workers,
    )
    synth_s = time.perf_counter() - t0
    cfg = E.EvalConfig(
        arch="convnet",
        arch_kwargs={"width": v["eval_width"], "depth": 3, "norm": "batch"},
        steps=v["eval_steps"],
        batch_size=v["eval_batch"],
        lr=v["eval_lr"],
        augmentation="crop_flip",
        label_mode="teacher",
        temperature=v["temperature"],
        device="cpu",
        **E.crop_flip(v["dataset"], tr.images.shape[-1]),
    )
    jobs = [
        runner.Job({"arm": a, "ipc": ipc, "synthesis": u}, d, cfg, s, teacher)
        for (a, ipc, u), d in zip(tasks, made)
        for s in v["seeds"]
    ]
    t0 = time.perf_counter()
    rows = runner.evaluate_many(jobs, *E.test_subset(te.images, te.labels, v["test_n"]), workers=workers)
    eval_s = time.perf_counter() - t0
    acc = {(r["arm"], r["ipc"], r["synthesis"], r["seed"]): r["acc"] for r in rows}
    out = {
        "settings": {
            k: v[k]
            for k in (
                "iterations",
                "lr",
                "jitter",
                "rho",
                "K",
                "dwa_r_var",
                "eval_width",
                "eval_steps",
                "eval_batch",
                "eval_lr",
                "temperature",
                "test_n",
                "seeds",
            )
        },
        "synthesis_seeds": list(synthesis_seeds),
        "teacher": str(teacher_path),
        "teacher_test_acc": meta["record"].get("test_acc"),
        "synthesis_seconds": synth_s,
        "eval_seconds": eval_s,
        "accuracy": [{"arm": a, "ipc": i, "synthesis": u, "seed": s, "acc": x} for (a, i, u, s), x in acc.items()],
        "comparisons": [],
    }
    for label, ipc, x, y in COMPARISONS:
        d = {(u, s): acc[(x, ipc, u, s)] - acc[(y, ipc, u, s)] for u in synthesis_seeds for s in v["seeds"]}
        ne = claims.nested_effect(label, d)
        out["comparisons"].append(
            {
                "comparison": label,
                "ipc": ipc,
                "per_synthesis": [
                    {"synthesis": u, "effect": e.text(), "verdict": e.judge()}
                    for u, e in zip(synthesis_seeds, ne.per_unit)
                ],
                "across_syntheses": {"effect": ne.across_units.text(), "verdict": ne.across_units.judge()},
                "sd_within_points": 100 * ne.within_sd,
                "sd_between_points": 100 * ne.between_sd,
            }
        )
    return out


def markdown(out: dict) -> str:
    lines = [
        "# Synthesis seeds against evaluation seeds in DWA's comparisons",
        "",
        "Written by `python benchmarks/synthesis_variance.py`; do not edit by hand. `dd_inversion`'s `cpu` settings "
        f"({out['settings']['iterations']} recovery iterations, ConvNet width {out['settings']['eval_width']} "
        f"students for {out['settings']['eval_steps']} steps on teacher labels, {out['settings']['test_n']} test "
        f"images), synthesis seeds {out['synthesis_seeds']} x evaluation seeds {out['settings']['seeds']}; "
        f"the teacher: {Path(out['teacher']).name} (test accuracy {out['teacher_test_acc']}). Intervals: 95% t "
        "over the evaluation seeds of one synthesis (what the ledger's row measures), and over the syntheses' "
        "means (the synthesis as the replication unit). Points of accuracy.",
        "",
        "| comparison | per synthesis (3 students each) | across syntheses | SD across students | "
        "SD across syntheses |",
        "|---|---|---|---:|---:|",
    ]
    for c in out["comparisons"]:
        per = "<br>".join(
            f"seed {p['synthesis']}: {p['effect'].rsplit(': ', 1)[1]} ({p['verdict']})" for p in c["per_synthesis"]
        )
        a = c["across_syntheses"]
        lines.append(
            f"| {c['comparison']} (ipc {c['ipc']}) | {per} | {a['effect'].rsplit(': ', 1)[1]} "
            f"({a['verdict']}) | {c['sd_within_points']:.2f} | {c['sd_between_points']:.2f} |"
        )
    lines += [
        "",
        f"Synthesis {out['synthesis_seconds'] / 60:.1f} min, students {out['eval_seconds'] / 60:.1f} min (2 workers).",
        "",
    ]
    return "\n".join(lines)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--teacher", type=Path, required=True, help="dd_teachers' cpu ConvNet teacher (convnet.pt)")
    ap.add_argument("--synthesis-seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=None, help="write the JSON here, and the page beside it (.md)")
    args = ap.parse_args(argv)
    if not args.teacher.is_file():
        ap.error(
            f"{args.teacher} is missing: run dd_teachers at cpu scale first (python -m compendium.pipeline.nbrun "
            "dd_teachers)"
        )
    out = run(args.teacher, args.synthesis_seeds, args.workers)
    page = markdown(out)
    print(page)
    if args.out:
        args.out.write_text(json.dumps(out, indent=1) + "\n")
        args.out.with_suffix(".md").write_text(page)
    return out


if __name__ == "__main__":
    main()
