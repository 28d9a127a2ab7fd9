import math

import pytest

from compendium.rela import schedule as S


def run_switch(losses):
    s = S.EMASwitch()
    for t, loss in enumerate(losses):
        if s.switched:
            break
        s.update(loss)
    return s


def first_k_meeting_threshold(c, a=0.999, b=0.99, thr=0.995, s0=2.0, f0=1.0, kmax=100000):
    """Closed form of the two EMAs for a flat loss c (derived independently of the code)."""
    for k in range(kmax):
        f = c + (f0 - c) * a**k
        s = c + b**k * (s0 - c) + (1 - b) * (f0 - c) * a * (a**k - b**k) / (a - b)
        if math.exp(-max(s - f, 0.0)) >= thr:
            return k
    raise AssertionError


@pytest.mark.parametrize("c", [1.0, 0.5, 0.3, 0.1])
def test_switch_step_matches_the_closed_form_for_flat_losses(c):
    s = run_switch([c] * 20000)
    assert s.switched
    # code order: the ReLA phase lasts n* + 1 steps, n* = updates until the state meets the threshold
    assert abs(s.switch_step - (first_k_meeting_threshold(c) + 1)) <= 1
    assert s.lam == 0.0 and s.needs_ssl and not s.needs_rela


def test_flat_loss_one_by_hand():
    # l_f stays 1, l_s = 1 + 0.99^k: threshold when 0.99^k <= -ln(0.995)
    n_star = math.ceil(math.log(-math.log(0.995)) / math.log(0.99))
    assert run_switch([1.0] * 5000).switch_step == n_star + 1


def test_slowly_falling_losses_switch_prematurely():
    def curve(tau):
        return [0.2 + 0.8 * math.exp(-t / tau) for t in range(40000)]

    fast, mid, slow = (run_switch(curve(t)).switch_step for t in (500, 2000, 10000))
    assert fast < mid, "a faster-converging loss switches earlier"
    assert slow < mid, "a very slowly falling loss fools the EMA warm-up and switches early"


def test_switch_is_one_way_and_logged():
    s = S.EMASwitch()
    for _ in range(600):
        s.update(1.0 if not s.switched else None)
    assert s.switched and s.history[-1]["lam"] == 0.0
    assert sum(h["lam"] for h in s.history) == s.switch_step
    with pytest.raises(ValueError):
        S.EMASwitch().update(None)


def test_v1_continuous_schedule_decays_from_0_8():
    s = S.V1Continuous()
    lams = []
    for _ in range(10000):
        s.update(1.0)
        lams.append(s.lam)
    assert lams[0] == pytest.approx(0.8, abs=1e-6)
    assert all(b <= a + 1e-12 for a, b in zip(lams, lams[1:]))
    assert 0 <= lams[-1] < 0.01
    # direct evaluation of the recursion: rho_t = exp(-40 * 0.999^(t-1)) for a flat loss 1.0
    rho_m = 0.0
    for t in range(1, 3001):
        rho_m = 0.95 * rho_m + 0.05 * math.exp(-40 * 0.999 ** (t - 1))
    assert lams[2999] == pytest.approx(0.8 - 0.8 * rho_m, rel=1e-9)


def test_epoch_fraction_and_constant():
    e = S.make("epochs", w=0.3, epochs=10)
    seen = []
    for epoch in range(10):
        e.update(None, epoch=epoch)
        seen.append(e.lam)
    assert seen[:2] == [1.0, 1.0] and seen[3:] == [0.0] * 7
    c = S.make("constant", value=0.25)
    assert c.lam == 0.25 and c.needs_rela and c.needs_ssl
    with pytest.raises(ValueError):
        S.make("constant", value=1.5)
    with pytest.raises(ValueError):
        S.make("nope")


def test_epoch_fraction_reports_its_switch_step():
    s = S.make("epochs", w=0.5, epochs=4)
    assert s.switch_step is None
    for epoch in range(4):
        for _ in range(3):
            s.update(0.5, epoch=epoch)
        s.epoch = epoch + 1
    assert s.switch_step == 6 and s.lam == 0.0


def test_step_fraction_runs_rela_for_the_first_w_of_the_steps():
    s = S.make("first", w=0.4, total=10)
    lams = []
    for _ in range(10):
        lams.append(s.lam)
        s.update(0.5 if s.lam else None)
    assert lams == [1.0] * 4 + [0.0] * 6
    assert s.switch_step == 4


@pytest.mark.parametrize("w, expected", [(0.0, [0.0] * 5), (1.0, [1.0] * 5)])
def test_step_fraction_ends(w, expected):
    s = S.make("first", w=w, total=5)
    lams = []
    for _ in range(5):
        lams.append(s.lam)
        s.update(0.5 if s.lam else None)
    assert lams == expected and s.switch_step is None


@pytest.mark.parametrize("kw", [dict(w=1.5, total=10), dict(w=0.5, total=0)])
def test_step_fraction_rejects_bad_settings(kw):
    with pytest.raises(ValueError):
        S.make("first", **kw)
