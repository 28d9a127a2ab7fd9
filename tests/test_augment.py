import pytest
import torch

from compendium.core import augment as A


def _x(b=8, c=1, s=28, seed=0):
    return torch.rand(b, c, s, s, generator=torch.Generator().manual_seed(seed))


def test_full_crop_without_flip_is_the_identity():
    x = _x()
    y = A.random_resized_crop(x, scale=(1.0, 1.0), ratio=(1.0, 1.0), generator=torch.Generator().manual_seed(1))
    assert torch.allclose(y, x, atol=1e-5)
    f = A.random_resized_crop(
        x, scale=(1.0, 1.0), ratio=(1.0, 1.0), flip_p=1.0, generator=torch.Generator().manual_seed(1)
    )
    assert torch.allclose(f, x.flip(-1), atol=1e-5)


def test_crop_areas_follow_the_scale_range():
    w, h, cx, cy = A.crop_boxes(20000, (0.1, 0.3), generator=torch.Generator().manual_seed(0))
    area = w * h
    assert abs(float(area.mean()) - 0.2) < 0.005 and float(area.min()) >= 0.1 - 1e-6 and float(area.max()) <= 0.3 + 1e-6
    r = w / h
    assert float(r.min()) >= 3 / 4 - 1e-6 and float(r.max()) <= 4 / 3 + 1e-6
    assert float((cx.abs() + w).max()) <= 1 + 1e-6 and float((cy.abs() + h).max()) <= 1 + 1e-6
    # near-full areas with extreme ratios are rejected and fall back inside the image
    w2, h2, _, _ = A.crop_boxes(5000, (0.95, 1.0), ratio=(0.2, 5.0), generator=torch.Generator().manual_seed(0))
    assert float(w2.max()) <= 1 + 1e-6 and float(h2.max()) <= 1 + 1e-6


def test_crop_is_a_zoom_of_the_input():
    x = torch.zeros(1, 1, 20, 20)
    x[..., :, 10:] = 1.0  # right half white
    y = A.random_resized_crop(
        x.expand(500, 1, 20, 20).clone(), scale=(0.2, 0.5), generator=torch.Generator().manual_seed(3)
    )
    assert y.shape == (500, 1, 20, 20) and float(y.min()) >= 0 and float(y.max()) <= 1
    assert 0.3 < float(y.mean()) < 0.7


def test_seeded_determinism_and_resize():
    x = _x(c=3, s=32)
    a = A.preset("byol", size=24)(x, torch.Generator().manual_seed(5))
    b = A.preset("byol", size=24)(x, torch.Generator().manual_seed(5))
    assert all(torch.equal(u, v) for u, v in zip(a, b)) and a[0].shape == (8, 3, 24, 24)
    c = A.preset("byol", size=24)(x, torch.Generator().manual_seed(6))
    assert not torch.equal(a[0], c[0])


def test_flip_and_photometric_ops():
    x = _x(b=4)
    assert torch.equal(A.horizontal_flip(x, p=1.0), x.flip(-1)) and torch.equal(A.horizontal_flip(x, p=0.0), x)
    assert torch.equal(A.grayscale(x), x)  # no-op on one channel
    rgb = _x(b=4, c=3)
    g = A.grayscale(rgb)
    assert torch.allclose(g[:, 0], g[:, 1]) and torch.allclose(g[:, 1], g[:, 2])
    s = A.solarize(x, p=1.0, threshold=0.5)
    assert torch.equal(s, torch.where(x >= 0.5, 1 - x, x))
    j = A.color_jitter(rgb, p=1.0, generator=torch.Generator().manual_seed(0))
    assert j.shape == rgb.shape and float(j.min()) >= 0 and float(j.max()) <= 1 and not torch.equal(j, rgb)
    const = torch.full((2, 3, 8, 8), 0.5)
    assert torch.allclose(A._hue_shift(const, torch.tensor([0.3, -0.2])), const, atol=1e-5)  # grey has no hue
    b = A.gaussian_blur(x, p=1.0, generator=torch.Generator().manual_seed(0))
    assert b.var() < x.var() and torch.allclose(b.mean(), x.mean(), atol=0.02)


def test_presets_exist_for_every_method_and_rela():
    x = _x(c=1)
    for name in ("rela_weak", "byol", "simclr", "moco", "simsiam", "swav", "dino", "barlow_twins", "vicreg"):
        v1, v2 = A.preset(name)(x, torch.Generator().manual_seed(0))
        assert v1.shape == x.shape and v2.shape == x.shape
    weak = A.preset("rela_weak", code_extras=False)
    assert weak.view1.scale == (0.5, 1.0) and weak.view1.jitter_p == 0 and weak.view1.gray_p == 0
    assert A.preset("rela_weak").view1.jitter_p == 0.8
    with pytest.raises(ValueError):
        A.preset("nope")
