"""The ReLA papers' printed numbers (top-1 linear-probe %, "mean ± std" as printed; the ± is the
std over the last 3 probe epochs of one run), copied from the papers' tables.

Shown only beside ours and always labelled "paper". :func:`table` parses one into a DataFrame;
:func:`value` reads one cell as a float (the mean).
"""

from __future__ import annotations

import functools

from compendium.pipeline import params
from compendium.rela import priors as rela_priors

TABLES = {
    "v1_table2": """
| Data | % | BYOL | Rand. | CF10-T | CF100-T | TIN-T | IN1K-T | CLIP-RN50 | BYOL (full) |
|---|---|---|---|---|---|---|---|---|---|
| CF-10 | 1 | 39.8 ± 0.0 | 51.1 ± 0.2 | 54.1 ± 0.1 | 51.6 ± 0.0 | 52.5 ± 0.2 | 51.1 ± 0.2 | 52.4 ± 0.4 | 82.8 ± 0.1 |
| CF-10 | 10 | 56.1 ± 0.3 | 65.2 ± 0.1 | 80.8 ± 0.1 | 75.7 ± 0.1 | 78.5 ± 0.1 | 82.2 ± 0.1 | 83.2 ± 0.1 | |
| CF-10 | 20 | 65.5 ± 0.2 | 75.2 ± 0.1 | 82.1 ± 0.1 | 80.7 ± 0.0 | 81.7 ± 0.0 | 84.2 ± 0.1 | 83.9 ± 0.2 | |
| CF-100 | 1 | 14.1 ± 0.4 | 24.1 ± 0.1 | 25.8 ± 0.2 | 25.3 ± 0.0 | 25.4 ± 0.1 | 24.9 ± 0.4 | 24.5 ± 0.2 | 51.7 ± 0.3 |
| CF-100 | 10 | 30.0 ± 0.3 | 36.7 ± 0.0 | 51.3 ± 0.0 | 52.1 ± 0.1 | 53.6 ± 0.2 | 55.6 ± 0.1 | 56.9 ± 0.1 | |
| CF-100 | 20 | 33.1 ± 0.2 | 45.4 ± 0.2 | 54.0 ± 0.3 | 53.0 ± 0.1 | 56.4 ± 0.1 | 58.5 ± 0.1 | 57.0 ± 0.4 | |
| T-IN | 1 | 8.5 ± 0.2 | 18.0 ± 0.2 | 21.4 ± 0.1 | 22.8 ± 0.3 | 24.4 ± 0.2 | 23.6 ± 0.1 | 20.7 ± 0.2 | 43.9 ± 0.2 |
| T-IN | 10 | 26.4 ± 0.1 | 31.2 ± 0.5 | 35.8 ± 0.3 | 33.5 ± 0.0 | 39.0 ± 0.1 | 39.5 ± 0.1 | 42.2 ± 0.5 | |
| T-IN | 20 | 27.8 ± 0.2 | 34.6 ± 0.1 | 38.7 ± 0.1 | 39.0 ± 0.1 | 40.1 ± 0.1 | 42.3 ± 0.2 | 42.6 ± 0.4 | |
| IN-1K | 1 | 7.0 ± 0.1 | 18.3 ± 0.2 | 25.1 ± 0.1 | 23.3 ± 0.1 | 32.7 ± 0.2 | 33.9 ± 0.1 | 39.2 ± 0.2 | 62.0 ± 0.0 |
| IN-1K | 10 | 45.2 ± 0.1 | 51.3 ± 0.1 | 52.9 ± 0.1 | 52.5 ± 0.0 | 53.3 ± 0.0 | 52.3 ± 0.0 | 52.6 ± 0.1 | |
| IN-1K | 20 | 53.6 ± 0.1 | 54.6 ± 0.0 | 56.0 ± 0.0 | 56.0 ± 0.1 | 56.6 ± 0.0 | 56.5 ± 0.0 | 57.7 ± 0.0 | |
""",
    "v2_table1": """
| Data | % | BYOL | Rand. | CF10-T | CF100-T | TIN-T | IN1K-T | CLIP-RN50 | BYOL* |
|---|---|---|---|---|---|---|---|---|---|
| CF-10 | 10 | 58.3 ± 0.1 | 71.4 ± 0.0 | 81.1 ± 0.1 | 78.2 ± 0.1 | 79.6 ± 0.1 | 81.6 ± 0.0 | 82.0 ± 0.1 | 82.7 ± 0.2 |
| CF-10 | 20 | 70.1 ± 0.2 | 77.1 ± 0.2 | 83.6 ± 0.1 | 81.4 ± 0.0 | 83.2 ± 0.1 | 84.4 ± 0.1 | 83.9 ± 0.1 | |
| CF-10 | 50 | 77.9 ± 0.0 | 82.7 ± 0.1 | 86.5 ± 0.1 | 86.2 ± 0.0 | 86.2 ± 0.1 | 87.3 ± 0.2 | 86.7 ± 0.0 | |
| CF-100 | 10 | 26.9 ± 0.2 | 41.8 ± 0.2 | 51.4 ± 0.1 | 51.4 ± 0.1 | 53.5 ± 0.1 | 56.4 ± 0.2 | 55.4 ± 0.1 | 52.5 ± 0.3 |
| CF-100 | 20 | 34.8 ± 0.3 | 48.1 ± 0.1 | 55.7 ± 0.1 | 55.7 ± 0.1 | 56.7 ± 0.0 | 59.5 ± 0.1 | 57.9 ± 0.0 | |
| CF-100 | 50 | 41.4 ± 0.3 | 54.6 ± 0.2 | 59.7 ± 0.1 | 59.8 ± 0.1 | 60.0 ± 0.1 | 61.6 ± 0.1 | 61.0 ± 0.0 | |
| T-IN | 10 | 25.1 ± 0.3 | 34.5 ± 0.3 | 39.0 ± 0.1 | 38.4 ± 0.0 | 41.2 ± 0.1 | 41.6 ± 0.1 | 39.6 ± 0.4 | 43.6 ± 0.3 |
| T-IN | 20 | 30.7 ± 0.1 | 38.2 ± 0.0 | 41.9 ± 0.0 | 42.3 ± 0.0 | 43.2 ± 0.1 | 44.1 ± 0.1 | 42.6 ± 0.1 | |
| T-IN | 50 | 37.7 ± 0.2 | 43.9 ± 0.1 | 45.6 ± 0.1 | 45.9 ± 0.1 | 45.8 ± 0.1 | 46.4 ± 0.1 | 46.3 ± 0.1 | |
| IN-1K | 10 | 44.5 ± 0.1 | 51.7 ± 0.1 | 53.7 ± 0.1 | 53.3 ± 0.1 | 53.6 ± 0.1 | 54.9 ± 0.1 | 56.2 ± 0.1 | 61.9 ± 0.1 |
| IN-1K | 20 | 55.3 ± 0.0 | 56.9 ± 0.0 | 57.6 ± 0.1 | 57.6 ± 0.1 | 57.8 ± 0.1 | 58.0 ± 0.0 | 59.5 ± 0.1 | |
| IN-1K | 50 | 60.8 ± 0.2 | 61.1 ± 0.1 | 62.1 ± 0.1 | 61.8 ± 0.1 | 61.7 ± 0.0 | 61.9 ± 0.0 | 62.9 ± 0.1 | |
""",
    "v1_table3": """
| Data | Arch | Original | RN50 | RN101 | RN50x4 | ViT B/32 | ViT B/16 | ViT L/14 |
|---|---|---|---|---|---|---|---|---|
| CF-10 | ResNet-18 | 55.1 ± 0.2 | 83.2 ± 0.1 | 83.0 ± 0.1 | 83.8 ± 0.2 | 85.1 ± 0.0 | 85.3 ± 0.0 | 85.2 ± 0.1 |
| CF-10 | MobileNet-V2 | 41.8 ± 0.5 | 81.0 ± 0.2 | 83.5 ± 0.2 | 83.3 ± 0.1 | 85.7 ± 0.1 | 85.7 ± 0.1 | 84.2 ± 0.1 |
| CF-10 | EfficientNet-B0 | 23.8 ± 0.2 | 81.0 ± 0.2 | 85.0 ± 0.0 | 86.0 ± 0.1 | 87.2 ± 0.2 | 87.7 ± 0.0 | 87.4 ± 0.0 |
| CF-10 | ViT T/16 | 45.0 ± 0.3 | 63.9 ± 0.1 | 65.5 ± 0.1 | 64.2 ± 0.1 | 64.5 ± 0.0 | 65.0 ± 0.1 | 62.9 ± 0.1 |
| T-IN | ResNet-18 | 25.3 ± 0.3 | 42.2 ± 0.5 | 40.3 ± 0.1 | 41.6 ± 0.3 | 42.4 ± 0.3 | 43.4 ± 0.1 | 41.9 ± 0.1 |
| T-IN | MobileNet-V2 | 6.9 ± 0.2 | 33.0 ± 0.5 | 44.2 ± 0.4 | 40.8 ± 0.1 | 43.2 ± 0.2 | 42.4 ± 0.0 | 35.0 ± 0.1 |
| T-IN | EfficientNet-B0 | 0.7 ± 0.1 | 41.8 ± 0.2 | 33.3 ± 0.1 | 39.8 ± 0.2 | 40.8 ± 0.1 | 48.4 ± 0.1 | 23.8 ± 0.2 |
| T-IN | ViT T/16 | 14.9 ± 0.1 | 34.5 ± 0.2 | 32.7 ± 0.1 | 32.5 ± 0.2 | 31.7 ± 0.0 | 32.0 ± 0.2 | 29.3 ± 0.1 |
""",
    "v2_table2": """
| Data | Arch | Original | RN18 (Rand.) | RN101 | RN50x4 | ViT B/32 | ViT B/16 | ViT L/14 |
|---|---|---|---|---|---|---|---|---|
| CF-10 | ResNet-18 | 58.3 ± 0.1 | 71.4 ± 0.0 | 81.9 ± 0.1 | 82.1 ± 0.3 | 83.2 ± 0.2 | 83.1 ± 0.1 | 82.4 ± 0.1 |
| CF-10 | MobileNet-V2 | 47.7 ± 0.1 | 69.4 ± 0.0 | 82.2 ± 0.1 | 80.8 ± 0.0 | 81.6 ± 0.1 | 82.9 ± 0.2 | 81.2 ± 0.2 |
| CF-10 | EfficientNet-B0 | 23.9 ± 0.2 | 68.8 ± 0.6 | 83.2 ± 0.2 | 83.9 ± 0.1 | 87.4 ± 0.1 | 86.4 ± 0.1 | 83.1 ± 0.1 |
| CF-10 | ViT T/16 | 43.4 ± 0.1 | 57.1 ± 0.1 | 65.9 ± 0.0 | 66.4 ± 0.1 | 69.9 ± 0.3 | 68.8 ± 0.1 | 63.7 ± 0.1 |
| T-IN | ResNet-18 | 25.1 ± 0.3 | 34.5 ± 0.3 | 38.3 ± 0.1 | 39.1 ± 0.4 | 35.8 ± 0.1 | 32.4 ± 0.1 | 28.4 ± 0.2 |
| T-IN | MobileNet-V2 | 8.8 ± 0.1 | 28.3 ± 0.3 | 39.9 ± 0.1 | 36.8 ± 0.2 | 36.0 ± 0.0 | 37.9 ± 0.3 | 20.6 ± 0.5 |
| T-IN | EfficientNet-B0 | 4.1 ± 0.0 | 33.2 ± 0.3 | 43.5 ± 0.2 | 41.7 ± 0.2 | 44.0 ± 0.1 | 44.2 ± 0.0 | 37.9 ± 0.1 |
| T-IN | ViT T/16 | 12.5 ± 0.1 | 24.6 ± 0.0 | 26.1 ± 0.1 | 27.6 ± 0.1 | 26.9 ± 0.2 | 24.5 ± 0.1 | 21.6 ± 0.0 |
""",
    "v1_table4": """
| Data | Variant | SimCLR | Barlow | DINO | MoCo | SimSiam | SwAV | Vicreg |
|---|---|---|---|---|---|---|---|---|
| CF-10 | Original | 71.2 ± 0.1 | 63.6 ± 0.0 | 64.1 ± 0.2 | 66.4 ± 0.1 | 50.0 ± 0.0 | 66.3 ± 0.4 | 68.7 ± 0.2 |
| CF-10 | Rand. | 71.4 ± 0.3 | 65.5 ± 0.2 | 70.8 ± 0.2 | 71.2 ± 0.1 | 68.1 ± 0.2 | 72.4 ± 0.3 | 70.6 ± 0.2 |
| CF-10 | CLIP-RN50 | 82.1 ± 0.1 | 66.7 ± 0.2 | 80.5 ± 0.0 | 75.7 ± 0.2 | 85.1 ± 0.0 | 81.1 ± 0.2 | 74.6 ± 0.3 |
| T-IN | Original | 13.8 ± 0.3 | 28.3 ± 0.1 | 26.0 ± 0.3 | 27.7 ± 0.3 | 16.4 ± 0.5 | 18.4 ± 0.4 | 7.8 ± 0.2 |
| T-IN | Rand. | 31.8 ± 0.2 | 28.1 ± 0.3 | 31.4 ± 0.3 | 33.0 ± 0.1 | 30.8 ± 0.1 | 32.8 ± 0.2 | 31.9 ± 0.1 |
| T-IN | CLIP-RN50 | 39.2 ± 0.3 | 28.4 ± 0.0 | 36.6 ± 0.1 | 35.1 ± 0.0 | 44.9 ± 0.2 | 41.5 ± 0.1 | 32.3 ± 0.0 |
""",
    "v2_table3": """
| Data | Variant | SimCLR | Barlow | DINO | MoCo | SimSiam | SwAV | Vicreg |
|---|---|---|---|---|---|---|---|---|
| CF-10 | Original | 70.7 ± 0.2 | 63.7 ± 0.3 | 66.2 ± 0.2 | 67.4 ± 0.4 | 45.8 ± 0.4 | 66.2 ± 0.3 | 71.3 ± 0.2 |
| CF-10 | Rand. | 70.9 ± 0.0 | 68.8 ± 0.2 | 70.6 ± 0.1 | 70.9 ± 0.1 | 66.7 ± 0.1 | 69.5 ± 0.2 | 71.3 ± 0.1 |
| CF-10 | CLIP-RN50 | 76.4 ± 0.1 | 76.5 ± 0.2 | 82.4 ± 0.1 | 79.8 ± 0.1 | 79.3 ± 0.1 | 77.3 ± 0.0 | 80.1 ± 0.1 |
| T-IN | Original | 30.4 ± 0.1 | 28.9 ± 0.4 | 26.7 ± 0.3 | 27.1 ± 0.2 | 17.8 ± 0.3 | 20.2 ± 0.1 | 34.0 ± 0.1 |
| T-IN | Rand. | 30.7 ± 0.2 | 31.9 ± 0.1 | 29.4 ± 0.2 | 33.4 ± 0.1 | 25.4 ± 0.1 | 29.1 ± 0.2 | 34.1 ± 0.1 |
| T-IN | CLIP-RN50 | 33.0 ± 0.3 | 33.5 ± 0.2 | 35.1 ± 0.0 | 37.1 ± 0.1 | 32.6 ± 0.1 | 32.6 ± 0.1 | 39.1 ± 0.2 |
""",
}

CAPTIONS = {
    "v1_table2": "v1 Table 2: BYOL vs BYOL + ReLA per prior, ResNet-18 (ResNet-50 on IN-1K), % of data",
    "v2_table1": "camera-ready Table 1: BYOL vs BYOL + ReLA per prior, ResNet-18 (ResNet-50 on IN-1K), % of budget",
    "v1_table3": "v1 Table 3: cross-architecture at 10% data, CLIP priors",
    "v2_table2": "camera-ready Table 2: cross-architecture at 10% budget",
    "v1_table4": "v1 Table 4: seven SSL methods at 10% data, ResNet-18",
    "v2_table3": "camera-ready Table 3: seven SSL methods at 10% budget, ResNet-18",
}


def table(name: str):
    """The printed table as a DataFrame of strings (cells as printed)."""
    import pandas as pd

    if name not in TABLES:
        raise KeyError(f"unknown paper table {name!r}; known: {sorted(TABLES)}")
    lines = [ln.strip() for ln in TABLES[name].strip().splitlines()]
    rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines if not set(ln) <= set("|-: ")]
    header, body = rows[0], rows[1:]
    for r in body:
        if len(r) != len(header):
            raise ValueError(f"{name}: row {r} has {len(r)} cells, the header {len(header)}")
    return pd.DataFrame(body, columns=header)


def value(cell: str) -> float | None:
    """The mean of a printed "m ± s" cell (None for an empty cell)."""
    cell = cell.strip()
    if not cell:
        return None
    return float(cell.split("±")[0])


def cell(name: str, row: dict, column: str) -> str:
    """One printed cell: the row matched on its leading columns, e.g. ``{"Data": "CF-10", "%": "10"}``."""
    t = table(name)
    for k, v in row.items():
        t = t[t[k] == v]
    if len(t) != 1:
        raise KeyError(f"{name}: {row} matches {len(t)} rows")
    return t.iloc[0][column]


#: A prior's role -> (its label here, the camera-ready Table 1 column it stands in for); the random priors are
#: named by their spec, ``{cross}`` is the cross-dataset prior's dataset.
ROLES = {
    "rand": ("Rand.", "Rand."),
    "rand:convnet": ("Rand. (random Conv-3)", "RN18 (Rand.)"),
    "same-dataset": ("same-dataset BYOL*", "CF10-T"),
    "cross-dataset": ("cross-dataset BYOL ({cross})", "CF100-T"),
    "strong": ("strong (supervised)", "CLIP-RN50"),
}
#: How a cross-dataset prior's dataset is named in its label.
DATASET_NAMES = {
    "cifar10": "CIFAR-10",
    "cifar100": "CIFAR-100",
    "tiny-imagenet": "Tiny-ImageNet",
    "imagenet": "ImageNet-1K",
}


@functools.cache
def analogues() -> dict[str, tuple[str, str]]:
    """Prior spec -> (its label, the paper's column): the random priors by their spec, the trained ones by the role
    the ``priors`` stage gives them at each scale of ``params.yaml`` (from its ``dataset`` and ``cross_dataset``:
    :func:`compendium.rela.priors.trained_specs`), never by a file name written here."""
    out = {spec: ROLES[spec] for spec in ("rand", "rand:convnet")}
    raw = params.load()
    for scale in params.SCALES:
        v = params.resolve(dict(raw, **{params.SCALE_KEY: scale}), "priors")
        cross = DATASET_NAMES.get(v["cross_dataset"], v["cross_dataset"])
        for role, spec in rela_priors.trained_specs(v["dataset"], v["cross_dataset"]).items():
            label, column = ROLES[role]
            out.setdefault(spec, (label.format(cross=cross), column))
    return out


def prior_label(spec: str) -> str:
    """A short name for a prior spec: its role here, else the file name."""
    found = analogues().get(spec)
    return found[0] if found else spec.rsplit("/", 1)[-1].removesuffix(".pt")


def paper_column(spec: str) -> str | None:
    """The camera-ready Table 1 column our prior stands in for."""
    found = analogues().get(spec)
    return found[1] if found else None


# Our students and the camera-ready Table 2 rows they stand in for.
ARCH_ANALOGUES = {
    "ResNet-18": "ResNet-18",
    "MobileNet-V2": "MobileNet-V2",
    "EfficientNet-B0": "EfficientNet-B0",
    "ViT-Tiny": "ViT T/16",
}


def cells(name: str, keep: dict, row_col: str, pairs: dict) -> dict:
    """``{our key: the paper's mean}`` for ``pairs`` ``{our key: (label in row_col, column)}`` of table
    ``name``, its rows restricted to those matching ``keep``; a cell the paper lacks (no such row or
    column, or an empty cell) is left out."""
    t = table(name)
    for k, v in keep.items():
        t = t[t[k] == v]
    out = {}
    for key, (row, col) in pairs.items():
        r = t[t[row_col] == row]
        v = value(r.iloc[0][col]) if col in t.columns and len(r) == 1 else None
        if v is not None:
            out[key] = v
    return out


def table2_cells(students: list[str], priors: list[str], data: str = "CF-10") -> dict:
    """Camera-ready Table 2's printed cells that ours stand for, keyed as the ``rela_arch`` figure is:
    ``{(student, column): %}``, columns ``"Original (BYOL)"`` and ``"+ReLA <prior label>"``, for the
    students with a paper row (:data:`ARCH_ANALOGUES`) and the priors whose analogue is a column."""
    cols = {"Original (BYOL)": "Original", **{f"+ReLA {prior_label(p)}": paper_column(p) for p in priors}}
    return cells(
        "v2_table2",
        {"Data": data},
        "Arch",
        {(s, c): (ARCH_ANALOGUES.get(s), pc) for s in students for c, pc in cols.items()},
    )


def table3_cells(methods: list[str], priors: list[str], data: str = "CF-10") -> dict:
    """Camera-ready Table 3's printed cells that ours stand for, keyed as the ``rela_methods`` figure
    is: ``{(method, variant): %}``, variants ``"Original"`` and the priors' labels."""
    rows = {"Original": "Original", **{prior_label(p): paper_column(p) for p in priors}}
    return cells("v2_table3", {"Data": data}, "Variant", {(m, v): (pv, m) for m in methods for v, pv in rows.items()})
