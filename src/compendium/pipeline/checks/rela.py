"""Preconditions and ledger rows of the ReLA comparison stages: ``rela_budget`` (camera-ready Table 1,
Fig. 4a and 4c), ``rela_arch`` (Table 2), ``rela_methods`` (Table 3) and ``rela_ablations`` (v1
Fig. 4a-b, camera-ready Fig. 4b).

Every comparison is judged by :func:`compendium.verdicts.rule.decide` on paired differences over matched
seeds. Whether a run tests a claim is computed from its own records (the rows of
:func:`compendium.rela.experiment.run`: ``steps``, ``switch step``, ``schedule``, ``w``, ``probe``):

* a "+ReLA" arm is the paper's method (BYOL + ReLA, camera-ready eq. 9 with Algorithm 1's λ in
  {0, 1}) only once its λ switch fired and the SSL phase ran some steps; before that it trains on
  the ReLA loss alone and its SSL method plays no part (:func:`ssl_phase_ran`);
* a baseline (BYOL at a budget, BYOL*, each method's "Original") trained above the untrained
  network of the same architecture under the same probe (:func:`above_untrained`).

A ``runs`` frame holds one row per trained or probed arm with at least ``seed``, ``prior`` (empty or
NaN for the plain method), ``untrained``, ``budget``, ``probe``, ``steps``, ``switch step``,
``schedule`` and ``w`` (:mod:`compendium.rela.records` selects from it and computes the gap closure and
the matching budget).

The stages record their ``runs`` exactly with the settings they ran, and the ``claims_ledger`` stage
judges them from those tables (:func:`rela_stage_claims`), so a change here reruns that stage alone.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from compendium.verdicts import claims
from compendium.pipeline import paper_tables as PT
from compendium.pipeline.checks import stage_tables
from compendium.verdicts.claims import Claim, Effect, Precondition
from compendium.rela import records as rec
from compendium.rela import regime, scaled_switch, schedule, tables

#: The camera-ready CIFAR-10 run at a 10% budget: 100 epochs (App. K) of 5,000 images at batch 128.
PAPER_STEPS_10 = 100 * 39
#: "Matches full-budget BYOL": not below it by more than this (Table 1, IN-1K: 62.1 vs 61.9).
MATCH_MARGIN = 0.005
#: "Does not hurt" (Table 3, Rand. row: 71.3 vs 71.3 for VICReg): not below by more than this.
NO_HARM_MARGIN = 0.005


@functools.lru_cache(maxsize=None)
def min_switch_steps() -> int:
    """Steps before the camera-ready switch (Algorithm 1: ℓ_s = 2, ℓ_f = 1, EMAs 0.999 / 0.99,
    threshold 0.995) can fire: on a flat ReLA loss of 1 (a falling loss takes longer)."""
    s = schedule.EMASwitch()
    while not s.switched:
        s.update(1.0)
    return int(s.switch_step)


def switch_needs(steps: int) -> str:
    return (
        f"runs long enough for the λ switch to fire (>= {min_switch_steps()} steps on a flat ReLA loss, thousands on "
        f"a falling one; camera-ready CIFAR-10 at 10%: 100 epochs x 39 = {PAPER_STEPS_10:,} steps); ours ran {steps}"
    )


BASELINE_NEEDS = (
    f"a baseline trained long enough to beat the untrained network (more steps; the camera-ready's "
    f"10% runs have {PAPER_STEPS_10:,} on CIFAR-10)"
)


SSL_PHASE = "+ReLA arms ran their SSL phase (the λ switch fired)"
SWITCHES = scaled_switch.SWITCHES  # the one-way EMA switches: the camera-ready constants and the scaled variant
#: how a ledger row names the switch its +ReLA arms ran, so that the scaled variant is stated wherever it was used
SWITCH_NAMES = {
    "switch": "the camera-ready switch",
    scaled_switch.NAME: "the switch with its EMAs scaled to the run (our variant, switch_scaled)",
}


def ssl_phase_ran(rela_runs: pd.DataFrame, name: str = SSL_PHASE) -> Precondition:
    """Every ReLA run of ``rela_runs`` trained some steps on the SSL loss (camera-ready Algorithm 1)."""
    rows = [r for _, r in rec.normalized(rela_runs).iterrows()]
    if not rows:
        return Precondition(name, False, "no ReLA run", switch_needs(0))
    ssl = [rec.ssl_phase_steps(r) for r in rows]
    switch = [r for r in rows if r["schedule"] in SWITCHES]
    fired = sum(1 for r in switch if not pd.isna(r["switch step"]))
    steps = sorted({int(r["steps"]) for r in rows})
    span = f"{min(ssl)}" if min(ssl) == max(ssl) else f"{min(ssl)}-{max(ssl)}"
    kinds = " and ".join(SWITCH_NAMES[k] for k in sorted({r["schedule"] for r in switch}))
    measured = (
        f"{kinds}: the switch fired in {fired} of {len(switch)} runs; " if switch else ""
    ) + f"SSL-phase steps {span} of {', '.join(map(str, steps))}"
    return Precondition(name, min(ssl) > 0, measured, switch_needs(max(steps)))


def above_untrained(
    name: str, arms: Mapping[str, tuple[Mapping, Mapping]], needs: str = BASELINE_NEEDS
) -> Precondition:
    """Every baseline above its untrained network: ``arms`` maps a label to (seed -> probe of the
    baseline, seed -> probe of the untrained network); the 95% interval of the paired difference over the
    seeds both ran lies above 0 (:func:`compendium.verdicts.claims.above`, the rule of every regime check)."""
    parts, met = [], True
    for label, (a, u) in arms.items():
        p = claims.above(label, a, u, needs)
        met &= p.met
        shared = sorted(set(a) & set(u))
        level = (
            f"{100 * rec.mean_over(a, shared):.1f} vs untrained {100 * rec.mean_over(u, shared):.1f}; "
            if shared
            else ""
        )
        parts.append(f"{label} {level}{p.measured}{'' if p.met else ' (NOT above)'}")
    return Precondition(name, met, "; ".join(parts) if parts else "no baseline", needs)


def _texts(effects: Iterable[Effect]) -> str:
    return "; ".join(e.text() for e in effects)


def _caveat(pre: Iterable[Precondition]) -> str:
    ssl = [p for p in pre if "SSL phase" in p.name and not p.met]
    return (
        " [ReLA-only arms: the λ switch never fired, so no SSL phase ran; not the paper's BYOL + ReLA]" if ssl else ""
    )


def _claim(
    location: str,
    claim: str,
    check: str,
    effects,
    pre,
    ours: str,
    paper_numbers: str = "",
    version: str = "camera-ready",
    margin: float = 0.0,
    digits: int = 1,
) -> Claim:
    effects = list(effects)
    pre = list(pre)
    return Claim(
        "ReLA",
        version,
        location,
        claim,
        check,
        **claims.compare(effects, pre, margin=margin, digits=digits),
        ours=ours + _caveat(pre),
        paper_numbers=paper_numbers,
    )


# ---------------------------------------------------------------------------------------------
# rela_budget: camera-ready Table 1, Fig. 4a, Fig. 4c


def _rela_rows(runs, ps, budgets):
    r = rec.normalized(runs)
    in_grid = r["budget"].apply(lambda b: bool(np.isclose(b, budgets).any()))
    return r[r["prior"].isin(list(ps)) & ~r["untrained"].astype(bool) & in_grid]


def _fmt_mb(mb) -> str:
    return "none in the grid" if mb is None or pd.isna(mb) else f"{mb:.0%}"


def table1_claims(runs: pd.DataFrame, priors: list, budgets: list) -> list[Claim]:
    """Camera-ready Table 1: BYOL + ReLA beats BYOL at every budget with every prior, and with the Rand. prior."""
    un, rows = rec.untrained(runs), []
    base = above_untrained(
        "BYOL above the untrained network", {f"BYOL {b:.0%}": (rec.byol(runs, b), un) for b in budgets}
    )
    for ps, location, claim, numbers in (
        (
            priors,
            "Table 1",
            "BYOL + ReLA beats BYOL at every budget with every prior",
            "every ReLA cell of Table 1 exceeds its BYOL cell",
        ),
        (
            [p for p in priors if p == "rand"],
            "Table 1 (Rand. column)",
            "Even a randomly initialised network is a useful prior: BYOL + ReLA (Rand.) beats BYOL",
            "CF-10: 71.4 vs 58.3 (10%), 77.1 vs 70.1 (20%), 82.7 vs 77.9 (50%)",
        ),
    ):
        if not ps:
            continue
        eff = [
            Effect.paired(f"{PT.prior_label(p)} {b:.0%}", rec.rela(runs, p, b), rec.byol(runs, b))
            for p in ps
            for b in budgets
        ]
        pre = [ssl_phase_ran(_rela_rows(runs, ps, budgets)), base]
        rows.append(
            _claim(
                location,
                claim,
                "paired probe(+ReLA) − probe(BYOL) at the same budget over matched seeds > 0, for every cell",
                eff,
                pre,
                "matched seeds: " + _texts(eff),
                numbers,
            )
        )
    return rows


def gap_closure_claim(runs: pd.DataFrame, prior: str, budget: float, goal: float) -> Claim:
    """Camera-ready Table 1 (CF-10, 10%): with the same-dataset prior, BYOL + ReLA at 10% closes
    most of the gap to BYOL*. Effect per seed: ReLA − (BYOL + goal · (BYOL* − BYOL))."""
    R, B, F, U = rec.rela(runs, prior, budget), rec.byol(runs, budget), rec.byol(runs, 1.0), rec.untrained(runs)
    seeds = sorted(set(R) & set(B) & set(F))
    claim = "With a same-dataset prior (CF10-T), BYOL + ReLA at a 10% budget nearly reaches BYOL at the full budget"
    check = (
        f"paired ReLA@{budget:.0%} − (BYOL@{budget:.0%} + {goal:.0%} of the gap to BYOL*) over matched seeds > 0, "
        f"i.e. gap closure >= {goal:.0%} (the paper's CF-10 cells close 93%)"
    )
    numbers = "CF-10: BYOL 58.3, CF10-T 81.1, BYOL* 82.7 (93% of the gap)"
    if not seeds:
        pre = [
            Precondition("ReLA, BYOL and BYOL* share a seed", False, "no shared seed", "BYOL* on the headline seeds")
        ]
        return Claim(
            "ReLA",
            "camera-ready",
            "Table 1 (CF-10, 10%)",
            claim,
            check,
            **claims.not_tested(pre),
            ours="no seed with all three arms",
            paper_numbers=numbers,
        )
    eff = Effect(f"ReLA − (BYOL + {goal:.0%} gap)", [R[s] - B[s] - goal * (F[s] - B[s]) for s in seeds], seeds)
    m = {k: rec.mean_over(d, seeds) for k, d in (("R", R), ("B", B), ("F", F))}
    pre = [
        ssl_phase_ran(_rela_rows(runs, [prior], [budget])),
        above_untrained("BYOL and BYOL* above the untrained network", {f"BYOL {budget:.0%}": (B, U), "BYOL*": (F, U)}),
        claims.above("BYOL* above BYOL (a gap to close)", F, B, "a full-budget run that beats the low-budget one"),
    ]
    gap = m["F"] - m["B"]
    closure = (m["R"] - m["B"]) / gap if gap > 0 else float("nan")
    per = ", ".join(f"{(R[s] - B[s]) / (F[s] - B[s]):.0%}" if F[s] > B[s] else "no gap" for s in seeds)
    head = f"gap closure {closure:.1%}" if gap > 0 else "no gap to close (BYOL* not above BYOL)"
    ours = (
        f"{head} on seeds {rec.seed_text(seeds)} (per seed {per}): ReLA {100 * m['R']:.1f}, BYOL {100 * m['B']:.1f}, "
        f"BYOL* {100 * m['F']:.1f}"
    )
    if any(s in U for s in seeds):
        ours += f", untrained {100 * rec.mean_over(U, [s for s in seeds if s in U]):.1f}"
    return _claim("Table 1 (CF-10, 10%)", claim, check, [eff], pre, ours, numbers)


def half_cost_claim(runs: pd.DataFrame, cross: str, same: str, budgets: list, cost_goal: float) -> Claim:
    """Abstract; camera-ready Table 1 (IN-1K, CF10-T, 50%): with a prior trained on another dataset,
    BYOL + ReLA at half the budget matches BYOL* (non-inferiority, :data:`MATCH_MARGIN`)."""
    claim = "A prior trained on another dataset lets BYOL + ReLA match full-budget BYOL at half the cost"
    numbers = "IN-1K: CF10-T at 50% 62.1 vs BYOL* 61.9"
    cost = rec.cost_table(runs, [cross, same], budgets, label=PT.prior_label).set_index("arm")
    ours = "matching budget (seed means): " + "; ".join(
        f"{a}: {_fmt_mb(r['matching budget'])} (seeds {r['seeds']})" for a, r in cost.iterrows()
    )
    # the cell at cost_goal: in the grid, or run on its own (a smaller budget would test a stronger claim)
    if not (any(abs(b - cost_goal) < 1e-9 for b in budgets) or rec.rela(runs, cross, cost_goal)):
        pre = [
            Precondition(
                f"the {cost_goal:.0%} cell of the cross-dataset prior",
                False,
                "budgets " + ", ".join(f"{b:.0%}" for b in budgets),
                f"the {cost_goal:.0%} cell on 3 seeds (cost_goal_cell, or the faithful profile's grid)",
            )
        ]
        return Claim(
            "ReLA",
            "camera-ready",
            "abstract; Table 1 (IN-1K, CF10-T, 50%)",
            claim,
            "n/a",
            **claims.not_tested(pre),
            ours=ours,
            paper_numbers=numbers,
        )
    b = cost_goal
    eff = [Effect.paired(f"{PT.prior_label(cross)} {b:.0%} − BYOL*", rec.rela(runs, cross, b), rec.byol(runs, 1.0))]
    pre = [
        ssl_phase_ran(_rela_rows(runs, [cross], [b])),
        above_untrained("BYOL* above the untrained network", {"BYOL*": (rec.byol(runs, 1.0), rec.untrained(runs))}),
    ]
    check = (
        f"paired probe(+ReLA cross-dataset prior @ {b:.0%}) − probe(BYOL*) over matched seeds > "
        f"−{100 * MATCH_MARGIN:.1f} points (matches BYOL*)"
    )
    return _claim("abstract; Table 1 (IN-1K, CF10-T, 50%)", claim, check, eff, pre, ours, numbers, margin=MATCH_MARGIN)


FIG4C_CHECK = (
    "per seed, the budget (share of the full budget, interpolated in the grid) at which +ReLA reaches that "
    "seed's BYOL*: next weaker prior's − the stronger's (priors ranked by their own probes), paired over "
    "matched seeds > 0"
)


def prior_strength_claim(runs: pd.DataFrame, priors: list, budgets: list, strength: Mapping[str, float]) -> Claim:
    """Camera-ready Fig. 4c: stronger priors give greater budget reductions. The reduction is read where the
    figure reads it: per seed, the budget at which +ReLA with a prior reaches that seed's BYOL*
    (:func:`compendium.rela.records.matching_budgets`); effect: the next weaker prior's budget − the stronger's
    (priors ranked by their own probes), in points of the full budget. A seed where a prior never reaches BYOL*
    in the grid has no budget; fewer than 3 such seeds leave the row not tested."""
    order = sorted(priors, key=lambda p: -strength[PT.prior_label(p)])
    full = rec.byol(runs, 1.0)
    mbs = {p: rec.matching_budgets({b: rec.rela(runs, p, b) for b in budgets}, full) for p in order}
    eff = [
        Effect.paired(f"{PT.prior_label(w)} − {PT.prior_label(s)}", mbs[w], mbs[s])
        for s, w in zip(order, order[1:])
        if set(mbs[s]) & set(mbs[w])
    ]
    pairs = len(order) - 1
    pre = [
        ssl_phase_ran(_rela_rows(runs, priors, budgets)),
        above_untrained("BYOL* above the untrained network", {"BYOL*": (full, rec.untrained(runs))}),
        Precondition(
            "every prior reaches BYOL* within the budget grid",
            len(eff) == pairs and pairs > 0,
            "; ".join(f"{PT.prior_label(p)}: {len(mbs[p])} of {len(full)} seeds" for p in order),
            "a budget grid up to where every prior's student reaches BYOL* (the faithful profile's grid)",
        ),
    ]
    cost = rec.cost_table(runs, priors, budgets, label=PT.prior_label).set_index("arm")
    mb = {p: _fmt_mb(cost.loc["+ReLA " + PT.prior_label(p), "matching budget"]) for p in order}
    ours = (
        "prior's own probe → matching budget: "
        + "; ".join(f"{PT.prior_label(p)} {100 * strength[PT.prior_label(p)]:.1f} → {mb[p]}" for p in order)
        + "; per-seed budgets to reach BYOL*: "
        + (_texts(eff) or "none shared")
    )
    if not eff:
        return Claim(
            "ReLA",
            "camera-ready",
            "Fig. 4c",
            "Stronger prior models consistently give greater reductions of the training budget",
            FIG4C_CHECK,
            **claims.not_tested(pre),
            ours=ours,
        )
    return _claim(
        "Fig. 4c",
        "Stronger prior models consistently give greater reductions of the training budget",
        FIG4C_CHECK,
        eff,
        pre,
        ours,
    )


def transport_claim(
    out: Mapping, inn: Mapping, source: str, source_probe: float, targets: Mapping[str, Mapping]
) -> Claim:
    """Camera-ready Fig. 4a: representations of a strong model transfer linearly to less strong ones
    better than the reverse. ``out``/``inn``: seed -> mean transport similarity from the source to that
    seed's students and back; ``targets``: student -> seed -> probe (they must be less strong)."""
    eff = Effect.paired(f"{source} → students − reverse", out, inn, unit=1.0)
    pre = [
        claims.above(
            f"the source is stronger than {k}",
            {s: source_probe for s in v},
            v,
            "a source prior stronger than the students",
        )
        for k, v in targets.items()
        if v
    ] or [
        Precondition(
            "the source is stronger than every student",
            False,
            "no student probed",
            "a source prior stronger than the students",
        )
    ]
    ours = (
        f"transport similarity {source} → students {np.mean(list(out.values())):.3f}, students → {source} "
        f"{np.mean(list(inn.values())):.3f} (seeds {rec.seed_text(set(out) & set(inn))}; students: "
        f"{', '.join(targets)})"
    )
    return _claim(
        "Fig. 4a",
        "Representations of strong models transfer linearly to less strong ones (better than the reverse)",
        "paired mean transport similarity (1 − D_Rep) from the strongest prior to each seed's students minus "
        "the reverse, over seeds, > 0",
        [eff],
        pre,
        ours,
        digits=3,
    )


def budget_claims(
    runs: pd.DataFrame,
    *,
    priors: list,
    budgets: list,
    same: str,
    cross: str,
    headline: float,
    gap_goal: float,
    cost_goal: float,
    strength: Mapping[str, float],
) -> list[Claim]:
    """The rows of the ``rela_budget`` stage except Fig. 4a (:func:`transport_claim`)."""
    return [
        gap_closure_claim(runs, same, headline, gap_goal),
        half_cost_claim(runs, cross, same, budgets, cost_goal),
        *table1_claims(runs, priors, budgets),
        prior_strength_claim(runs, priors, budgets, strength),
    ]


# ---------------------------------------------------------------------------------------------
# rela_arch (Table 2) and rela_methods (Table 3)


def arch_claims(runs: pd.DataFrame, students: Mapping[str, str], priors: list) -> list[Claim]:
    """Camera-ready Table 2: BYOL + ReLA improves every student at 10% with every prior; each student's
    BYOL must beat the untrained student (``runs`` has an ``arch`` column and untrained arms)."""
    eff = [
        Effect.paired(
            f"{name} {PT.prior_label(p)}",
            rec.probes(runs, arch=a, prior=p, untrained=False),
            rec.probes(runs, arch=a, prior="", untrained=False),
        )
        for a, name in students.items()
        for p in priors
    ]
    base = {
        f"{name} BYOL": (rec.probes(runs, arch=a, prior="", untrained=False), rec.probes(runs, arch=a, untrained=True))
        for a, name in students.items()
    }
    named = rec.normalized(runs)
    pre = [
        ssl_phase_ran(named[named["prior"] != ""]),
        above_untrained("each student's BYOL above the untrained student", base),
    ]
    return [
        _claim(
            "Table 2",
            "BYOL + ReLA improves every student architecture at a 10% budget, with every prior",
            "paired probe(+ReLA) − probe(the student's BYOL) over matched seeds > 0, for every (student, prior)",
            eff,
            pre,
            "matched seeds: " + _texts(eff),
            "CF-10 Original → best prior: ResNet-18 58.3 → 83.2, MobileNet-V2 47.7 → 82.9, "
            "EfficientNet-B0 23.9 → 87.4, ViT-T 43.4 → 69.9",
        )
    ]


def methods_claims(runs: pd.DataFrame, methods: Mapping[str, str], priors: list) -> list[Claim]:
    """Camera-ready Table 3: with the strong prior ReLA improves every SSL method; with Rand. it hurts none
    (non-inferiority, :data:`NO_HARM_MARGIN`). Each method's Original must beat the untrained network."""
    un, rows = rec.untrained(runs), []
    orig = {m: rec.probes(runs, method=m, prior="", untrained=False) for m in methods}
    base = above_untrained(
        "each method's Original above the untrained network",
        {f"{n} Original": (orig[m], un) for m, n in methods.items()},
    )
    specs = []
    if priors[-1] != "rand":
        specs.append(
            (
                priors[-1],
                "Table 3 (CLIP-RN50 row)",
                "With a strong prior, ReLA improves every one of the seven SSL methods at a 10% budget",
                0.0,
                "CF-10 Original → CLIP-RN50: SimCLR 70.7 → 76.4, Barlow 63.7 → 76.5, DINO 66.2 → 82.4, "
                "MoCo 67.4 → 79.8, SimSiam 45.8 → 79.3, SwAV 66.2 → 77.3, Vicreg 71.3 → 80.1",
            )
        )
    if "rand" in priors:
        specs.append(
            (
                "rand",
                "Table 3 (Rand. row)",
                "Even the Rand. prior does not hurt any SSL method (it helps most of them)",
                NO_HARM_MARGIN,
                "CF-10 Original → Rand.: SimCLR 70.7 → 70.9, Barlow 63.7 → 68.8, DINO 66.2 → 70.6, "
                "MoCo 67.4 → 70.9, SimSiam 45.8 → 66.7, SwAV 66.2 → 69.5, Vicreg 71.3 → 71.3",
            )
        )
    for p, location, claim, margin, numbers in specs:
        eff = [
            Effect.paired(n, rec.probes(runs, method=m, prior=p, untrained=False), orig[m]) for m, n in methods.items()
        ]
        pre = [ssl_phase_ran(rec.select(runs, prior=p)), base]
        check = (
            f"paired probe(+ReLA {PT.prior_label(p)}) − probe(Original) over matched seeds "
            + (f"> −{100 * margin:.1f} points" if margin else "> 0")
            + ", for every method"
        )
        rows.append(_claim(location, claim, check, eff, pre, "matched seeds: " + _texts(eff), numbers, margin=margin))
    return rows


# ---------------------------------------------------------------------------------------------
# rela_ablations: v1 Fig. 4a-b, camera-ready Fig. 4b


def _ablation_arm(runs, p, schedule, w=None, budget_mode="dynamic"):
    sel = rec.select(runs, prior=p, schedule=schedule, budget_mode=budget_mode, order="code", untrained=False)
    sel = sel[sel["transfer_trainable"].astype(bool)]
    if w is not None:
        sel = sel[np.isclose(sel["w"].astype(float), w)]
    return sel


def _acc(sel) -> dict:
    return {int(s): float(v) for s, v in zip(sel["seed"], sel["probe"])}


def ablation_claims(
    runs: pd.DataFrame, priors: list, lambdas: list, fractions: list, epochs: int, schedule: str = "switch"
) -> list[Claim]:
    """v1 Fig. 4a (dynamic vs static subset), camera-ready Fig. 4b (the adaptive λ vs the first-w
    settings) and v1/camera-ready Fig. 4b (larger λ suits a strong prior) from the ``rela_ablations`` runs.
    ``schedule``: the adaptive switch the arms ran (``switch`` or ``switch_scaled``)."""
    labels = {p: PT.prior_label(p) for p in priors}
    un = rec.untrained(runs)
    dyn = {p: _ablation_arm(runs, p, schedule) for p in priors}
    sta = {p: _ablation_arm(runs, p, schedule, budget_mode="static") for p in priors}
    rows = []
    # v1 Fig. 4a
    eff = [Effect.paired(labels[p], _acc(dyn[p]), _acc(sta[p])) for p in priors if len(dyn[p]) and len(sta[p])]
    keys = ("schedule", "w", "steps", "order", "transfer_trainable")
    fired_on = lambda f: {0: "never", len(f): "always"}.get(int(f["switch step"].notna().sum()), "on some seeds")
    settings = {
        f"{labels[p]} {m}": {**{k: frame.iloc[0][k] for k in keys}, "switch fired": fired_on(frame)}
        for p in priors
        for m, frame in (("dynamic", dyn[p]), ("static", sta[p]))
        if len(frame)
    }
    pre = [
        Precondition(
            "the dynamic arm draws more than one subset",
            epochs >= 2,
            f"{epochs} epochs, a subset each",
            "at least 2 epochs (the papers: 100)",
        ),
        above_untrained(
            "both arms above the untrained network",
            {f"{labels[p]} {m}": (_acc(f), un) for p in priors for m, f in (("dynamic", dyn[p]), ("static", sta[p]))},
            "ReLA arms trained long enough to beat the untrained network",
        ),
        claims.same_evaluation(
            "the arms differ only in the subset", settings, "the same λ schedule and steps for both arms"
        ),
    ]
    fired = sum(int(f["switch step"].notna().sum()) for p in priors for f in (dyn[p], sta[p]))
    n = sum(len(f) for p in priors for f in (dyn[p], sta[p]))
    note = (
        "" if fired == n else f" (the switch fired in {fired} of {n} runs: the others trained on the ReLA loss alone)"
    )
    missing = [Precondition("both arms ran", False, "an arm is missing", "both subsets on the same seeds")]
    rows.append(
        Claim(
            "ReLA",
            "v1",
            "Fig. 4a",
            "A dynamic subset beats a static one, by 1.5 to 8.3 points",
            "paired probe(dynamic subset) − probe(static subset) over matched seeds > 0, for each prior",
            **(claims.compare(eff, pre) if eff else claims.not_tested(pre + missing)),
            ours=("matched seeds: " + _texts(eff) if eff else "no arms") + note,
            paper_numbers="gains from 1.5% to 8.3% (datasets unspecified)",
        )
    )

    # camera-ready Fig. 4b: adaptive vs every first-w setting (w = 0 is BYOL, w = 1 is ReLA throughout)
    byol = _acc(rec.select(runs, prior="", untrained=False))

    def static(p, w):
        if w == 0:
            return byol
        if w == 1:
            return _acc(_ablation_arm(runs, p, "constant", 1.0)) if any(np.isclose(lambdas, 1.0)) else {}
        return _acc(_ablation_arm(runs, p, "first", w))

    eff = [
        Effect.paired(f"{labels[p]} vs w={w:g}", _acc(dyn[p]), static(p, w))
        for p in priors
        for w in fractions
        if static(p, w) and set(static(p, w)) & set(_acc(dyn[p]))
    ]
    pre = [
        ssl_phase_ran(
            pd.concat([dyn[p] for p in priors]),
            "the adaptive arms ran their SSL phase (the λ switch fired; otherwise adaptive = λ 1 = w 1)",
        )
    ]
    rows.append(
        _claim(
            "Fig. 4b",
            "The adaptive λ generalises: it does as well as the best static setting for each prior",
            "paired probe(adaptive switch) − probe(first-w setting) over matched seeds > "
            f"−{100 * MATCH_MARGIN:.1f} points, for every w and both priors",
            eff,
            pre,
            "matched seeds: " + _texts(eff),
            margin=MATCH_MARGIN,
        )
    )

    # v1 Fig. 4b (constant λ) and camera-ready Fig. 4b (first w): the interaction prior x weight
    weak, strong = priors[0], priors[-1]
    inner = [w for w in fractions if 0 < w < 1]
    ws = (min(inner), max(inner)) if len(inner) >= 2 else (min(fractions), max(fractions))
    eff = []
    for kind, lo, hi, arm in (
        ("λ", min(lambdas), max(lambdas), lambda p, v: _acc(_ablation_arm(runs, p, "constant", v))),
        ("w", *ws, static),
    ):
        a = {p: (arm(p, hi), arm(p, lo)) for p in (weak, strong)}
        seeds = sorted(set.intersection(*(set(d) for pair in a.values() for d in pair)))
        if seeds and hi > lo:
            did = [(a[strong][0][s] - a[strong][1][s]) - (a[weak][0][s] - a[weak][1][s]) for s in seeds]
            eff.append(Effect(f"{kind} {hi:g} vs {lo:g}", did, seeds))
    one = [Precondition("two weights", False, "one weight", "two weights")]
    rows.append(
        Claim(
            "ReLA",
            "camera-ready",
            "Fig. 4b; v1 Fig. 4b",
            "A larger ReLA weight suits a strong prior, a smaller one a weak prior",
            f"paired interaction over matched seeds > 0: [probe(high) − probe(low)] with the {labels[strong]} "
            f"prior minus the same with the {labels[weak]} prior, for constant λ (v1) and first-w (camera-ready)",
            **(claims.compare(eff) if eff else claims.not_tested(one)),
            ours="matched seeds: " + _texts(eff) if eff else "fewer than two weights",
        )
    )
    return rows


# ---------------------------------------------------------------------------------------------
# the stages' rows, judged by ``claims_ledger`` from the tables the stages record


def transport_claim_from(per_seed: pd.DataFrame, strength: Mapping[str, float]) -> Claim:
    """:func:`transport_claim` from ``rela_budget``'s ``transport_per_seed`` table (``seed``, ``student``, ``out``,
    ``in``, ``probe``) and the priors' own probes by label (``strength``); the source is the strongest prior."""
    g = per_seed.groupby("seed")
    strongest = max(strength, key=strength.get)
    return transport_claim(
        g["out"].mean().to_dict(),
        g["in"].mean().to_dict(),
        strongest,
        strength[strongest],
        {k: dict(zip(d["seed"], d["probe"])) for k, d in per_seed.groupby("student")},
    )


def budget_stage_claims(folder: Path, gap_goal: float) -> list[Claim]:
    """``rela_budget``'s rows from its tables: ``runs`` (its variant-switch arms left out: they are compared in
    the stage's own table), ``transport_per_seed`` and ``settings``; ``gap_goal``: the judge's reading of "nearly
    reaches" (the ``claims_ledger`` stage's parameter)."""
    st = stage_tables.settings(folder)
    runs = tables.table_runs(stage_tables.table(folder, "runs"))
    rows = budget_claims(
        runs,
        priors=st["priors"],
        budgets=st["budgets"],
        same=st["same"],
        cross=st["cross"],
        headline=st["headline"],
        gap_goal=gap_goal,
        cost_goal=st["cost_goal"],
        strength=st["strength"],
    )
    split = (
        stage_tables.table(folder, "prior_vs_ssl") if (Path(folder) / "prior_vs_ssl.csv").is_file() else pd.DataFrame()
    )
    headline_cell = (PT.prior_label(st["same"]), f"{st['headline']:.0%}")
    rows = [with_prior_split(r, split, headline_cell) for r in rows]
    return rows + [transport_claim_from(stage_tables.table(folder, "transport_per_seed"), st["strength"])]


def prior_split_text(split: pd.DataFrame, cells: Iterable[tuple[str, str]] | None = None) -> str:
    """What the prior alone gives and what the SSL phase adds, per cell (prior label, budget text) of
    ``rela_budget``'s ``prior_vs_ssl`` table (all its cells when ``cells`` is None); "" when it has none."""
    if split is None or split.empty:
        return ""
    keep = split if cells is None else split[[(p, b) in set(cells) for p, b in zip(split["prior"], split["budget"])]]
    return "; ".join(
        f"{r['prior']} {r['budget']}: prior alone − BYOL {r['prior alone − BYOL']:+.1f} "
        f"{r['prior alone − BYOL, 95% interval']}, +ReLA − prior alone {r['+ReLA − prior alone']:+.1f} "
        f"{r['+ReLA − prior alone, 95% interval']} (SSL-phase share {r['SSL-phase share of +ReLA']:.0%}, "
        f"{int(r['seeds'])} seeds)"
        for _, r in keep.iterrows()
    )


def with_prior_split(row: Claim, split: pd.DataFrame, headline_cell: tuple[str, str]) -> Claim:
    """A Table 1 row with, in its ``ours``, what regression onto the prior alone (λ = 1 throughout) gives and what
    the SSL phase adds (:func:`prior_split_text`): the ``headline_cell`` (prior label, budget text) for the gap
    closure, every cell for the other Table 1 rows."""
    if not row.location.startswith("Table 1") or split is None or split.empty:
        return row
    if row.location.startswith("Table 1 (CF-10"):
        cells = [headline_cell]
    elif row.location.startswith("Table 1 (Rand."):
        cells = [(p, b) for p, b in zip(split["prior"], split["budget"]) if p == PT.prior_label("rand")]
    else:
        cells = None
    text = prior_split_text(split, cells)
    return (
        dataclasses.replace(row, ours=f"{row.ours}; what the SSL phase adds to the prior alone: {text}")
        if text
        else row
    )


def arch_stage_claims(folder: Path, **judge) -> list[Claim]:
    """``rela_arch``'s rows from its ``runs`` and ``settings`` (``students``: arch -> name, ``priors``)."""
    st = stage_tables.settings(folder)
    return arch_claims(stage_tables.table(folder, "runs"), st["students"], st["priors"])


def methods_stage_claims(folder: Path, **judge) -> list[Claim]:
    """``rela_methods``' rows from its ``runs`` and ``settings`` (``methods``: method -> name, ``priors``)."""
    st = stage_tables.settings(folder)
    return methods_claims(stage_tables.table(folder, "runs"), st["methods"], st["priors"])


def ablation_stage_claims(folder: Path, **judge) -> list[Claim]:
    """``rela_ablations``' rows from its ``runs`` and ``settings``."""
    st = stage_tables.settings(folder)
    return ablation_claims(
        stage_tables.table(folder, "runs"),
        st["priors"],
        st["lambdas"],
        st["fractions"],
        st["epochs"],
        schedule=st["schedule"],
    )


#: the name of the regime check every comparison of a ReLA stage that trains BYOL at a budget carries
IN_REGIME = "BYOL in the regime the rela_regime study asks"


def regime_precondition(stage: str, regimes: pd.DataFrame | None) -> Precondition:
    """Whether ``stage``'s setting is in the regime the ``rela_regime`` study asks (its ``stage_regimes`` table,
    :func:`compendium.rela.regime.stage_regimes`): BYOL at the full budget and at the headline budget above the
    untrained network by the goals, both by the lower 95% bound, measured at the stage's own setting."""
    row = regimes[regimes["stage"] == stage] if regimes is not None and len(regimes) else pd.DataFrame()
    if not len(row):
        return Precondition(IN_REGIME, False, "the study wrote no row for this stage", "`dvc repro rela_regime`")
    r = row.iloc[0]
    setting = (
        f"width {int(r['width'])}, {int(r['full epochs'])} epochs at the full budget, {r['view']} features, "
        f"{int(r['labels']):,} probe labels"
    )
    goals = (
        f"the goals: BYOL at the full budget {100 * float(r['goal full']):g} points above the untrained network and at "
        f"{float(r['budget']):.0%} more than {100 * float(r['goal low']):g} above it, both by the lower 95% bound"
    )
    if str(r["measured"]) in ("True", "true"):
        measured = (
            f"{setting}: BYOL − untrained {100 * r['full gain']:+.1f} [{100 * r['full gain lo']:+.1f}, "
            f"{100 * r['full gain hi']:+.1f}] at the full budget, {100 * r['10% gain']:+.1f} "
            f"[{100 * r['10% gain lo']:+.1f}, {100 * r['10% gain hi']:+.1f}] at {float(r['budget']):.0%} "
            f"({int(r['seeds'])} seeds; {goals})"
        )
    else:
        measured = f"{setting}: the study has no curve at this setting ({goals})"

    def text(key: str) -> str:
        v = r.get(key)
        return "" if v is None or pd.isna(v) else str(v)  # "" is read back as NaN

    chosen, cand, confirmed = text("chosen"), text("candidate"), text("confirmation")
    nearer = (
        f"; the nearest on any probe: {cand}, then the ReLA stages at its length and probe"
        if cand
        else "; no measured setting's means meet them either"
    )
    if regime.confirmation_failed(confirmed):
        nearer = f"; {confirmed}, so no regime on two cores is known"
    needs = (
        f"the stage run at the study's chosen regime ({chosen})"
        if chosen
        else "a setting where the study's goals hold: none of its measured regimes meets them (the nearest on this "
        f"probe: {r['nearest']}){nearer}; or the paper profile's CIFAR-10 and ConvNet of width 128 (a GPU)"
    )
    return Precondition(IN_REGIME, str(r["meets goals"]) in ("True", "true"), measured, needs)


def with_precondition(row: Claim, pre: Precondition) -> Claim:
    """``row`` with ``pre`` added to its evidence's preconditions (an exact check is returned as it is)."""
    if not row.evidence or row.evidence == "legacy":
        return row
    ev = claims.Evidence.from_json(row.evidence)
    return dataclasses.replace(row, evidence=dataclasses.replace(ev, preconditions=(*ev.preconditions, pre)).to_json())


#: The ReLA stages whose rows ``claims_ledger`` judges from their tables, with the function that does.
RELA_STAGES = {
    "rela_budget": budget_stage_claims,
    "rela_arch": arch_stage_claims,
    "rela_methods": methods_stage_claims,
    "rela_ablations": ablation_stage_claims,
}


#: claims of those stages about the priors' representations, not about BYOL's budgets: no regime check
NOT_BUDGET = {"Representations of strong models transfer linearly to less strong ones (better than the reverse)"}


def rela_stage_claims(root: Path, stages: Iterable[str] = tuple(RELA_STAGES), **judge) -> list[Claim]:
    """The rows of ``stages`` (of :data:`RELA_STAGES`), each judged from ``root/<stage>/`` with the judge's own
    parameters (``gap_goal``); each comparison about BYOL's budgets carries the stage's :func:`regime_precondition`
    from ``root/rela_regime/stage_regimes.csv``."""
    regimes = stage_tables.optional(Path(root) / "rela_regime", "stage_regimes")
    return [
        r if r.claim in NOT_BUDGET else with_precondition(r, regime_precondition(s, regimes))
        for s in stages
        for r in RELA_STAGES[s](Path(root) / s, **judge)
    ]
