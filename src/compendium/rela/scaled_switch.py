"""The camera-ready λ switch with its EMA time constants scaled to the run (a stated variant of ours).

The camera-ready Algorithm 1 (:class:`compendium.rela.schedule.EMASwitch`) smooths the ReLA loss with
EMAs of time constants 1 / (1 - beta) = 1,000 (ℓ_f) and 100 (ℓ_s) optimizer steps, tuned for the
paper's CIFAR-10 runs (100 epochs of 390 steps at the full budget). On a flat loss the switch needs at
least 528 ReLA steps, and about 3,000 on Fashion-MNIST's falling one; a run 10x shorter than the
paper's never leaves its ReLA phase, so its "+ReLA" arm is not the paper's method. ``switch_scaled``
multiplies both time constants by ``time_scale`` = the run's full-budget step count / the paper's
(beta -> 1 - (1 - beta) / time_scale; initial values and threshold unchanged), so the switch can fire
at the same fraction of the run. Every budget of a run shares the full budget's factor, as every
budget of the paper shares its constants.

>>> s = scaled(0.1)
>>> round(s.fast_beta, 4), round(s.slow_beta, 4)
(0.99, 0.9)
"""

from __future__ import annotations

from compendium.rela.schedule import EMASwitch

NAME = "switch_scaled"
#: the one-way EMA switches (Algorithm 1): the camera-ready constants and this scaled variant
SWITCHES = ("switch", NAME)

#: The camera-ready CIFAR-10 full budget: 100 epochs (App. K) of 50,000 images at batch 128 (390 steps).
PAPER_FULL_STEPS = 100 * 390

#: The smallest factor :func:`time_scale` gives (runs under 2% of the paper's, i.e. smoke tests): the slow
#: EMA then has a time constant of 5 steps.
MIN_TIME_SCALE = 0.02


def time_scale(full_steps: int) -> float:
    """The factor for a run whose full budget is ``full_steps`` optimizer steps:
    ``full_steps / PAPER_FULL_STEPS``, at least :data:`MIN_TIME_SCALE`."""
    if full_steps < 1:
        raise ValueError(f"full_steps must be >= 1, got {full_steps}")
    return max(full_steps / PAPER_FULL_STEPS, MIN_TIME_SCALE)


def scaled(time_scale: float) -> EMASwitch:
    """Algorithm 1 with both EMAs' time constants multiplied by ``time_scale``."""
    if not time_scale > 0.01:
        raise ValueError(f"time_scale must be > 0.01 (the slow EMA's beta stays positive), got {time_scale}")
    base = EMASwitch()
    return EMASwitch(fast_beta=1 - (1 - base.fast_beta) / time_scale, slow_beta=1 - (1 - base.slow_beta) / time_scale)
