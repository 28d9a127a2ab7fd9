import pytest
import torch
import torchvision

from compendium.core import models
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
    assert priors.cache_key("rand:convnet", "fmnist", 1, arch="a") != priors.cache_key("rand:convnet", "fmnist", 1, arch="b")
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
