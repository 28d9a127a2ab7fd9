"""compendium.pipeline.dvcplots: every plot declared with x, y and its series; templates that draw one
line per arm."""
import json
import shutil
import subprocess
import sys

import pytest

from compendium.core import paths
from compendium.pipeline import dvcplots


def test_the_declared_plots_and_templates_are_the_modules_and_name_real_columns():
    assert dvcplots.problems() == []


def test_an_undeclared_plot_file_or_a_missing_column_is_named(tmp_path):
    shutil.copy(paths.DVC_YAML, tmp_path / "dvc.yaml")
    dvcplots.write(tmp_path)
    (tmp_path / "reports" / "plots" / "rela_smoke").mkdir(parents=True)
    (tmp_path / "reports" / "plots" / "rela_smoke" / "knn_curves.csv").write_text("arm,step,knn\nA,0,0.5\n")
    (tmp_path / "reports" / "plots" / "rela_smoke" / "extra.csv").write_text("a,b\n1,2\n")
    found = dvcplots.problems(tmp_path)
    assert any("knn_curves.csv: plot 'knn_curves' names columns ['epoch']" in p for p in found)
    assert any("extra.csv: no plot declares it" in p for p in found)
    (tmp_path / dvcplots.TEMPLATES / "line-by-arm.json").write_text("{}")
    assert any("line-by-arm.json: differs" in p for p in dvcplots.problems(tmp_path))


def test_templates_colour_by_the_series_and_keep_revisions_apart():
    t = {p.id: dvcplots.template(p) for p in dvcplots.PLOTS}
    assert t["knn_curves"]["encoding"]["color"]["field"] == "arm"
    assert t["dd_kip_loss_curves"]["encoding"]["strokeDash"]["field"] == "ipc"
    assert {"field": "seed", "type": "nominal"} in t["dd_kip_loss_curves"]["encoding"]["detail"]
    assert {"field": "rev", "type": "nominal"} in t["knn_curves"]["encoding"]["detail"]
    assert t["class_balance_digits"]["encoding"]["xOffset"]["field"] == "split"
    assert t["class_balance_digits"]["encoding"]["y"]["scale"] == {"zero": True}
    assert t["representation_similarity"]["mark"]["type"] == "rect"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_dvc_plots_show_draws_four_arms_as_four_lines(tmp_path):
    """DVC fills our template with a four-arm file and keeps the arm column, coloured by it."""
    p = next(x for x in dvcplots.PLOTS if x.id == "knn_curves")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    dvc = [sys.executable, "-m", "dvc"]
    subprocess.run([*dvc, "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / dvcplots.TEMPLATES).mkdir(parents=True, exist_ok=True)
    (tmp_path / dvcplots.TEMPLATES / f"{p.template_name}.json").write_text(json.dumps(dvcplots.template(p)))
    (tmp_path / "dvc.yaml").write_text(f"plots:\n  - knn:\n      template: {p.template_name}\n      x: epoch\n"
                                       "      y:\n        k.csv: knn\n")
    (tmp_path / "k.csv").write_text("arm,epoch,knn\n" + "".join(f"{a},{e},{0.5 + e / 10}\n" for a in "ABCD" for e in range(3)))
    out = subprocess.run([*dvc, "plots", "show", "--json"], cwd=tmp_path, capture_output=True, text=True, check=True)
    spec = json.loads(out.stdout)["data"]["knn"][0]["content"]
    assert spec["encoding"]["color"]["field"] == "arm" and spec["encoding"]["x"]["field"] == "epoch"
    assert {v["arm"] for v in spec["data"]["values"]} == set("ABCD")
