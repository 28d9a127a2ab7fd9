"""Class-incremental learning with a distilled memory (DWA Table 10): task splits, the seen-class views
of a set, its teacher and the test set, and a runner job restricted to seen classes."""

import pytest
import torch
from test_distill_runner import CFG, _toy
from torch import nn

from compendium.distill import continual as C
from compendium.distill import evaluate as E
from compendium.distill import runner, sets


def test_task_classes_are_cumulative_equal_groups():
    assert C.task_classes(10, 5) == [(0, 1), (0, 1, 2, 3), (0, 1, 2, 3, 4, 5), tuple(range(8)), tuple(range(10))]
    assert C.task_classes(4, 2, order=[3, 1, 0, 2]) == [(3, 1), (3, 1, 0, 2)]
    with pytest.raises(ValueError, match="equal tasks"):
        C.task_classes(10, 3)
    with pytest.raises(ValueError, match="permutation"):
        C.task_classes(3, 1, order=[0, 0, 1])


def test_seen_view_keeps_only_seen_classes_and_renumbers():
    x = torch.randn(12, 1, 4, 4)
    y = torch.arange(4).repeat(3)
    soft = torch.softmax(torch.randn(12, 4), 1)
    d = sets.DistilledSet(x, y, 4, (0.5,), (0.2,), "m", soft_labels=soft)
    v, t = C.seen_view(d, [2, 0], teacher=nn.Flatten())
    assert v.num_classes == 2 and len(v) == 6
    assert torch.equal(v.labels, torch.where(y[(y == 2) | (y == 0)] == 2, 0, 1))
    assert torch.allclose(v.soft_labels.sum(1), torch.ones(6))
    assert torch.allclose(
        v.soft_labels[:, 0] / v.soft_labels[:, 1], soft[(y == 2) | (y == 0)][:, 2] / soft[(y == 2) | (y == 0)][:, 0]
    )
    logits = torch.randn(3, 4)
    assert torch.equal(t(logits), logits[:, [2, 0]])  # the teacher sees only the seen classes, in order
    with pytest.raises(ValueError, match="distinct"):
        C.seen_view(d, [1, 1])
    ti, tl = C.test_view(x, y, [3])
    assert len(ti) == 3 and tl.tolist() == [0, 0, 0]


def test_runner_job_tests_on_the_seen_classes_only():
    x, y = _toy()
    d = sets.from_real(x, y, torch.arange(0, 18, 2), 3, (0.3,), (0.3,), "random")
    v, _ = C.seen_view(d, (0, 1))
    job = runner.Job({"task": 1}, v, CFG, seed=0, classes=(0, 1))
    (row,) = runner.evaluate_many([job], x, y, workers=0)
    direct = E.evaluate(v, *C.test_view(x, y, (0, 1)), CFG, 0)
    assert row["acc"] == direct["final_acc"]
    with pytest.raises(ValueError, match="outside"):  # without the class filter, labels 2 are out of range
        runner.evaluate_many([runner.Job({"task": 1}, v, CFG)], x, y, workers=0)
