import pytest
import torch

from compendium.core import pca
from compendium.rela import priors, targets


def _prior(seed=0, width=8, size=12, in_channels=1):
    return priors.load(
        "rand:convnet",
        student_kwargs=dict(in_channels=in_channels, image_size=size, width=width, depth=2, norm="instance"),
        seed=seed,
        mean=(0.5,),
        std=(0.25,),
    )


def _images(n=70, size=12, channels=1, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (n, channels, size, size), dtype=torch.uint8, generator=g)


def test_prior_inputs_resize_adapt_channels_and_normalise():
    p = _prior(size=16, in_channels=3)
    p.mean, p.std = (0.1, 0.2, 0.3), (0.5, 0.5, 0.5)
    x = targets.prior_inputs(_images(4, size=8), p)
    assert x.shape == (4, 3, 16, 16)
    raw = torch.nn.functional.interpolate(
        _images(4, size=8).float() / 255, size=(16, 16), mode="bilinear", antialias=True
    )
    assert torch.allclose(x[:, 2], (raw[:, 0] - 0.3) / 0.5, atol=1e-6)
    grey = targets.prior_inputs(_images(2, channels=3), _prior())
    assert grey.shape == (2, 1, 12, 12)


def test_streaming_targets_equal_the_in_memory_map_and_are_whitened():
    p, imgs = _prior(), _images()
    feats = torch.cat(list(targets.prior_features(p, imgs, batch_size=1000)))
    ref = pca.TargetMap.fit([feats], 5, "code").transform(feats).float()
    t = targets.make_targets(p, imgs, 5, batch_size=16)  # two passes, uneven last batch
    t1 = targets.make_targets(p, imgs, 5, batch_size=16, store_features=True)
    assert t.values.shape == (70, 5)
    for v in (t.values, t1.values):
        assert torch.allclose(pca.align_signs(v.double(), ref.double()).float(), ref, atol=1e-4)
        assert torch.allclose(v.mean(0), torch.zeros(5), atol=1e-4)
        assert torch.allclose(v.std(0, unbiased=False), torch.ones(5), atol=1e-4)
    ev = t.map.pca.eigenvalues
    assert torch.all(ev[:-1] >= ev[1:])
    paper = targets.make_targets(p, imgs, 5, order="paper", batch_size=16)
    assert not torch.allclose(paper.values, t.values, atol=1e-2)


def test_target_dim_and_errors():
    assert targets.target_dim(512, 1024) == 512 and targets.target_dim(2048, 1024) == 1024
    with pytest.raises(ValueError, match="exceed"):
        targets.make_targets(_prior(), _images(), 10_000)


def test_cache_hits_and_keys_include_the_seed(tmp_path):
    imgs = _images()
    v, path, hit = targets.cached_targets(_prior(0), imgs, "toy", 0, 4, tmp_path)
    assert not hit and path.is_file()
    v2, path2, hit2 = targets.cached_targets(_prior(0), imgs, "toy", 0, 4, tmp_path)
    assert hit2 and path2 == path and torch.equal(v, v2)
    v3, path3, hit3 = targets.cached_targets(_prior(1), imgs, "toy", 1, 4, tmp_path)
    assert not hit3 and path3 != path and not torch.allclose(v3, v)
    assert targets.load_targets(path)["prior"] == "rand:convnet"


def test_saved_targets_are_byte_identical_across_runs_and_hold_no_timings(tmp_path):
    """Two identical runs time differently; the target files they write must not differ (models/targets
    is a dependency of every ReLA stage). The timings stay in memory, for the stage's timings report."""
    p, imgs = _prior(), _images()
    runs = [targets.make_targets(p, imgs, 4, batch_size=16) for _ in range(2)]
    assert all(set(t.seconds) == {"fit", "transform", "total"} for t in runs)
    files = []
    for i, t in enumerate(runs):
        t.key = "toy_key"
        targets.save_targets(t, tmp_path / str(i) / "toy_key.pt")
        files.append((tmp_path / str(i) / "toy_key.pt").read_bytes())
    targets.save_targets(runs[0], tmp_path / "0" / "toy_key.pt")  # rewritten in place
    assert files[0] == files[1] == (tmp_path / "0" / "toy_key.pt").read_bytes()
    saved = targets.load_targets(tmp_path / "0" / "toy_key.pt")
    assert "seconds" not in saved and torch.equal(saved["values"], runs[0].values)
    _, a, _ = targets.cached_targets(_prior(0), imgs, "toy", 0, 4, tmp_path / "cache_a")
    _, b, _ = targets.cached_targets(_prior(0), imgs, "toy", 0, 4, tmp_path / "cache_b")
    assert a.name == b.name and a.read_bytes() == b.read_bytes()
