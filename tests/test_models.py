import pytest
import torch
import torchvision

from compendium import models


@pytest.mark.parametrize("name,kw,size", [
    ("convnet", dict(width=16, depth=3), 28),
    ("convnet", dict(width=16, depth=3, global_pool=True, norm="batch", pooling="max"), 28),
    ("convnet", dict(width=8, depth=2, norm="layer", activation="sigmoid", pooling="none"), 16),
    ("resnet18", dict(width_mult=0.125), 28),
    ("resnet18", dict(width_mult=0.125, stem="imagenet"), 64),
    ("resnet50", dict(width_mult=0.0625, stem="small"), 32),
    ("mobilenet_v2", dict(width_mult=0.25), 28),
    ("efficientnet_b0", dict(width_mult=0.25), 32),
    ("vit_tiny", dict(width_mult=0.5, depth=2), 28),
])
def test_backbones_map_images_to_feature_dim(name, kw, size):
    torch.manual_seed(0)
    net = models.build(name, in_channels=1, image_size=size, **kw).eval()
    out = net(torch.randn(2, 1, size, size))
    assert out.shape == (2, net.feature_dim)
    assert torch.isfinite(out).all()


def _tv_params(model, head):
    return models.count_parameters(model) - models.count_parameters(head)


def test_full_width_networks_are_the_real_ones():
    r18 = torchvision.models.resnet18(weights=None)
    assert models.count_parameters(models.resnet18(3, 224, stem="imagenet")) == _tv_params(r18, r18.fc)
    r50 = torchvision.models.resnet50(weights=None)
    assert models.count_parameters(models.resnet50(3, 224)) == _tv_params(r50, r50.fc)
    mb = torchvision.models.mobilenet_v2(weights=None)
    assert models.count_parameters(models.mobilenet_v2(3, 224)) == _tv_params(mb, mb.classifier)
    ef = torchvision.models.efficientnet_b0(weights=None)
    assert models.count_parameters(models.efficientnet_b0(3, 224)) == _tv_params(ef, ef.classifier)
    assert models.resnet18(3, 32).feature_dim == 512 and models.resnet50(3, 224).feature_dim == 2048
    vit = models.vit_tiny(3, 224)
    assert vit.feature_dim == 192 and len(vit.body.vit.encoder.layers) == 12
    assert vit.body.vit.patch_size == 16 and vit.body.vit.encoder.layers[0].self_attention.num_heads == 3


def test_small_stem_keeps_resolution_and_width_scales():
    small = models.resnet18(1, 28, width_mult=0.25)
    assert small.body.conv1.stride == (1, 1) and isinstance(small.body.maxpool, torch.nn.Identity)
    assert small.feature_dim == 128
    assert models.count_parameters(small) < models.count_parameters(models.resnet18(1, 28)) / 10
    assert models.vit_patch_size(28) == 4 and models.vit_patch_size(32) == 4 and models.vit_patch_size(64) == 8


def test_convnet_feature_dim_matches_dc():
    assert models.convnet(3, 32, width=128, depth=3).feature_dim == 128 * 4 * 4
    assert models.convnet(1, 28, width=32, depth=3).feature_dim == 32 * 3 * 3
    with pytest.raises(ValueError):
        models.build("alexnet")
    with pytest.raises(ValueError):
        models.convnet(norm="weird")
