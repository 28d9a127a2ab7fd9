"""compendium.pipeline.site: the pages the results site is built from."""

from pathlib import Path

import nbformat
import pandas as pd
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from compendium.pipeline import report, site
from compendium.verdicts import ledger as claims_ledger


def _ledger():
    return pd.DataFrame(
        [
            {
                "paper": "ReLA",
                "location": "Table 1",
                "claim": "A beats B",
                "verdict": "holds",
                "tested": "yes",
                "seeds": "3",
                "effect": "+1.2",
                "interval": "[0.3, 2.1]",
                "ours": "61.0 vs 59.8",
                "paper_numbers": "60 vs 55",
                "condition": "",
                "stage": "rela_budget",
                "scale": "cpu",
                "preconditions": "met",
            },
            {
                "paper": "DC",
                "location": "Fig. 2",
                "claim": "<b>x</b> & y",
                "verdict": "not tested at this scale",
                "tested": "no",
                "seeds": "1",
                "effect": "",
                "interval": "",
                "ours": "",
                "paper_numbers": "",
                "condition": "needs 1,000 iterations",
                "stage": "dd_matching",
                "scale": "cpu",
                "preconditions": "unmet",
            },
        ]
    )


def test_a_page_drops_the_default_parameters_folds_code_and_keeps_results():
    nb = new_notebook(
        cells=[
            new_code_cell("scale = 'smoke'"),
            new_code_cell("scale = 'cpu'"),
            new_markdown_cell("# Title"),
            new_code_cell(
                "print(1)",
                outputs=[
                    new_output("stream", name="stdout", text="1\n"),
                    new_output("stream", name="stderr", text="warn\n"),
                ],
            ),
            new_code_cell("hidden"),
        ]
    )
    nb.cells[0].metadata["tags"] = ["parameters"]
    nb.cells[1].metadata["tags"] = ["injected-parameters"]
    nb.cells[4].metadata["tags"] = ["remove-cell"]
    page = site.clean_notebook(nb)
    assert [c.source for c in page.cells] == ["scale = 'cpu'", "# Title", "print(1)"]
    assert all("hide-input" in c.metadata["tags"] for c in page.cells if c.cell_type == "code")
    assert [o["name"] for o in page.cells[2].outputs] == ["stdout"]
    assert nb.cells[0].metadata["tags"] == ["parameters"] and len(nb.cells) == 5  # the input is left as it was


def test_the_cell_that_writes_the_ledger_rows_gets_the_anchor_the_ledger_links_to():
    nb = new_notebook(
        cells=[new_code_cell("x = 1"), new_code_cell("rows = []\nrep.claims(rows)"), new_code_cell("rep.claims(more)")]
    )
    page = site.clean_notebook(nb)
    assert [c.cell_type for c in page.cells] == ["code", "markdown", "code", "code"]
    assert page.cells[1].source.startswith(f"({site.CLAIMS_ANCHOR})=")


def test_the_ledger_table_escapes_text_and_links_each_row_to_its_stage():
    text = site.ledger_html(_ledger())
    assert "&lt;b&gt;x&lt;/b&gt; &amp; y" in text and "<b>x</b>" not in text
    assert '<a href="stages/rela-budget.html#ledger-rows">rela_budget</a>' in text
    assert 'class="verdict-holds"' in text and text.count("<tr>") == 3
    assert 'id="ledger-filter"' in text


def test_the_home_page_counts_every_verdict_and_lists_every_stage_by_family():
    page = site.home_page(_ledger(), ["rela_budget", "dd_matching", "theory_pca"])
    assert "**2 claims checked at `cpu` scale; 1 tested.**" in page
    assert "[ReLA](papers/rela.md)" in page and "[DC](papers/dc.md)" in page
    assert ":caption: Labeled distillation" in page and "stages/theory-pca" in page
    assert site.slug("SLDD/TDD") == "sldd-tdd" and site.family("priors") == "ReLA"


def test_the_site_source_is_written_from_the_reports(tmp_path):
    reports = tmp_path / "reports"
    (reports / "notebooks").mkdir(parents=True)
    _ledger().to_csv(reports / "claims.csv", index=False)
    for st in ("rela_budget", "dd_matching"):
        nbformat.write(new_notebook(cells=[new_markdown_cell(f"# {st}")]), reports / "notebooks" / f"{st}.ipynb")
    stages = site.write_source(tmp_path / "src", reports)
    assert stages == ["rela_budget", "dd_matching"]
    src = tmp_path / "src"
    assert {p.name for p in (src / "stages").iterdir()} == {"rela-budget.ipynb", "dd-matching.ipynb"}
    assert {p.name for p in (src / "papers").iterdir()} == {"rela.md", "dc.md"}
    assert "myst_nb" in (src / "conf.py").read_text() and (src / "_static" / "ledger.js").is_file()


def test_a_table_on_a_page_is_rounded_without_row_numbers_and_the_same_every_run():
    plain = pd.DataFrame({"acc": [96.281038, 1.0], "arm": ["BYOL", "ReLA"]})
    html_ = report.table_html(plain)
    assert "96.281<" in html_ and "96.2810" not in html_ and ">0<" not in html_ and ">1<" not in html_
    assert html_ == report.table_html(plain.copy())
    labelled = pd.DataFrame({"acc": [0.5]}, index=["rand prior"])
    assert "rand prior" in report.table_html(labelled)


def test_home_and_paper_pages_show_the_headline_numbers_beside_the_papers():
    h = {
        "scale": "cpu",
        "rows": [
            {
                "family": "rela",
                "paper": "ReLA",
                "what": "Table 1: BYOL",
                "ours": 66.84,
                "paper_value": 58.3,
                "paper_setting": "CIFAR-10",
            },
            {
                "family": "labelled",
                "paper": "DC",
                "what": "DC, ipc 10",
                "ours": 70.5,
                "paper_value": None,
                "paper_setting": "Fashion-MNIST",
            },
        ],
    }
    home = site.home_page(_ledger(), ["rela_budget"], h, {"rela_budget": 3.0, "dd_kip": 30.2})
    assert "| ReLA | Table 1: BYOL | 66.8 | 58.3 | CIFAR-10 |" in home and "| DC | DC, ipc 10 | 70.5 | – |" in home
    assert "ran 33 min in all" in home
    page = site.paper_page("ReLA", _ledger(), Path("/nonexistent"), h)
    assert "Table 1: BYOL" in page and "DC, ipc 10" not in page
    assert "Headline" not in site.paper_page("KIP", _ledger(), Path("/nonexistent"), h)


def test_table_cells_escape_text_and_keep_the_papers_marks():
    assert report.cell_html("**<u>77.1 (1 seed)</u>**") == "<b><u>77.1 (1 seed)</u></b>"
    assert report.cell_html("p < 0.05 & <script>") == "p &lt; 0.05 &amp; &lt;script&gt;"
    assert report.cell_html(0.123456) == "0.123" and report.cell_html(float("nan")) == "" and report.cell_html(7) == "7"
    page = report.table_html(pd.DataFrame({"BYOL": ["66.8 ± 3.7"], "+ReLA": ["**<u>77.1</u>**"]}))
    assert "<b><u>77.1</u></b>" in page and "**" not in page


RENDERED = """<html><head><script src="https://cdnjs.cloudflare.com/ajax/libs/require.js/2.1.10/require.min.js"></script></head><body>
<div class="jp-Cell jp-CodeCell celltag_parameters"><div class="jp-InputArea-editor"><pre>scale = 'smoke'</pre></div></div>
<div class="jp-Cell jp-CodeCell celltag_injected-parameters"><div class="jp-InputArea-editor"><pre>scale = 'cpu'</pre></div></div>
<div class="jp-Cell jp-MarkdownCell"><div class="jp-RenderedMarkdown"><h1>A stage title</h1><p>what it does</p></div></div>
<div class="jp-Cell jp-CodeCell"><div class="jp-InputArea-editor"><pre>print(1)</pre></div>
 <div class="jp-OutputArea-output" data-mime-type="text/plain"><pre>1 &lt;ok&gt;</pre></div>
 <div class="jp-OutputArea-output" data-mime-type="application/vnd.jupyter.stderr"><pre>warn</pre></div></div>
<div class="jp-Cell jp-CodeCell celltag_remove-cell"><div class="jp-InputArea-editor"><pre>hidden()</pre></div></div>
<div class="jp-Cell jp-CodeCell"><div class="jp-InputArea-editor"><pre>rep.claims(rows)</pre></div>
 <div class="jp-OutputArea-output"><img src="data:image/png;base64,AAAA"/><script>x()</script></div></div>
</body></html>"""


def test_a_page_made_from_the_rendered_stage_shows_what_the_notebook_page_shows():
    page = site.html_stage_page("some_stage", RENDERED)
    assert page.splitlines()[0] == "# A stage title" and "<h1>" not in page
    assert "scale = 'smoke'" not in page and "hidden()" not in page and "warn" not in page
    assert "<summary>the parameters of this run</summary><pre>scale = &#x27;cpu&#x27;</pre>" in page
    assert "1 &lt;ok&gt;" in page and "what it does" in page and 'src="data:image/png;base64,AAAA"' in page
    assert "script" not in page and "cdnjs" not in page
    before, after = page.split(f"({site.CLAIMS_ANCHOR})=")
    assert "print(1)" in before and "rep.claims(rows)" in after
    assert site.html_stage_page("untitled", "<div class='jp-Cell jp-CodeCell'></div>").startswith("# untitled\n")


def test_a_clone_without_executed_notebooks_gets_every_stage_page_from_the_rendered_pages(tmp_path):
    reports = tmp_path / "reports"
    (reports / "html").mkdir(parents=True)
    (reports / "notebooks").mkdir()
    _ledger().to_csv(reports / "claims.csv", index=False)
    (reports / "html" / "rela_budget.html").write_text(RENDERED)
    (reports / "html" / "dd_matching.html").write_text(RENDERED)
    nbformat.write(
        new_notebook(cells=[new_markdown_cell("# dd_matching")]), reports / "notebooks" / "dd_matching.ipynb"
    )
    stages = site.write_source(tmp_path / "src", reports)
    assert stages == ["rela_budget", "dd_matching"]
    assert {p.name for p in (tmp_path / "src" / "stages").iterdir()} == {"rela-budget.md", "dd-matching.ipynb"}
    assert "(../stages/rela-budget.md)" in (tmp_path / "src" / "papers" / "rela.md").read_text()
    assert "(../stages/dd-matching.ipynb)" in (tmp_path / "src" / "papers" / "dc.md").read_text()


def test_the_reports_in_git_build_the_whole_site_and_it_passes_the_browser_check(tmp_path):
    """What a fresh clone has (reports/ in git, no executed notebook, no DVC cache) builds every page, offline."""
    import shutil

    from compendium.core import paths
    from compendium.pipeline import sitecheck, stagedeps

    reports = tmp_path / "reports"
    shutil.copytree(paths.REPORTS, reports, ignore=shutil.ignore_patterns("notebooks", "site", "faithful"))
    home = site.build(out=tmp_path / "site", reports=reports, src=tmp_path / "src")
    stages = stagedeps.notebook_stages(paths.ROOT / "dvc.yaml")
    built = {p.stem for p in (tmp_path / "site" / "stages").glob("*.html")}
    assert {site.slug(st) for st in stages} <= built, sorted({site.slug(st) for st in stages} - built)
    seen = sitecheck.check(home.parent, screenshot=tmp_path / "home.png")
    assert not seen.problems, "\n".join(seen.problems[:20])
    assert seen.pages >= len(stages) + 5 and seen.images > 0


def test_a_manual_page_keeps_links_between_manual_pages_and_names_the_repository_files_it_cannot_hold():
    text = (
        "See [the scales](scales.md#several-gpus), [`benchmarks/x.md`](../benchmarks/x.md), "
        "[the ledger](../reports/claims.md) and [a site](https://example.org)."
    )
    page = site.manual_page(text, ["scales", "stages"])
    assert "[the scales](scales.md#several-gpus)" in page and "[a site](https://example.org)" in page
    assert "`benchmarks/x.md`" in page and "](../benchmarks" not in page
    assert "the ledger (`reports/claims.md`)" in page


def test_the_home_page_names_the_central_verdicts_and_the_manual():
    central = ["- **ReLA**: Table 1, “A beats B”: **holds**."]
    page = site.home_page(_ledger(), ["rela_budget"], manual={"scales": "Scales and profiles"}, central=central)
    assert "## The central claims" in page and "- **ReLA**: Table 1, “A beats B”: **holds**." in page
    assert "<!--" not in page and "[Scales and profiles](manual/scales.md)" in page and ":caption: Manual" in page


def test_the_forest_rows_give_each_effect_in_units_of_its_smallest_effect_of_interest():
    rows = pd.DataFrame(
        [
            {"id": "a", "location": "Table 1", "verdict": "holds", "sesoi": "1"},
            {"id": "b", "location": "Table 2", "verdict": "fails", "sesoi": "0.5"},
            {"id": "c", "location": "Eq. 3", "verdict": "holds", "sesoi": ""},
        ]
    )
    evidence = {
        "a": {"effects": [{"label": "A − B", "deltas": [0.02, 0.03, 0.04], "unit": 100.0}]},
        "b": {"effects": [{"label": "C − D", "deltas": [-1.0, -1.2, -0.8], "unit": 1.0}]},
    }
    f = site.forest_rows(rows, evidence)
    assert list(f["label"]) == ["1. Table 1: A − B", "2. Table 2: C − D"]
    assert abs(f.loc[0, "mean"] - 3.0) < 1e-9 and f.loc[0, "low"] < 3.0 < f.loc[0, "high"]
    assert abs(f.loc[1, "ratio_mean"] + 2.0) < 1e-9 and f.loc[1, "ratio_high"] < 0
    fig = site.forest_plot(f, "X")
    assert fig is not None and len(fig.axes[0].get_yticklabels()) == 2
    assert site.forest_plot(f.iloc[0:0], "X") is None
    assert site.forest_plot(site.forest_rows(rows, {}), "X") is None  # a paper without evidence (a partial profile)


def test_a_paper_page_numbers_its_claims_and_keeps_the_details_behind_a_click():
    text = site.ledger_html(_ledger(), numbered=True, shown=[c for c in site.LEDGER_SHOWN if c != "paper"])
    assert "<td>1. A beats B<details><summary>details</summary>" in text and '<th class="col-paper">' not in text
    assert "<dt>condition</dt><dd>needs 1,000 iterations</dd>" in text


def test_the_browser_check_fails_on_a_broken_link_a_request_off_the_machine_and_a_table_wider_than_its_column(tmp_path):
    from compendium.pipeline import sitecheck

    site_dir = tmp_path / "site"
    site_dir.mkdir()
    wide = "<table><tr>" + "".join(f"<td>{'x' * 40}{i}</td>" for i in range(12)) + "</tr></table>"
    (site_dir / "index.html").write_text(
        '<html><body><article style="width:600px">'
        f'{wide}<a href="missing.html">m</a><a href="ok.html">o</a>'
        '<img src="https://example.org/x.png"></article></body></html>'
    )
    (site_dir / "ok.html").write_text("<html><body><article><table><tr><td>1</td></tr></table></article></body></html>")
    rep = sitecheck.check(site_dir, screenshot=tmp_path / "shot.png")
    text = "\n".join(rep.problems)
    assert "index.html: broken link missing.html" in text and "request to the internet" in text
    assert "index.html: a table" in text and "in a column of 600 px" in text
    assert "ok.html: a table" not in text and rep.tables == 2 and (tmp_path / "shot.png").is_file()


def test_the_faithful_ledger_has_its_page_beside_the_default_one_with_each_stages_minutes():
    page = site.faithful_page(_ledger(), {"dd_labels": 23.9, "theory_pca": 0.3})
    assert page.startswith("# The faithful ledger") and "2 claims" in page
    assert "`dd_labels` 23.9 min, `theory_pca` 0.3 min" in page and 'id="ledger-faithful"' in page
    # a declared claim whose stage has not run at this scale is counted, not listed
    unrun = _ledger().assign(check="a check")
    unrun.loc[1, "check"] = claims_ledger.NOT_RUN
    page = site.faithful_page(unrun, {"dd_labels": 23.9})
    assert "1 claims" in page and "The 1 claims whose stages have not run at this scale are left out" in page
    home = site.home_page(_ledger(), ["rela_budget"], faithful=True)
    assert "[the faithful ledger](faithful.md)" in home and "faithful" in home.split(":hidden:")[-1]


def test_text_from_the_records_is_escaped_on_every_page():
    """A headline field or a ledger paper name with markup renders as text, never as HTML, a link or a role."""
    evil = "<script>alert(1)</script> [x](http://e) {role}`a`"
    h = {
        "scale": "cpu",
        "rows": [
            {"family": "rela", "paper": "ReLA", "what": evil, "ours": 1.0, "paper_value": 2.0, "paper_setting": "a|b"}
        ],
    }
    led = _ledger()
    led.loc[led.index[0], "paper"] = evil
    for page in (
        site.home_page(led, ["rela_budget"], h),
        site.paper_page("ReLA", led, Path("/nonexistent"), h),
        site.paper_page(evil, led, Path("/nonexistent"), h),
    ):
        assert "<script>" not in page and " [x](http://e)" not in page and " {role}`a`" not in page
        assert "\\[x\\](http://e)" in page
    assert "| a\\|b |" in site.home_page(led, ["rela_budget"], h)
    assert site.paper_page(evil, led, Path("/nonexistent"), h).startswith("# \\<script\\>")
