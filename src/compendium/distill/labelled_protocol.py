"""DWA, SRe2L, RDED and ReLA's random real images in the labelled family's regime: the sound test of DWA's Tables 1
and 3 and of ReLA's Table 5 on 2 cores.

DWA (Du et al., NeurIPS 2024), SRe2L (Yin et al., NeurIPS 2023) and RDED (Sun et al., CVPR 2024) distil from a
teacher trained on the whole training set and judge each set by a fresh student trained on it with the teacher's
soft labels; ReLA's Table 5 sets random real images with the same labels beside them. The pipeline's
``dd_inversion`` stage runs them against a teacher of 84% trained 2 epochs on 20,000 images, with students of
300 steps tested on 1,000 images and one synthesis per set, which a reviewer cannot accept as a test of which set
is better. The regime study (:mod:`compendium.distill.regime`) measured what a sound test needs on these cores:

* the teacher: the study's ConvNet of width 32 (BatchNorm) trained 20 epochs on all 60,000 images (seed 0: 90.2% on
  the whole test set, past its plateau at 10 epochs; its weights are committed beside the study's records);
* the student: the study's Conv-3 of width 16 with instance norm, trained with the teacher's labels for
  :attr:`Plan.student_steps` steps, where its curve on 10 random real images per class stops rising (4,800);
* the whole test set (10,000 images; a binomial s.e. of about 0.4 points, against 1.4 on 1,000);
* one synthesis per seed: seed ``s``'s student trains on seed ``s``'s set, so an interval over seeds covers the
  synthesis's randomness as well as the student's.

Each (arm, seed) at :attr:`Plan.ipc` images per class is one record under ``reports/regime/labelled_sets/``,
written as it finishes (``python -m compendium.distill.labelled_protocol --hours 1``; resumable, committed; about
4 minutes per record on one core here: a recovery of about 1.3 min and a student of about 2.5): the
set is synthesised with the ``dd_inversion`` stage's recovery settings (:attr:`Plan.values`, the same
registered methods, :data:`compendium.distill.methods.inversion.METHODS`), then evaluated. The arms are DWA
Table 1's (SRe2L, DWA), ReLA Table 5's (RDED and ReLA's random real images, arm B of DWA's Table 3: the real
images DWA starts from, unchanged), then the rest of DWA Table 3's ladder (D: SRe2L from real images, E: with
DWA's decoupled variance weight, F: DWA with a random weight adjustment). The ``dd_regime`` stage judges the
claims from these records.

``--ipc 50`` runs DWA's Tables 1 and 3 at 50 images per class (arms B, SRe2L, DWA, E and F; SRe2L's floor stays
arm B at one image per class), where the paper places the benefit of diversity (its Table 3: a random adjustment
hurts at ipc 10 and no longer at 50) and where DWA's real images, with the teacher's labels, leave the student furthest
below its whole-set accuracy. Its student trains for the regime study's plateau of the teacher-label curve on 50
random real images per class (:func:`student_plateau`; the study's records decide it, not a number here).

Example:
    >>> Plan().jobs()[:4]
    [("B: real images (DWA's init)", 10, 0), ('sre2l', 10, 0), ('dwa', 10, 0), ('rded', 10, 0)]
"""

from __future__ import annotations

import argparse
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import torch

from compendium.core.progress import say
from compendium.distill import evaluate as E
from compendium.distill import records as R
from compendium.distill import regime
from compendium.distill.methods import inversion as inversion_methods
from compendium.distill.methods.base import Pool

RECORDS = regime.RECORDS.parent / "labelled_sets"
TEACHER = regime.MODELS / "teacher_w32_e20_seed0.pt"
#: the arms of DWA Table 1 and ReLA Table 5, then DWA Table 3's other rungs
CORE_ARMS = (R.REAL_INIT, "sre2l", "dwa", "rded")
LADDER_ARMS = ("D: real init", "E: + decoupled var", "F: + random adjust")
#: the arms run at an ipc other than 10: DWA's Tables 1 and 3 (its real images and DWA first, which decide DWA's
#: regime; SRe2L; rungs E and F)
DWA_ARMS = (R.REAL_INIT, "dwa", "sre2l", "E: + decoupled var", "F: + random adjust")


def student_plateau(ipc: int, records: pd.DataFrame | None = None) -> int:
    """The student's steps at ``ipc``: where the regime study's teacher-label curve on ``ipc`` random real images
    per class stops rising (:func:`compendium.distill.regime.plateaus`, from its committed records). A curve whose
    plateau lies beyond the study's grid is an error naming the command that extends it.

        >>> rec = pd.DataFrame({"curve": "random ipc 10", "labels": "teacher", "seed": 0, "epoch": float("nan"),
        ...                     "steps": [1200, 4800, 19200], "test acc": [0.70, 0.77, 0.772]})
        >>> student_plateau(10, rec)
        4800
    """
    rec = regime.load() if records is None else records
    curve = f"random ipc {ipc}"
    p = regime.plateaus(rec) if len(rec) else pd.DataFrame(columns=["curve", "labels"])
    row = p[(p["curve"] == curve) & (p["labels"] == "teacher")]
    if not len(row) or not bool(row["reached"].iloc[0]):
        where = "has no such curve" if not len(row) else f"still gains at {int(row['longest'].iloc[0]):,} steps"
        raise ValueError(
            f"the regime study's {curve} curve (teacher labels) {where}: its students' plateau is unknown; extend "
            "`regime.Plan.long_steps` and run `python -m compendium.distill.regime`, then commit its records"
        )
    return int(row["plateau at"].iloc[0])


def _dd_inversion_values() -> dict:
    """The ``dd_inversion`` stage's recovery settings at ``cpu`` (params.yaml); a test keeps the two equal."""
    return dict(
        iterations=1000, lr=0.25, jitter=2, rho=0.015, K=12, dwa_r_var=11.0, classes_per_batch=0,
        rded_factor=1, rded_images_per_class=300, dataset="fashion-mnist",
    )  # fmt: skip


#: the regime study's plateau of the teacher-label student on 10 random real images per class (steps)
STEPS_AT_10 = 4800


@dataclass(frozen=True)
class Plan:
    ipc: int = 10
    #: the floor SRe2L's regime check asks its set to clear: arm B (random real images, teacher labels) at this ipc
    floor_ipc: int = 1
    seeds: tuple = (0, 1, 2, 3, 4, 5)
    arms: tuple = CORE_ARMS + LADDER_ARMS
    #: the regime study's plateau of the teacher-label student on 10 random real images per class; None: read it
    #: from the study's records at :attr:`ipc` (:func:`student_plateau`)
    student_steps: int | None = STEPS_AT_10
    #: the steps of SRe2L's floor (arm B at :attr:`floor_ipc`): trained as at 10 images per class, past its own
    #: plateau, whatever :attr:`ipc` is
    floor_steps: int = STEPS_AT_10
    values: dict = field(default_factory=_dd_inversion_values)

    @classmethod
    def at(cls, ipc: int, **kw) -> Plan:
        """The plan at ``ipc``: every arm at 10 images per class; DWA's arms (:data:`DWA_ARMS`) elsewhere, with the
        students at the regime study's plateau for that ipc.

            >>> Plan.at(50).arms == DWA_ARMS and Plan.at(50).student_steps is None, Plan.at(10) == Plan()
            (True, True)
        """
        if ipc == cls.ipc:
            return cls(**kw)
        return cls(**{"ipc": ipc, "arms": DWA_ARMS, "student_steps": None, **kw})

    def steps(self) -> int:
        """The student's steps: :attr:`student_steps`, else the regime study's plateau at :attr:`ipc`."""
        return self.student_steps if self.student_steps is not None else student_plateau(self.ipc)

    def jobs(self) -> list[tuple[str, int, int]]:
        """(arm, ipc, seed): every seed of the Table 1 / Table 5 arms first (they decide the headline claims), then
        the floor of SRe2L's regime (arm B at :attr:`floor_ipc`), then the ladder's rungs."""
        core = [a for a in self.arms if a in CORE_ARMS]
        rest = [a for a in self.arms if a not in CORE_ARMS]
        floor = [(R.REAL_INIT, self.floor_ipc, s) for s in self.seeds] if "sre2l" in self.arms else []
        return (
            [(a, self.ipc, s) for s in self.seeds for a in core]
            + floor
            + [(a, self.ipc, s) for s in self.seeds for a in rest]
        )


def arm_spec(arm: str, values: dict) -> tuple[str, dict]:
    """(registered method, overrides) of an arm: a method of :data:`inversion_methods.METHODS`, arm B or a rung
    of the ladder (:func:`compendium.distill.methods.inversion.ladder`)."""
    arms = {m: (m, {}) for m in inversion_methods.METHODS}
    arms |= {R.REAL_INIT: inversion_methods.REAL_INIT_ARM} | inversion_methods.ladder(values)
    if arm not in arms:
        raise ValueError(f"unknown arm {arm!r}; known: {sorted(arms)}")
    return arms[arm]


def teacher(file: Path = TEACHER) -> torch.nn.Module:
    """The regime study's committed teacher of seed 0 (eval mode)."""
    if not Path(file).is_file():
        raise FileNotFoundError(
            f"{file}: the labelled regime study's teacher of seed 0 is missing; run "
            "`python -m compendium.distill.regime --seeds 0` (it writes it), then commit it"
        )
    net = E.build_student(regime.teacher_config(regime.Plan(), 1), (1, 28, 28), 10)
    net.load_state_dict(torch.load(file, weights_only=True))
    return net.eval()


def record_file(arm: str, ipc: int, seed: int, root: Path = RECORDS) -> Path:
    slug = re.sub(r"[^a-z0-9]+", "-", arm.lower()).strip("-")
    return Path(root) / f"{slug}-ipc-{ipc}__seed{seed}.csv"


def run_one(plan: Plan, arm: str, ipc: int, seed: int, net: torch.nn.Module, steps: int | None = None) -> pd.DataFrame:
    """Synthesise ``arm``'s set of ``ipc`` images per class for seed ``seed`` (the synthesis seed is the evaluation
    seed) and train the regime's student on it with ``net``'s labels for ``steps`` (default :meth:`Plan.steps`); test
    on the whole test set. The record keeps the set's displacement from the real images it started from (grey levels
    RMS; NaN from noise)."""
    steps = plan.steps() if steps is None else steps
    tr, te, mean, std = regime._data()
    method, overrides = arm_spec(arm, plan.values)
    m = inversion_methods.METHODS[method]
    pool = Pool(tr.images, tr.labels, mean, std, 10, plan.values["dataset"])
    cfg = {**m.config(ipc, {**plan.values, "num_classes": 10}), **overrides, "seed": seed}
    t0 = time.perf_counter()
    dset = m.synthesize(pool, ipc, net, **cfg)
    synth = time.perf_counter() - t0
    scfg = regime.student_config(regime.Plan(), steps, "teacher")
    t1 = time.perf_counter()
    r = E.evaluate(dset, te.images, te.labels, scfg, seed, teacher=net)
    return pd.DataFrame(
        [
            {
                "arm": arm,
                "ipc": ipc,
                "seed": seed,
                "test acc": r["final_acc"],
                "test images": len(te.labels),
                "iterations": int(cfg.get("iterations", 0)) if method != "rded" else 0,
                "displacement": R.displacement(dset, tr.images),
                "student steps": steps,
                "synthesis seconds": synth,
                "seconds": time.perf_counter() - t1,
            }
        ]
    )


def run_pieces(plan: Plan, hours: float = 0.0, root: Path = RECORDS, teacher_file: Path = TEACHER) -> list[Path]:
    """Every missing record of :meth:`Plan.jobs`, each written as it finishes; no new one starts after ``hours``."""
    for arm in plan.arms:
        arm_spec(arm, plan.values)  # an unknown arm fails before any compute
    steps = plan.steps()  # as does a plateau the regime study has not found
    net, t0, written = None, time.perf_counter(), []
    for arm, ipc, seed in plan.jobs():
        out = record_file(arm, ipc, seed, root)
        if out.is_file():
            continue
        if hours and time.perf_counter() - t0 > hours * 3600:
            say(f"labelled sets: {hours} h spent; run again to go on")
            break
        net = net if net is not None else teacher(teacher_file)
        df = run_one(plan, arm, ipc, seed, net, plan.floor_steps if ipc != plan.ipc else steps)
        regime._write(df, out)
        written.append(out)
        say(
            f"labelled sets: {arm} ipc {ipc} seed {seed}: {float(df['test acc'].iloc[0]):.4f} "
            f"(synthesis {float(df['synthesis seconds'].iloc[0]):.0f} s, student {float(df['seconds'].iloc[0]):.0f} s)"
        )
    return written


def load(root: Path = RECORDS) -> pd.DataFrame:
    files = sorted(Path(root).glob("*__seed*.csv"))
    return pd.concat([pd.read_csv(f) for f in files], ignore_index=True) if files else pd.DataFrame()


def summary(records: pd.DataFrame) -> pd.DataFrame:
    """Per (arm, ipc): the seeds, the mean and SD of the test accuracy (%), and the mean displacement from the real
    images (grey levels RMS; NaN from noise), in :meth:`Plan.jobs`' arm order.

        >>> rec = pd.DataFrame({"arm": ["dwa", "dwa"], "ipc": [10, 10], "seed": [0, 1], "test acc": [0.7, 0.8],
        ...                     "displacement": [20.0, 30.0]})
        >>> summary(rec).to_dict("records")
        [{'arm': 'dwa', 'ipc': 10, 'seeds': 2, 'test acc (%)': 75.0, 'SD': 7.07, 'displacement': 25.0}]
    """
    if not len(records):
        return pd.DataFrame(columns=["arm", "ipc", "seeds", "test acc (%)", "SD", "displacement"])
    order = {a: i for i, a in enumerate(CORE_ARMS + LADDER_ARMS)}
    g = records.groupby(["arm", "ipc"], sort=False)
    out = pd.DataFrame(
        {
            "seeds": g["seed"].nunique(),
            "test acc (%)": (100 * g["test acc"].mean()).round(2),
            "SD": (100 * g["test acc"].std()).round(2),
            "displacement": g["displacement"].mean().round(1),
        }
    ).reset_index()
    key = out["arm"].map(lambda a: order.get(a, len(order))) * 1000 - out["ipc"]
    return out.iloc[key.argsort(kind="stable")].reset_index(drop=True)


def main(argv=None) -> int:
    """``--ipc``, ``--arms`` and ``--seeds`` choose the pieces (default: :meth:`Plan.at`'s); ``--hours`` and
    ``--threads`` as every record maker has them."""
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--arms", nargs="+", help="(default: every arm of the plan; quote names with spaces)")
    ap.add_argument("--seeds", nargs="+", type=int, help="(default: 0 1 2 3 4 5)")
    ap.add_argument("--ipc", type=int, default=Plan.ipc, help="images per class (default 10; 50: DWA's arms)")
    a, rest = ap.parse_known_args(argv)
    plan = Plan.at(a.ipc, **{k: tuple(v) for k, v in vars(a).items() if v and k != "ipc"})
    try:
        plan.steps()
    except ValueError as e:
        ap.error(f"--ipc {a.ipc}: {e}")
    for arm in plan.arms:
        try:
            arm_spec(arm, plan.values)
        except ValueError as e:
            ap.error(f"--arms: {e}")
    return regime.piece_main(run_pieces, plan, __doc__, rest, parents=[ap])


if __name__ == "__main__":
    raise SystemExit(main())
