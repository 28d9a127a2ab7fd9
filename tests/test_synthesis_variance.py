"""benchmarks/synthesis_variance.py: its arms are dd_inversion's (from params.yaml), and its page reports each
comparison per synthesis and across syntheses."""

from compendium.distill import inversion as I
from compendium.pipeline import params
from conftest import benchmark_script


def _script():
    return benchmark_script("synthesis_variance")


def test_the_arms_are_dd_inversions_ladder_at_its_cpu_settings():
    sv = _script()
    v = params.resolve(dict(params.load(), scale="cpu"), "dd_inversion")
    a = sv.arms(v)
    assert a["sre2l"][0] is I.sre2l_synthesize and a["dwa"][0] is I.dwa_synthesize
    assert a["dwa"][1]["r_var"] == v["dwa_r_var"] and a["E"][1]["init"] == "real" and "weight_adjust" not in a["E"][1]
    assert a["F"][1]["weight_adjust"] == "random" and a["G"][1] == a["dwa"][1]
    assert all(kw["iterations"] == v["iterations"] for _, kw in a.values())
    assert {x for _, _, x, y in sv.COMPARISONS} | {y for _, _, x, y in sv.COMPARISONS} <= set(a)


def test_the_page_shows_each_synthesis_and_the_spread():
    sv = _script()
    out = {
        "settings": {"iterations": 1000, "eval_width": 16, "eval_steps": 300, "test_n": 1000, "seeds": [0, 1, 2]},
        "synthesis_seeds": [0, 1, 2],
        "teacher": "/x/convnet.pt",
        "teacher_test_acc": 0.84,
        "synthesis_seconds": 60.0,
        "eval_seconds": 30.0,
        "comparisons": [
            {
                "comparison": "Table 3: G − F",
                "ipc": 1,
                "per_synthesis": [
                    {"synthesis": u, "effect": f"x (unit {u}): +1.0 [+0.5, +1.5]", "verdict": "holds"}
                    for u in (0, 1, 2)
                ],
                "across_syntheses": {"effect": "x: +0.2 [-3.0, +3.4]", "verdict": "inconclusive"},
                "sd_within_points": 0.3,
                "sd_between_points": 1.4,
            }
        ],
    }
    page = sv.markdown(out)
    assert "| Table 3: G − F (ipc 1) |" in page and "seed 2: +1.0 [+0.5, +1.5] (holds)" in page
    assert "Table 3: G − F (ipc 1) | seed 0: +1.0" in sv.markdown(
        {
            **out,
            "comparisons": [
                dict(
                    out["comparisons"][0],
                    per_synthesis=[
                        {"synthesis": 0, "effect": "Table 3: G − F (unit 0): +1.0 [+0.5, +1.5]", "verdict": "holds"}
                    ],
                )
            ],
        }
    )
    assert "+0.2 [-3.0, +3.4] (inconclusive) | 0.30 | 1.40 |" in page
