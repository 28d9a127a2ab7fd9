import math

import pytest
import torch

from compendium.distill import sets
from compendium.distill.sets import DistilledSet, SetError, load_tensors, save_tensors


def _set(**kw):
    g = torch.Generator().manual_seed(0)
    base = dict(
        images=torch.randn(20, 1, 8, 8, generator=g),
        labels=torch.arange(10).repeat(2),
        num_classes=10,
        mean=(0.5,),
        std=(0.25,),
        method="test",
        params={"a": 1},
        seed=3,
    )
    return DistilledSet(**{**base, **kw})


def test_round_trip_keeps_everything(tmp_path):
    s = _set(soft_labels=torch.softmax(torch.randn(20, 10), 1), synthesis_seconds=1.5, peak_memory_bytes=7)
    t = DistilledSet.load(s.save(tmp_path / "x.pt"))
    assert torch.equal(t.images, s.images) and torch.equal(t.labels, s.labels)
    assert torch.allclose(t.soft_labels, s.soft_labels)
    assert (t.method, t.params, t.seed) == ("test", {"a": 1}, 3)
    assert math.isnan(t.synthesis_seconds) and t.peak_memory_bytes == 0  # not in the file (they vary between runs)
    assert t.ipc == 2 and t.per_class.tolist() == [2] * 10


def test_identical_sets_are_identical_files_whatever_their_synthesis_took(tmp_path):
    """A rerun that makes the same set must rewrite its file byte for byte, or every stage reading it goes stale."""
    a = _set(synthesis_seconds=1.5, peak_memory_bytes=7).save(tmp_path / "a" / "x.pt")
    b = _set(synthesis_seconds=9.0, peak_memory_bytes=70).save(tmp_path / "b" / "x.pt")
    assert a.read_bytes() == b.read_bytes()


def test_bad_sets_and_files_are_refused(tmp_path):
    with pytest.raises(SetError, match="labels outside"):
        _set(labels=torch.arange(20))
    with pytest.raises(SetError, match="probabilities"):
        _set(soft_labels=torch.randn(20, 10))
    with pytest.raises(SetError, match="float tensor"):
        _set(images=torch.zeros(20, 1, 8, 8, dtype=torch.uint8))
    with pytest.raises(SetError, match="no labelled set"):
        DistilledSet.load(tmp_path / "missing.pt")
    (tmp_path / "bad.pt").write_bytes(b"not a torch file")
    with pytest.raises(SetError, match="not a readable"):
        DistilledSet.load(tmp_path / "bad.pt")


def test_from_real_normalises_and_pixels_invert():
    imgs = torch.randint(0, 256, (30, 1, 8, 8), dtype=torch.uint8)
    labels = torch.arange(30) % 10
    s = sets.from_real(imgs, labels, torch.tensor([0, 5, 12]), 10, (0.3,), (0.2,), "random")
    assert torch.allclose(s.pixels(), imgs[[0, 5, 12]].float() / 255, atol=1e-6)
    assert s.source_index.tolist() == [0, 5, 12] and s.labels.tolist() == [0, 5, 2]


def test_measure_records_time_and_memory():
    # 64 MB: above glibc's largest dynamic mmap threshold (32 MB), so the block always gets fresh pages and
    # the resident set grows, however much freed heap earlier tests left behind.
    with sets.measure() as cost:
        x = torch.ones(16_000_000)
        x.add_(1)
    assert cost.seconds > 0 and cost.peak_memory_bytes > 48_000_000


def test_every_set_type_shares_one_atomic_safe_file_format(tmp_path):
    p = save_tensors(tmp_path / "t.pt", "targets", {"x": torch.ones(2, 3), "none": None}, {"n": 2})
    tensors, meta = load_tensors(p, "targets")
    assert torch.equal(tensors["x"], torch.ones(2, 3)) and tensors["none"] is None and meta == {"n": 2}
    assert not list(tmp_path.glob("*.tmp"))
    with pytest.raises(SetError, match="not a labelled set"):
        load_tensors(p, "labelled")
    torch.save({"x": torch.ones(1)}, tmp_path / "plain.pt")
    with pytest.raises(SetError, match="not a targets set"):
        load_tensors(tmp_path / "plain.pt", "targets")
