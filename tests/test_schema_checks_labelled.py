"""The labelled distillation stages' cross-key parameter checks (``schemas.<stage>.check``)."""

from compendium.pipeline import params
from compendium.pipeline.schemas import dd_crossarch, dd_dc_arch, dd_dwa, dd_inversion


def test_inversion_needs_enough_real_images_for_rded():
    smoke = params.resolve(dict(params.load(), scale="smoke"), "dd_inversion")
    ok = dict(smoke, ipcs=[1, 10], methods=["sre2l", "rded"], rded_factor=2, rded_images_per_class=40)
    assert dd_inversion.check(ok) == []
    bad = dict(ok, rded_images_per_class=39)
    (msg,) = dd_inversion.check(bad)
    assert msg.startswith("rded_images_per_class:") and "40" in msg
    assert dd_inversion.check(dict(bad, methods=["sre2l"])) == []  # no RDED, no constraint


DWA = {
    "sweep_lambdas": [0.01, 0.11],
    "sweep_ipc": 2,
    "grid_K": [1, 12],
    "grid_rho": [0.015],
    "cl_ipc": 2,
    "tsne_ipc": 10,
}


def test_dwa_checks_each_key():
    assert dd_dwa.check(DWA) == []
    cases = {"sweep_lambdas": [0.05, 0.11], "sweep_ipc": 1, "grid_rho": [0.0, 0.015], "cl_ipc": 11}
    for key, value in cases.items():
        (msg,) = dd_dwa.check(dict(DWA, **{key: value}))
        assert msg.startswith(f"{key}:"), msg
    assert len(dd_dwa.check(dict(DWA, sweep_lambdas=[0.0, 0.01], cl_ipc=20))) == 2


def test_crossarch_table4_includes_ipc():
    assert dd_crossarch.check({"ipc": 1, "table4_ipcs": [1, 10]}) == []
    (msg,) = dd_crossarch.check({"ipc": 10, "table4_ipcs": [1]})
    assert msg.startswith("table4_ipcs:")


def test_dc_arch_needs_the_default():
    assert dd_dc_arch.check({"variants": ["default", "sigmoid"]}) == []
    (msg,) = dd_dc_arch.check({"variants": ["sigmoid"]})
    assert msg.startswith("variants:")
