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
    (tmp_path / "dvc.yaml").write_text(
        f"plots:\n  - knn:\n      template: {p.template_name}\n      x: epoch\n      y:\n        k.csv: knn\n"
    )
    (tmp_path / "k.csv").write_text(
        "arm,epoch,knn\n" + "".join(f"{a},{e},{0.5 + e / 10}\n" for a in "ABCD" for e in range(3))
    )
    out = subprocess.run([*dvc, "plots", "show", "--json"], cwd=tmp_path, capture_output=True, text=True, check=True)
    spec = json.loads(out.stdout)["data"]["knn"][0]["content"]
    assert spec["encoding"]["color"]["field"] == "arm" and spec["encoding"]["x"]["field"] == "epoch"
    assert {v["arm"] for v in spec["data"]["values"]} == set("ABCD")


def test_the_offline_page_inlines_the_libraries_dvcs_page_loads_from_a_cdn(tmp_path):
    for name, version in dvcplots.VEGA:
        root = tmp_path / f"{name}-{version}" / "package"
        (root / "build").mkdir(parents=True)
        (root / "build" / f"{name}.min.js").write_text(f"window['{name}'] = 1; /* a */")
        (root / "LICENSE").write_text(f"{name} licence */ text")
    page = dvcplots.vendored_page(tmp_path)
    assert "{plot_divs}" in page and "{refresh_tag}" in page and "http" not in page.split("<body>")[0]
    assert all(f"window['{n}'] = 1;" in page and f"{n} {v}, from the npm registry" in page for n, v in dvcplots.VEGA)
    assert "licence * / text" in page  # a licence cannot close the comment it sits in
    # the libraries DVC's own page would load, at the same versions
    from dvc_render.vega import VegaRenderer

    for name, version in dvcplots.VEGA:
        assert f"npm/{name}@{version}" in VegaRenderer.SCRIPTS
    (tmp_path / "vega-5.20.2" / "package" / "build" / "vega.min.js").write_text("x = '</script>'")
    with pytest.raises(ValueError, match="cannot be inlined"):
        dvcplots.vendored_page(tmp_path)


def test_dvc_plots_writes_the_committed_offline_page_and_it_draws_without_the_internet(tmp_path):
    """`dvc plots show` (and `diff`, which writes the same page) fills `.dvc/plots-page.html`, which the repository's
    DVC config names; the page draws its plot in headless Chromium with no request off the machine."""
    from compendium.pipeline import sitecheck

    page = (paths.ROOT / dvcplots.PAGE).read_text()
    assert "cdn.jsdelivr" not in page and all(f"{n} {v}, from the npm registry" in page for n, v in dvcplots.VEGA)
    assert "html_template = plots-page.html" in (paths.ROOT / ".dvc" / "config").read_text()
    out = tmp_path / "plots"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "dvc",
            "plots",
            "show",
            "reports/plots/data_overview/class_balance_digits.csv",
            "-o",
            str(out),
        ],
        cwd=paths.ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    html = (out / "index.html").read_text()
    assert "cdn.jsdelivr" not in html and "vega-embed 6.18.2" in html
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=sitecheck.chromium(), args=["--no-sandbox"])
        p = browser.new_page()
        off = []
        p.on("request", lambda q: off.append(q.url) if q.url.startswith("http") else None)
        p.goto((out / "index.html").as_uri(), wait_until="load")
        p.wait_for_selector("svg, canvas", timeout=15000)
        browser.close()
    assert not off, off
