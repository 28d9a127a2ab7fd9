import pandas as pd

from compendium.pipeline import readme
from compendium.verdicts import ledger


def test_readme_results_block_is_what_the_pipeline_produced():
    """The README's results block equals the one rendered from reports/claims.csv,
    reports/summary/headlines.json and reports/stage_minutes.json: rerun the pipeline (`make repro` rewrites
    the block), and commit both."""
    assert readme.current(readme.README.read_text()) == readme.rendered()


def _headlines():
    return {
        "scale": "cpu",
        "rows": [
            {
                "family": "rela",
                "paper": "ReLA",
                "what": "Table 1: BYOL",
                "ours": 66.84,
                "paper_value": 58.3,
                "paper_setting": "CIFAR-10",
            }
        ],
    }


def _ledger():
    base = {c: "" for c in ledger.COLUMNS}
    return pd.DataFrame(
        [
            {**base, "id": "r.a", "paper": "ReLA", "verdict": "holds", "tested": "yes", "scale": "cpu"},
            {
                **base,
                "id": "r.b",
                "paper": "ReLA",
                "verdict": "inconclusive",
                "tested": "yes",
                "scale": "cpu",
                "verdict_all_seeds": "holds",
                "replication": "not possible: 3 seeds",
                "sesoi_source": "x",
            },
            {
                **base,
                "id": "d.a",
                "paper": "DC",
                "verdict": "not tested at this scale",
                "tested": "no",
                "scale": "cpu",
                "sesoi_source": "x",
            },
        ]
    )


def test_block_counts_the_ledger_and_shows_headlines_time_figure_and_site():
    b = readme.block(_ledger(), _headlines(), {"rela_budget": 3.0, "dd_kip": 0.5, "theory_pca": 0.25})
    assert "**3 claims checked at `cpu` scale, 2 of them comparisons of trained arms: 1 run in" in b
    assert "1 decided on all their seeds, 0 replicated" in b
    assert b.startswith(readme.START) and b.endswith(readme.END)
    assert "Table 1: BYOL" in b
    assert "66.8" in b and "58.3" in b and "**4 min**" in b
    assert readme.FIGURE in b and readme.SITE in b


def test_family_times_sum_each_family():
    t = readme.family_times({"rela_budget": 3.0, "priors": 1.5, "dd_kip": 0.5, "odd": 1.0})
    assert dict(zip(t["stages"], t["minutes"])) == {
        "ReLA (priors to ablations)": "4.5",
        "labelled distillation": "0.5",
        "the claims ledger": "1.0",
    }


def test_block_states_the_from_scratch_run_where_one_was_measured():
    rows = _ledger()
    rec = {
        "commit": "abc1234",
        "wall_minutes": 101.4,
        "notebook_minutes": 96.2,
        "machine": "2 cores, x86_64",
        "longest_stage": "dd_dwa",
        "longest_stage_minutes": 12.6,
    }
    b = readme.block(rows, _headlines(), {"rela_budget": 3.0}, rec)
    assert "fresh clone of abc1234" in b and "**101 min** of wall time on 2 cores, 96 of them" in b
    assert "`dd_dwa`, 12.6 min" in b and "benchmarks/repro_from_scratch.md" in b
    assert "fresh clone" not in readme.block(rows, _headlines(), {"rela_budget": 3.0})


def test_the_verdicts_block_names_each_papers_central_claims_and_why_one_is_not_tested():
    from compendium.verdicts.registry import Declaration, Registry

    decl = lambda i, paper, claim, headline=True: Declaration(
        i, paper, "v", "Table 1", claim, "s", "comparison", "accuracy", headline=headline
    )
    reg = Registry(
        (
            decl("r.a", "ReLA", "A beats B"),
            decl("r.b", "ReLA", "C beats D"),
            decl("d.a", "DC", "E beats F"),
            decl("x", "ReLA", "not central", headline=False),
        )
    )
    rows = _ledger()
    rows.loc[1, ["seeds", "condition", "tested", "verdict"]] = [
        "0,1,2",
        "replication on a disjoint seed set unmet (3 matched seeds); would need 6",
        "no",
        "not tested at this scale",
    ]
    rows.loc[2, ["seeds", "condition", "verdict_all_seeds"]] = [
        "0,1",
        "under-powered at this scale: the power plan asks 74 matched seeds",
        "",
    ]
    b = readme.verdict_lines(rows, reg, ["DC", "ReLA"])
    lines = b.splitlines()
    assert lines[0] == readme.VERDICTS_START and lines[-1] == readme.VERDICTS_END and len(lines) == 4
    assert lines[1].startswith(
        "- **DC**: Table 1, “E beats F”: **not tested at this scale** (under-powered: the power plan "
        "asks 74 matched seeds)"
    )
    assert "“A beats B”: **holds**;" in lines[2] and "not central" not in b
    assert "(replication on a disjoint seed set unmet; on its 3 seeds: holds)" in lines[2]


def test_readme_verdicts_block_is_what_the_ledger_and_the_registry_give():
    text = readme.README.read_text()
    assert readme.current(text, readme.VERDICTS_START, readme.VERDICTS_END) == readme.rendered_verdicts()
