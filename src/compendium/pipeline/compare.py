"""Experiments side by side, one row per changed parameter or result, one column per experiment.

``dvc exp show --only-changed`` puts every changed key in a column; an experiment that adds one ReLA
budget changes ten result cells, each named like ``rela.rela_budget:table1.30%.BYOL``, and the table
runs off the screen. This module turns the same table round: the keys go down, the experiments
across, so it fits a terminal whatever the number of changed cells.

Example::

    python -m compendium.pipeline.compare            # the workspace, its commit and the experiments
    python -m compendium.pipeline.compare --all      # every parameter and result, changed or not

It reads ``dvc exp show --csv`` (the files that are products of the code, not its results, are dropped:
:data:`DROP`), and prints a Markdown table; a key with no value in an experiment shows ``-``.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys

import pandas as pd

from compendium.core import paths

# dependencies and products that are not results: their hashes change with every run and say nothing
DROP = (
    r"^(src|notebooks|build|data|models)/|^data$|requirements"
    r"|reports/(tables|notebooks|claims|figures|metrics)|headlines.json"
)
META = ("rev", "typ", "Created", "parent", "State", "Executor")


def transpose(table: pd.DataFrame) -> pd.DataFrame:
    """``dvc exp show --csv``'s table (one row per experiment) turned round: one row per key, one column per
    experiment, named by the experiment's name where it has one, else its revision (``workspace``, the branch)."""
    if table.empty:
        return pd.DataFrame()
    names = [
        str(e) if isinstance(e, str) and e else str(r)
        for e, r in zip(table.get("Experiment", [""] * len(table)), table["rev"])
    ]
    keys = [c for c in table.columns if c != "Experiment" and c not in META]
    out = table[keys].T
    out.columns = names
    out.index.name = "parameter or result"
    return out.fillna("-").astype(str).replace({"nan": "-", "": "-"})


def read(all_keys: bool = False, cwd=None) -> pd.DataFrame:
    """The experiments of the project at ``cwd`` (the root by default), turned round (:func:`transpose`)."""
    cmd = [sys.executable, "-m", "dvc", "exp", "show", "--no-pager", "--csv", "--drop", DROP]
    if not all_keys:
        cmd.insert(5, "--only-changed")
    r = subprocess.run(cmd, cwd=cwd or paths.ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"dvc exp show failed (is this a git repository with a commit?):\n{r.stderr.strip()}")
    return transpose(pd.read_csv(io.StringIO(r.stdout), dtype=str, keep_default_na=False))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--all", action="store_true", help="every parameter and result, not only those that differ")
    a = ap.parse_args(argv)
    table = read(a.all)
    print(table.to_markdown() if not table.empty else "no experiments and no changed parameter or result")


if __name__ == "__main__":
    main()
