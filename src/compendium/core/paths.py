"""Every path of the compendium, resolved from the repository root (showyourwork's ``paths.py``).

Notebooks run from different working directories (papermill: the launch directory; nbval:
the notebook's folder), so nothing may use a relative path: import these instead.

Where a stage writes its products is decided by the environment, so that the pipeline can
stage them atomically (see :mod:`compendium.pipeline.nbrun`):

* ``COMPENDIUM_OUTPUT_ROOT`` set: products go under that folder (nbrun's staging area, or a
  test's temporary folder);
* unset (someone runs a notebook by hand): products go to ``build/interactive/`` so that an
  interactive run never touches the DVC-tracked ``reports/``.
"""

from __future__ import annotations

import os
from pathlib import Path

from compendium.core import integrity


def _project_of(folder: Path) -> Path | None:
    """The DVC project that holds ``folder`` (the nearest folder with a ``dvc.yaml`` and a ``.dvc/``), or None."""
    for d in (folder, *folder.parents):
        if (d / "dvc.yaml").is_file() and (d / ".dvc").is_dir():
            return d
    return None


def _root() -> Path:
    """The project root: ``COMPENDIUM_ROOT``; else, in a stage command (DVC sets ``DVC_STAGE`` and ``DVC_ROOT``),
    the project that DVC runs the stage in, the working directory's: for a queued experiment (``dvc exp run
    --queue``) that is a temporary copy of the repository, while ``DVC_ROOT`` names its parent, so two
    experiments run side by side each write their own copy; else ``DVC_ROOT`` (a copy of the project run with
    an installed library still reads and writes the copy); else the checkout this package lives in."""
    if os.environ.get("COMPENDIUM_ROOT"):
        return Path(os.environ["COMPENDIUM_ROOT"]).resolve()
    if os.environ.get("DVC_ROOT"):
        here = _project_of(Path.cwd().resolve()) if os.environ.get("DVC_STAGE") else None
        return here or Path(os.environ["DVC_ROOT"]).resolve()
    return Path(__file__).resolve().parents[3]


ROOT = _root()
SRC = ROOT / "src"
DATA = ROOT / "data"
NOTEBOOKS = ROOT / "notebooks"
BUILD = ROOT / "build"
MODELS = ROOT / "models"
REPORTS = ROOT / "reports"
PARAMS = ROOT / "params.yaml"
DVC_YAML = ROOT / "dvc.yaml"

# Layout of the products under an output root (reports/ in the pipeline).
HTML = "html"
FIGURES = "figures"
TABLES = "tables"
METRICS = "metrics"
# reports/timings/<stage>.json and <stage>/<table>.csv: a stage's wall-clock times (and its tables as measured)
TIMINGS = "timings"
PLOTS = "plots"
EXECUTED = "notebooks"
CLAIMS = "claims"

OUTPUT_ROOT_ENV = "COMPENDIUM_OUTPUT_ROOT"
MODELS_ROOT_ENV = "COMPENDIUM_MODELS_ROOT"
SCALE_ENV = "COMPENDIUM_SCALE"  # the scale nbrun runs a stage at; claim rows record it
PUBLISHED_ROOT_ENV = "COMPENDIUM_PUBLISHED_ROOT"  # the output root nbrun publishes the stage to
ARTIFACTS = "artifacts"


def output_root() -> Path:
    """Root under which the current stage writes its products."""
    env = os.environ.get(OUTPUT_ROOT_ENV)
    return Path(env).resolve() if env else BUILD / "interactive"


def published_root() -> Path:
    """The output root the current stage publishes to, where the stages upstream of it published their
    tables and claim rows: ``COMPENDIUM_PUBLISHED_ROOT`` (set by nbrun: ``reports/`` for the pipeline,
    ``reports/faithful/`` for the faithful profile), else the folder of an ``artifacts/`` models root (an
    older nbrun's products beside another output root), else ``reports/``."""
    env = os.environ.get(PUBLISHED_ROOT_ENV)
    if env:
        return Path(env).resolve()
    models_root = os.environ.get(MODELS_ROOT_ENV)
    return Path(models_root).parent if models_root and Path(models_root).name == ARTIFACTS else REPORTS


def resolve(path: str | os.PathLike) -> Path:
    """A user-given path: absolute as is, relative ones against the repository root."""
    p = Path(path)
    return p if p.is_absolute() else ROOT / p


def artifacts_out() -> Path:
    """Where the current stage writes heavy products (checkpoints, cached targets): the
    ``artifacts/`` folder of its output root. On success nbrun moves them to ``models/`` (DVC-cached
    outputs), never to ``reports/``."""
    return output_root() / ARTIFACTS


def find_artifact(rel: str | os.PathLike) -> Path:
    """An artifact by its path relative to ``models/``: the current run's own artifacts first, then
    the published ones (``COMPENDIUM_MODELS_ROOT``, set by nbrun, else ``models/``), each checked against the
    md5 ``dvc.lock`` recorded for it (:func:`compendium.core.integrity.verify`). Returns the published location
    when neither exists, so the caller's error names the expected file."""
    rel = Path(rel)
    published = Path(os.environ.get(MODELS_ROOT_ENV) or MODELS) / rel
    own = artifacts_out() / rel
    if own.exists():
        return own
    integrity.verify(published, ROOT)  # a published file is the one dvc.lock recorded (where the cache says)
    return published
