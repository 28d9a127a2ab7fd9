"""The claims ledger: one row per claim of a paper, with our check and its verdict.

Each stage that checks claims writes its rows with :meth:`compendium.report.Reporter.claims`
(``reports/claims/<stage>.csv``); the ``claims_ledger`` stage gathers every stage's rows into
``reports/claims.csv`` and ``reports/claims.md``. Empirical stages add rows the same way.

A verdict is computed, never typed: build it with :func:`verdict` from the check's outcome.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from pathlib import Path

VERDICTS = ("holds", "fails", "holds only under a condition", "not checkable here")
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
