"""compendium.pipeline.nbclean: the one clean_notebooks stage strips every notebook as `nbstripout -t` does."""

import json
import subprocess
import sys

import pytest
import yaml

from compendium.core import paths
from compendium.pipeline import nbclean


def test_pipeline_order_reads_the_stage_deps_in_order(tmp_path):
    dvc = tmp_path / "dvc.yaml"
    dvc.write_text(
        yaml.safe_dump(
            {
                "stages": {
                    "clean_notebooks": {
                        "cmd": "x",
                        "deps": [
                            "src/compendium/pipeline/nbclean.py",
                            "notebooks/b.ipynb",
                            "notebooks/a.ipynb",
                            "data",
                        ],
                    }
                }
            }
        )
    )
    assert nbclean.pipeline_order(dvc) == ["b", "a"]


def test_the_real_stage_lists_every_notebook_upstream_first():
    order = nbclean.pipeline_order()
    assert sorted(order) == sorted(p.stem for p in paths.NOTEBOOKS.glob("*.ipynb"))
    assert order[0] == "data_overview" and order[-1] == "claims_ledger"
    assert order.index("priors") < order.index("rela_budget") and order.index("dd_nas") < order.index("dd_gtn")
    assert nbclean.pipeline_order() == order


def test_clean_copy_is_the_cli_output_and_drops_outputs(tmp_path):
    got = nbclean.clean("theory_ssdd", tmp_path)
    want = subprocess.run(
        [sys.executable, *nbclean.STRIP, str(paths.NOTEBOOKS / "theory_ssdd.ipynb")], capture_output=True, check=True
    ).stdout
    assert got == tmp_path / "theory_ssdd.ipynb" and got.read_bytes() == want
    nb = json.loads(want)
    assert "language_info" not in nb["metadata"]
    assert all(
        c.get("outputs", []) == [] and c.get("execution_count") is None for c in nb["cells"] if c["cell_type"] == "code"
    )
    assert not list(tmp_path.glob("*.tmp"))


def test_an_unknown_stage_is_refused_naming_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.ipynb"):
        nbclean.clean("nope", tmp_path)
