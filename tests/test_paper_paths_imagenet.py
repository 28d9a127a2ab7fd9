"""ImageNet-1K at 224 px for the DWA chain (dd_teachers, dd_inversion, dd_dwa, dd_coresets, dd_crossarch): the
training split as a per-class pool decoded at the chosen resolution, torchvision's pretrained teachers loaded from a
local file (SRe2L and DWA invert torchvision's ResNet-18; G-VBSM adds MobileNet-V2 and ShuffleNetV2 0.5x), and the
chain's steps on a tiny folder in ImageNet's sorted layout."""

import dataclasses

import pytest
import torch
import torchvision

from compendium.core import data
from compendium.distill import evaluate as E, inversion as I, runner, teachers
from compendium.distill.sets import DistilledSet
from compendium.pipeline.schemas import dd_coresets, dd_crossarch, dd_dwa, dd_inversion, dd_teachers
from conftest import params_at, write_fake_imagenet

pytestmark = pytest.mark.usefixtures("one_thread")

TV = {
    "resnet18": torchvision.models.resnet18,
    "mobilenet_v2": torchvision.models.mobilenet_v2,
    "shufflenet_v2": torchvision.models.shufflenet_v2_x0_5,
}


def _torchvision_file(tmp_path, arch, num_classes=1000, name=None):
    torch.manual_seed(0)
    net = TV[arch](weights=None, num_classes=num_classes).eval()
    f = tmp_path / (name or f"{arch}.pth")
    torch.save(net.state_dict(), f)
    return net, f


def test_train_pool_and_resolution_of_an_imagenet_folder(tmp_path):
    root = write_fake_imagenet(tmp_path, classes=3, per_class=3, val_per_class=2)
    tr, te, mean, std = data.train_test("imagenet", root, resolution=224, train_per_class=2)
    assert tr.images.shape == (6, 3, 224, 224) and te.images.shape == (6, 3, 224, 224)
    assert tr.labels.tolist() == [0, 0, 1, 1, 2, 2] and te.labels.tolist() == [0, 0, 1, 1, 2, 2]  # val is whole
    assert (mean, std) == (data.IMAGENET_MEAN, data.IMAGENET_STD)  # what torchvision's weights expect
    whole = data.train_test("imagenet", root, resolution=224)[0]
    assert len(whole) == 9 and torch.equal(whole.images[[0, 1, 3, 4, 6, 7]], tr.images)  # the first files per class
    assert data.train_test("imagenet", root)[0].images.shape[-1] == 64  # 0 / None: the reader's own size
    cifar_like = data.load_dataset("fashion-mnist", "test", max_per_class=1)  # other datasets are read whole
    assert len(cifar_like) == 10_000


def test_threaded_decoding_gives_the_same_pixels(tmp_path):
    root = write_fake_imagenet(tmp_path, classes=2, per_class=40, val_per_class=1, size=(60, 90))
    files = sorted(str(p) for p in (root / "train").rglob("*.JPEG"))
    assert torch.equal(data._decode_resized(files, 32, threads=1), data._decode_resized(files, 32, threads=2))
    (root / "train" / "n00000000" / "n00000000_0.JPEG").write_bytes(b"not a jpeg")
    with pytest.raises(data.DataError, match="n00000000_0.JPEG: cannot be decoded"):
        data.train_test("imagenet", root, resolution=32)


@pytest.mark.parametrize("arch", list(teachers.TORCHVISION))
def test_torchvision_teacher_gives_torchvisions_logits(tmp_path, arch):
    ref, f = _torchvision_file(tmp_path, arch)
    net, cfg = teachers.import_torchvision(arch, f)
    x = torch.randn(2, 3, 224, 224)
    with torch.no_grad():
        assert torch.equal(net(x), ref(x))
    # saved as a teacher and loaded back, as every downstream stage reads it
    teachers.save(
        net,
        tmp_path / f"{arch}.pt",
        cfg,
        (3, 224, 224),
        1000,
        data.IMAGENET_MEAN,
        data.IMAGENET_STD,
        {"imported": f.name},
        "imagenet",
    )
    back, meta = teachers.load(tmp_path / f"{arch}.pt", "imagenet")
    with torch.no_grad():
        assert torch.equal(back(x), ref(x))
    assert meta["record"] == {"imported": f.name} and meta["arch_kwargs"] == teachers.TORCHVISION[arch].arch_kwargs


def test_torchvision_import_refuses_missing_corrupt_and_mismatched_files(tmp_path):
    with pytest.raises(teachers.TeacherError, match="resnet18-f37072fd.pth"):
        teachers.import_torchvision("resnet18", tmp_path / "absent.pth")
    _, f = _torchvision_file(tmp_path, "resnet18", name="resnet18-deadbeef.pth")  # torchvision's naming, wrong digest
    with pytest.raises(teachers.TeacherError, match="SHA-256 does not start with deadbeef"):
        teachers.import_torchvision("resnet18", f)
    _, f = _torchvision_file(tmp_path, "mobilenet_v2")
    with pytest.raises(teachers.TeacherError, match="does not fit resnet18"):
        teachers.import_torchvision("resnet18", f)
    with pytest.raises(ValueError, match="known"):
        teachers.import_torchvision("vit_bn", f)


def test_the_stage_checks_imported_teachers_before_compute(tmp_path):
    v = dict(
        params_at("cpu", "dd_teachers"),
        dataset="imagenet",
        data_root="../datasets",
        teachers=["resnet18"],
        imported_teachers=["resnet18"],
        weights_dir=str(tmp_path),
    )
    assert any("resnet18-f37072fd.pth is missing" in p for p in dd_teachers.check(v))
    _torchvision_file(tmp_path, "resnet18", name="resnet18-f37072fd.pth")
    assert dd_teachers.check(v) == []
    assert any(
        p.startswith("imported_teachers:") and "dataset" in p for p in dd_teachers.check(dict(v, dataset="cifar100"))
    )
    assert any("not in `teachers`" in p for p in dd_teachers.check(dict(v, teachers=["convnet"])))
    assert any(p.startswith("weights_dir:") for p in dd_teachers.check(dict(v, weights_dir="")))


@pytest.mark.parametrize("schema", [dd_teachers, dd_inversion, dd_dwa, dd_coresets, dd_crossarch])
def test_the_chain_reads_folders_whole_at_their_own_size_by_default(schema):
    for scale in ("cpu", "paper"):
        v = params_at(scale, schema.SECTION)
        assert (v["resolution"], v["train_per_class"]) == (0, 0)
        assert {"resolution", "train_per_class"} <= set(schema.SCHEMA)
    assert params_at("paper", "dd_teachers")["imported_teachers"] == []  # paper: CIFAR-100, teachers trained


def test_the_dwa_chain_at_224_px_on_a_tiny_imagenet_folder(tmp_path, monkeypatch):
    root = write_fake_imagenet(tmp_path, classes=3, per_class=5, val_per_class=2)
    tr, te, MEAN, STD = data.train_test("imagenet", root, resolution=224, train_per_class=4)
    # dd_teachers: torchvision's ResNet-18 (a 3-class head here; ImageNet-1K's has 1,000), under a name of ours
    monkeypatch.setitem(
        teachers.TORCHVISION,
        "resnet18",
        dataclasses.replace(teachers.TORCHVISION["resnet18"], file="resnet18_3_classes.pth"),
    )
    ref, _ = _torchvision_file(tmp_path, "resnet18", num_classes=3, name="resnet18_3_classes.pth")
    net, acc = teachers.save_imported(
        "resnet18", tmp_path, tmp_path / "t" / "resnet18.pt", te.images, te.labels, tr.num_classes, MEAN, STD
    )
    teacher, meta = teachers.load(tmp_path / "t" / "resnet18.pt", "imagenet")
    assert meta["image_shape"] == [3, 224, 224] and meta["record"] == {
        "imported": "resnet18_3_classes.pth",
        "test_acc": acc,
    }
    assert acc == E.top1_accuracy(ref, te.images, te.labels, MEAN, STD)
    # dd_inversion: SRe2L, DWA (RandomResizedCrop + flip before the 32-px jitter, DWA's Table 8) and RDED at ipc 1
    aug = I.recovery_augmentation("imagenet")
    assert aug["crop_scale"] == (0.08, 1.0) and aug["flip"]
    common = dict(iterations=2, lr=0.25, jitter=32, seed=0, dataset="imagenet", **aug)
    sre2l = I.sre2l_synthesize(teacher, tr.images, tr.labels, 1, MEAN, STD, **common)
    dwa = I.dwa_synthesize(teacher, tr.images, tr.labels, 1, MEAN, STD, **common, rho=0.015, K=2)
    rded = I.rded_synthesize(
        tr.images, tr.labels, teacher, 1, MEAN, STD, factor=2, images_per_class=4, seed=0, dataset="imagenet"
    )
    for d in (sre2l, dwa, rded):
        assert d.images.shape == (3, 3, 224, 224) and d.dataset == "imagenet" and torch.isfinite(d.images).all()
    dwa.save(tmp_path / "dwa_ipc1.pt")
    # dd_crossarch / dd_dwa: the sets' dataset read back with the same pool and size; a student on teacher labels
    TR, TESTS = runner.datasets_of([DistilledSet.load(tmp_path / "dwa_ipc1.pt", "imagenet")], root, 0, 224, 4)
    assert torch.equal(TR["imagenet"].images, tr.images) and len(TESTS["imagenet"][1]) == 6
    student = E.EvalConfig(
        arch="convnet",
        arch_kwargs={"width": 8, "depth": 3, "norm": "batch"},
        steps=1,
        batch_size=3,
        lr=1e-3,
        augmentation="crop_flip",
        label_mode="teacher",
        temperature=20.0,
        device="cpu",
        **E.crop_flip("imagenet", 224),
    )
    rows = runner.evaluate_many([runner.Job({"m": "dwa"}, dwa, student, 0, teacher)], *TESTS["imagenet"], workers=0)
    assert 0.0 <= rows[0]["acc"] <= 1.0


def test_a_stage_reading_the_folder_at_another_size_than_its_teacher_stops(tmp_path):
    root = write_fake_imagenet(tmp_path, classes=2, per_class=2, val_per_class=1, size=(40, 50))
    meta = {"image_shape": [3, 32, 32]}
    tr, te = teachers.teacher_data(meta, "imagenet", root, 32, 1)
    assert tr.images.shape == (2, 3, 32, 32) and len(te) == 2
    with pytest.raises(teachers.TeacherError, match="set the same `resolution`"):
        teachers.teacher_data(meta, "imagenet", root, 48)


def test_dwas_imagenet_variance_weight_reaches_its_sets_not_the_sweeps():
    from compendium.distill import dwa_experiments as dwa

    common = dict(iterations=2, lr=0.25, jitter=32, seed=0, dataset="imagenet", classes_per_batch=100)
    kw = dict(
        rho=0.015,
        K=12,
        cross_teachers=["resnet18"],
        cross_ipc=10,
        cross_ipc_extra=[50],
        sweep_lambdas=[0.11],
        sweep_ipc=1,
        grid_K=[12],
        grid_rho=[0.015],
        grid_ipc=1,
        real_ipcs={1},
    )
    specs = dwa.synthesis_specs(common, dwa_r_var=2.0, **kw)
    for key in (("dwa", "resnet18"), ("t4", "dwa", 50), ("grid", 12, 0.015), ("grid", 0, 0.0)):
        assert specs[key][3]["r_var"] == 2.0 and specs[key][3]["classes_per_batch"] == 100
    assert specs[("sweep", "dwa", "decoupled", 0.11)][3]["r_var"] == pytest.approx(11.0)  # Fig. 3 sets its own
    assert "r_var" not in specs[("sre2l", "resnet18")][3]  # SRe2L: coupled, r_var 1
    default = dwa.synthesis_specs(common, **kw)
    assert default[("dwa", "resnet18")][3]["r_var"] == 11.0  # DWA's CIFAR / Tiny-ImageNet value
