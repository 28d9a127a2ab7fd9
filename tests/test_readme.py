from compendium.pipeline import claims, readme


def test_readme_results_block_is_what_the_ledger_says():
    """The README's results block equals the one rendered from reports/claims.csv: rerun the
    pipeline, then `python -m compendium.pipeline.readme`, and commit both."""
    assert readme.current(readme.README.read_text()) == readme.block(readme.read_ledger())


def test_block_counts_the_ledger():
    rows = [claims.Claim("ReLA", "v", "a", "c", "x", verdict="holds", ours="1", scale="cpu"),
            claims.Claim("DC", "v", "b", "c", "x", ours="1", scale="cpu",
                         **claims.not_tested([claims.reached("iterations", 10, 1000, "1,000 iterations")]))]
    b = readme.block(claims.to_frame(rows))
    assert "**2 claims checked at `cpu` scale; 1 of them tested" in b
    assert b.startswith(readme.START) and b.endswith(readme.END)
