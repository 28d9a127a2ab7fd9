"""ReLA's loss weighting: L = lam * L_ReLA + (1 - lam) * L_SSL, with lam from a schedule.

* :class:`EMASwitch`: the camera-ready's Algorithm 1 and the released code.
  A one-way switch from lam = 1 (only L_ReLA) to lam = 0 (only L_SSL). While in the ReLA phase,
  each step's ReLA loss l_c updates l_f <- 0.999 l_f + 0.001 l_c and l_s <- 0.99 l_s + 0.01 l_f
  (initial l_s = 2.0, l_f = 1.0). The switch fires once exp(-max(l_s - l_f, 0)) >= 0.995. In the
  code's order, rho is computed from the state *before* the current step's update, so the ReLA phase
  lasts n* + 1 optimizer steps, where n* is the number of updates after which the state first
  meets the threshold. ``switch_step`` is the last ReLA-phase step (1-based).
* :class:`V1Continuous`: v1's Algorithm 1. rho = exp(-40 max(l_m - l_c, 0)), rho_m <- 0.95 rho_m +
  0.05 rho, l_m <- 0.999 l_m + 0.001 l_c (initial l_m = 2.0, rho_m = 0), lam = 0.8 - 0.8 rho_m,
  updated every step (both losses are computed every step).
* :class:`EpochFraction`: ReLA for the first w fraction of the epochs, then SSL (code's
  ``--rela_conlam``; camera-ready Fig. 4b).
* :class:`StepFraction`: ReLA for the first w fraction of the optimizer steps, then SSL (the same
  strategy at step granularity).
* :class:`Constant`: a constant mixing weight (v1 Fig. 4b).

Each schedule implements the trainer's :class:`compendium.ssl.train.Schedule`: ``lam`` (the weight for
the coming step), ``update(rela_loss, epoch)`` (called once per step after the loss is computed),
``step_logs()``, ``switch_step``, ``end_epoch(epoch)`` and ``state_dict()``/``load_state_dict()``;
``needs_ssl`` and ``needs_rela`` say whether that loss must be computed at all. ``history`` logs every step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


class _Schedule:
    """The defaults of :class:`compendium.ssl.train.Schedule`: no switch, nothing to log, nothing to do
    at the end of an epoch, and the state is every field."""

    switch_step: int | None = None

    def step_logs(self) -> dict:
        return {}

    def end_epoch(self, epoch: int) -> None:
        """``epoch`` epochs are done."""

    def state_dict(self) -> dict:
        return dict(vars(self))

    def load_state_dict(self, state: dict) -> None:
        for k, v in state.items():
            setattr(self, k, v)


@dataclass
class EMASwitch(_Schedule):
    slow: float = 2.0
    fast: float = 1.0
    fast_beta: float = 0.999
    slow_beta: float = 0.99
    threshold: float = 0.995
    switched: bool = False
    switch_step: int | None = None
    steps: int = 0
    history: list = field(default_factory=list)

    @property
    def lam(self) -> float:
        return 0.0 if self.switched else 1.0

    @property
    def needs_rela(self) -> bool:
        return not self.switched

    @property
    def needs_ssl(self) -> bool:
        return self.switched

    def rho(self) -> float:
        return math.exp(-max(self.slow - self.fast, 0.0))

    def update(self, rela_loss: float | None, epoch: int | None = None) -> None:
        self.steps += 1
        if self.switched:
            self.history.append(
                {"step": self.steps, "lam": 0.0, "rela_loss": None, "rho": 1.0, "slow": self.slow, "fast": self.fast}
            )
            return
        if rela_loss is None:
            raise ValueError("the ReLA phase needs the step's ReLA loss")
        rho = self.rho()  # from the state before this step's update (code order)
        self.fast = self.fast_beta * self.fast + (1 - self.fast_beta) * float(rela_loss)
        self.slow = self.slow_beta * self.slow + (1 - self.slow_beta) * self.fast
        self.history.append(
            {
                "step": self.steps,
                "lam": 1.0,
                "rela_loss": float(rela_loss),
                "rho": rho,
                "slow": self.slow,
                "fast": self.fast,
            }
        )
        if rho >= self.threshold:
            self.switched = True
            self.switch_step = self.steps

    def step_logs(self) -> dict:
        return {"rho": self.rho()}  # the switch criterion, from the updated state


@dataclass
class V1Continuous(_Schedule):
    loss_avg: float = 2.0
    rho_avg: float = 0.0
    scale: float = 40.0
    rho_beta: float = 0.95
    loss_beta: float = 0.999
    lam_max: float = 0.8
    steps: int = 0
    history: list = field(default_factory=list)
    _lam: float = 0.8

    @property
    def lam(self) -> float:
        return self._lam

    needs_rela = True
    needs_ssl = True

    def update(self, rela_loss: float, epoch: int | None = None) -> None:
        """One step of v1's Algorithm 1; ``lam`` then holds this step's weight."""
        self.steps += 1
        rho = math.exp(-max(self.loss_avg - float(rela_loss), 0.0) * self.scale)
        self.rho_avg = self.rho_beta * self.rho_avg + (1 - self.rho_beta) * rho
        self.loss_avg = self.loss_beta * self.loss_avg + (1 - self.loss_beta) * float(rela_loss)
        self._lam = self.lam_max - self.rho_avg * self.lam_max
        self.history.append({"step": self.steps, "lam": self._lam, "rela_loss": float(rela_loss), "rho": rho})


class _FirstW(_Schedule):
    """Shared by the "ReLA for the first w, then SSL" schedules: w in [0, 1], one loss at a time."""

    def _check_w(self):
        if not 0.0 <= self.w <= 1.0:
            raise ValueError(f"w must be in [0, 1], got {self.w}")

    @property
    def needs_rela(self) -> bool:
        return self.lam > 0

    @property
    def needs_ssl(self) -> bool:
        return self.lam < 1


@dataclass
class EpochFraction(_FirstW):
    """ReLA only while ``epoch < int(w * epochs)`` (0-based epochs), SSL only afterwards."""

    w: float
    epochs: int
    epoch: int = 0
    steps: int = 0
    last_rela_step: int | None = None
    history: list = field(default_factory=list)

    @property
    def switch_step(self) -> int | None:
        """The last ReLA-phase step, once the SSL phase has begun."""
        return self.last_rela_step if self.lam == 0 else None

    def __post_init__(self):
        self._check_w()

    @property
    def lam(self) -> float:
        return 1.0 if self.epoch < int(self.w * self.epochs) else 0.0

    def update(self, rela_loss: float | None, epoch: int | None = None) -> None:
        self.steps += 1
        if self.lam > 0:
            self.last_rela_step = self.steps
        self.history.append({"step": self.steps, "lam": self.lam, "rela_loss": rela_loss})
        if epoch is not None:
            self.epoch = epoch

    def end_epoch(self, epoch: int) -> None:
        self.epoch = epoch


@dataclass
class StepFraction(_FirstW):
    """ReLA for the first ``w`` of the ``total`` optimizer steps, then SSL: the camera-ready Fig. 4b
    static strategy ("the first 40% of the training leverages ReLA"), counted in steps where the code
    counts epochs (a short run has too few epochs for fractions like 0.2)."""

    w: float
    total: int
    steps: int = 0
    history: list = field(default_factory=list)

    def __post_init__(self):
        self._check_w()
        if self.total < 1:
            raise ValueError(f"total steps must be >= 1, got {self.total}")

    @property
    def rela_steps(self) -> int:
        return round(self.w * self.total)

    @property
    def lam(self) -> float:
        return 1.0 if self.steps < self.rela_steps else 0.0

    @property
    def switch_step(self) -> int | None:
        """The last ReLA-phase step, once the SSL phase has begun."""
        return self.rela_steps if 0 < self.rela_steps <= self.steps and self.rela_steps < self.total else None

    def update(self, rela_loss: float | None, epoch: int | None = None) -> None:
        self.history.append({"step": self.steps + 1, "lam": self.lam, "rela_loss": rela_loss})
        self.steps += 1


@dataclass
class Constant(_Schedule):
    value: float
    steps: int = 0
    history: list = field(default_factory=list)

    def __post_init__(self):
        if not 0.0 <= self.value <= 1.0:
            raise ValueError(f"lambda must be in [0, 1], got {self.value}")

    @property
    def lam(self) -> float:
        return self.value

    @property
    def needs_rela(self) -> bool:
        return self.value > 0

    @property
    def needs_ssl(self) -> bool:
        return self.value < 1

    def update(self, rela_loss: float | None, epoch: int | None = None) -> None:
        self.steps += 1
        self.history.append({"step": self.steps, "lam": self.value, "rela_loss": rela_loss})


KINDS = {"switch": EMASwitch, "v1": V1Continuous, "epochs": EpochFraction, "first": StepFraction, "constant": Constant}
ADAPTIVE = ("switch", "v1")  # the schedules that decide lambda from the ReLA loss (the papers' Algorithm 1)


def make(kind: str, **kw):
    """A schedule by name: ``switch`` (camera-ready), ``v1``, ``epochs`` (w, epochs), ``first`` (w, total
    steps), ``constant`` (value)."""
    if kind not in KINDS:
        raise ValueError(f"unknown lambda schedule {kind!r}; known: {sorted(KINDS)}")
    return KINDS[kind](**kw)
