"""compendium.pipeline.nbclean: the one clean_notebooks stage strips every notebook as `nbstripout -t` does."""

import json
import subprocess
import sys
from pathlib import Path

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


def test_strip_equals_the_cli_on_a_notebook_with_outputs_counts_and_volatile_metadata(tmp_path):
    """What Jupyter leaves in a saved notebook (outputs, counts, the kernel's language version, a cell's timing, a
    non-ASCII output) is stripped in-process exactly as ``nbstripout -t`` strips it."""
    import nbformat

    nb = nbformat.v4.new_notebook(metadata={"language_info": {"name": "python", "version": "3.11.7"}})
    code = nbformat.v4.new_code_cell("print('é')", execution_count=3, metadata={"execution": {"iopub": "x"}})
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="é\n")]
    nb.cells = [nbformat.v4.new_markdown_cell("# Title"), code]
    src = tmp_path / "saved.ipynb"
    nbformat.write(nb, src)
    want = subprocess.run([sys.executable, *nbclean.STRIP, str(src)], capture_output=True, check=True).stdout
    got = nbclean.strip(src).encode("utf-8")
    assert got == want
    cell = json.loads(got)["cells"][1]
    assert cell["outputs"] == [] and cell["execution_count"] is None and "execution" not in cell["metadata"]
    assert "language_info" not in json.loads(got)["metadata"]


def test_every_committed_notebook_strips_to_the_copy_dvc_lock_records():
    """The stage's copies (every notebook stage's dependency) hash as ``dvc.lock`` records them."""
    import hashlib

    outs = yaml.safe_load((paths.ROOT / "dvc.lock").read_text())["stages"][nbclean.STAGE]["outs"]
    recorded = {Path(o["path"]).stem: o["md5"] for o in outs}
    assert sorted(recorded) == sorted(nbclean.pipeline_order())
    for stage, md5 in recorded.items():
        text = nbclean.strip(paths.NOTEBOOKS / f"{stage}.ipynb")
        assert hashlib.md5(text.encode("utf-8")).hexdigest() == md5, f"{stage}: dvc.lock's copy differs"
