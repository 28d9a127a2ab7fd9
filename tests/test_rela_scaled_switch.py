import math

import pytest

from compendium.rela import scaled_switch as SW
from compendium.rela import schedule as S


def run_switch(losses):
    s = S.EMASwitch()
    for loss in losses:
        if s.switched:
            break
        s.update(loss)
    return s


@pytest.mark.parametrize("scale", [0.1, 0.25, 0.5])
def test_scaled_switch_fires_scale_times_sooner_on_a_flat_loss(scale):
    s = SW.scaled(scale)
    assert s.fast_beta == pytest.approx(1 - 0.001 / scale) and s.slow_beta == pytest.approx(1 - 0.01 / scale)
    for _ in range(20000):
        if s.switched:
            break
        s.update(1.0)
    # flat loss: l_s - l_f = slow_beta^k; the threshold -ln(0.995) is met after ln(0.0050125) / ln(slow_beta) updates
    n_star = math.ceil(math.log(-math.log(0.995)) / math.log(1 - 0.01 / scale))
    assert s.switch_step == n_star + 1
    assert abs(s.switch_step - scale * run_switch([1.0] * 5000).switch_step) <= 3


def test_scaled_switch_with_scale_one_is_the_camera_ready_rule():
    losses = [0.2 + 0.8 * math.exp(-t / 500) for t in range(20000)]
    a, b = run_switch(losses), SW.scaled(1.0)
    for loss in losses:
        if b.switched:
            break
        b.update(loss)
    assert a.switch_step == b.switch_step


def test_time_scale_is_the_full_budget_over_the_papers():
    assert SW.time_scale(SW.PAPER_FULL_STEPS) == 1.0
    assert SW.time_scale(3900) == pytest.approx(0.1)
    assert SW.time_scale(60) == SW.MIN_TIME_SCALE  # a smoke run: the floor
    with pytest.raises(ValueError, match="time_scale"):
        SW.scaled(0.005)
    with pytest.raises(ValueError, match="full_steps"):
        SW.time_scale(0)
