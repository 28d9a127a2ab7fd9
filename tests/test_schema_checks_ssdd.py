"""The parameter checks of the ssdd stages (``check(values)`` in their schema modules): a passing and a
failing case each, every message starting with its key."""

from compendium.pipeline.schemas import ssdd_distill, ssdd_eval, ssdd_teacher


def test_ssdd_teacher_free_teachers_and_sizes():
    ok = {
        "free_teachers": ["rand", "trained:priors/digits_byol.pt"],
        "train_n": 1000,
        "pool_n": 60000,
        "scale": "smoke",
    }
    assert ssdd_teacher.check(ok) == []
    errs = ssdd_teacher.check({**ok, "free_teachers": ["rand", "digits_byol"], "pool_n": 60001})
    assert len(errs) == 2 and errs[0].startswith("free_teachers:") and "digits_byol" in errs[0]
    assert errs[1].startswith("pool_n:")


def test_ssdd_distill_budget_variants_and_inits():
    ok = {"budget_n": 10, "budgets": [5, 10], "approx_variants": ["same", "ideal", "q8"], "ablation_inits": ["random"]}
    assert ssdd_distill.check(ok) == []
    errs = ssdd_distill.check({**ok, "budget_n": 20})
    assert len(errs) == 1 and errs[0].startswith("budget_n:")
    errs = ssdd_distill.check({**ok, "approx_variants": ["q0", "mlp", "bias"], "ablation_inits": ["pca", "kmeans"]})
    assert [e.split(":")[0] for e in errs] == ["approx_variants", "ablation_inits"]
    assert "'q0'" in errs[0] and "'mlp'" in errs[0] and "bias" not in errs[0].split(";")[0] and "kmeans" in errs[1]


def test_ssdd_distill_approx_names_match_the_library_parser():
    from compendium.distill import ssdd

    for name in ("same", "bias", "ideal", "q1", "q16"):
        assert ssdd_distill.approx_ok(name) and ssdd.parse_approx(name)
    for name in ("q", "q0", "qq", "mlp", "Q4"):
        assert not ssdd_distill.approx_ok(name)


def test_ssdd_eval_archs_must_include_convnet():
    assert ssdd_eval.check({"archs": ["convnet", "vgg11"]}) == []
    errs = ssdd_eval.check({"archs": ["vgg11"]})
    assert len(errs) == 1 and errs[0].startswith("archs:")
