"""A rerun of the pipeline on a disjoint seed set, and the verdicts that flip.

A verdict must survive a rerun on other seeds. This module writes a copy of ``params.yaml`` whose
every seed is shifted by an offset (a seed list ``[0, 1, 2]`` becomes ``[1000, 1001, 1002]``, a
``seed: 0`` becomes ``seed: 1000``; counts such as ``seeds: 10`` stay), runs the stages in pipeline
order into a separate output root with it (their checkpoints and distilled sets there too: nothing is
shared with ``reports/`` or ``models/``), gathers that run's claims ledger and lists the claims whose
verdict differs from the pipeline's. Stages whose metrics file already exists under the root are
skipped, so the run resumes stage by stage::

    python -m compendium.pipeline.seedsets --offset 1000 --root build/seedset_1000            # all stages
    python -m compendium.pipeline.seedsets --offset 1000 --root build/seedset_1000 --stages dd_teachers dd_coresets
    python -m compendium.pipeline.seedsets --offset 1000 --root build/seedset_1000 --compare-only --publish

The rerun's rows are then copied to ``reports/claims_rerun/``, and the ``claims_ledger`` stage gives
every claim both runs judged the verdict they agree on, ``inconclusive`` where they disagree
(:func:`combine`): a verdict that flips on other seeds is not a verdict. ``run.json`` keeps a fingerprint
of the parameters each stage's rerun used (its section and its upstream stages', :func:`fingerprint`);
a stage whose parameters changed since is not a replicate of this run, and its rerun rows are left out
until the rerun is repeated.

Theory stages check statements exactly; they are left out unless named.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path

import yaml

from compendium.core import paths
from compendium.pipeline import claims, nbclean, nbrun, params


def shift_seeds(tree, offset: int):
    """A copy of a params tree with every seed shifted by ``offset``: keys ``seed`` / ``*_seed`` holding
    an int and keys ``seeds`` / ``*_seeds`` holding a list. An int under a ``*seeds`` key is a count
    (``seeds: 10``, ``full_seeds: 3``) and stays."""
    if offset < 1:
        raise ValueError(f"offset must be >= 1 (a disjoint seed set), got {offset}")
    if isinstance(tree, dict):
        out = {}
        for k, v in tree.items():
            if (k == "seed" or k.endswith("_seed")) and isinstance(v, int) and not isinstance(v, bool):
                out[k] = v + offset
            elif (k == "seeds" or k.endswith("_seeds")) and isinstance(v, list):
                out[k] = [s + offset for s in v]
            else:
                out[k] = shift_seeds(v, offset)
        return out
    return tree


def pipeline_order() -> list[str]:
    """The notebook stages in the order ``clean_notebooks`` lists them (upstream first)."""
    return nbclean.pipeline_order()


def write_params(offset: int, root: Path, source: Path | None = None) -> Path:
    p = params.load(source)
    shifted = shift_seeds(p, offset)
    params.validate(shifted, where=f"params shifted by {offset}")
    root.mkdir(parents=True, exist_ok=True)
    out = root / "params.yaml"
    out.write_text(yaml.safe_dump(shifted, sort_keys=False))
    return out


RERUN = "claims_rerun"  # under reports/: the rerun's claim rows, committed, read by the claims_ledger stage


def _outs(stage: dict) -> list[str]:
    return [next(iter(o)) if isinstance(o, dict) else o for o in stage.get("outs") or []]


def upstream(stage: str, dvc: dict | None = None) -> set[str]:
    """The stages whose outputs ``stage`` reads, transitively (from ``dvc.yaml``'s deps and outs)."""
    stages = {k: v for k, v in (dvc or yaml.safe_load(paths.DVC_YAML.read_text()))["stages"].items()
              if isinstance(v, dict) and "foreach" not in v and k != nbclean.STAGE}   # the clean copies carry no params
    made = {o.rstrip("/"): k for k, v in stages.items() for o in _outs(v)}

    def direct(s):
        out = set()
        for d in stages.get(s, {}).get("deps") or []:
            d = d.rstrip("/")
            out |= {k for o, k in made.items() if k != s and (d == o or d.startswith(o + "/") or o.startswith(d + "/"))}
        return out
    seen, todo = set(), [stage]
    while todo:
        for u in direct(todo.pop()) - seen:
            seen.add(u)
            todo.append(u)
    return seen


def fingerprint(tree: dict, stage: str, dvc: dict | None = None) -> str:
    """A hash of the parameters ``stage``'s claims depend on in the params tree ``tree`` (the scale, its
    section and its upstream stages' sections)."""
    part = {"scale": tree.get("scale"), **{s: tree.get(s) for s in sorted({stage} | upstream(stage, dvc))}}
    return hashlib.sha256(json.dumps(part, sort_keys=True, default=str).encode()).hexdigest()[:16]


def current_stages(folder: Path, tree: dict | None = None, dvc: dict | None = None) -> tuple[set, set]:
    """(the rerun's stages whose parameters are this run's, shifted; the others): a stage's rerun counts
    only when the fingerprint ``run.json`` stored equals that of ``params.yaml`` shifted by the offset."""
    run = json.loads((folder / "run.json").read_text())
    shifted = shift_seeds(tree if tree is not None else params.load(), run["offset"])
    stored = run.get("params", {})
    same = {s for s, fp in stored.items() if fp == fingerprint(shifted, s, dvc)}
    return same, set(run.get("stages", stored)) - same


def publish(root: Path, offset: int) -> Path:
    """Copy the rerun's claim rows to ``reports/claims_rerun/`` (with the offset in ``run.json``), where
    the ``claims_ledger`` stage combines them with the pipeline's (:func:`combine`)."""
    out = paths.REPORTS / RERUN
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for f in sorted((root / paths.CLAIMS).glob("*.csv")):
        shutil.copy2(f, out / f.name)
    stages = sorted(f.stem for f in out.glob("*.csv"))
    used = yaml.safe_load((root / "params.yaml").read_text())   # the shifted parameters the rerun ran with
    (out / "run.json").write_text(json.dumps({"offset": offset, "stages": stages,
                                              "params": {s: fingerprint(used, s) for s in stages}}, indent=2) + "\n")
    return out


def combine(ledger, folder: Path, tree: dict | None = None):
    """The ledger with every claim that the disjoint-seed rerun in ``folder`` also judged given the verdict
    of both runs (:func:`compendium.pipeline.claims.combine_runs`: a verdict that flips is ``inconclusive``), and
    the table of claims whose verdict that changed. Claims the rerun did not reach, and those of stages
    whose parameters changed since the rerun (:func:`current_stages`; ``tree``: the params, default
    ``params.yaml``), keep their verdict."""
    import pandas as pd

    empty = pd.DataFrame(columns=["paper", "location", "claim", "stage", "this run", "disjoint seeds", "ledger"])
    if not (folder / "run.json").is_file():
        return ledger, empty
    offset = json.loads((folder / "run.json").read_text())["offset"]
    same, _ = current_stages(folder, tree)
    rerun = claims.read_all(folder)
    rerun = rerun[rerun["stage"].isin(same)]
    key = ["stage", "location", "claim", "scale"]  # a rerun at another scale is not this run's replicate
    other = {tuple(r[k] for k in key): r["verdict"] for _, r in rerun.iterrows()}
    out, changed = ledger.copy(), []
    for i, r in ledger.iterrows():
        b = other.get(tuple(r[k] for k in key))
        if b is None:
            continue
        v = claims.combine_runs(r["verdict"], b)
        if v != r["verdict"]:
            note = f"the disjoint seed set (seeds + {offset}) gives {b!r}, this run {r['verdict']!r}"
            out.loc[i, "verdict"] = v
            out.loc[i, "tested"] = "no" if v == claims.NOT_TESTED else "yes"
            out.loc[i, "condition"] = note if not r["condition"] else f"{note}; {r['condition']}"
            changed.append({"paper": r["paper"], "location": r["location"], "claim": r["claim"], "stage": r["stage"],
                            "this run": r["verdict"], "disjoint seeds": b, "ledger": v})
    return out, (pd.DataFrame(changed) if changed else empty)


def compare(root: Path) -> tuple:
    """(this run's ledger, the pipeline's ledger, the claims whose verdict differs)."""
    rerun = claims.read_all(root / paths.CLAIMS)
    base = claims.read_all(paths.REPORTS / paths.CLAIMS)
    return rerun, base, claims.changes(base, rerun)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--offset", type=int, default=1000, help="added to every seed (default 1000)")
    ap.add_argument("--root", type=Path, default=None, help="output root (default build/seedset_<offset>)")
    ap.add_argument("--stages", nargs="*", default=None, help="stages to run (default: every non-theory stage)")
    ap.add_argument("--compare-only", action="store_true", help="only compare the ledgers")
    ap.add_argument("--publish", action="store_true", help="with --compare-only: also publish the rows to reports/")
    args = ap.parse_args(argv)
    root = (args.root or paths.BUILD / f"seedset_{args.offset}").resolve()
    try:
        pfile = write_params(args.offset, root)
    except params.ParamsError as e:
        print(f"[seedsets] {e}", file=sys.stderr)
        return 2
    if not args.compare_only:
        stages = args.stages or [s for s in pipeline_order() if not s.startswith("theory_") and s != "claims_ledger"]
        for stage in stages:
            if (root / paths.METRICS / f"{stage}.json").is_file():
                print(f"[seedsets] {stage}: done before, skipped", flush=True)
                continue
            print(f"[seedsets] {stage} (seeds + {args.offset}) -> {root}", flush=True)
            nbrun.run_stage(stage, pfile, root)
    rerun, base, flips = compare(root)
    hard = flips[flips["verdict before"].isin([claims.HOLDS, claims.FAILS])
                 | flips["verdict after"].isin([claims.HOLDS, claims.FAILS])]
    flips.to_csv(root / "verdict_changes.csv", index=False)
    if not args.compare_only or args.publish:
        print(f"[seedsets] rows published to {publish(root, args.offset)}; rerun the claims_ledger stage")
    print(f"[seedsets] {len(rerun)} claims rerun; {len(flips)} verdicts differ from reports/claims.csv, "
          f"{len(hard)} of them a holds or fails; list in {root / 'verdict_changes.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
