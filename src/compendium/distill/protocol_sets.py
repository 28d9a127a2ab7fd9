"""The finished syntheses of DC's and DSA's own study (:mod:`compendium.distill.dc_protocol`), one set per seed,
as other experiments read them.

DC (Zhao, Mopuri & Bilen, ICLR 2021) and DSA (Zhao & Bilen, ICML 2021) condense every run's set anew: their
continual-learning memories, like their Table 1 cells, are one synthesis per seed. The study runs those syntheses
at the papers' settings (a ConvNet of width 128, real batches of 256 images per class, 1,000 outer iterations) and,
when a seed's run reaches its last iteration, keeps its set here (``reports/regime/dc_protocol/sets/``, a few KB,
committed), so that a stage uses each seed's set as the paper made it without the study's code or its cost.

Example:
    >>> set_file("dc", 1, 3, Path("records")).as_posix()
    'records/sets/dc-ipc-1__seed3.pt'
"""

from __future__ import annotations

from pathlib import Path

from compendium.core import paths
from compendium.distill.sets import DistilledSet

ROOT = paths.REPORTS / "regime" / "dc_protocol"


def set_file(method: str, ipc: int, seed: int, root: Path = ROOT) -> Path:
    """Where the study keeps ``method``'s set of ``seed`` at ``ipc`` once its synthesis finished."""
    return Path(root) / "sets" / f"{method}-ipc-{ipc}__seed{seed}.pt"


def finished_sets(method: str, ipc: int, seeds, root: Path = ROOT, dataset: str | None = None) -> dict:
    """``{seed: DistilledSet}`` of the seeds among ``seeds`` whose synthesis of ``method`` at ``ipc`` finished
    (a seed without a set is left out: its run is unfinished or was never started)."""
    return {
        int(s): DistilledSet.load(f, dataset) for s in seeds if (f := set_file(method, ipc, int(s), root)).is_file()
    }
