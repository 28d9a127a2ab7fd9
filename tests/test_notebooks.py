"""Notebook hygiene, parameters cells against schemas, and nbval over every notebook."""

import os
import subprocess
import sys

import nbformat
import papermill as pm
import pytest
import yaml
from conftest import requires_data

from compendium.core import paths
from compendium.pipeline import nbclean, params

NOTEBOOKS = sorted(paths.NOTEBOOKS.glob("*.ipynb"))


def test_there_are_notebooks_and_each_is_a_stage():
    assert NOTEBOOKS
    dvc = yaml.safe_load(paths.DVC_YAML.read_text())
    cleaned = nbclean.pipeline_order()
    outs = [next(iter(o)) if isinstance(o, dict) else o for o in dvc["stages"]["clean_notebooks"]["outs"]]
    assert outs == [f"build/nb/{st}.ipynb" for st in cleaned], "clean_notebooks makes one copy per notebook it lists"
    for nb in NOTEBOOKS:
        assert nb.stem in dvc["stages"], f"{nb.name} has no stage in dvc.yaml"
        assert nb.stem in cleaned, f"{nb.name} is not in clean_notebooks"
        assert nb.stem in params.schemas(), f"{nb.name} has no schema"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_parameters_cell_declares_exactly_the_schema(nb):
    declared = set(pm.inspect_notebook(str(nb)))
    assert declared == set(params.schemas()[nb.stem]) | {"scale"}


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_are_committed_without_outputs(nb):
    r = subprocess.run([sys.executable, "-m", "nbstripout", "--verify", str(nb)], capture_output=True, text=True)
    assert r.returncode == 0, f"{nb.name} carries outputs or volatile metadata: run nbstripout on it"
    node = nbformat.read(nb, as_version=4)
    assert node.metadata.kernelspec.name == "compendium"
    assert all(c.get("outputs", []) == [] for c in node.cells)


MAX_CODE_LINES = 150


def code_lines(nb) -> int:
    """Non-blank lines of code cells that are not comments."""
    node = nbformat.read(nb, as_version=4)
    return sum(
        1
        for c in node.cells
        if c.cell_type == "code"
        for ln in c.source.splitlines()
        if ln.strip() and not ln.strip().startswith("#")
    )


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_are_thin_glue(nb):
    """Experiment logic lives in the library, tested; a notebook holds parameters, calls, plots and tables."""
    n = code_lines(nb)
    assert n <= MAX_CODE_LINES, f"{nb.name} has {n} code lines (at most {MAX_CODE_LINES}): move its logic into src/"


@requires_data
@pytest.mark.slow
def test_notebooks_run_with_their_defaults_under_nbval(tmp_path):
    """nbval-lax: every notebook runs top to bottom with its parameters cell's defaults (small, as smoke's are)."""
    env = dict(os.environ, **{paths.OUTPUT_ROOT_ENV: str(tmp_path / "out")})
    # in pipeline order (clean_notebooks lists the stages so), so a notebook finds what an upstream one made
    order = nbclean.pipeline_order()
    ordered = sorted(NOTEBOOKS, key=lambda nb: order.index(nb.stem) if nb.stem in order else len(order))
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "--nbval-lax",
            "--nbval-current-env",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(paths.ROOT),
            *map(str, ordered),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert (tmp_path / "out" / "metrics" / "data_overview.json").is_file()
