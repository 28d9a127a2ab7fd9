"""A rerun of the pipeline on a disjoint seed set, and the verdicts that flip.

A verdict must survive a rerun on other seeds. This module writes a copy of ``params.yaml`` whose
every seed is shifted by an offset (a seed list ``[0, 1, 2]`` becomes ``[1000, 1001, 1002]``, a
``seed: 0`` becomes ``seed: 1000``; counts such as ``seeds: 10`` stay), runs the stages in pipeline
order into a separate output root with it (their checkpoints and distilled sets there too: nothing is
shared with ``reports/`` or ``models/``), gathers that run's claims ledger and lists the claims whose
verdict differs from the pipeline's. Stages whose metrics file already exists under the root are
skipped, so the run resumes stage by stage::

    python -m compendium.seedsets --offset 1000 --root build/seedset_1000            # all stages
    python -m compendium.seedsets --offset 1000 --root build/seedset_1000 --stages dd_teachers dd_coresets
    python -m compendium.seedsets --offset 1000 --root build/seedset_1000 --compare-only

Theory stages check statements exactly; they are left out unless named.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from . import claims, nbrun, params, paths


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
    return list(yaml.safe_load(paths.DVC_YAML.read_text())["stages"]["clean_notebooks"]["foreach"])


def write_params(offset: int, root: Path, source: Path | None = None) -> Path:
    p = params.load(source)
    shifted = shift_seeds(p, offset)
    params.validate(shifted, where=f"params shifted by {offset}")
    root.mkdir(parents=True, exist_ok=True)
    out = root / "params.yaml"
    out.write_text(yaml.safe_dump(shifted, sort_keys=False))
    return out


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
    print(f"[seedsets] {len(rerun)} claims rerun; {len(flips)} verdicts differ from reports/claims.csv, "
          f"{len(hard)} of them a holds or fails; list in {root / 'verdict_changes.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
