import json
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from compendium.core import paths
from compendium.pipeline import report  # noqa: E402


def _fig():
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1, 2], [1, 0, 1])
    return fig


def test_figures_are_byte_stable_and_lean(tmp_path):
    a = report.Reporter("s", root=tmp_path / "a", dpi=100)
    b = report.Reporter("s", root=tmp_path / "b", dpi=100)
    fig = _fig()
    pa, pb = a.figure(fig, "f"), b.figure(fig, "f")
    plt.close(fig)
    assert pa.read_bytes() == pb.read_bytes()
    assert pa.with_suffix(".pdf").read_bytes() == pb.with_suffix(".pdf").read_bytes()
    assert pa == tmp_path / "a" / "figures" / "s" / "f.png"
    with pytest.raises(ValueError, match="150"):
        report.Reporter("s", root=tmp_path, dpi=300)


def test_tables_metrics_and_plot_data(tmp_path):
    r = report.Reporter("s", root=tmp_path)
    df = pd.DataFrame({"x": [1, 2], "acc": [0.123456, 0.5]})
    csv = r.table(df, "t")
    assert csv.read_text().splitlines()[1] == "1,0.1235"
    md = csv.with_suffix(".md").read_text()
    assert md.startswith("|") and "acc" in md and "0.1235" in md
    long = r.table(pd.DataFrame({"step": range(report.MARKDOWN_ROWS + 1), "loss": 0.5}), "curve")
    assert (
        long.with_suffix(".md").read_text()
        == f"{report.MARKDOWN_ROWS + 1:,} rows (columns: step, loss): see `curve.csv`.\n"
    )
    assert len(long.read_text().splitlines()) == report.MARKDOWN_ROWS + 2
    m = r.metrics({"acc": np.float32(0.5), "bad": math.nan, "nested": {"k": [np.int64(3)]}})
    assert json.loads(m.read_text()) == {"acc": 0.5, "bad": None, "nested": {"k": [3]}}
    assert r.plot_data(df, "p") == tmp_path / "plots" / "s" / "p.csv"


def test_a_table_keeps_its_wall_clock_columns_out_of_the_tables_other_stages_read(tmp_path):
    r = report.Reporter("s", root=tmp_path)
    df = pd.DataFrame({"method": ["dc", "dm"], "acc": [0.5, 0.6], "train seconds": [12.5, 3.25], "peak MB": [9.0, 8.0]})
    csv = r.table(df, "results")
    assert csv.read_text() == "method,acc\ndc,0.5\ndm,0.6\n"
    assert "seconds" not in csv.with_suffix(".md").read_text() and "peak" not in csv.with_suffix(".md").read_text()
    measured = pd.read_csv(tmp_path / "timings" / "s" / "results.csv")
    assert measured.columns.tolist() == df.columns.tolist() and measured["train seconds"].tolist() == [12.5, 3.25]
    r.table(df.drop(columns=["train seconds", "peak MB"]), "plain")  # nothing volatile: no timings file
    assert not (tmp_path / "timings" / "s" / "plain.csv").exists()


def test_default_root_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.OUTPUT_ROOT_ENV, str(tmp_path / "x"))
    assert report.Reporter("s").root == (tmp_path / "x").resolve()
    monkeypatch.delenv(paths.OUTPUT_ROOT_ENV)
    assert report.Reporter("s").root == paths.BUILD / "interactive"


def test_provenance_has_versions():
    p = report.provenance()
    assert {"git_commit", "torch", "python"} <= set(p)


def test_markdown_table_escapes_pipes_so_rows_keep_their_columns():
    import pandas as pd

    from compendium.core.tables import markdown_table

    df = pd.DataFrame({"|S|": [7, 16], "check": ["|MC − exact| < 4 s.e.", "plain"], "x": [0.5, 1.25]})
    md = markdown_table(df)
    lines = md.splitlines()
    # every row has as many unescaped separators as the header
    counts = {line.replace("\\|", "").count("|") for line in lines}
    assert counts == {4}, md
    assert "\\|S\\|" in lines[0] and "\\|MC − exact\\|" in md
    assert "| 7 |" in md.replace("  ", " ").replace("  ", " ") or " 7 " in md
