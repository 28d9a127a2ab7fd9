"""The paper profile's time table (``compendium.pipeline.paper_estimate``): the model on made-up inputs, and the
README's table is the one the repository's measurements give."""

import doctest

from compendium.core import paths
from compendium.pipeline import faithful as F
from compendium.pipeline import paper_estimate as P

CPU_ROWS = [{"loop": "student", "variant": "convnet", "shape": "cpu", "device": "cpu", "seconds_per_step": 0.02}]
GPU_ROWS = [{"loop": "student", "variant": "convnet", "shape": "paper", "device": "H", "seconds_per_step": 0.004},
            {"loop": "student", "variant": "convnet", "shape": "cpu", "device": "H", "seconds_per_step": 0.001}]


def test_doctest():
    assert doctest.testmod(P).failed == 0


def test_a_gpu_loop_scales_by_its_step_times_and_a_cpu_loop_by_its_work_only():
    cpu = {"dd_kip": F.Measured(3.0, {"seeds": [0, 1], "eval_steps": 75, "iterations": 50, "krr_seeds": [0], "kernels": ["fc"]}, "x"),
           "dd_text": F.Measured(4.0, {"seeds": [0], "eval_steps": 100, "full_steps": 0, "distill_seeds": [0],
                                       "iterations": 10, "lstm_iterations": 10, "epochs": 1}, "x"),
           "dd_tables": F.Measured(None, {}, "not measured")}
    paper = {"dd_kip": {"seeds": [0, 1, 2], "eval_steps": 2000, "iterations": 1000, "krr_seeds": [0], "kernels": ["fc"]},
             "dd_text": {"seeds": [0], "eval_steps": 100, "full_steps": 0, "distill_seeds": [0], "iterations": 20,
                         "lstm_iterations": 20, "epochs": 1}}
    rows = {r.stage: r for r in P.estimate(["dd_kip", "dd_text", "dd_tables"], paper, cpu, CPU_ROWS, GPU_ROWS)}
    kip = rows["dd_kip"]   # work 3 x 2000 / (2 x 75) = 40x; the paper-shape GPU step over the cpu-shape CPU one: 0.2
    assert kip.ratio == 40.0 and kip.case == "student/convnet" and abs(kip.minutes - 3.0 * 40 * 0.2) < 1e-9
    text = rows["dd_text"]  # no GPU case: its 2-core time times the work (2x the distillation)
    assert text.case == "" and text.cpu_step is None and abs(text.minutes - 8.0) < 1e-9
    assert rows["dd_tables"].minutes is None
    md = P.markdown(list(rows.values()), "H")
    assert "| dd_kip |" in md and "24.0 min" in md and "8.0 min" in md
    block = P.readme_block(list(rows.values()), "H")
    assert block.startswith(P.START) and block.endswith(P.END) and "`dd_tables`" not in block


def test_the_readme_states_the_time_table_of_the_repository_as_it_stands():
    readme = (paths.ROOT / "README.md").read_text()
    want = P.readme_block(*P.current())
    assert want in readme, "the README's paper time table is stale: python -m compendium.pipeline.paper_estimate --write"
