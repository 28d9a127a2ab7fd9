"""The results at a glance: headline numbers beside the papers' and verdict counts per stage family.

Reads what the stages published (``reports/tables/<stage>/*.csv``, the ledger ``reports/claims.csv``), all of
it in git, so the summary follows a rerun of any stages on a clone without DVC's cache (the stages' measured
minutes are :mod:`compendium.pipeline.timings`'), and writes ``reports/summary/``:

- ``<family>.json`` for ``rela``, ``labelled``, ``unrolled``, ``ssdd`` and ``theory``: one small file per
  stage family with the same keys (verdict counts, tested claims, and the family's headline number, ours
  and the paper's). DVC declares them as the project's metrics, so ``dvc metrics show`` and
  ``dvc exp show`` print one row per family with a dozen columns.
- ``headlines.json``: every headline row (what, ours, the paper's, both settings). The README's results block
  and the site's home page render this file.
- ``ior_hlr.csv``: DD-Ranking's IOR, HLR and label-robust score of every set evaluated with teacher or soft
  labels, gathered from the stages' ``ior_hlr`` tables (:data:`IOR_HLR_STAGES`), one row per cell, its
  stage's own key columns joined into ``cell``; accuracies, IOR and HLR as fractions, as the stages write them.

Headline numbers are read from the stages' own tables, which already hold the paper's printed value
beside ours (``table1_paper_cifar10.csv``, the ``paper ...`` columns); no number is typed here.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from compendium.core import paths
from compendium.verdicts import claims

SUMMARY = "summary"


#: An ``also`` value that stands for the column's first value (ssdd_eval's table 1 lists each set's own dataset
#: first: Fashion-MNIST at the ``cpu`` scale, CIFAR-100 at ``paper``).
FIRST = "<first row>"


@dataclass(frozen=True)
class Cell:
    """One cell of a stage's table: ``reports/tables/<stage>/<table>.csv``, the row whose column
    ``key`` equals ``value`` (and ``also``'s columns their values; :data:`FIRST` stands for the column's value in
    the table's first row), column ``column``. ``part`` picks one of several ``/``-separated numbers."""

    stage: str
    table: str
    key: str
    value: str
    column: str
    part: int = 0
    also: tuple[tuple[str, str], ...] = ()

    def read(self, reports: Path) -> float | None:
        f = reports / paths.TABLES / self.stage / f"{self.table}.csv"
        if not f.is_file():
            raise FileNotFoundError(f"{f} is missing: the {self.stage} stage writes it (dvc repro {self.stage})")
        df = pd.read_csv(f, dtype=str, keep_default_na=False)
        where = ((self.key, self.value), *self.also)
        for col in (*(k for k, _ in where), self.column):
            if col not in df.columns:
                raise KeyError(f"{f} has no column {col!r} (columns: {list(df.columns)})")
        rows = df
        for k, v in where:
            rows = rows[rows[k] == (df[k].iloc[0] if v == FIRST and len(df) else v)]
        if len(rows) != 1:
            raise KeyError(f"{f}: {len(rows)} rows with {dict(where)}, expected one")
        return number(rows.iloc[0][self.column], self.part)


def number(text: str, part: int = 0) -> float | None:
    """The leading number of a printed cell (``"**<u>77.1 (1 seed)</u>**"`` → 77.1, ``"66.8 ± 3.7"`` →
    66.8); with ``part``, the number after that many ``/`` separators. ``None`` for an empty cell."""
    pieces = str(text).split(" / ")
    if part >= len(pieces):
        return None
    m = re.search(r"[-+]?\d+(?:\.\d+)?", re.sub(r"<[^>]+>|\*", "", pieces[part]))
    return float(m.group()) if m else None


@dataclass(frozen=True)
class Headline:
    """A number the papers lead with, ours beside theirs. ``setting`` and ``paper_setting`` say what
    each was measured on, since ours are Fashion-MNIST runs at the pipeline's scale."""

    family: str
    paper: str
    what: str
    ours: Cell
    theirs: Cell
    paper_setting: str


def _t1(col: str, paper_col: str) -> tuple[Cell, Cell]:
    return (
        Cell("rela_budget", "table1", "budget", "10%", col),
        Cell("rela_budget", "table1_paper_cifar10", "budget", "10%", paper_col),
    )


def _classic(method: str, ipc: int) -> tuple[Cell, Cell]:
    return (
        Cell("dd_tables", "classic", "method", method, f"ipc {ipc}"),
        Cell("dd_tables", "classic", "method", method, f"paper FMNIST ipc {ipc}"),
    )


def _dc_protocol(method: str, ipc: int) -> tuple[Cell, Cell]:
    """``dd_regime``'s table of sets under DC's own synthesis and evaluation, beside the paper's cell for DC."""
    on = (("images per class", str(ipc)),)
    return (
        Cell("dd_regime", "coresets_dc_protocol", "method", method, "ours, DC's protocol", also=on),
        Cell("dd_regime", "coresets_dc_protocol", "method", method, "paper's DC, same ipc", also=on),
    )


def _dwa(method: str, ipc: int) -> tuple[Cell, Cell]:
    return (
        Cell("dd_tables", "dwa_table1", "method", method, f"ipc {ipc}"),
        Cell("dd_tables", "dwa_table1", "method", method, f"paper CF-10 R18 ipc {ipc}"),
    )


def _ssdd(method: str) -> tuple[Cell, Cell]:
    col = "paper (CIFAR-100 → CIFAR-100)"
    on = (("target", FIRST),)  # the set distilled for, and probed on, its own dataset
    return (
        Cell("ssdd_eval", "table1", "method", method, "ConvNet", also=on),
        Cell("ssdd_eval", "table1", "method", method, col, part=0, also=on),
    )


#: The headline rows, in the order the README shows them. The first of each family is its metric.
HEADLINES = (
    Headline("rela", "ReLA", "Table 1, 10% budget: BYOL", *_t1("BYOL", "BYOL"), "CIFAR-10, ResNet-18"),
    Headline(
        "rela",
        "ReLA",
        "Table 1, 10% budget: BYOL + ReLA (Rand. prior)",
        *_t1("+ReLA Rand.", "+ReLA Rand."),
        "CIFAR-10, ResNet-18",
    ),
    Headline(
        "rela",
        "ReLA",
        "Table 1, 10% budget: BYOL + ReLA (strongest prior)",
        *_t1("+ReLA strong (supervised)", "+ReLA CLIP-RN50"),
        "CIFAR-10, ResNet-18, CLIP-RN50 prior",
    ),
    Headline("labelled", "DWA", "Table 1: DWA, 10 images per class", *_dwa("DWA", 10), "CIFAR-10, ResNet-18"),
    Headline("labelled", "DWA", "Table 1: SRe2L, 10 images per class", *_dwa("SRe2L", 10), "CIFAR-10, ResNet-18"),
    Headline(
        "labelled",
        "DC",
        "DC, 1 image per class, its paper's synthesis and evaluation",
        *_dc_protocol("dc", 1),
        "Fashion-MNIST, ConvNet",
    ),
    Headline("labelled", "DC", "DC, 10 images per class", *_classic("DC", 10), "Fashion-MNIST, ConvNet"),
    Headline("labelled", "DSA", "DSA, 10 images per class", *_classic("DSA", 10), "Fashion-MNIST, ConvNet"),
    Headline("ssdd", "SSDD", "Table 1: SSDD, ConvNet linear probe", *_ssdd("SSDD"), "CIFAR-100, ConvNet"),
    Headline("ssdd", "SSDD", "Table 1: KRR-ST, ConvNet linear probe", *_ssdd("KRR-ST"), "CIFAR-100, ConvNet"),
)

#: Stage families by stage name; every stage of the ledger belongs to one.
FAMILIES = {
    "rela": ("priors", "rela_"),
    "labelled": (
        "dd_teachers",
        "dd_coresets",
        "dd_inversion",
        "dd_matching",
        "dd_kip",
        "dd_dwa",
        "dd_crossarch",
        "dd_dc_arch",
        "dd_tables",
        "dd_regime",
    ),
    "unrolled": ("dd_unrolled", "dd_labels", "dd_mnemonics", "dd_nas", "dd_gtn", "dd_text"),
    "ssdd": ("ssdd_",),
    "theory": ("theory_", "data_"),
}


def family(stage: str) -> str:
    for fam, names in FAMILIES.items():
        if any(stage == n or (n.endswith("_") and stage.startswith(n)) for n in names):
            return fam
    raise KeyError(f"stage {stage!r} is in no family of compendium.pipeline.summary.FAMILIES")


#: Short metric names of the verdicts (``dvc metrics show`` prints one column each).
KEYS = {
    claims.HOLDS: "holds",
    claims.FAILS: "fails",
    claims.CONDITIONAL: "conditional",
    claims.INCONCLUSIVE: "inconclusive",
    claims.NOT_TESTED: "not_tested",
}


def verdict_counts(ledger: pd.DataFrame) -> dict:
    """The ledger's claims, tested claims and each verdict's count (keys without spaces)."""
    out = {"claims": len(ledger), "tested": int((ledger["tested"] == "yes").sum())}
    for v in claims.VERDICTS:
        out[KEYS[v]] = int((ledger["verdict"] == v).sum())
    return out


def headline_rows(reports: Path, partial: bool = False) -> list[dict]:
    """The :data:`HEADLINES` read from ``reports``. ``partial`` (a run of some stages only, such as a piece of the
    faithful profile): a headline whose stage table is absent is left out instead of being an error."""
    rows = []
    for h in HEADLINES:
        if partial and not all(
            (reports / paths.TABLES / c.stage / f"{c.table}.csv").is_file()
            for c in (h.ours, h.theirs)
            if isinstance(c, Cell)
        ):
            continue
        rows.append(
            {
                "family": h.family,
                "paper": h.paper,
                "what": h.what,
                "ours": h.ours.read(reports),
                "paper_value": h.theirs.read(reports),
                "paper_setting": h.paper_setting,
            }
        )
    return rows


#: Per family, the tables whose every cell the metrics carry (:data:`RESULTS_FILE`): (stage, table, key columns).
#: An experiment that adds an arm, a budget or an ipc adds keys there, so ``dvc metrics diff`` shows it.
RESULT_TABLES = {
    "rela": (("rela_budget", "table1", ("budget",)),),
    "labelled": (("dd_tables", "classic", ("method",)), ("dd_tables", "dwa_table1", ("method",))),
    "ssdd": (("ssdd_eval", "table1", ("target", "method")),),
}


def result_cells(reports: Path, fam: str) -> dict:
    """``{table: {row key: {column: our number}}}`` of the family's :data:`RESULT_TABLES` (the leading number of each
    printed cell; the papers' columns and empty cells left out; a table not written yet left out)."""
    out: dict = {}
    for stage, table, keys in RESULT_TABLES.get(fam, ()):
        f = reports / paths.TABLES / stage / f"{table}.csv"
        if not f.is_file():
            continue
        df = pd.read_csv(f, dtype=str, keep_default_na=False)
        cells = {}
        for _, r in df.iterrows():
            values = {c: number(r[c]) for c in df.columns if c not in keys and not c.lower().startswith("paper")}
            values = {c: v for c, v in values.items() if v is not None}
            if values:
                cells[" / ".join(str(r[k]) for k in keys)] = values
        out[f"{stage}:{table}"] = cells
    return out


def family_metrics(ledger: pd.DataFrame, rows: list[dict]) -> dict[str, dict]:
    """One dict per family with the same keys: verdict counts, then ``headline_ours`` and
    ``headline_paper`` (the family's first headline row; absent where the family has none)."""
    fams = ledger["stage"].map(family)
    out = {}
    for fam in FAMILIES:
        m = verdict_counts(ledger[fams == fam])
        first = next((r for r in rows if r["family"] == fam), None)
        if first is not None:
            m["headline_ours"], m["headline_paper"] = first["ours"], first["paper_value"]
        out[fam] = m
    return out


#: The metrics file of every result cell (:func:`result_cells` per family), apart from the families' narrow files
#: so that ``dvc metrics show reports/summary/<family>.json`` stays a screen wide; ``dvc metrics diff`` lists both.
RESULTS_FILE = "results.json"


#: The stages that write DD-Ranking's IOR / HLR table (``reports/tables/<stage>/ior_hlr.csv``).
IOR_HLR_STAGES = ("dd_coresets", "dd_inversion", "dd_dwa", "dd_crossarch", "dd_labels", "dd_unrolled", "dd_text")
IOR_HLR_VALUES = (
    "seeds",
    "n",
    "acc syn",
    "acc random",
    "acc syn hard",
    "acc full hard",
    "IOR",
    "IOR low",
    "IOR high",
    "HLR",
    "HLR low",
    "HLR high",
    "LRS",
    "LRS low",
    "LRS high",
    "note",
)


def ior_hlr(reports: Path | None = None) -> pd.DataFrame:
    """Every stage's ``ior_hlr`` table in one frame: ``stage``, ``cell`` (the stage's key columns as
    ``key=value`` pairs) and the value columns of :data:`IOR_HLR_VALUES` (empty where a stage has none)."""
    reports = reports or paths.REPORTS
    rows = []
    for st in IOR_HLR_STAGES:
        f = reports / paths.TABLES / st / "ior_hlr.csv"
        if not f.is_file():
            continue
        t = pd.read_csv(f, keep_default_na=True)
        keys = [c for c in t.columns if c not in IOR_HLR_VALUES]
        for _, r in t.iterrows():
            rows.append(
                {
                    "stage": st,
                    "cell": "; ".join(f"{k}={r[k]}" for k in keys),
                    **{c: r.get(c, float("nan")) for c in IOR_HLR_VALUES},
                }
            )
    return pd.DataFrame(rows, columns=["stage", "cell", *IOR_HLR_VALUES])


def build(reports: Path | None = None, partial: bool = False) -> dict:
    """Everything ``reports/summary/`` holds, computed from ``reports`` (``partial``: see :func:`headline_rows`)."""
    reports = reports or paths.REPORTS
    ledger_file = reports / "claims.csv"
    if not ledger_file.is_file():
        raise FileNotFoundError(f"{ledger_file} is missing: run `dvc repro claims_ledger` first")
    ledger = pd.read_csv(ledger_file, dtype=str, keep_default_na=False)
    rows = headline_rows(reports, partial)
    scales = sorted(set(ledger["scale"]))
    return {
        "families": family_metrics(ledger, rows),
        "ior_hlr": ior_hlr(reports),
        "results": {fam: result_cells(reports, fam) for fam in RESULT_TABLES},
        "headlines": {"scale": ", ".join(scales) or "-", "rows": rows},
    }


def write(result: dict, reports: Path | None = None) -> Path:
    out = (reports or paths.REPORTS) / SUMMARY
    out.mkdir(parents=True, exist_ok=True)
    for fam, m in result["families"].items():
        (out / f"{fam}.json").write_text(json.dumps(m, indent=2, sort_keys=True) + "\n")
    (out / "headlines.json").write_text(json.dumps(result["headlines"], indent=2, ensure_ascii=False) + "\n")
    if "results" in result:
        (out / RESULTS_FILE).write_text(json.dumps(result["results"], indent=2, ensure_ascii=False) + "\n")
    result["ior_hlr"].to_csv(out / "ior_hlr.csv", index=False, float_format="%.4f")
    return out


def read(reports: Path | None = None) -> dict:
    """``reports/summary/headlines.json`` as the summary stage wrote it."""
    f = (reports or paths.REPORTS) / SUMMARY / "headlines.json"
    if not f.is_file():
        raise FileNotFoundError(f"{f} is missing: run `dvc repro summary` first")
    return json.loads(f.read_text())


def headline_table(h: dict) -> pd.DataFrame:
    """The headline rows as printed: ours at the run's scale beside the paper's value and setting."""
    df = pd.DataFrame(h["rows"])
    if not len(df):
        return pd.DataFrame(columns=["paper", "what", "ours", "paper's", "the paper's setting"])
    fmt = lambda v: "–" if v is None or pd.isna(v) else f"{v:.1f}"
    return pd.DataFrame(
        {
            "paper": df["paper"],
            "what": df["what"],
            f"ours (Fashion-MNIST, {h['scale']})": df["ours"].map(fmt),
            "paper's": df["paper_value"].map(fmt),
            "the paper's setting": df["paper_setting"],
        }
    )


def main(argv: list[str] | None = None) -> int:
    result = build()
    out = write(result)
    h = result["headlines"]
    print(
        f"[summary] {len(h['rows'])} headline numbers, {len(result['families'])} family metrics, "
        f"{len(result['ior_hlr'])} IOR / HLR cells -> {out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
