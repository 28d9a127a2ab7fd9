"""Notebook hygiene, parameters cells against schemas, and nbval over the notebooks whose defaults choose other code."""

import ast
import os
import subprocess
import sys

import nbformat
import papermill as pm
import pytest
import yaml
from conftest import requires_data

from compendium.core import paths
from compendium.pipeline import faithful, nbclean, params

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


def _is_code_path(value) -> bool:
    """A parameter value that chooses code rather than sizes it: a name, a switch or a list of names."""
    return isinstance(value, (str, bool)) or (isinstance(value, list) and any(isinstance(v, str) for v in value))


def defaults_off_smoke(nb) -> dict:
    """The parameters whose default in ``nb``'s parameters cell differs from the smoke scale's value, as
    ``{key: (default, smoke)}``."""
    found = {k: ast.literal_eval(v["default"]) for k, v in pm.inspect_notebook(str(nb)).items()}
    smoke = params.stage_params(nb.stem, scale="smoke")
    return {k: (v, smoke[k]) for k, v in found.items() if k in smoke and v != smoke[k]}


def nbval_notebooks() -> list:
    """The notebooks nbval runs with their own defaults: those whose defaults take a code path the smoke scale does
    not (:func:`_is_code_path`), with the notebooks upstream of them, in pipeline order. The others differ from
    smoke only in sizes, seeds, rates and figure resolution, and the whole-pipeline test
    (``tests/test_pipeline.py``) runs every notebook at smoke."""
    chosen = {
        nb.stem
        for nb in NOTEBOOKS
        if any(_is_code_path(d) or _is_code_path(s) for d, s in defaults_off_smoke(nb).values())
    }
    stages = faithful.read_stages(yaml.safe_load(paths.DVC_YAML.read_text()))
    needed = faithful.ancestors(chosen, faithful.upstream(stages))
    return [paths.NOTEBOOKS / f"{st}.ipynb" for st in nbclean.pipeline_order() if st in needed]


def test_nbval_runs_the_notebooks_whose_defaults_take_another_code_path():
    """The rule of :func:`nbval_notebooks` picks a few notebooks, each upstream one included, and leaves out one
    whose defaults differ from smoke in sizes alone."""
    chosen = [nb.stem for nb in nbval_notebooks()]
    assert {"rela_arch", "rela_methods", "dd_labels", "priors"} <= set(chosen) and len(chosen) < len(NOTEBOOKS) / 2
    assert chosen.index("priors") < chosen.index("rela_arch")
    assert defaults_off_smoke(paths.NOTEBOOKS / "dd_kip.ipynb") and "dd_kip" not in chosen
    assert _is_code_path("switch") and _is_code_path(["rr"]) and _is_code_path(False)
    assert not _is_code_path([0, 1]) and not _is_code_path(0.003)


@requires_data
@pytest.mark.slow
def test_notebooks_run_with_their_defaults_under_nbval(tmp_path):
    """nbval-lax: the notebooks of :func:`nbval_notebooks` run top to bottom with their parameters cells'
    defaults, in pipeline order, so a notebook finds what an upstream one made."""
    env = dict(os.environ, **{paths.OUTPUT_ROOT_ENV: str(tmp_path / "out")})
    chosen = nbval_notebooks()
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
            *map(str, chosen),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    for nb in chosen:
        assert (tmp_path / "out" / "metrics" / f"{nb.stem}.json").is_file(), f"{nb.name} wrote no metrics"
