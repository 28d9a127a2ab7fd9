"""The unrolled stages' cross-key parameter checks (``schemas.<stage>.check``): one passing and one failing case
per check, each message starting with its key."""

from compendium.pipeline.schemas import dd_gtn, dd_labels, dd_mnemonics, dd_unrolled

UNROLLED = {
    "arch": "lenet",
    "init": "xavier",
    "size": 20,
    "steps": 2,
    "sl_sizes": [5, 10],
    "d_A": 50,
    "poison_attacked": 7,
    "poison_target": 5,
}


def test_dd_unrolled_checks_each_key():
    assert dd_unrolled.check(UNROLLED) == []
    cases = {
        "arch": "resnet",
        "init": "orthogonal",
        "size": 21,
        "sl_sizes": [0, 10],
        "d_A": 0,
        "poison_target": 7,
        "regimes": ["random", "random_pretrained"],
    }
    for key, value in cases.items():
        (msg,) = dd_unrolled.check(dict(UNROLLED, **{key: value}))
        assert msg.startswith(f"{key}:"), msg
    (msg,) = dd_unrolled.check(dict(UNROLLED, size=5, steps=5))  # splits, but < 1 image per class
    assert msg.startswith("size:")
    (msg,) = dd_unrolled.check(dict(UNROLLED, poison_attacked=10))
    assert msg.startswith("poison_attacked:") and "0..9" in msg


def test_dd_labels_needs_the_distillation_setup_in_the_grid():
    ok = {"step_mults": [0.5, 1.0], "arch": "lenet", "archs": ["lenet", "mlp"]}
    assert dd_labels.check(ok) == []
    (msg,) = dd_labels.check(dict(ok, step_mults=[0.5, 2.0]))
    assert msg.startswith("step_mults:")
    (msg,) = dd_labels.check(dict(ok, archs=["mlp"]))
    assert msg.startswith("archs:") and "'lenet'" in msg


def test_dd_unrolled_and_dd_labels_take_28_px_digit_like_datasets():
    for mod, ok in ((dd_unrolled, UNROLLED), (dd_labels, {"step_mults": [1.0], "arch": "lenet", "archs": ["lenet"]})):
        assert mod.check(dict(ok, dataset="mnist", data_root="../datasets")) == []
        (msg,) = mod.check(dict(ok, dataset="cifar10", data_root="../datasets"))
        assert msg.startswith("dataset:") and "mnist" in msg
        (msg,) = mod.check(dict(ok, dataset="mnist", data_root=""))
        assert msg.startswith("data_root:")


def test_dd_gtn_checks_learners_batch_and_truncation():
    ok = {
        "learners": ["w8-d2-relu-instance-avg", "w8-d1-relu-none-max"],
        "inner_batch": 20,
        "truncate": 0,
        "inner_steps": 3,
    }
    assert dd_gtn.check(ok) == []
    (msg,) = dd_gtn.check(dict(ok, learners=["w8-d2-relu-batch-avg"]))
    assert msg.startswith("learners:") and "BatchNorm" in msg
    (msg,) = dd_gtn.check(dict(ok, inner_batch=25))
    assert msg.startswith("inner_batch:")
    (msg,) = dd_gtn.check(dict(ok, truncate=4))
    assert msg.startswith("truncate:")
    assert dd_gtn.check(dict(ok, truncate=3)) == []


def test_dd_mnemonics_needs_each_compared_method_once():
    second = {"protocol_methods": ["random", "herding", "dc", "dsa", "none"], "protocol_memory": 1}
    phases = {"dataset": "fashion-mnist", "data_root": "", "base_classes": 5, "increment": 1, "phase_increments": [5]}
    ok = {"methods": ["random", "herding", "mnemonics", "dc"], **second, **phases}
    assert dd_mnemonics.check(ok) == []
    (msg,) = dd_mnemonics.check({**ok, "methods": ["random", "herding", "mnemonics", "random"]})
    assert msg.startswith("methods:") and "repeat" in msg
    (msg,) = dd_mnemonics.check({**ok, "methods": ["random", "dc"]})
    assert msg.startswith("methods:") and "'herding'" in msg and "'mnemonics'" in msg
    # the second pass: dd_dc_arch's sets hold one image per class, and the DC row needs herding and DC
    (msg,) = dd_mnemonics.check({**ok, "protocol_memory": 5})
    assert msg.startswith("protocol_memory:") and "set it to 1" in msg
    assert dd_mnemonics.check({**ok, "protocol_memory": 5, "protocol_methods": ["random", "herding", "none"]}) != []
    (msg,) = dd_mnemonics.check({**ok, "protocol_methods": ["random", "dsa"]})
    assert msg.startswith("protocol_methods:") and "'herding'" in msg
    (msg,) = dd_mnemonics.check({**ok, "protocol_methods": ["random", "herding", "dc", "dc"]})
    assert "repeat" in msg
    assert dd_mnemonics.check({**ok, "protocol_methods": [], "protocol_memory": 5}) == []
    (msg,) = dd_mnemonics.check({**ok, "phase_increments": [2]})  # 5 classes after phase 0 do not split into 2s
    assert msg.startswith("phase_increments: 2 does not split the 5 classes")
