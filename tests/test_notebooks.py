"""Notebook hygiene, parameters cells against schemas, and nbval over every notebook."""
import os
import subprocess
import sys

import nbformat
import papermill as pm
import pytest
import yaml

from compendium.pipeline import params
from compendium.core import paths
from conftest import requires_data

NOTEBOOKS = sorted(paths.NOTEBOOKS.glob("*.ipynb"))


def test_there_are_notebooks_and_each_is_a_stage():
    assert NOTEBOOKS
    dvc = yaml.safe_load(paths.DVC_YAML.read_text())
    cleaned = dvc["stages"]["clean_notebooks"]["foreach"]
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


@requires_data
@pytest.mark.slow
def test_notebooks_run_with_their_defaults_under_nbval(tmp_path):
    """nbval-lax: every notebook runs top to bottom with its parameters cell's (smoke) defaults."""
    env = dict(os.environ, **{paths.OUTPUT_ROOT_ENV: str(tmp_path / "out")})
    # in pipeline order (clean_notebooks lists the stages so), so a notebook finds what an upstream one made
    order = yaml.safe_load(paths.DVC_YAML.read_text())["stages"]["clean_notebooks"]["foreach"]
    ordered = sorted(NOTEBOOKS, key=lambda nb: order.index(nb.stem) if nb.stem in order else len(order))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "--nbval-lax", "--nbval-current-env",
                        "-p", "no:cacheprovider", "--rootdir", str(paths.ROOT), *map(str, ordered)],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert (tmp_path / "out" / "metrics" / "data_overview.json").is_file()
