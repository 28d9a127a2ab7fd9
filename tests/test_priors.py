import pytest
import torch
import torchvision

from compendium.core import models, volatile
from compendium.rela import priors


def test_rand_prior_is_seeded_and_keyed_by_seed_and_arch():
    kw = dict(in_channels=1, image_size=16, width=8, depth=2)
    a = priors.load("rand:convnet", student_kwargs=kw, seed=1)
    b = priors.load("rand", student_arch="convnet", student_kwargs=kw, seed=1)
    c = priors.load("rand:convnet", student_kwargs=kw, seed=2)
    x = torch.randn(3, 1, 16, 16)
    assert torch.equal(a.model(x), b.model(x)) and not torch.equal(a.model(x), c.model(x))
    assert not any(p.requires_grad for p in a.model.parameters()) and not a.model.training
    assert priors.cache_key("rand:convnet", "fmnist", 1) != priors.cache_key("rand:convnet", "fmnist", 2)
    assert priors.cache_key("rand:convnet", "fmnist", 1, arch="a") != priors.cache_key(
        "rand:convnet", "fmnist", 1, arch="b"
    )
    with pytest.raises(priors.PriorError, match="student's architecture"):
        priors.load("rand")


def test_trained_prior_roundtrip_and_errors(tmp_path):
    kw = dict(in_channels=1, image_size=16, width=8, depth=2)
    bb = models.convnet(**kw)
    f = tmp_path / "prior.pt"
    priors.save_backbone(bb, f, "convnet", kw, mean=(0.3,), std=(0.2,), input_size=16)
    p = priors.load(f"trained:{f}")
    x = torch.randn(2, 1, 16, 16)
    bb.eval()
    assert torch.equal(p.model(x), bb(x)) and p.mean == (0.3,) and p.input_size == 16
    with pytest.raises(priors.PriorError, match="is missing"):
        priors.load(f"trained:{tmp_path / 'nope.pt'}")
    (tmp_path / "bad.pt").write_bytes(f.read_bytes())
    with pytest.raises(priors.PriorError, match="bad.pt.json"):
        priors.load(f"trained:{tmp_path / 'bad.pt'}")


def test_torchvision_prior_from_a_local_state_dict(tmp_path):
    torch.manual_seed(0)
    net = torchvision.models.resnet18(weights=None)
    f = tmp_path / "r18.pth"
    torch.save(net.state_dict(), f)
    p = priors.load(f"torchvision:resnet18@{f}")
    assert p.feature_dim == 512 and p.input_size == 224
    assert p.model(torch.randn(1, 3, 64, 64)).shape == (1, 512)
    with pytest.raises(priors.PriorError, match="missing"):
        priors.load(f"torchvision:resnet18@{tmp_path / 'absent.pth'}")
    with pytest.raises(priors.PriorError, match="do not fit"):
        priors.load(f"torchvision:resnet50@{f}")
    with pytest.raises(priors.PriorError, match="unknown prior kind"):
        priors.load("hub:whatever")


def test_open_clip_prior_needs_its_file_first(tmp_path):
    with pytest.raises(priors.PriorError, match="missing"):
        priors.load(f"open_clip:RN50@{tmp_path / 'RN50.pt'}")


def _saved(bb, f, kw, train=None):
    priors.save_backbone(bb, f, "convnet", kw, mean=(0.3,), std=(0.2,), input_size=16, train=train)
    return f.read_bytes(), f.with_name(f.name + ".json").read_bytes()


def test_save_backbone_writes_byte_identical_files_for_identical_inputs(tmp_path):
    """An identical rerun of a stage must not change models/: the prior and its sidecar are byte-stable
    (the same file, rewritten, and the same file name in another folder)."""
    kw = dict(in_channels=1, image_size=16, width=8, depth=2)
    torch.manual_seed(0)
    bb = models.convnet(**kw)
    train = {"method": "byol", "epochs": 2, "batch_size": 32, "seed": 0, "images": 100}
    first = _saved(bb, tmp_path / "a" / "prior.pt", kw, train)
    again = _saved(bb, tmp_path / "a" / "prior.pt", kw, dict(reversed(list(train.items()))))
    elsewhere = _saved(bb, tmp_path / "b" / "prior.pt", kw, train)
    assert first == again == elsewhere
    torch.manual_seed(0)
    assert _saved(models.convnet(**kw), tmp_path / "c" / "prior.pt", kw, train) == first


def test_save_backbone_refuses_timings_and_other_volatile_metadata(tmp_path):
    kw = dict(in_channels=1, image_size=16, width=8, depth=2)
    bb = models.convnet(**kw)
    with pytest.raises(ValueError, match=r"\['seconds'\].*reports/timings/<stage>.json"):
        priors.save_backbone(
            bb, tmp_path / "p.pt", "convnet", kw, (0.3,), (0.2,), 16, train={"method": "byol", "seconds": 12.5}
        )
    assert not (tmp_path / "p.pt").exists() and not (tmp_path / "p.pt.json").exists()
    assert volatile.volatile_keys(
        {
            "epochs": 1,
            "train_seconds": 2.0,
            "images/s": 3,
            "lr": 0.1,
            "head_mult": 1.0,
            "run": {"hostname": "x", "pid": 1, "started at": {"date": "today"}},
        }
    ) == ["train_seconds", "run.hostname", "run.pid", "run.started at.date"]
    assert volatile.volatile_keys({"method": "byol", "budget": 1.0, "weight_decay": 0.0, "images": 10}) == []
