import math

import pandas as pd
import pytest
import yaml

from compendium import claims, paths, report
from compendium.claims import Claim


def _row(**kw):
    base = dict(paper="ReLA", version="camera-ready", location="Thm 1", claim="c", check="mc",
                verdict="holds", ours="0.1")
    base.update(kw)
    return Claim(**base)


def test_verdicts_are_computed_and_validated():
    assert claims.verdict(True) == ("holds", "")
    assert claims.verdict(False) == ("fails", "")
    assert claims.verdict(False, True, "validated on G") == ("holds only under a condition", "validated on G")
    with pytest.raises(ValueError):
        claims.verdict(False, True)
    with pytest.raises(ValueError, match="verdict"):
        _row(verdict="mostly")
    with pytest.raises(ValueError, match="condition"):
        _row(verdict="holds only under a condition")
    with pytest.raises(ValueError, match="'ours' is empty"):
        _row(ours=" ")


def test_reporter_rows_and_ledger_roundtrip(tmp_path):
    report.Reporter("theory_a", root=tmp_path).claims([_row(location="Thm 2"), _row(verdict="fails")])
    report.Reporter("theory_b", root=tmp_path).claims([_row(paper="DWA", ours="x, y; z")])
    df = claims.read_all(tmp_path / paths.CLAIMS)
    assert list(df.columns) == list(claims.COLUMNS)
    assert df["stage"].tolist() == ["theory_a", "theory_a", "theory_b"]
    assert df.loc[2, "ours"] == "x, y; z"
    (tmp_path / paths.CLAIMS / "bad.csv").write_text(pd.DataFrame([{"paper": "x"}]).to_csv(index=False))
    with pytest.raises(ValueError, match="lacks columns"):
        claims.read_all(tmp_path / paths.CLAIMS)


def test_every_claims_file_feeds_the_ledger_stage():
    dvc = yaml.safe_load(paths.DVC_YAML.read_text())
    deps = set(dvc["stages"]["claims_ledger"]["deps"])
    for name, stage in dvc["stages"].items():
        for out in stage.get("outs", []):
            path = out if isinstance(out, str) else next(iter(out))
            if path.startswith("reports/claims/"):
                assert path in deps, f"{name} writes {path}, which claims_ledger does not depend on"


def test_margin_verdict_separates_holds_fails_and_noise():
    noise = claims.pooled_noise([0.01, 0.01], n_seeds=2)
    assert abs(noise - 0.01) < 1e-12  # sigma * sqrt(2 / 2)
    assert claims.margin_verdict_kw([0.02, 0.03], noise)["verdict"] == "holds"
    assert claims.margin_verdict_kw([0.02, -0.02], noise)["verdict"] == "fails"
    assert claims.margin_verdict_kw([0.02, 0.005], noise)["verdict"] == claims.WITHIN_NOISE
    assert claims.margin_verdict_kw([-0.005], noise)["verdict"] == claims.WITHIN_NOISE
    # averaging L differences shrinks the noise by sqrt(L)
    assert abs(claims.pooled_noise([0.02], 2, n_averaged=4) - 0.01) < 1e-12
    # one seed: no noise estimate, the sign decides
    assert math.isnan(claims.pooled_noise([0.01], n_seeds=1))
    assert claims.margin_verdict_kw([0.001], float("nan"))["verdict"] == "holds"
    assert claims.margin_verdict_kw([-0.001], float("nan"))["verdict"] == "fails"
    with pytest.raises(ValueError):
        claims.margin_verdict_kw([float("nan")], noise)
    Claim("P", "v", "loc", "c", "check", ours="x", **claims.margin_verdict_kw([0.0], noise))  # a valid row
