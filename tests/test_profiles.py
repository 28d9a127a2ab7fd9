"""Every paper-scale configuration builds at full width and takes one real training step (the BYOL
and ReLA-F losses mixed at lambda 0.5) on fake data of its image shape, through the same loop the pipeline uses."""
import pytest
import torch

from compendium import augment, profiles, rela_schedule, train


@pytest.mark.parametrize("name", sorted(profiles.PAPER))
def test_paper_configuration_takes_one_step(name):
    cfg = profiles.PAPER[name]
    assert (cfg.epochs, cfg.lr, cfg.weight_decay) == (100, 1e-3, 0.01)
    imgs = profiles.fake_batch(cfg, 4)
    assert imgs.shape == (4, cfg.in_channels, cfg.image_size, cfg.image_size)
    torch.manual_seed(0)
    dim = profiles.backbone(cfg).feature_dim
    expected = {"resnet18": 512, "resnet50": 2048, "mobilenet_v2": 1280, "efficientnet_b0": 1280, "vit_tiny": 192}
    assert dim == expected[cfg.arch], "the paper profile uses the real widths"
    model = profiles.build(cfg, "byol", rela_target_dim=min(dim, 512))
    before = [p.detach().clone() for p in model.method.backbone.parameters()]
    views = augment.preset("byol", size=cfg.image_size, small_images=cfg.image_size <= 64)
    rviews = augment.preset("rela_weak", size=cfg.image_size)
    pc = train.PretrainConfig(epochs=1, batch_size=4, lr=cfg.lr, weight_decay=cfg.weight_decay, device="cpu",
                              channels_last=False)
    h = train.pretrain(model, imgs, pc, views, (0.5,) * 3, (0.25,) * 3, targets=torch.randn(4, min(dim, 512)),
                       rela_views=rviews, schedule=rela_schedule.make("constant", value=0.5))
    assert len(h.steps) == 1 and torch.isfinite(torch.tensor(h.steps[0]["loss"]))
    assert {"rela_loss", "ssl_loss"} <= set(h.steps[0])  # lambda 0.5: both losses in the one step
    assert any(not torch.equal(a, b) for a, b in zip(before, model.method.backbone.parameters()))
