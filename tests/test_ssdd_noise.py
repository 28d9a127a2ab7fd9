"""The SSDD evaluation-noise study: its records and the paired spread read off them."""

import pandas as pd
import pytest

from compendium.distill.ssdd import noise


def _records():
    rows = []
    for v, shift in (("a", 0.0), ("b", 0.01)):
        for seed, init in enumerate((0.60, 0.66, 0.55)):  # the student's initialisation moves every set alike
            for s, eff in (("SSDD", 0.02), ("KRR-ST", 0.01), ("Random", 0.0), ("untrained", -0.01 * seed)):
                rows.append(
                    {
                        "variant": v,
                        "set": s,
                        "seed": seed,
                        "acc fashion-mnist": init + eff + shift * seed,
                        "seconds": 1.0,
                    }
                )
    return pd.DataFrame(rows)


def test_the_paired_spread_removes_what_every_set_shares():
    sp = noise.paired_spread(_records()).set_index(["variant", "comparison"])
    row = sp.loc[("a", "SSDD − KRR-ST")]
    assert row["seeds"] == 3 and row["mean difference"] == pytest.approx(1.0)
    assert row["sd of paired differences"] == pytest.approx(0.0, abs=1e-9)  # the init's spread cancels
    assert row["sd of SSDD"] == pytest.approx(pd.Series([62.0, 68.0, 57.0]).std())
    assert sp.loc[("a", "SSDD − untrained"), "sd of paired differences"] == pytest.approx(1.0)


def test_record_files_are_one_per_variant_and_seed(tmp_path):
    names = {noise.record_file(v, s, tmp_path).name for v in noise.VARIANTS for s in (0, 1)}
    assert len(names) == 2 * len(noise.VARIANTS)
    _records().to_csv(noise.record_file("a", 0, tmp_path), index=False)
    assert len(noise.load(tmp_path)) == len(_records())
