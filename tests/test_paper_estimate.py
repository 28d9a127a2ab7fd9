"""The paper profile's time table (``compendium.pipeline.paper_estimate``): the model on made-up inputs, and the
README's table is the one the repository's measurements give."""

import doctest

from compendium.pipeline import faithful as F
from compendium.pipeline import paper_estimate as P

CPU_ROWS = [{"loop": "student", "variant": "convnet", "shape": "cpu", "device": "cpu", "seconds_per_step": 0.02}]
GPU_ROWS = [
    {"loop": "student", "variant": "convnet", "shape": "paper", "device": "H", "seconds_per_step": 0.004},
    {"loop": "student", "variant": "convnet", "shape": "cpu", "device": "H", "seconds_per_step": 0.001},
]


def test_doctest():
    assert doctest.testmod(P).failed == 0


def test_a_gpu_loop_scales_by_its_step_times_and_a_cpu_loop_by_its_work_only():
    cpu = {
        "dd_kip": F.Measured(
            3.0, {"seeds": [0, 1], "eval_steps": 75, "iterations": 50, "krr_seeds": [0], "kernels": ["fc"]}, "x"
        ),
        "dd_text": F.Measured(
            4.0,
            {
                "seeds": [0],
                "eval_steps": 100,
                "full_steps": 0,
                "distill_seeds": [0],
                "iterations": 10,
                "lstm_iterations": 10,
                "epochs": 1,
            },
            "x",
        ),
        "dd_tables": F.Measured(None, {}, "not measured"),
    }
    paper = {
        "dd_kip": {"seeds": [0, 1, 2], "eval_steps": 2000, "iterations": 1000, "krr_seeds": [0], "kernels": ["fc"]},
        "dd_text": {
            "seeds": [0],
            "eval_steps": 100,
            "full_steps": 0,
            "distill_seeds": [0],
            "iterations": 20,
            "lstm_iterations": 20,
            "epochs": 1,
        },
    }
    rows = {r.stage: r for r in P.estimate(["dd_kip", "dd_text", "dd_tables"], paper, cpu, CPU_ROWS, GPU_ROWS)}
    kip = rows["dd_kip"]  # work 3 x 2000 / (2 x 75) = 40x; the paper-shape GPU step over the cpu-shape CPU one: 0.2
    assert kip.ratio == 40.0 and kip.case == "student/convnet" and abs(kip.minutes - 3.0 * 40 * 0.2) < 1e-9
    text = rows["dd_text"]  # no GPU case: its 2-core time times the work (2x the distillation)
    assert text.case == "" and text.cpu_step is None and abs(text.minutes - 8.0) < 1e-9
    assert rows["dd_tables"].minutes is None
    md = P.markdown(list(rows.values()), "H")
    assert "| dd_kip |" in md and "24.0 min" in md and "8.0 min" in md
    block = P.readme_block(list(rows.values()), "H")
    assert block.startswith(P.START) and block.endswith(P.END) and "`dd_tables`" not in block


def test_the_readme_states_the_time_table_of_the_repository_as_it_stands():
    readme = P.PAGE.read_text()
    want = P.readme_block(*P.current()[:2])
    assert want in readme, (
        "the README's paper time table is stale: python -m compendium.pipeline.paper_estimate --write"
    )


def _rows(points, device="H"):
    """GPU timing and count rows of made-up loops: (name, ops, flops, seconds)."""
    gpu = [
        {"loop": n, "variant": n, "shape": "paper", "device": device, "seconds_per_step": t} for n, _, _, t in points
    ]
    counts = [
        {"loop": n, "variant": n, "shape": "paper", "ops_per_step": o, "flops_per_step": f} for n, o, f, _ in points
    ]
    return gpu, counts


def test_the_step_model_recovers_a_known_latency_and_rate():
    a, rate = 12e-6, 40e12  # 12 µs per operator, 40 TFLOP/s
    pts = [
        (f"l{i}", o, f, o * a + f / rate)
        for i, (o, f) in enumerate([(100, 1e9), (2000, 5e10), (800, 4e11), (5000, 2e9), (300, 8e11)])
    ]
    m = P.fit_step_model(*_rows(pts))
    assert m.points == 5 and abs(m.seconds_per_op / a - 1) < 1e-6 and abs(m.flops_per_second / rate - 1) < 1e-6
    assert max(abs(e) for e in m.loo) < 1e-6  # exact data: every left-out point is predicted
    assert abs(m.predict(1000, 4e10) - (1000 * a + 4e10 / rate)) < 1e-12
    assert P.fit_step_model(*_rows(pts[:2])) is None  # fewer than three timed, counted loops
    cpu_only = _rows(pts, device="cpu")  # CPU-timed rows are no GPU's timings
    assert P.fit_step_model(*cpu_only) is None
    noisy = [(n, o, f, t * (1.3 if n == "l1" else 1.0)) for n, o, f, t in pts]
    assert max(abs(e) for e in P.fit_step_model(*_rows(noisy)).loo) > 0.05  # the error shows when a point is off


def test_a_stage_without_a_gpu_timing_takes_its_modelled_step():
    cpu = {
        "dd_unrolled": F.Measured(
            6.0,
            {
                "iterations": 100,
                "steps": 10,
                "epochs": 2,
                "sl_iterations": 1,
                "sl_epochs": 1,
                "sl_sizes": [1],
                "pretrain_steps": 1,
                "pool_size": 1,
                "pool_eval": 1,
                "poison_iterations": 1,
                "poison_pool": 1,
                "ref_steps": 1,
            },
            "x",
        )
    }
    paper = {"dd_unrolled": dict(cpu["dd_unrolled"].values, iterations=300, epochs=3)}
    cpu_rows = [{"loop": "dd", "variant": "dd", "shape": "cpu", "device": "cpu", "seconds_per_step": 0.2}]
    plain = P.estimate(["dd_unrolled"], paper, cpu, cpu_rows, [])[0]
    assert plain.case == "" and abs(plain.minutes - 6.0 * 4.5) < 1e-9  # no timing, no model: 2-core time x work
    row = P.estimate(["dd_unrolled"], paper, cpu, cpu_rows, [], {("dd", "dd"): 0.05})[0]
    assert row.modelled and row.case == "dd/dd" and abs(row.minutes - 6.0 * 4.5 * 0.25) < 1e-9
    assert "dd/dd (modelled)" in P.readme_block([row], "H")
    # where another part outgrows the modelled loop (the pools' pre-training at paper scale), no model applies
    pools = {"dd_unrolled": dict(paper["dd_unrolled"], pretrain_steps=1000)}
    other = P.estimate(["dd_unrolled"], pools, cpu, cpu_rows, [], {("dd", "dd"): 0.05})[0]
    assert not other.modelled and other.keys.startswith("pretrain_steps") and other.case == ""
    md = P.markdown([other], "H", P.StepModel(1e-5, 1e13, 3, (0.1,)), {("dd", "dd"): 0.05}, cpu_rows)
    assert "| dd/dd | 0.2 s | 0.05 s |" in md
