"""Writing a stage's products: figures (PNG + PDF, byte-stable), tables (CSV + Markdown),
metrics (JSON, DVC metrics) and plot data (CSV, DVC plots).

Everything goes under :func:`compendium.core.paths.output_root` (``reports/`` through nbrun's
staging area in the pipeline), in a folder named after the stage::

    figures/<stage>/<name>.{png,pdf}   tables/<stage>/<name>.{csv,md}
    metrics/<stage>.json               plots/<stage>/<name>.csv
    claims/<stage>.csv                 (rows of the claims ledger, see compendium.verdicts.claims)
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import os
import re
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

from compendium.core import paths, volatile
from compendium.core.tables import markdown_table

PNG_METADATA = {"Software": None}
PDF_METADATA = {"CreationDate": None, "Producer": None, "Creator": None}

#: the longest table written as Markdown too (longer ones: CSV only, e.g. per-step loss curves)
MARKDOWN_ROWS = 500


def setup_style() -> None:
    """One look for every figure (seaborn's whitegrid theme, modest inline size, legible legends) and
    every table a notebook shows (:func:`table_html`)."""
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="notebook")
    matplotlib.rcParams.update(
        {
            "figure.dpi": 80,
            "savefig.bbox": "tight",
            "pdf.fonttype": 42,
            "svg.hashsalt": "compendium",
            "legend.fontsize": 10,
            "legend.title_fontsize": 10,
        }
    )
    try:
        from IPython import get_ipython  # inside a kernel: DataFrames are shown as table_html renders them
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, table_html)


def cell_html(value: Any, digits: int = 3) -> str:
    """One table cell as HTML: floats to ``digits`` decimals, missing values empty, text escaped, and the
    papers' table marks the tables use kept as marks (``**best**`` bold, ``<u>second</u>`` underlined)."""
    if value is None or (isinstance(value, (float, np.floating)) and math.isnan(value)):
        return ""
    if isinstance(value, (float, np.floating)):
        return f"{value:.{digits}f}"
    text = html.escape(str(value), quote=False)
    text = text.replace("&lt;u&gt;", "<u>").replace("&lt;/u&gt;", "</u>")
    return re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)


def table_html(df: pd.DataFrame, digits: int = 3) -> str:
    """A DataFrame as a page shows it: each cell by :func:`cell_html` (rounded floats, escaped text,
    the table marks as bold and underline), and no index where it is only row numbers (a RangeIndex);
    a labelled index stays."""
    uuid = hashlib.sha1(df.to_csv().encode()).hexdigest()[:8]  # the same page for the same table
    styler = Styler(df, uuid=uuid, cell_ids=False).format(lambda v: cell_html(v, digits))
    if isinstance(df.index, pd.RangeIndex):
        styler = styler.hide(axis="index")
    return styler.to_html()


def _clean(value: Any) -> Any:
    """JSON-safe metrics: numpy/torch scalars to Python, NaN/inf to None."""
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 0) == 0:
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


class Reporter:
    """Writes the products of one stage (``stage`` = its params section and notebook name)."""

    def __init__(self, stage: str, root: Path | None = None, dpi: int = 150):
        if not 50 <= dpi <= 150:
            raise ValueError(f"dpi must be in [50, 150] to keep reports/ lean, got {dpi}")
        self.stage = stage
        self.root = Path(root) if root is not None else paths.output_root()
        self.dpi = dpi
        self.written: list[Path] = []

    def _path(self, kind: str, name: str, suffix: str) -> Path:
        p = self.root / kind / self.stage / f"{name}{suffix}"
        p.parent.mkdir(parents=True, exist_ok=True)
        self.written.append(p)
        return p

    def figure(self, fig, name: str) -> Path:
        """Save ``fig`` as PNG (at most 150 dpi) and PDF, without timestamps."""
        png = self._path(paths.FIGURES, name, ".png")
        fig.savefig(png, dpi=self.dpi, metadata=PNG_METADATA, bbox_inches="tight")
        fig.savefig(self._path(paths.FIGURES, name, ".pdf"), metadata=PDF_METADATA, bbox_inches="tight")
        return png

    def table(self, df, name: str, float_format: str = "%.4g", index: bool = False) -> Path:
        """Save a pandas table as CSV (machine-readable truth) and Markdown (for reading). A table longer
        than ``MARKDOWN_ROWS`` (a per-step curve) is no reading: its Markdown file says where the CSV is.

        Columns an identical rerun would not reproduce (wall-clock seconds, memory peaks:
        :func:`compendium.core.volatile.volatile_columns`) stay out of ``tables/``, which other stages read;
        the whole table as measured, those columns included, goes to ``timings/<stage>/<name>.csv``, which
        no stage depends on except where its product is itself a table of costs (stated in dvc.yaml)."""
        moved = volatile.volatile_columns(df.columns)
        if moved:
            df.to_csv(self._path(paths.TIMINGS, name, ".csv"), index=index, float_format=float_format)
            df = df.drop(columns=moved)
        csv = self._path(paths.TABLES, name, ".csv")
        df.to_csv(csv, index=index, float_format=float_format)
        md = self._path(paths.TABLES, name, ".md")
        if len(df) > MARKDOWN_ROWS:
            md.write_text(f"{len(df):,} rows (columns: {', '.join(map(str, df.columns))}): see `{csv.name}`.\n")
        else:
            md.write_text(markdown_table(df, index=index) + "\n")
        return csv

    def plot_data(self, df, name: str) -> Path:
        """Save a tidy CSV that ``dvc plots`` renders (declared in dvc.yaml)."""
        csv = self._path(paths.PLOTS, name, ".csv")
        df.to_csv(csv, index=False, float_format="%.6g")
        return csv

    def claims(self, rows) -> Path:
        """Write this stage's rows of the claims ledger (``claims/<stage>.csv``), each with this
        stage's name and the scale nbrun runs it at (``interactive`` outside the pipeline). ``rows``:
        :class:`compendium.verdicts.claims.Claim` rows (not imported here: a stage's deps stay off the verdict
        library unless it builds claims)."""
        from dataclasses import replace

        scale = os.environ.get(paths.SCALE_ENV) or "interactive"
        rows = [replace(r, stage=self.stage, scale=scale).record() for r in rows]
        p = self.root / paths.CLAIMS / f"{self.stage}.csv"
        p.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_csv(p, index=False)
        self.written.append(p)
        return p

    def document(self, name: str) -> Path:
        """A file at the top of the output root (e.g. ``claims.md``), declared in dvc.yaml."""
        p = self.root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        self.written.append(p)
        return p

    def metrics(self, values: dict) -> Path:
        """Write the stage's metrics JSON (a DVC metrics file)."""
        p = self.root / paths.METRICS / f"{self.stage}.json"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(_clean(values), indent=2, sort_keys=True) + "\n")
        self.written.append(p)
        return p

    def timings(self, values: dict) -> Path:
        """Write the stage's wall-clock times (``timings/<stage>.json``). They stay out of every file a
        downstream stage reads (:mod:`compendium.core.volatile`), so that an identical rerun leaves
        those byte-identical; dvc.yaml declares this file as an output no stage depends on."""
        p = self.root / paths.TIMINGS / f"{self.stage}.json"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(_clean(values), indent=2, sort_keys=True) + "\n")
        self.written.append(p)
        return p


def provenance() -> dict:
    """Versions, git commit and the DVC stage: the notebook's colophon (rrtools)."""
    import os
    import platform
    import subprocess
    import sys

    import torch

    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=paths.ROOT, capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    import numpy
    import pandas

    return {
        "git_commit": commit or "unknown",
        "dvc_stage": os.environ.get("DVC_STAGE", "(not under dvc)"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "pandas": pandas.__version__,
        "matplotlib": matplotlib.__version__,
    }
