"""The claims ledger: one row per claim of a paper, with our check and its verdict.

Each stage that checks claims writes its rows with :meth:`compendium.report.Reporter.claims`
(``reports/claims/<stage>.csv``); the ``claims_ledger`` stage gathers every stage's rows into
``reports/claims.csv`` and ``reports/claims.md``. Empirical stages add rows the same way.

A verdict is computed, never typed: build it with :func:`verdict` from the check's outcome, or with
:func:`margin_verdict_kw` where the claim is a comparison whose gap may sit inside seed noise
("within seed noise": neither direction is resolved at the scale we ran).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path

WITHIN_NOISE = "within seed noise"
VERDICTS = ("holds", "fails", "holds only under a condition", "not checkable here", WITHIN_NOISE)
COLUMNS = ("paper", "version", "location", "claim", "check", "verdict", "condition", "ours", "paper_numbers", "stage")


@dataclass(frozen=True)
class Claim:
    """One ledger row. ``paper_numbers`` only ever holds numbers printed in the paper."""

    paper: str
    version: str
    location: str
    claim: str
    check: str
    verdict: str
    ours: str
    paper_numbers: str = ""
    condition: str = ""
    stage: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.verdict == "holds only under a condition" and not self.condition:
            raise ValueError(f"{self.location}: a conditional verdict must state its condition")
        for f in ("paper", "location", "claim", "check", "ours"):
            if not getattr(self, f).strip():
                raise ValueError(f"{self.location or '?'}: field {f!r} is empty")


def verdict(holds: bool, condition_holds: bool | None = None, condition: str = "") -> tuple[str, str]:
    """``(verdict, condition)`` from the outcome of a check.

    ``holds`` is whether the claim holds as stated. If it does not, but it does under a stated
    condition (``condition_holds``), the verdict is conditional.
    """
    if holds:
        return "holds", ""
    if condition_holds:
        if not condition:
            raise ValueError("state the condition under which the claim holds")
        return "holds only under a condition", condition
    return "fails", ""


def to_frame(rows):
    import pandas as pd

    return pd.DataFrame([asdict(r) for r in rows], columns=list(COLUMNS))


def read_all(folder: Path):
    """Every stage's rows from ``folder/*.csv``, in stage-name order."""
    import pandas as pd

    files = sorted(Path(folder).glob("*.csv"))
    if not files:
        return pd.DataFrame(columns=list(COLUMNS))
    frames = []
    for f in files:
        frame = pd.read_csv(f, dtype=str, keep_default_na=False)
        missing = set(COLUMNS) - set(frame.columns)
        if missing:
            raise ValueError(f"{f} lacks columns {sorted(missing)}")
        frames.append(frame)
    df = pd.concat(frames, ignore_index=True)
    bad = sorted(set(df["verdict"]) - set(VERDICTS))
    if bad:
        raise ValueError(f"unknown verdicts {bad} under {folder}")
    return df[list(COLUMNS)]


def field_names() -> list[str]:
    return [f.name for f in fields(Claim)]


def verdict_kw(holds: bool, condition_holds: bool | None = None, condition: str = "") -> dict:
    """:func:`verdict` as keyword arguments of :class:`Claim`: ``Claim(..., **verdict_kw(ok), ours=...)``."""
    v, c = verdict(holds, condition_holds, condition)
    return {"verdict": v, "condition": c}


def pooled_noise(stds, n_seeds: int, n_averaged: int = 1) -> float:
    """Standard error of a difference of two cells, each a mean over ``n_seeds`` seeds, from the
    cells' seed stds pooled (root mean square): ``sigma * sqrt(2 / n_seeds)``, divided by
    ``sqrt(n_averaged)`` when the difference is itself a mean of that many independent differences.
    NaN with fewer than two seeds (no spread to pool)."""
    import numpy as np

    s = np.asarray(list(stds), dtype=float)
    s = s[np.isfinite(s)]
    if n_seeds < 2 or s.size == 0:
        return float("nan")
    if n_averaged < 1:
        raise ValueError(f"n_averaged must be >= 1, got {n_averaged}")
    return float(np.sqrt(np.mean(s ** 2)) * np.sqrt(2.0 / n_seeds) / np.sqrt(n_averaged))


def margin_verdict_kw(deltas, noise: float, k: float = 1.0) -> dict:
    """Verdict keywords of a claim that every ``delta`` (A − B, the claim: A beats B) is positive,
    judged against the noise of one delta (e.g. :func:`pooled_noise`): *holds* if every delta exceeds
    ``k * noise``, *fails* if some delta is below ``-k * noise``, otherwise *within seed noise*. With
    no noise estimate (NaN: one seed) the signs decide, as :func:`verdict_kw`."""
    import numpy as np

    d = np.atleast_1d(np.asarray(deltas, dtype=float))
    if d.size == 0 or not np.isfinite(d).all():
        raise ValueError(f"deltas must be finite and non-empty, got {deltas!r}")
    m = k * noise if np.isfinite(noise) else 0.0
    if m < 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    if (d > m).all():
        return {"verdict": "holds", "condition": ""}
    if (d < -m).any() or m == 0.0:
        return {"verdict": "fails", "condition": ""}
    return {"verdict": WITHIN_NOISE, "condition": ""}
