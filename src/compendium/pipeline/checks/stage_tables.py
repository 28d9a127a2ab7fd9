"""A stage's recorded tables, read back by the stage that judges it (``claims_ledger``): a missing table names
the stage to rerun; the ``settings`` table is read as its JSON
values (:func:`compendium.core.records.read_settings`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from compendium.core.records import read_settings


def path(folder: Path, name: str) -> Path:
    """``folder/<name>.csv``, which must exist: else the error names the stage (the folder) to rerun."""
    f = Path(folder) / f"{name}.csv"
    if not f.is_file():
        stage = Path(folder).name
        raise FileNotFoundError(f"{f} is missing: run the stage {stage} (dvc repro -s {stage})")
    return f


def table(folder: Path, name: str, **kw) -> pd.DataFrame:
    """``folder/<name>.csv`` (``kw``: :func:`pandas.read_csv`'s)."""
    return pd.read_csv(path(folder, name), **kw)


def optional(folder: Path, name: str) -> pd.DataFrame | None:
    """``folder/<name>.csv``, or None where the stage wrote none or an empty one."""
    f = Path(folder) / f"{name}.csv"
    return pd.read_csv(f) if f.is_file() and f.read_text().strip() not in ("", '""') else None


def settings(folder: Path) -> dict:
    """The stage's ``settings`` table as values."""
    return read_settings(table(folder, "settings", dtype=str, keep_default_na=False))
