import torch

from compendium.core import viz


def test_class_sample_index_takes_each_class():
    labels = torch.arange(100) % 10
    idx = viz.class_sample_index(labels, 3, seed=1)
    assert labels[idx].tolist() == sum(([c] * 3 for c in range(10)), [])
    assert torch.equal(idx, viz.class_sample_index(labels, 3, seed=1))


def test_image_grid_places_tiles():
    x = torch.arange(4, dtype=torch.uint8).view(4, 1, 1, 1).expand(4, 1, 2, 2).clone()
    g = viz.image_grid(x, nrow=2, pad=1, pad_value=255)
    assert g.shape == (7, 7, 1)
    assert g[1, 1, 0] == 0 and g[1, 4, 0] == 1 and g[4, 1, 0] == 2 and g[4, 4, 0] == 3 and g[0, 0, 0] == 255
