"""The ``dd_matching`` stage's synthesis arguments (``matching.synthesis.stage_kwargs``)."""

from compendium.distill.matching import synthesis

COMMON = {"batch_real": 32, "seed": 0}
LOOPS = dict(iterations=3, dm_iterations=7, loops_ipc10=[10, 50], loops_ipc50=[50, 10], dsa_strategy="color_crop")


def test_dm_runs_its_own_iterations():
    assert synthesis.stage_kwargs("dm", 10, COMMON, **LOOPS) == {**COMMON, "iterations": 7}


def test_dc_and_dsa_loops_per_ipc():
    kw = synthesis.stage_kwargs("dc", 1, COMMON, **LOOPS)
    assert (kw["outer_loop"], kw["inner_loop"], kw["iterations"], kw["dsa_strategy"]) == (1, 1, 3, None)
    assert synthesis.stage_kwargs("dc", 50, COMMON, **LOOPS)["outer_loop"] == 50
    kw = synthesis.stage_kwargs("dsa", 20, COMMON, **LOOPS)  # an ipc without its own loops: ipc 10's
    assert (kw["outer_loop"], kw["inner_loop"], kw["dsa_strategy"]) == (10, 50, "color_crop")
    assert kw["batch_real"] == 32
