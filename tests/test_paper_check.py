"""The paper-shapes check (``make paper-check``): every stage's values are the paper scale's but for its loops and
sizes; the stand-ins are read as the real datasets are (and only where they are named as generated); a failure
skips what reads from it; a recorded run fills the manual's block."""

import json

import pytest
import torch
import yaml
from compendium.core import data
from compendium.pipeline import faithful, params
from compendium.pipeline import paper_check as C


@pytest.fixture(scope="module")
def raw():
    return params.load()


def _stages(raw):
    return [s for s, b in raw.items() if isinstance(b, dict)]


def test_every_key_that_differs_between_paper_and_smoke_is_classified(raw):
    assert C.unclassified(raw) == []


def test_the_check_keeps_the_papers_networks_batches_and_datasets(raw):
    for stage in _stages(raw):
        paper = params.resolve(dict(raw, scale="paper"), stage)
        values = C.check_values(raw, stage, data_root="/gen")
        for key, v in paper.items():
            if key == "data_root" and v:
                assert values[key] == ("/gen/large" if stage in C.LARGE else "/gen/standard")
            elif not C.is_loop_key(key) and key not in C.EXTRA.get(stage, {}):
                assert values[key] == v, f"{stage}.{key}: {values[key]!r} is not the paper's {v!r}"
    # the keys that make a paper run what it is
    m, t = C.check_values(raw, "dd_matching"), C.check_values(raw, "dd_teachers")
    assert (m["width"], m["batch_real"], m["eval_batch"], m["dataset"]) == (128, 256, 256, "cifar10")
    assert t["teachers"] == ["convnet", "resnet18", "vit_bn", "mobilenet_v2", "shufflenet_v2"]
    assert (t["resnet_width_mult"], t["resnet_stem_stride"], t["vit_depth"]) == (1.0, 1, 12)


def test_loops_are_cut_to_one_epoch_and_two_steps(raw):
    m = C.check_values(raw, "dd_matching")
    assert (m["iterations"], m["dm_iterations"], m["eval_steps"]) == (2, 2, 2)
    assert C.check_values(raw, "rela_budget")["epochs"] == 1
    assert C.check_values(raw, "dd_teachers")["epochs"] == 1
    # not below a schema's minimum (theory_samples.steps >= 10)
    assert C.check_values(raw, "theory_samples")["steps"] == params.schemas()["theory_samples"]["steps"].low
    # a key the smoke scale leaves alone keeps its value (rela_regime reads the committed study at 30 epochs)
    assert (
        C.check_values(raw, "rela_regime")["epochs"]
        == params.resolve(dict(raw, scale="paper"), "rela_regime")["epochs"]
    )


def test_every_set_a_later_stage_loads_is_produced_at_the_check_values(raw):
    """The sizes of the sets later stages read by name are among the sizes their producers make (a cut list of
    ``ipcs`` once left dd_dwa, dd_gtn and dd_mnemonics without their ipc-10 sets)."""
    import re

    from compendium.distill.unrolled import mnemonics_experiment

    def made(stage):
        return set(C.check_values(raw, stage)["ipcs"])

    matching, inversion = made("dd_matching"), made("dd_inversion")
    assert C.check_values(raw, "dd_gtn")["proxy_ipc"] in matching
    assert C.check_values(raw, "dd_crossarch")["ipc"] in matching & inversion
    assert C.check_values(raw, "dd_dwa")["tsne_ipc"] in inversion
    for path in mnemonics_experiment.SET_FILES.values():
        family, ipc = re.fullmatch(r"distilled/(\w+)/\w+_ipc(\d+)\.pt", path).groups()
        assert int(ipc) in {"matching": matching, "inversion": inversion}[family], path


def test_key_classes():
    assert all(C.is_loop_key(k) for k in ("eval_steps", "seeds", "train_n", "ipcs", "cl_ipc", "probe_train", "dpi"))
    assert not any(C.is_loop_key(k) for k in ("batch_size", "probe_batch_size", "width", "eval_batch", "students"))


def test_the_written_params_resolve_to_the_check_values_and_pass_every_stage_check(raw, tmp_path):
    f = C.write_params(raw, tmp_path / "params.yaml", str(tmp_path / "gen"))
    for stage in _stages(raw):
        got = params.stage_params(stage, f, "paper")
        want = C.check_values(raw, stage, str(tmp_path / "gen"))
        assert {k: got[k] for k in want} == want, stage


def test_device_override(raw, tmp_path):
    f = C.write_params(raw, tmp_path / "params.yaml", str(tmp_path / "gen"), device="cpu")
    assert params.stage_params("rela_budget", f, "paper")["device"] == "cpu"


def test_stand_ins_have_the_papers_shapes_and_are_read_only_where_named(tmp_path, monkeypatch):
    folder = C.write_datasets(tmp_path / "gen") / "standard"
    monkeypatch.delenv(data.GENERATED_ENV, raising=False)
    with pytest.raises(data.DataError):  # torchvision's md5 check refuses the stand-ins
        data.load_dataset("cifar10", "train", folder)
    monkeypatch.setenv(data.GENERATED_ENV, str(folder))
    c10 = data.load_dataset("cifar10", "train", folder)
    c100 = data.load_dataset("cifar100", "test", folder)
    mn = data.load_dataset("mnist", "train", folder)
    per10, _ = C.DATASETS["cifar10"]
    assert c10.images.shape == (10 * per10, 3, 32, 32) and c10.images.dtype == torch.uint8 and c10.num_classes == 10
    assert c100.images.shape == (100 * C.DATASETS["cifar100"][1], 3, 32, 32) and c100.num_classes == 100
    assert mn.images.shape[1:] == (1, 28, 28) and mn.num_classes == 10
    # a folder beside the generated one is not taken on trust
    other = tmp_path / "other"
    (other / "cifar-10-batches-py").mkdir(parents=True)
    for p in (folder / "cifar-10-batches-py").iterdir():
        (other / "cifar-10-batches-py" / p.name).write_bytes(p.read_bytes())
    with pytest.raises(data.DataError):
        data.load_dataset("cifar10", "train", other)


def test_a_failed_stage_skips_what_reads_from_it_and_the_others_run(tmp_path):
    up = {"a": set(), "b": {"a"}, "c": {"b"}, "d": set()}
    ran = []

    def runner(stage, params_file, root):
        ran.append(stage)
        if stage == "a":
            raise RuntimeError("shape mismatch\nmat1 and mat2 shapes cannot be multiplied")

    rows = C.run(["a", "b", "c", "d"], up, tmp_path / "p.yaml", tmp_path, runner=runner)
    assert ran == ["a", "d"]
    assert [(r.stage, r.status) for r in rows] == [("a", "failed"), ("b", "skipped"), ("c", "skipped"), ("d", "passed")]
    assert "mat1 and mat2" in rows[0].detail and "upstream a" in rows[1].detail
    assert "1 of 4 stage(s) passed" in C.table(rows)


def test_every_stage_of_the_pipeline_is_in_the_check():
    stages = faithful.read_stages(__import__("yaml").safe_load(C.paths.DVC_YAML.read_text()))
    up = faithful.upstream(stages)
    order = faithful.dag_order(stages, up)
    assert faithful.select(order, up, None) == order and len(order) == len(stages)


def test_a_recorded_run_fills_the_pages_block(tmp_path):
    rows = [C.Row("a", "passed", 30.0), C.Row("b", "failed", 90.0, "x"), C.Row("c", "passed", 5.0)]
    rec = C.record(rows, threads=2)
    page = tmp_path / "page.md"
    page.write_text(f"# P\n\n{C.START}\nold\n{C.END}\n\nafter\n")
    C.write_page(rec, page)
    text = page.read_text()
    assert "old" not in text and text.endswith("after\n")
    assert "2 of 3 stages passed in 2.1 min on 2 CPU thread(s)" in text and "b (90 s), a (30 s), c (5 s)" in text
    assert rec["cpu"] in ("AMX", "AVX512-BF16, no AMX", "no native bf16") and f"({rec['cpu']})" in text
    assert C.START in C.PAGE.read_text() and C.END in C.PAGE.read_text()
    with pytest.raises(ValueError, match="block"):
        C.write_page(rec, tmp_path / "none.md") if (tmp_path / "none.md").write_text("x") else None
    # a stage rerun alone after a fix replaces its row, marked, and the page says so
    rec = C.merge_rerun(rec, [C.Row("b", "passed", 12.0)])
    assert rec["rows"][1] == {"stage": "b", "status": "passed", "seconds": 12.0, "rerun": True}
    C.write_page(rec, page)
    assert "3 of 3 stages passed" in page.read_text() and "1 of them (b) passed when rerun alone" in page.read_text()


def test_the_committed_record_covers_every_stage_and_is_on_the_page():
    stages = faithful.read_stages(yaml.safe_load(C.paths.DVC_YAML.read_text()))
    rec = json.loads(C.RECORD.read_text())
    assert sorted(r["stage"] for r in rec["rows"]) == sorted(stages)
    assert C.page_block(rec) in C.PAGE.read_text()


@pytest.mark.slow
def test_the_ci_share_of_the_check_passes(tmp_path, capsys, monkeypatch):
    """:data:`~compendium.pipeline.paper_check.CI_STAGES` and their upstream stages at the paper's shapes (the whole
    check is ``make paper-check``)."""
    monkeypatch.setenv(data.GENERATED_ENV, "")  # restored after the test (the check names its stand-ins' folder)
    rc = C.main(["--stages", *C.CI_STAGES, "--root", str(tmp_path / "check")])
    out = capsys.readouterr().out
    assert rc == 0, out[-4000:]
    for stage in C.CI_STAGES:
        assert f"{stage}: passed" in out, stage
