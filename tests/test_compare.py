import io

import pandas as pd

from compendium.pipeline import compare

CSV = """Experiment,rev,typ,Created,rela.rela_budget:table1.30%.BYOL,rela.rela_budget:table1.50%.BYOL,rela_budget.scales.smoke.budgets
,workspace,baseline,,45.1,,"[0.1, 0.3]"
,main,baseline,2026-12-02T13:31:26,,43.0,"[0.1, 0.5]"
doped-gale,ca72444,branch_base,2026-12-02T13:33:37,45.1,,"[0.1, 0.3]"
"""


def test_experiments_go_across_and_the_changed_keys_down():
    t = compare.transpose(pd.read_csv(io.StringIO(CSV), dtype=str, keep_default_na=False))
    assert list(t.columns) == ["workspace", "main", "doped-gale"]
    assert list(t.index) == [
        "rela.rela_budget:table1.30%.BYOL",
        "rela.rela_budget:table1.50%.BYOL",
        "rela_budget.scales.smoke.budgets",
    ]
    assert t.loc["rela.rela_budget:table1.50%.BYOL"].tolist() == ["-", "43.0", "-"]  # absent: a dash, never "nan"
    assert t.loc["rela_budget.scales.smoke.budgets", "doped-gale"] == "[0.1, 0.3]"
    assert "Created" not in t.index and "typ" not in t.index


def test_no_experiment_is_an_empty_table():
    assert compare.transpose(pd.DataFrame()).empty
