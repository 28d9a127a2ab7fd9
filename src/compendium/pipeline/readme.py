"""The README's results block, generated from the claims ledger (``reports/claims.csv``).

The block between ``<!-- ledger:start -->`` and ``<!-- ledger:end -->`` in README.md is what
:func:`block` renders from the ledger; a test fails when they differ, so the README never states a
verdict the pipeline did not produce. ``python -m compendium.pipeline.readme`` rewrites the block in place.
"""

from __future__ import annotations

import sys

from compendium.core import paths
from compendium.pipeline import claims
from compendium.pipeline.tables import markdown_table

START, END = "<!-- ledger:start -->", "<!-- ledger:end -->"
README = paths.ROOT / "README.md"


def block(ledger) -> str:
    """Verdict counts per paper, the tested share, and the scale of the run."""
    s = claims.summary(ledger)
    total, tested = len(ledger), int((ledger["tested"] == "yes").sum())
    scales = ", ".join(sorted(set(ledger["scale"]))) or "-"
    comp = ledger[ledger["preconditions"] != ""]  # comparisons of trained arms (exact checks have none)
    lines = [START,
             f"**{total} claims checked at `{scales}` scale; {tested} of them tested in the regime the claim is about**",
             f"({len(comp)} comparisons of trained arms, of which {int((comp['tested'] == 'yes').sum())} tested; the "
             "others name the setting they need in [`reports/claims.md`](reports/claims.md)).", "",
             markdown_table(s), END]
    return "\n".join(lines)


def read_ledger():
    """The ledger the ``claims_ledger`` stage wrote (``reports/claims.csv``: every stage's rows, combined
    with a disjoint-seed rerun where there is one)."""
    import pandas as pd

    return pd.read_csv(paths.REPORTS / "claims.csv", dtype=str, keep_default_na=False)


def current(text: str) -> str:
    if START not in text or END not in text:
        raise ValueError(f"README.md has no {START} ... {END} block")
    return text[text.index(START): text.index(END) + len(END)]


def main() -> int:
    ledger = read_ledger()
    text = README.read_text()
    README.write_text(text.replace(current(text), block(ledger)))
    print(f"[readme] results block rewritten from {len(ledger)} claims")
    return 0


if __name__ == "__main__":
    sys.exit(main())
