import copy

import pytest
import yaml

from compendium.pipeline import params
from compendium.pipeline.spec import Param as P
from compendium.pipeline.spec import ParamsError

SCHEMA = {
    "train": {
        "epochs": P("int", "epochs", low=1, high=1000),
        "lr": P("float", "learning rate", low=0.0),
        "arch": P("str", "backbone", choices=("conv3", "resnet18")),
        "compile": P("bool", "torch.compile"),
        "budgets": P("list[float]", "budget ratios", low=0.0, high=1.0, nonempty=True),
    }
}
GOOD = {
    "scale": "cpu",
    "train": {
        "epochs": 10,
        "lr": 1e-3,
        "arch": "conv3",
        "compile": False,
        "budgets": [0.1, 0.5],
        "scales": {"smoke": {"epochs": 1}, "paper": {"arch": "resnet18"}},
    },
}


def problems(p):
    with pytest.raises(ParamsError) as e:
        params.validate(p, SCHEMA)
    return str(e.value)


def test_good_params_pass_and_resolve_per_scale():
    params.validate(GOOD, SCHEMA)
    assert params.resolve(GOOD, "train")["epochs"] == 10
    smoke = dict(GOOD, scale="smoke")
    assert params.resolve(smoke, "train")["epochs"] == 1
    assert params.resolve(dict(GOOD, scale="paper"), "train")["arch"] == "resnet18"
    assert "scales" not in params.resolve(GOOD, "train")


def test_unknown_key_is_named_with_a_suggestion():
    p = copy.deepcopy(GOOD)
    p["train"]["epoch"] = 3
    msg = problems(p)
    assert "train.epoch: unknown key" in msg and "did you mean 'epochs'" in msg


@pytest.mark.parametrize(
    "key,value,needle",
    [
        ("epochs", "ten", "train.epochs: expected int, got str"),
        ("epochs", True, "train.epochs: expected int, got bool"),
        ("epochs", 1.5, "train.epochs: expected int, got float"),
        ("lr", "1e-3", "train.lr: expected float, got str"),
        ("compile", 1, "train.compile: expected bool"),
        ("budgets", 0.1, "train.budgets: expected a list of float"),
        ("budgets", [0.1, "x"], "train.budgets[1]: expected float"),
        ("budgets", [], "train.budgets: must not be empty"),
    ],
)
def test_wrong_type_is_named(key, value, needle):
    p = copy.deepcopy(GOOD)
    p["train"][key] = value
    assert needle in problems(p)


@pytest.mark.parametrize(
    "key,value,needle",
    [
        ("epochs", 0, "train.epochs: 0 is below the minimum 1"),
        ("epochs", 5000, "train.epochs: 5000 is above the maximum 1000"),
        ("lr", -1.0, "train.lr: -1.0 is below the minimum 0.0"),
        ("arch", "vgg", "train.arch: 'vgg' is not one of"),
        ("budgets", [0.1, 2.0], "train.budgets[1]: 2.0 is above the maximum 1.0"),
    ],
)
def test_out_of_range_is_named(key, value, needle):
    p = copy.deepcopy(GOOD)
    p["train"][key] = value
    assert needle in problems(p)


def test_missing_section_unknown_section_and_missing_key():
    assert "train: missing section" in problems({"scale": "cpu"})
    p = copy.deepcopy(GOOD)
    p["trian"] = {}
    assert "trian: unknown section (did you mean 'train'?)" in problems(p)
    p = copy.deepcopy(GOOD)
    del p["train"]["lr"]
    assert "train.lr: missing" in problems(p)


def test_only_required_sections_must_be_present():
    two = dict(SCHEMA, eval={"k": P("int", "k", low=1)})
    params.validate(GOOD, two, require={"train"})
    with pytest.raises(ParamsError, match="eval: missing section"):
        params.validate(GOOD, two)
    bad = dict(copy.deepcopy(GOOD), eval={"k": 0})
    with pytest.raises(ParamsError, match="eval.k: 0 is below"):
        params.validate(bad, two, require={"train"})


def test_unknown_scale_everywhere():
    assert "scale: unknown scale 'gpu'" in problems(dict(GOOD, scale="gpu"))
    assert "scale: missing" in problems({k: v for k, v in GOOD.items() if k != "scale"})
    p = copy.deepcopy(GOOD)
    p["train"]["scales"]["huge"] = {"epochs": 2}
    assert "train.scales.huge: unknown scale" in problems(p)


def test_overrides_are_validated():
    p = copy.deepcopy(GOOD)
    p["train"]["scales"]["smoke"] = {"epochs": 0, "nope": 1}
    msg = problems(p)
    assert "train.scales.smoke.epochs: 0 is below the minimum 1" in msg
    assert "train.scales.smoke.nope: unknown key" in msg


def test_every_problem_is_reported_at_once():
    p = copy.deepcopy(GOOD)
    p["train"]["epochs"] = "x"
    p["train"]["lr"] = -2.0
    assert "2 problem(s)" in problems(p)


def test_load_reports_bad_yaml_and_missing_file(tmp_path):
    f = tmp_path / "params.yaml"
    f.write_text("scale: [unclosed\n")
    with pytest.raises(ParamsError, match="not valid YAML"):
        params.load(f)
    with pytest.raises(ParamsError, match="file is missing"):
        params.load(tmp_path / "nope.yaml")
    f.write_text("- a list\n")
    with pytest.raises(ParamsError, match="expected a mapping"):
        params.load(f)


def test_the_committed_params_file_is_valid_at_every_scale():
    raw = params.load()
    for scale in params.SCALES:
        params.validate(dict(raw, scale=scale))
    assert raw["scale"] == "cpu", "the committed default scale is cpu"


def test_stage_params_force_scale_and_include_it(tmp_path):
    raw = params.load()
    f = tmp_path / "p.yaml"
    f.write_text(yaml.safe_dump(raw))
    for section in params.schemas():
        got = params.stage_params(section, f, scale="smoke")
        assert got["scale"] == "smoke"
        assert set(got) == set(params.schemas()[section]) | {"scale"}


def test_cli_exit_codes(tmp_path, capsys):
    assert params.main([]) == 0
    f = tmp_path / "p.yaml"
    f.write_text("scale: cpu\n")
    assert params.main([str(f)]) == 2
    assert "missing section" in capsys.readouterr().err


def test_nan_and_infinity_are_refused_for_every_float_key():
    for bad in (float("nan"), float("inf"), -float("inf")):
        assert "not a finite number" in P("float", "x", low=0.0).check("lr", bad)[0]
        assert "not a finite number" in P("list[float]", "x").check("ws", [0.5, bad])[0]
    assert P("float", "x", low=0.0).check("lr", 0.1) == []


def test_a_key_given_twice_is_refused(tmp_path):
    from compendium.pipeline import params as prm

    f = tmp_path / "p.yaml"
    f.write_text("scale: cpu\ndata_overview:\n  dpi: 80\n  dpi: 90\n")
    with pytest.raises(ParamsError, match="duplicate key 'dpi'"):
        prm.load(f)


def test_cuda_on_a_machine_without_it_is_refused_before_compute(tmp_path, monkeypatch):
    import torch
    import yaml

    from compendium.core import paths
    from compendium.pipeline import params as prm

    p = yaml.safe_load(paths.PARAMS.read_text())
    p["dd_kip"]["device"] = "cuda"
    f = tmp_path / "params.yaml"
    f.write_text(yaml.safe_dump(p, sort_keys=False))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ParamsError, match="dd_kip.device: 'cuda' is requested"):
        prm.stage_params("dd_kip", f)


@pytest.mark.parametrize(
    "section, key, value, needle",
    [
        ("priors", "seed", 0.5, r"priors\.seed: expected int, got float 0\.5"),
        (
            "priors",
            "priors",
            ["rand", "trainde:priors/fmnist_byol.pt"],
            r"priors\.priors\[1\]: .*unknown prior kind 'trainde'",
        ),
        ("rela_arch", "priors", ["rand:resnet99"], r"rela_arch\.priors\[0\]: .*no backbone 'resnet99'"),
        (
            "rela_budget",
            "priors",
            ["torchvision:resnet18"],
            r"rela_budget\.priors\[0\]: .*torchvision:<arch>@<weights file>",
        ),
        ("rela_budget", "weight_decay", float("inf"), r"rela_budget\.weight_decay: inf is not a finite number"),
        ("rela_budget", "lr", float("nan"), r"rela_budget\.lr: nan is not a finite number"),
        ("rela_budget", "probe_epochs", 10**9, r"rela_budget\.probe_epochs: 1000000000 is above the maximum"),
        ("rela_budget", "batch_size", 10**9, r"rela_budget\.batch_size: 1000000000 is above the maximum"),
    ],
)
def test_the_hostile_inputs_of_a_fresh_clone_stop_before_compute_naming_the_key(tmp_path, section, key, value, needle):
    """Each was accepted before, and trained (or deleted checkpoints) before failing or published chance."""
    import yaml

    from compendium.core import paths
    from compendium.pipeline import params as prm

    p = yaml.safe_load(paths.PARAMS.read_text())
    p[section][key] = value
    f = tmp_path / "params.yaml"
    f.write_text(yaml.safe_dump(p, sort_keys=False))
    with pytest.raises(ParamsError, match=needle):
        prm.stage_params(section, f)
    good = P("list[str]", "x", validate=lambda v: None if v.startswith("ok") else "not ok")
    assert good.check("k", ["ok1", "ok2"]) == [] and good.check("k", ["ok", "no"]) == ["k[1]: not ok"]


def test_an_override_that_the_scale_shadows_is_named_with_the_key_to_set_instead():
    ref = copy.deepcopy(GOOD)
    run = copy.deepcopy(GOOD)
    run["scale"] = "smoke"
    run["train"]["epochs"] = 5  # dvc exp run -S train.epochs=5 at scale smoke
    run["train"]["lr"] = 0.01  # not overridden at smoke: it takes effect
    errs = params.shadowed(run, "train", ref)
    assert len(errs) == 1 and errs[0].startswith("epochs: set to 5 (the last commit has 10), but scale 'smoke' sets it")
    assert "set train.scales.smoke.epochs instead" in errs[0]
    assert params.shadowed(dict(run, scale="cpu"), "train", ref) == []  # cpu: the base values are its own
    assert params.shadowed(run, "train", None) == []  # no commit to compare with
    assert params.shadowed(copy.deepcopy(dict(ref, scale="smoke")), "train", ref) == []  # nothing changed


def test_the_committed_params_are_read_from_git_and_absent_outside_a_work_tree(tmp_path):
    import subprocess

    f = tmp_path / "params.yaml"
    f.write_text(yaml.safe_dump(GOOD))
    assert params.committed_params(f) is None  # not a git work tree
    for cmd in (
        ["init", "-q"],
        ["add", "params.yaml"],
        ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m", "x"],
    ):
        subprocess.run(["git", *cmd], cwd=tmp_path, check=True, capture_output=True)
    f.write_text(yaml.safe_dump(dict(GOOD, scale="smoke")))
    assert params.committed_params(f)["scale"] == "cpu"  # the commit's, not the workspace's


def test_a_repeated_seed_is_refused_before_compute_naming_the_key():
    raw = params.load()
    bad = dict(raw, rela_budget=dict(raw["rela_budget"], seeds=[0, 0, 1]))
    with pytest.raises(ParamsError, match=r"rela_budget\.seeds: 0 given more than once"):
        params.validate(bad)
    ok = dict(raw, rela_budget=dict(raw["rela_budget"], budgets=[0.1, 0.2]))
    params.validate(ok)


def test_a_trained_prior_named_by_its_role_resolves_to_the_file_the_priors_stage_makes_at_that_scale():
    raw = {
        "scale": "cpu",
        "priors": {"dataset": "fashion-mnist", "cross_dataset": "digits", "scales": {"paper": {"dataset": "cifar10"}}},
        "rela": {"priors": ["rand", "role:strong", "role:cross-dataset"], "same": "role:same-dataset", "width": 8},
    }
    cpu = params.resolve(raw, "rela")
    assert cpu["priors"] == ["rand", "trained:priors/fmnist_supervised.pt", "trained:priors/digits_byol.pt"]
    assert cpu["same"] == "trained:priors/fmnist_byol.pt" and cpu["width"] == 8
    paper = params.resolve(dict(raw, scale="paper"), "rela")
    assert paper["priors"][1] == "trained:priors/cifar10_supervised.pt"  # renamed with the priors stage's dataset
    with pytest.raises(ValueError, match="unknown role 'weak'"):
        params.resolve(dict(raw, rela={"priors": ["role:weak"]}), "rela")
    from compendium.rela.priors import spec_problem

    assert spec_problem("role:strong") is None and "unknown role" in spec_problem("role:weak")


def test_the_project_names_each_trained_prior_by_role_only():
    text = (params.paths.PARAMS).read_text()
    assert "trained:priors/" not in text  # every stage names the priors stage's files by role (role:<role>)


def test_a_declared_prior_is_checked_before_any_training():
    from compendium.pipeline.schemas import priors as schema

    raw = yaml.safe_load(params.paths.PARAMS.read_text())
    values = params.resolve(raw, "priors")
    assert schema.check(values) == [] and values["extra_priors"] == []
    good = {"name": "digits_byol_short", "dataset": "digits", "epochs": 5}
    made = dict(values, extra_priors=[good], priors=[*values["priors"], "trained:priors/digits_byol_short.pt"])
    assert schema.check(made) == []
    assert "named twice" in " ".join(schema.check(dict(made, extra_priors=[good, good])))
    assert "named twice" in " ".join(schema.check(dict(made, extra_priors=[dict(good, name="digits_byol")])))
    param = schema.SCHEMA["extra_priors"]
    assert param.check("priors.extra_priors", [good]) == []
    bad = param.check("priors.extra_priors", [dict(good, epochs=0), {"name": "x"}, "digits"])
    assert len(bad) == 3 and "epochs 0" in bad[0] and "exactly the keys" in bad[1] and "expected dict" in bad[2]
