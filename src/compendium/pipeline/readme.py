"""The README's results and verdicts blocks, generated from what the pipeline produced: the claims ledger
(``reports/claims.csv``), the summary stage's headlines (``reports/summary/headlines.json``) and the stages'
measured minutes (``reports/stage_minutes.json``, :mod:`compendium.pipeline.timings`), and, where one was
measured, the last from-scratch run (``benchmarks/repro_from_scratch.json``, written by
``benchmarks/repro_from_scratch.py``).

The block between ``<!-- results:start -->`` and ``<!-- results:end -->`` in README.md is what
:func:`block` renders, the one between ``<!-- verdicts:start -->`` and ``<!-- verdicts:end -->`` what
:func:`verdict_lines` renders from the ledger and the claims registry's central claims; a test fails when they differ,
so the README never states a verdict, a number or
a time the pipeline did not produce. ``make repro`` ends with ``python -m compendium.pipeline.readme``,
which rewrites the block in place.
"""

from __future__ import annotations

import json
import sys

import pandas as pd

from compendium.core import paths
from compendium.pipeline import paper_estimate, site, summary, timings
from compendium.verdicts import ledger
from compendium.verdicts import registry as claims_registry
from compendium.core.tables import markdown_table

START, END = "<!-- results:start -->", "<!-- results:end -->"
VERDICTS_START, VERDICTS_END = "<!-- verdicts:start -->", "<!-- verdicts:end -->"
README = paths.ROOT / "README.md"
#: The figure the README shows (a product of the rela_budget stage).
FIGURE = "reports/figures/rela_budget/budget_curves_and_cost.png"
SITE = "reports/site/index.html"
#: The record of the last from-scratch `dvc repro` (a fresh clone, an empty DVC cache).
FROM_SCRATCH = paths.ROOT / "benchmarks" / "repro_from_scratch.json"

FAMILY_NAMES = {
    "theory": "theory checks (data overview included)",
    "rela": "ReLA (priors to ablations)",
    "labelled": "labelled distillation",
    "unrolled": "the reading notes' methods",
    "ssdd": "SSDD",
    "other": "the claims ledger",
}


def family_times(minutes: dict[str, float]) -> pd.DataFrame:
    """Measured minutes per stage family, in the order of :data:`summary.FAMILIES`."""
    per: dict[str, float] = {}
    n: dict[str, int] = {}
    for stage, m in minutes.items():
        try:
            fam = summary.family(stage)
        except KeyError:  # the claims ledger, which gathers the others' rows
            fam = "other"
        per[fam] = per.get(fam, 0.0) + m
        n[fam] = n.get(fam, 0) + 1
    order = [f for f in (*summary.FAMILIES, "other") if f in per]
    return pd.DataFrame(
        {
            "stages": [FAMILY_NAMES.get(f, f) for f in order],
            "count": [n[f] for f in order],
            "minutes": [f"{per[f]:.1f}" for f in order],
        }
    )


def from_scratch_line(rec: dict) -> str:
    """One sentence on a from-scratch run's record (:data:`FROM_SCRATCH`)."""
    return (
        f"A from-scratch `dvc repro` (a fresh clone of {rec['commit']}, an empty DVC cache, every stage run once) "
        f"took **{rec['wall_minutes']:.0f} min** of wall time on {rec['machine'].split(',')[0]}"
        + (
            f" (in {rec['parts']} parts, resumed after {', '.join(rec['failed_attempts'])})"
            if rec.get("failed_attempts")
            else ""
        )
        + ", "
        f"{rec['notebook_minutes']:.0f} of them in the notebooks; its longest stage, `{rec['longest_stage']}`, "
        f"{rec['longest_stage_minutes']:.1f} min "
        "([`benchmarks/repro_from_scratch.md`](benchmarks/repro_from_scratch.md))."
    )


def block(claims: pd.DataFrame, headlines: dict, minutes: dict[str, float], scratch: dict | None = None) -> str:
    """Verdict counts per paper, the comparisons tested, decided and replicated, the headline numbers beside the
    papers', the measured time (``minutes`` per stage; ``scratch``: the last from-scratch run's record), one figure
    and the site."""
    s = ledger.summary(claims)
    total = len(claims)
    scales = ", ".join(sorted(set(claims["scale"]) - {""})) or "-"
    comp = claims[ledger.is_comparison(claims)]
    tested = int((comp["tested"] == "yes").sum())
    decided = int(comp["verdict_all_seeds"].isin(["holds", "fails", "holds only under a condition"]).sum())
    replicated = int((comp["replication"] == "replicated").sum())
    lines = [
        START,
        f"**{total} claims checked at `{scales}` scale, {len(comp)} of them comparisons of trained arms: {tested} "
        f"run in the regime the claim is about, {decided} decided on all their seeds, {replicated} replicated on "
        "two disjoint seed sets.**",
        "A comparison's verdict stands only where both seed sets reach it; each row of "
        "[`reports/claims.md`](reports/claims.md) shows its smallest effect of interest, both seed sets' verdicts "
        "and the seeds the power plan asks for.",
        "",
        markdown_table(s),
        "",
        "Headline numbers, ours beside the paper's (top-1 %; ours are Fashion-MNIST runs at this scale, "
        "theirs the paper's own dataset and network, so they are not expected to agree; whether a "
        "comparison is tested is the ledger's verdict, not these numbers):",
        "",
        markdown_table(summary.headline_table(headlines), text=True),
        "",
    ]
    if minutes:
        lines += [
            f"Measured time of the stages' notebooks: **{sum(minutes.values()):.0f} min** on 2 cores "
            f"({len(minutes)} stages, each at its last run; the minutes and parameters in "
            f"`reports/{timings.FILE}`):",
            "",
            markdown_table(family_times(minutes), text=True),
            "",
        ]
    if scratch:
        lines += [from_scratch_line(scratch), ""]
    lines += [
        f"![ReLA Table 1 at this scale: linear probe against the budget, and its cost]({FIGURE})",
        "",
        f"Every page, figure and the sortable ledger: open [`{SITE}`]({SITE}) after `make site` (or `make repro`).",
        END,
    ]
    return "\n".join(lines)


def verdict_lines(claims: pd.DataFrame, registry: claims_registry.Registry, papers: list[str]) -> str:
    """The README's central-verdicts block: :func:`compendium.pipeline.site.central_verdicts` between its markers."""
    return "\n".join([VERDICTS_START, *site.central_verdicts(claims, registry, papers), VERDICTS_END])


def read_ledger() -> pd.DataFrame:
    """The ledger the ``claims_ledger`` stage wrote (``reports/claims.csv``)."""
    return pd.read_csv(paths.REPORTS / "claims.csv", dtype=str, keep_default_na=False)


def current(text: str, start: str = START, end: str = END) -> str:
    if start not in text or end not in text:
        raise ValueError(f"README.md has no {start} ... {end} block")
    return text[text.index(start) : text.index(end) + len(end)]


def rendered() -> str:
    """The block as the committed products render it."""
    scratch = json.loads(FROM_SCRATCH.read_text()) if FROM_SCRATCH.exists() else None
    return block(read_ledger(), summary.read(), timings.minutes(), scratch)


def rendered_verdicts() -> str:
    """The verdicts block as the committed ledger and the claims registry render it."""
    return verdict_lines(read_ledger(), claims_registry.load(), list(site.PAPERS))


def main() -> int:
    text = README.read_text()
    text = text.replace(current(text), rendered())
    README.write_text(text.replace(current(text, VERDICTS_START, VERDICTS_END), rendered_verdicts()))
    paper_estimate.rewrite_readme(paper_estimate.PAGE)  # the paper profile's time table, from the minutes just measured
    print(
        f"[readme] results block rewritten from {len(read_ledger())} claims and the summary's headlines; "
        "the paper profile's time table too"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
