import json

import pandas as pd
import pytest
import yaml

from compendium.core import paths
from compendium.pipeline import summary


def test_number_reads_the_leading_value_of_a_printed_cell():
    assert summary.number("**<u>77.1 (1 seed)</u>**") == 77.1
    assert summary.number("66.8 ± 3.7 (5 seeds)") == 66.8
    assert summary.number("43.66 / 23.76 / 19.26", part=1) == 23.76
    assert summary.number("") is None and summary.number("–") is None
    assert summary.number("1 / 2", part=5) is None


def _table(reports, stage, name, text):
    d = reports / paths.TABLES / stage
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{name}.csv").write_text(text)


def test_a_cell_names_the_file_and_the_stage_that_makes_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="dvc repro dd_tables"):
        summary.Cell("dd_tables", "classic", "method", "DC", "ipc 10").read(tmp_path)
    _table(tmp_path, "dd_tables", "classic", "method,ipc 10\nDC,70.5 ± 0.4\nDC,1\n")
    with pytest.raises(KeyError, match="no column 'ipc 50'"):
        summary.Cell("dd_tables", "classic", "method", "DC", "ipc 50").read(tmp_path)
    with pytest.raises(KeyError, match="2 rows"):
        summary.Cell("dd_tables", "classic", "method", "DC", "ipc 10").read(tmp_path)
    # FIRST: the column's first value (ssdd_eval's own dataset: CIFAR-100 at the paper scale)
    _table(tmp_path, "ssdd_eval", "table1", "target,method,ConvNet\ncifar100,SSDD,40.0\ndigits,SSDD,60.0\n")
    on = (("target", summary.FIRST),)
    assert summary.Cell("ssdd_eval", "table1", "method", "SSDD", "ConvNet", also=on).read(tmp_path) == 40.0


def test_build_reads_every_headline_from_the_stages_tables(tmp_path):
    for h in summary.HEADLINES:
        for c in (h.ours, h.theirs):
            f = tmp_path / paths.TABLES / c.stage / f"{c.table}.csv"
            cols = [c.key, *(k for k, _ in c.also), c.column]
            df = pd.read_csv(f, dtype=str, keep_default_na=False) if f.is_file() else pd.DataFrame()
            row = {c.key: c.value, **dict(c.also)}
            match = (
                df[(df[list(row)] == pd.Series(row)).all(axis=1)]
                if len(df) and set(row) <= set(df.columns)
                else df.iloc[0:0]
            )
            if len(match):
                df.loc[match.index, c.column] = "12.5 / 7.0" if c.part else "12.5 ± 1.0"
            else:
                df = pd.concat([df, pd.DataFrame([{**row, c.column: "42.0 (1 seed)"}])], ignore_index=True)
            for col in cols:
                if col not in df.columns:
                    df[col] = ""
            f.parent.mkdir(parents=True, exist_ok=True)
            df.to_csv(f, index=False)
    (tmp_path / "claims.csv").write_text(
        "paper,verdict,tested,scale,stage\nReLA,holds,yes,cpu,rela_budget\nDC,not tested at this "
        "scale,no,cpu,dd_matching\n"
        "ReLA,fails,yes,cpu,theory_samples\n"
    )
    nb = tmp_path / paths.EXECUTED
    nb.mkdir(parents=True)
    (nb / "rela_budget.ipynb").write_text(json.dumps({"metadata": {"papermill": {"duration": 180.0}}}))
    (nb / "dd_kip.ipynb").write_text(json.dumps({"metadata": {"papermill": {"duration": 30.0}}}))
    r = summary.build(tmp_path)
    fam = r["families"]
    assert fam["rela"] == {
        "claims": 1,
        "tested": 1,
        "holds": 1,
        "fails": 0,
        "conditional": 0,
        "inconclusive": 0,
        "not_tested": 0,
        "headline_ours": fam["rela"]["headline_ours"],
        "headline_paper": fam["rela"]["headline_paper"],
    }
    assert r["results"]["rela"]["rela_budget:table1"]["10%"]["BYOL"] == 42.0  # every cell of the result tables
    assert fam["labelled"]["not_tested"] == 1 and fam["theory"]["fails"] == 1
    assert "headline_ours" not in fam["unrolled"]  # no headline row: the keys are absent, not null
    assert set(r["headlines"]) == {"scale", "rows"}  # the measured minutes are the timings record's
    assert all(row["ours"] is not None and row["paper_value"] is not None for row in r["headlines"]["rows"])
    out = summary.write(r, tmp_path)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [f"{f}.json" for f in summary.FAMILIES] + ["headlines.json", "ior_hlr.csv", summary.RESULTS_FILE]
    )
    assert summary.read(tmp_path) == json.loads(json.dumps(r["headlines"]))
    assert list(summary.headline_table(r["headlines"]).columns)[2] == "ours (Fashion-MNIST, cpu)"


def test_a_partial_run_leaves_out_the_headlines_of_stages_it_did_not_run(tmp_path):
    (tmp_path / "claims.csv").write_text("paper,verdict,tested,scale,stage\nLD,holds,yes,faithful,dd_labels\n")
    with pytest.raises(FileNotFoundError, match="is missing"):
        summary.build(tmp_path)  # the default pipeline: a missing table is an error
    r = summary.build(tmp_path, partial=True)  # a piece of the faithful profile: left out
    assert r["headlines"]["rows"] == [] and r["families"]["unrolled"]["claims"] == 1


def test_every_metrics_file_has_the_same_keys_so_dvc_metrics_show_stays_narrow():
    keys = set(summary.verdict_counts(pd.DataFrame({"verdict": [], "tested": []})))
    assert keys == {"claims", "tested", "holds", "fails", "conditional", "inconclusive", "not_tested"}


def test_every_stage_is_in_one_family():
    stages = yaml.safe_load(paths.DVC_YAML.read_text())["stages"]
    for st in stages:
        if st in ("clean_notebooks", "claims_ledger", "summary"):  # they write no claim rows
            continue
        assert summary.family(st) in summary.FAMILIES
    with pytest.raises(KeyError, match="no family"):
        summary.family("nonsense")


def test_the_summary_stage_depends_on_its_tables_only_and_declares_the_metrics():
    """Its deps are files in git, never a DVC-cached executed notebook: a clone without the cache reruns
    a few stages and then the summary."""
    stage = yaml.safe_load(paths.DVC_YAML.read_text())["stages"]["summary"]
    deps = set(stage["deps"])
    assert {f"reports/tables/{h.ours.stage}" for h in summary.HEADLINES} <= deps
    assert {f"reports/tables/{h.theirs.stage}" for h in summary.HEADLINES} <= deps
    assert not {d for d in deps if d.startswith("reports/notebooks/")}
    assert "reports/claims.csv" in deps
    assert {f"reports/tables/{st}" for st in summary.IOR_HLR_STAGES} <= deps
    assert {"reports/summary/ior_hlr.csv"} <= {next(iter(o)) for o in stage["outs"]}
    metrics = {next(iter(m)) for m in stage["metrics"]}
    assert metrics == {f"reports/summary/{f}.json" for f in summary.FAMILIES} | {
        f"reports/summary/{summary.RESULTS_FILE}"
    }
    every = yaml.safe_load(paths.DVC_YAML.read_text())["stages"]
    others = [s for n, s in every.items() if n != "summary" and isinstance(s, dict) and s.get("metrics")]
    assert not others, "only the summary stage declares metrics; the stages' own files are plain outputs"


def test_ior_hlr_gathers_every_stage_table_with_its_keys_in_one_cell_column(tmp_path):
    a = tmp_path / paths.TABLES / "dd_inversion"
    a.mkdir(parents=True)
    pd.DataFrame(
        [
            {
                "method": "dwa",
                "ipc": 10,
                "student": "convnet",
                "evaluation": "teacher",
                "seeds": "0, 1, 2",
                "n": 3,
                "acc syn": 0.68,
                "acc random": 0.6,
                "acc syn hard": 0.3,
                "acc full hard": 0.8,
                "IOR": 0.08,
                "HLR": 0.5,
                "LRS": 0.4,
            }
        ]
    ).to_csv(a / "ior_hlr.csv", index=False)
    b = tmp_path / paths.TABLES / "dd_text"
    b.mkdir(parents=True)
    pd.DataFrame(
        [
            {
                "learner": "bilstm",
                "ipc": 1,
                "n": 2,
                "acc syn hard": 0.5,
                "acc full hard": 0.7,
                "HLR": 0.2,
                "note": "IOR not defined (no teacher)",
            }
        ]
    ).to_csv(b / "ior_hlr.csv", index=False)
    t = summary.ior_hlr(tmp_path)
    assert list(t["stage"]) == ["dd_inversion", "dd_text"]  # the order of IOR_HLR_STAGES; absent stages skipped
    assert t.loc[0, "cell"] == "method=dwa; ipc=10; student=convnet; evaluation=teacher"
    assert t.loc[1, "cell"] == "learner=bilstm; ipc=1" and pd.isna(t.loc[1, "IOR"]) and t.loc[1, "HLR"] == 0.2
    assert list(t.columns) == ["stage", "cell", *summary.IOR_HLR_VALUES]
    assert summary.ior_hlr(tmp_path / "empty").empty


def test_the_metrics_carry_every_cell_of_the_result_tables_so_an_experiment_shows_in_a_metrics_diff(tmp_path):
    f = tmp_path / paths.TABLES / "rela_budget" / "table1.csv"
    f.parent.mkdir(parents=True)
    f.write_text(
        "budget,BYOL,+ReLA Rand.,paper BYOL\n10%,70.5 ± 2.1 (6 seeds),**<u>74.3 ± 0.9</u>**,58.3\n30%,72.0,,\n"
    )
    cells = summary.result_cells(tmp_path, "rela")
    assert cells == {"rela_budget:table1": {"10%": {"BYOL": 70.5, "+ReLA Rand.": 74.3}, "30%": {"BYOL": 72.0}}}
    assert summary.result_cells(tmp_path, "labelled") == {}  # its tables not written yet: left out
    stage = yaml.safe_load(paths.DVC_YAML.read_text())["stages"]["summary"]
    assert {f"reports/tables/{st}" for t in summary.RESULT_TABLES.values() for st, _, _ in t} <= set(stage["deps"])
