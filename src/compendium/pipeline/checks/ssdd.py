"""Preconditions, tables and ledger rows of the self-supervised dataset distillation stages
(``ssdd_teacher``, ``ssdd_distill``, ``ssdd_eval``): SSDD (Yu et al., ICLR 2025) Tables 1-4, 11, 12,
after KRR-ST (Lee et al., ICLR 2024).

Every comparison is a paired difference over the student seeds both arms ran
(:meth:`compendium.verdicts.claims.Effect.paired`), judged by :func:`compendium.verdicts.rule.decide`. Whether the
run tests a claim is computed from its own records:

* **the outer loop reached its regime** (:func:`outer_loop`): each distilled set ran the paper's
  30,000 outer iterations (SSDD App. A.1, CIFAR-100) or its recorded outer loss (Eq. 3) reached a
  plateau (:func:`compendium.verdicts.claims.plateaued`);
* **the set beats its initialisation** (:func:`beats_initialisation`): SSDD against its T = 0 control
  (the PCA projection of Sec. 3.2 without optimisation), KRR-ST against the random real images it
  starts from (the Random set of the same seed and size), on matched seeds, the 95% interval above 0;
* **the probe shows pre-training**: the teacher's targets probe well above untrained networks of its
  architecture (:func:`teacher_well_above`), and the pre-trained students above the untrained student
  (:func:`above_untrained`).

The run is described by :class:`Run`: the per-seed results table of ``ssdd_eval``, one record per set
(:func:`set_records`) and the ``ssdd_teacher`` probe tables (the teacher's, and its untrained networks').
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from compendium.verdicts import claims
from compendium.verdicts.claims import Claim, Effect, Precondition

PAPER, VERSION = "SSDD", "ICLR 2025"
#: Outer iterations of the distillation (SSDD App. A.1: 30,000 for CIFAR-100, after KRR-ST).
PAPER_OUTER_STEPS = 30_000
#: One-sided 95% critical value: the teacher's probe is "well above" the untrained networks' mean when a
#: single untrained network would land that far above it less than 5% of the time.
Z_WELL_ABOVE = float(stats.norm.ppf(0.95))
T0 = "SSDD T=0 (PCA projection)"
UNTRAINED = "untrained"
DISTILLED = ("ssdd", "krr_st")

OUTER_NEEDS = (
    f"{PAPER_OUTER_STEPS:,} outer iterations (SSDD App. A.1; the paper profile) or an outer loss (Eq. 3) at a plateau"
)
INIT_NEEDS = (
    "a distilled set that beats its initialisation on matched seeds (95% interval above 0): more outer "
    f"iterations ({PAPER_OUTER_STEPS:,} in the paper)"
)
TEACHER_NEEDS = (
    "a teacher whose targets probe well above untrained networks of its architecture: Barlow Twins trained "
    "longer (the paper: a ResNet-18 teacher; the paper profile: 100 epochs on 60,000 images)"
)
STUDENT_NEEDS = (
    "students whose pre-training lifts them above the untrained student (longer pre-training, 1,000 epochs in the "
    "paper)"
)

# The paper's numbers (CIFAR-100 source and target, N = 100 unless stated)
PAPER_T1 = {
    "Random": "43.66 / 23.76 / 19.26 / 28.82 / 11.99 / 20.70",
    "KMeans": "43.94 / 25.13 / 19.05 / 29.82 / 11.43 / 20.77",
    "DSA": "39.38 / 19.97 / 20.11 / 31.57 / 9.58 / 20.03",
    "DM": "31.93 / 10.36 / 16.24 / 20.49 / 8.06 / NaN",
    "KRR-ST": "47.00 / 27.78 / 18.92 / 31.27 / 10.11 / 20.82",
    "SSDD": "52.41 / 35.35 / 20.90 / 36.88 / 24.14 / 23.33",
}
PAPER_T2 = {"Random": "41.61 / 41.80 / 43.66", "KRR-ST": "44.06 / 45.79 / 47.00", "SSDD": "51.41 / 52.08 / 52.41"}
PAPER_T3 = {"Baseline (KRR-ST)": "47.00±0.51", "+ Parameterization": "48.57±0.18", "+ Aug. & Approx.": "52.41±0.10"}
PAPER_T4 = {
    "random": ("I: random N(0,1)", "22.05±3.04"),
    "real": ("II: real-image bases, random coefficients", "30.99±0.25"),
    "pca": ("III: PCA bases, projected coefficients", "52.41±0.10"),
}
PAPER_T11 = {
    "same": ("50.10", "0.31"),
    "bias": ("50.32", "0.30"),
    "q2": ("52.30", "0.07"),
    "q4": ("52.41", "0.06"),
    "q8": ("51.19", "0.04"),
    "ideal": ("53.51", "–"),
}
PAPER_T13 = {"DSA": ("81", "3561"), "DM": ("78", "2571"), "KRR-ST": ("189", "4483"), "SSDD": ("205", "6917")}
PAPER_T12 = {"none": "48.57±0.18", "rotation": "52.41±0.10", "jigsaw": "50.93±0.21", "crop": "51.03±0.40"}


def paper_t1_convnet() -> dict:
    """The paper's Table 1 ConvNet column (CIFAR-100 source and target, N = 100): ``{method: %}``."""
    return {m: float(v.split(" / ")[0]) for m, v in PAPER_T1.items()}


def set_records(sets: Mapping) -> dict:
    """``{name: record}`` of the ``ssdd_eval`` stage's sets (:class:`compendium.distill.ssdd.TargetSet`):
    method, outer steps and the outer-loss curve ``ssdd_distill`` recorded, the Table 11 fields."""
    out = {}
    for name, ts in sets.items():
        ex, p = ts.extra, ts.params
        out[name] = {
            "method": ts.method,
            "steps": int(p.get("steps", 0) or 0),
            "losses": list(ex.get("losses", [])),
            "augmentation": p.get("augmentation", "none"),
            "approx": ex.get("approx", ""),
            "hidden": int(ex.get("hidden", 0) or 0),
            "approx_mse": float(ex.get("approx_mse", float("nan"))),
            "floats": int(ts.floats),
            "budget": int(p.get("budget", 0) or 0),
            "m": int(ex.get("m", len(ts.images))),
            "pairs": int(len(ts.images)),
        }
    return out


def _seed_text(seeds: Iterable) -> str:
    s = sorted(int(x) for x in seeds)
    return f"{s[0]}-{s[-1]}" if len(s) > 2 and s == list(range(s[0], s[-1] + 1)) else ",".join(map(str, s))


def approx_key(rec: Mapping) -> str:
    """Table 11's name of a variant: ``q4`` (Q_h with h hidden units), ``same``, ``bias``, ``ideal``."""
    return f"q{rec['hidden']}" if rec.get("approx") == "q" else str(rec.get("approx", ""))


@dataclass
class Run:
    """One ``ssdd_eval`` run: ``results`` has one row per (set, arch, seed) with ``acc <target>``
    columns; ``sets`` the records of :func:`set_records`; ``teacher_probe`` the ``ssdd_teacher`` table
    (network, features, one column per target) or None; ``untrained_probe`` its probes of untrained networks
    of the teacher's architecture (seed, features, one column per target) or None."""

    results: pd.DataFrame
    sets: Mapping[str, Mapping] = field(default_factory=dict)
    teacher_probe: pd.DataFrame | None = None
    budget_n: int = 10
    budgets: Sequence[int] = (10,)
    archs: Sequence[str] = ("convnet",)
    cross_methods: Sequence[str] = ("Random", "SSDD")
    target: str = "fashion-mnist"
    untrained_probe: pd.DataFrame | None = None

    def acc(self, name: str, arch: str = "convnet", target: str | None = None, seeds: Iterable | None = None) -> dict:
        """seed -> accuracy of ``name``'s students (restricted to ``seeds`` when given)."""
        r = self.results
        r = r[(r["set"] == name) & (r["arch"] == arch)]
        out = {int(s): float(v) for s, v in zip(r["seed"], r[f"acc {target or self.target}"])}
        return out if seeds is None else {s: v for s, v in out.items() if s in set(seeds)}

    def has(self, name: str, arch: str = "convnet") -> bool:
        return bool(self.acc(name, arch))

    def common(self, names: Iterable[str], arch: str = "convnet") -> list:
        """The seeds every one of ``names`` ran (the evaluated ones)."""
        ss = [set(self.acc(n, arch)) for n in names if self.has(n, arch)]
        return sorted(set.intersection(*ss)) if ss else []

    def mean(self, name: str, arch: str = "convnet", target: str | None = None, seeds: Iterable | None = None) -> float:
        v = list(self.acc(name, arch, target, seeds).values())
        return float(np.mean(v)) if v else float("nan")

    def txt(self, name: str, arch: str = "convnet", target: str | None = None, seeds: Iterable | None = None) -> str:
        """``mean ± std`` in points over the seeds (given ones only)."""
        v = list(self.acc(name, arch, target, seeds).values())
        if not v:
            return "–"
        return f"{100 * v[0]:.1f}" if len(v) < 2 else f"{100 * np.mean(v):.1f} ± {100 * np.std(v, ddof=1):.1f}"

    def sd(self, name: str, arch: str = "convnet", target: str | None = None) -> float:
        v = list(self.acc(name, arch, target).values())
        return float(np.std(v, ddof=1)) if len(v) > 1 else 0.0

    def effect(self, a: str, b: str, arch: str = "convnet", label: str | None = None) -> Effect | None:
        """A − B paired over the seeds both ran (None when either arm was not evaluated)."""
        x, y = self.acc(a, arch), self.acc(b, arch)
        if not set(x) & set(y):
            return None
        return Effect.paired(label or f"{a} − {b}", x, y)

    def steps_run(self, method: str) -> int:
        s = [r["steps"] for r in self.sets.values() if r["method"] == method and r["steps"] > 0]
        return max(s) if s else 0


# ---------------------------------------------------------------------------------------------
# Preconditions


def _base(name: str) -> str:
    """The distillation a set comes from: Table 11's variants ``SSDD / same`` share ``SSDD``'s."""
    return name.split(" / ")[0]


def outer_loop(run: Run, names: Iterable[str], paper_steps: int = PAPER_OUTER_STEPS) -> Precondition | None:
    """Every distilled set among ``names`` ran ``paper_steps`` outer iterations (SSDD App. A.1) or its
    outer loss (Eq. 3, the curve ``ssdd_distill`` records) reached a plateau
    (:func:`compendium.verdicts.claims.plateaued`). None when no set among ``names`` is distilled."""
    bases = list(dict.fromkeys(_base(n) for n in names))
    recs = [
        (n, run.sets[n])
        for n in bases
        if n in run.sets and run.sets[n]["method"] in DISTILLED and run.sets[n]["steps"] > 0
    ]
    if not recs:
        return None
    ok, parts = True, []
    for n, r in recs:
        if r["steps"] >= paper_steps:
            parts.append(f"{n}: {r['steps']:,} of {paper_steps:,}")
            continue
        p = claims.plateaued(n, r["losses"], OUTER_NEEDS)
        ok &= p.met
        parts.append(
            f"{n}: {r['steps']:,} of {paper_steps:,} iterations, {'plateau' if p.met else 'no plateau'} ({p.measured})"
        )
    steps = sorted({r["steps"] for _, r in recs})
    return Precondition(
        "outer loops at the paper's iteration count or a plateau",
        ok,
        "; ".join(parts),
        f"{OUTER_NEEDS}; {', '.join(map(str, steps))} at this scale",
    )


def initialisation_of(run: Run, name: str) -> tuple[str, str] | None:
    """``(set, its initialisation control)`` for a distilled set: KRR-ST starts from the Random set of
    the same seed and size (``KRR-ST N=5`` from ``Random N=5``); every SSDD set is represented by the
    main set against its T = 0 control, the only T = 0 the stage runs."""
    r = run.sets.get(_base(name))
    if not r or r["method"] not in DISTILLED or r["steps"] <= 0:
        return None
    if r["method"] == "krr_st":
        base = _base(name)
        return (base, "Random" + base[len("KRR-ST") :]) if base.startswith("KRR-ST") else None
    return "SSDD", T0


def beats_initialisation(run: Run, names: Iterable[str]) -> Precondition | None:
    """Each distilled set beats its initialisation (:func:`initialisation_of`) under the same
    evaluation on matched seeds: the paired 95% interval lies above 0 (a set within noise of where it
    started shows no distillation). None when no set among ``names`` is distilled."""
    pairs = list(dict.fromkeys(p for p in (initialisation_of(run, n) for n in names) if p))
    if not pairs:
        return None
    ok, parts = True, []
    for a, b in pairs:
        e = run.effect(a, b, label=f"{a} − {b}")
        if e is None:
            ok = False
            parts.append(f"{a} or {b} not evaluated")
            continue
        ok &= e.judge() == claims.HOLDS
        parts.append(f"{e.text()} (seeds {_seed_text(e.seeds)})")
    return Precondition("distilled sets beat their initialisation", ok, "; ".join(parts), INIT_NEEDS)


def teacher_well_above(run: Run, z: float = Z_WELL_ABOVE) -> Precondition:
    """The teacher's own probe is well above an untrained network's (``ssdd_teacher``), on its targets: the
    flattened features SSDD distills and the students regress onto. The gap between the teacher's probe and
    the mean probe of n untrained networks of its architecture (``untrained_probe``, one per seed) must
    exceed ``z·σ·√(1 + 1/n)``, σ their seed std: a single untrained network lands that far above the mean of
    n others with probability 5% (one-sided). The globally pooled features (the students' probe) are shown
    beside, with their own spread."""
    name = "the teacher's probe well above an untrained network's"
    tp, up = run.teacher_probe, run.untrained_probe
    if tp is None or not len(tp):
        return Precondition(name, False, "no teacher probe table", TEACHER_NEEDS)
    if up is None or not len(up):
        return Precondition(
            name,
            False,
            "no probes of untrained networks of the teacher's architecture (ssdd_teacher's untrained_seeds)",
            TEACHER_NEEDS,
        )

    def pooled(df):
        return df["features"].astype(str).str.startswith("globally pooled")

    def teacher(df):
        m = df[~df["network"].astype(str).str.startswith("untrained")]
        return float(m[run.target].iloc[0]) if len(m) else float("nan")

    t_flat, t_pool = teacher(tp[~pooled(tp)]), teacher(tp[pooled(tp)])
    u_flat = up.loc[~pooled(up), run.target].astype(float).to_numpy()
    u_pool = up.loc[pooled(up), run.target].astype(float).to_numpy()
    n = len(u_flat)
    if n < 2 or not math.isfinite(t_flat):
        return Precondition(
            name,
            False,
            f"teacher {t_flat:.1%}; {n} untrained network(s) of its architecture: no noise estimate",
            TEACHER_NEEDS,
        )
    mu, sd = float(u_flat.mean()), float(u_flat.std(ddof=1))
    need = z * sd * math.sqrt(1 + 1 / n)
    pool = (
        f"; its globally pooled features: {t_pool:.1%} vs {u_pool.mean():.1%} ± {100 * u_pool.std(ddof=1):.1f}"
        if len(u_pool) > 1 and math.isfinite(t_pool)
        else ""
    )
    return Precondition(
        name,
        t_flat - mu > need,
        f"its targets (flattened features): teacher {t_flat:.1%} vs untrained {mu:.1%} ± {100 * sd:.1f} (std over {n} "
        f"seeds), {100 * (t_flat - mu):+.1f} points against {100 * need:.1f} ({z:.2f}·σ·√(1 + 1/{n})){pool}",
        TEACHER_NEEDS,
    )


def above_untrained(run: Run, names: Iterable[str], arch: str = "convnet") -> Precondition:
    """Every pre-trained student among ``names`` scores above the untrained student of the same
    architecture: the 95% interval of the paired difference over matched seeds lies above 0 (the untrained
    control exists and pre-training lifts the students)."""
    names = [n for n in dict.fromkeys(names) if n != UNTRAINED]
    label = "pre-trained students above the untrained student" + ("" if arch == "convnet" else f" ({arch})")
    if not run.has(UNTRAINED, arch):
        return Precondition(
            label, False, f"no untrained {arch} student evaluated", "the untrained control on the same seeds"
        )
    ok, parts = True, []
    for n in names:
        e = run.effect(n, UNTRAINED, arch, label=n)
        if e is None:
            continue
        ok &= claims.clears(e)
        parts.append(f"{n} {claims.interval_text(e)}")
    return Precondition(label, ok, "paired differences, points, 95% intervals: " + ", ".join(parts), STUDENT_NEEDS)


def preconditions(
    run: Run, names: Iterable[str], shows: Iterable[str] | None = None, arch: str = "convnet"
) -> list[Precondition]:
    """The preconditions of a comparison among the sets ``names``: outer loops, initialisations, the
    teacher's probe, and the untrained control below the students of ``shows`` (default: every set;
    an ablation names only its reference, since a degraded variant such as Table 4's random
    initialisation may well fall below the untrained student)."""
    names = list(names)
    pre = [p for p in (outer_loop(run, names), beats_initialisation(run, names)) if p is not None]
    return pre + [teacher_well_above(run), above_untrained(run, names if shows is None else shows, arch)]


# ---------------------------------------------------------------------------------------------
# Ledger rows


def _row(
    location: str,
    claim: str,
    check: str,
    effects: Sequence[Effect | None],
    pre: list[Precondition],
    ours: str,
    paper_numbers: str,
) -> Claim:
    effects = [e for e in effects if e is not None]
    kw = (
        claims.compare(effects, pre)
        if effects
        else claims.not_tested(
            pre
            + [
                Precondition(
                    "arms evaluated",
                    False,
                    "an arm of the comparison was not run",
                    "the ssdd_distill sets of this comparison",
                )
            ]
        )
    )
    return Claim(PAPER, VERSION, location, claim, check, **kw, ours=ours, paper_numbers=paper_numbers)


def _on(run: Run, names: Sequence[str], arch: str = "convnet") -> str:
    s = run.common(names, arch)
    return (
        ", ".join(f"{n} {run.txt(n, arch, seeds=s)}" for n in names if run.has(n, arch)) + f" (seeds {_seed_text(s)})"
    )


def named(n: int, base: str, budget_n: int) -> str:
    """The set of method ``base`` at budget ``n`` (``ssdd_distill``'s names)."""
    return base if n == budget_n else f"{base} N={n}"


def aug_sets(run: Run) -> dict:
    """Table 12's sets: augmentation -> set name."""
    main = run.sets.get("SSDD", {}).get("augmentation", "rotation")
    out = {"none": "SSDD no augmentation", main: "SSDD"}
    out.update({a: f"SSDD {a}" for a in ("rotation", "jigsaw", "crop") if a != main and f"SSDD {a}" in run.sets})
    return {a: n for a, n in out.items() if run.has(n)}


def table11_sets(run: Run) -> dict:
    """Table 11's variants of the main distillation: key (q4, same, ...) -> set name."""
    return {approx_key(run.sets[n]): n for n in run.sets if (n == "SSDD" or n.startswith("SSDD / ")) and run.has(n)}


def rows(run: Run) -> list[Claim]:
    """The ``ssdd_eval`` rows of the ledger (SSDD Tables 1-4, 11, 12 and the free teachers)."""
    out = []
    base = [b for b in ("KRR-ST", "Random", "KMeans") if run.has(b)]
    out.append(
        _row(
            "Table 1; abstract",
            "SSDD beats KRR-ST and Random (and k-means) at equal storage",
            f"ConvNet, {run.target} probe, N = {run.budget_n}: SSDD − each baseline, paired over matched seeds",
            [run.effect("SSDD", b) for b in base],
            preconditions(run, ["SSDD", *base]),
            _on(run, ["SSDD", *base, UNTRAINED]),
            "CIFAR-100 N=100: 52.41 vs KRR-ST 47.00, Random 43.66",
        )
    )

    effs, pre = [], preconditions(run, run.cross_methods)
    for a in run.archs:
        bs = [b for b in run.cross_methods if b != "SSDD" and run.has(b, a)]
        s = run.common(["SSDD", *bs], a)
        if bs and s:
            sd, acc = run.acc("SSDD", a), {b: run.acc(b, a) for b in bs}
            effs.append(Effect(a, tuple(sd[k] - max(acc[b][k] for b in bs) for k in s), tuple(s)))
        if a != "convnet":
            pre.append(above_untrained(run, run.cross_methods, a))
    others = [b for b in run.cross_methods if b != "SSDD"]
    out.append(
        _row(
            "Table 1",
            "SSDD outperforms the baselines across feature-extractor architectures",
            f"for every student ({', '.join(run.archs)}): SSDD − the best of {others} per seed, over matched seeds",
            effs,
            pre,
            "; ".join(f"{e.label}: {100 * e.mean:+.1f} (seeds {_seed_text(e.seeds)})" for e in effs),
            "not true in the paper's own ResNet18 column (DATM 21.20 > 20.90)",
        )
    )

    small, nb = min(run.budgets), run.budget_n
    t2 = [named(small, "SSDD", nb)] + [named(n, "KRR-ST", nb) for n in run.budgets if n <= nb]
    out.append(
        _row(
            "Table 2",
            "SSDD at the smallest budget beats KRR-ST at every budget up to the main one",
            f"SSDD at N = {small} − KRR-ST at each N ≤ {nb}, paired over matched seeds",
            [run.effect(t2[0], k) for k in t2[1:]],
            preconditions(run, t2),
            _on(run, t2),
            "51.41 (N=25) vs KRR-ST 44.06 / 45.79 / 47.00",
        )
    )

    t3 = ["KRR-ST", "SSDD no augmentation", "SSDD"]
    out.append(
        _row(
            "Table 3",
            "Parameterization helps, and augmentation with approximation helps further",
            "+ Parameterization − KRR-ST and SSDD − (+ Parameterization), paired over matched seeds",
            [
                run.effect(t3[1], t3[0], label="+ param − KRR-ST"),
                run.effect(t3[2], t3[1], label="+ aug & approx − + param"),
            ],
            preconditions(run, t3),
            _on(run, t3),
            "47.00 → 48.57 → 52.41",
        )
    )

    t4 = ["SSDD", "SSDD init real", "SSDD init random"]
    out.append(
        _row(
            "Table 4",
            "PCA initialisation beats real-image bases, which beat random initialisation",
            "PCA − real, PCA − random and real − random, paired over matched seeds",
            [
                run.effect(t4[0], t4[1], label="PCA − real"),
                run.effect(t4[0], t4[2], label="PCA − random"),
                run.effect(t4[1], t4[2], label="real − random"),
            ],
            preconditions(run, t4, shows=t4[:1]),
            _on(run, t4),
            "52.41 / 30.99 / 22.05",
        )
    )

    v = table11_sets(run)
    main = approx_key(run.sets.get("SSDD", {"approx": "q", "hidden": 4}))
    s11 = run.common(v.values())
    best = max(v, key=lambda k: run.mean(v[k], seeds=s11)) if v and s11 else "–"
    out.append(
        _row(
            "Table 11",
            "Approximation networks model the augmented targets better than the same target or a bias",
            f"accuracy with {main} − same and − bias, paired over matched seeds",
            [run.effect("SSDD", v[k], label=f"{main} − {k}") for k in ("same", "bias") if k in v],
            preconditions(run, list(v.values()), shows=["SSDD"]),
            "; ".join(
                f"{k}: {run.txt(n, seeds=s11)} (MSE {run.sets[n]['approx_mse']:.3f})" for k, n in sorted(v.items())
            )
            + f" on seeds {_seed_text(s11)}; best: {best}",
            "same 50.10, bias 50.32, Q4 52.41, ideal 53.51",
        )
    )

    a12 = aug_sets(run)
    out.append(
        _row(
            "Table 12",
            "Rotation is the best predefined augmentation",
            "rotation − every other augmentation tried (and none), paired over matched seeds",
            [run.effect("SSDD", n, label=f"rotation − {a}") for a, n in a12.items() if n != "SSDD"],
            preconditions(run, list(a12.values())),
            _on(run, list(a12.values())),
            "none 48.57, rotation 52.41, jigsaw 50.93, crop 51.03",
        )
    )

    free = sorted({n.split("teacher=")[1] for n in run.sets if "teacher=" in n})
    ft = ["Random", "Random teacher=rand"]
    extra = "; ".join(
        e.text()
        for e in (
            run.effect(f"{m}", f"{m} teacher={t}", label=f"{m}: Barlow Twins − {t}")
            for m in ("Random", "KRR-ST", "SSDD")
            for t in free
        )
        if e is not None
    )
    out.append(
        _row(
            "Sec. 3.1; Fig. 1 (the teacher g_φ, self-supervised on the source)",
            "The targets must come from a teacher self-supervisedly trained on the source: the trained teacher's "
            "targets "
            "beat an untrained network's (the free-teacher experiment; neither paper ran it)",
            "the same random real images with the Barlow Twins teacher's targets − with a seeded untrained network's "
            "targets, paired over matched seeds",
            [run.effect(*ft, label="Barlow Twins − rand")],
            preconditions(run, ft, shows=ft[:1]),
            _on(run, ft) + (f"; all paired: {extra}" if extra else ""),
            "",
        )
    )
    return out


# ---------------------------------------------------------------------------------------------
# Tables


def summary(results: pd.DataFrame) -> pd.DataFrame:
    """Mean, std and seed count per (set, arch) and target."""
    ts = [c.removeprefix("acc ") for c in results.columns if c.startswith("acc ")]
    return (
        results.groupby(["set", "arch"])
        .agg(
            **{f"{t} mean": (f"acc {t}", "mean") for t in ts},
            **{f"{t} std": (f"acc {t}", "std") for t in ts},
            n=("seed", "count"),
        )
        .reset_index()
    )


def outer_loops(run: Run) -> pd.DataFrame:
    """Per distilled set: outer iterations against the paper's and the plateau test of its curve."""
    out = []
    for n, r in run.sets.items():
        if r["method"] in DISTILLED and r["steps"] > 0 and " / " not in n:
            p = claims.plateaued(n, r["losses"], OUTER_NEEDS)
            c = np.asarray(r["losses"], float)
            out.append(
                {
                    "set": n,
                    "outer iterations": r["steps"],
                    "paper": PAPER_OUTER_STEPS,
                    "first 10% loss": float(c[: max(1, len(c) // 10)].mean()) if len(c) else float("nan"),
                    "last 10% loss": float(c[-max(1, len(c) // 10) :].mean()) if len(c) else float("nan"),
                    "plateau": p.met,
                    "plateau test": p.measured,
                }
            )
    return pd.DataFrame(out)


def table1(
    run: Run, targets: Sequence[str], main: Sequence[str], labels: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """Table 1: every main method on the ConvNet (its seeds), the cross methods on every student."""
    labels, rows_ = labels or {}, []
    for t in targets:
        for name in [n for n in main if run.has(n)] + [UNTRAINED]:
            row = {"target": t, "method": name}
            for a in run.archs:
                row[labels.get(a, a)] = (
                    run.txt(name, a, t) if (a == "convnet" or name in list(run.cross_methods) + [UNTRAINED]) else "–"
                )
            row["paper (CIFAR-100 → CIFAR-100)"] = PAPER_T1.get(name, "") if t == run.target else ""
            rows_.append(row)
    return pd.DataFrame(rows_)


def _paired(run: Run, a: str, b: str) -> str:
    e = run.effect(a, b)
    return e.text() if e is not None and a != b else ""


def ablation_tables(run: Run) -> dict:
    """Tables 2, 3, 4, 11 and 12, every cell of a table on the seeds all its sets ran, with the paired
    difference against the table's reference set."""
    nb, out = run.budget_n, {}
    t2 = [named(n, b, nb) for b in ("Random", "KRR-ST", "SSDD") for n in run.budgets]
    s = run.common(t2)
    out["table2"] = pd.DataFrame(
        [
            {
                "method": b,
                **{f"N={n}": run.txt(named(n, b, nb), seeds=s) for n in run.budgets},
                "seeds": _seed_text(s),
                "paper (CIFAR-100, N = 25 / 50 / 100)": PAPER_T2[b],
            }
            for b in ("Random", "KRR-ST", "SSDD")
        ]
    )
    t3 = {"Baseline (KRR-ST)": "KRR-ST", "+ Parameterization": "SSDD no augmentation", "+ Aug. & Approx.": "SSDD"}
    s = run.common(t3.values())
    out["table3"] = pd.DataFrame(
        [
            {
                "setting": k,
                "ours": run.txt(n, seeds=s),
                "paired − KRR-ST": _paired(run, n, "KRR-ST"),
                "seeds": _seed_text(s),
                "paper (CIFAR-100)": PAPER_T3[k],
            }
            for k, n in t3.items()
        ]
    )
    t4 = {k: n for k, n in (("random", "SSDD init random"), ("real", "SSDD init real"), ("pca", "SSDD")) if run.has(n)}
    s = run.common(t4.values())
    out["table4"] = pd.DataFrame(
        [
            {
                "setting": PAPER_T4[k][0],
                "ours": run.txt(n, seeds=s),
                "paired: PCA − this": _paired(run, "SSDD", n),
                "seeds": _seed_text(s),
                "paper (CIFAR-100)": PAPER_T4[k][1],
            }
            for k, n in t4.items()
        ]
    )
    v = table11_sets(run)
    s = run.common(v.values())
    out["table11"] = pd.DataFrame(
        [
            {
                "model": k,
                "ours": run.txt(n, seeds=s),
                "paired: main − this": _paired(run, "SSDD", n),
                "seeds": _seed_text(s),
                "MSE (ours)": run.sets[n]["approx_mse"],
                "floats": run.sets[n]["floats"],
                "budget": run.sets[n]["budget"],
                "paper acc": PAPER_T11.get(k, ("", ""))[0],
                "paper MSE": PAPER_T11.get(k, ("", ""))[1],
            }
            for k, n in sorted(v.items())
        ]
    )
    a12 = aug_sets(run)
    s = run.common(a12.values())
    out["table12"] = pd.DataFrame(
        [
            {
                "augmentation": a,
                "ours": run.txt(n, seeds=s),
                "paired: rotation − this": _paired(run, "SSDD", n),
                "seeds": _seed_text(s),
                "m": run.sets[n]["m"],
                "training pairs": run.sets[n]["pairs"],
                "paper (CIFAR-100)": PAPER_T12.get(a, ""),
            }
            for a, n in a12.items()
        ]
    )
    return out


def free_teacher_table(run: Run) -> pd.DataFrame:
    """Random, KRR-ST and SSDD with each teacher, every cell on the seeds all of them ran, and the
    paired difference Barlow Twins − this teacher."""
    free = sorted({n.split("teacher=")[1] for n in run.sets if "teacher=" in n})
    cells = {
        (m, t): m if t == "barlow_twins" else f"{m} teacher={t}"
        for m in ("Random", "KRR-ST", "SSDD")
        for t in ["barlow_twins", *free]
    }
    s = run.common([n for n in cells.values() if run.has(n)] + [UNTRAINED])
    rows_ = []
    for t in ["barlow_twins", *free]:
        row = {"teacher": t}
        for m in ("Random", "KRR-ST", "SSDD"):
            row[m] = run.txt(cells[(m, t)], seeds=s)
            row[f"{m}: Barlow Twins − this"] = _paired(run, m, cells[(m, t)]) if t != "barlow_twins" else ""
        rows_.append({**row, "untrained": run.txt(UNTRAINED, seeds=s), "seeds": _seed_text(s)})
    return pd.DataFrame(rows_)


def table13(ssdd_sets: pd.DataFrame) -> pd.DataFrame:
    """Table 13: synthesis time and peak memory of each method's set beside the paper's. Set files hold
    no timings (an identical rerun must rewrite them byte for byte), so the costs come from the table of
    the stage that made the sets, ``ssdd_distill``'s ``sets`` (columns ``set``, ``synthesis s``, ``peak MB``;
    Table 1's DSA and DM among them where that stage made them).

    Example::

        >>> s = pd.DataFrame({"set": ["SSDD", "DM"], "synthesis s": [68.0, 3.0], "peak MB": [281.0, 5.0]})
        >>> table13(s)[["method", "synthesis s (ours)"]].values.tolist()
        [['DM', 3.0], ['SSDD', 68.0]]
    """
    cost = {r["set"]: (float(r["synthesis s"]), float(r["peak MB"])) for _, r in ssdd_sets.iterrows()}
    return pd.DataFrame(
        [
            {
                "method": n,
                "synthesis s (ours)": cost[n][0],
                "peak MB (ours, RSS increase)": cost[n][1],
                "paper minutes": PAPER_T13.get(n, ("", ""))[0],
                "paper GPU MB": PAPER_T13.get(n, ("", ""))[1],
            }
            for n in ("Random", "KMeans", "DSA", "DM", "KRR-ST", "SSDD")
            if n in cost
        ]
    )


def accounting_table(run: Run) -> pd.DataFrame:
    """The free-image sets with and without their targets counted in the budget, on their common seeds."""
    names = [
        n for n in ("Random", "Random (targets counted)", "KRR-ST", "KRR-ST (targets counted)", "SSDD") if run.has(n)
    ]
    s = run.common(names)
    return pd.DataFrame(
        [
            {
                "set": n,
                "m": run.sets[n]["m"],
                "floats": run.sets[n]["floats"],
                "ours": run.txt(n, seeds=s),
                "seeds": _seed_text(s),
            }
            for n in names
        ]
    )


def controls_table(
    run: Run, teacher_probe: pd.DataFrame, targets: Sequence[str], controls: Sequence[str]
) -> pd.DataFrame:
    """What pre-training adds to an untrained student and what optimisation adds to the PCA
    initialisation (SSDD Sec. 3.2, T = 0): the untrained student, the controls and SSDD per target, then
    each network of the ``ssdd_teacher`` probe on its own features, and the untrained networks of the
    teacher's architecture over their seeds (``run.untrained_probe``, mean ± std)."""
    ctl = pd.DataFrame(
        [{"set": n, **{t: run.txt(n, target=t) for t in targets}} for n in [UNTRAINED, *controls, "SSDD"] if run.has(n)]
    )
    for _, r in teacher_probe.iterrows():
        ctl.loc[len(ctl)] = {
            "set": f"{r['network']} (own features, ssdd_teacher)",
            **{t: f"{100 * r[t]:.1f}" for t in targets if t in r},
        }
    up = run.untrained_probe
    for feats, g in [] if up is None else up.groupby("features", sort=False):
        ctl.loc[len(ctl)] = {
            "set": f"untrained, teacher's architecture, {feats} ({len(g)} seeds, ssdd_teacher)",
            **{t: f"{100 * g[t].mean():.1f} ± {100 * g[t].std(ddof=1):.1f}" for t in targets if t in g},
        }
    return ctl


def metrics(run: Run, targets: Sequence[str], converse: Sequence[Mapping], loops: pd.DataFrame) -> dict:
    """The ``ssdd_eval`` metrics: mean probe accuracy per ConvNet set and target, per student of the
    cross-architecture methods (Table 1), the converse arms' Fashion-MNIST probe, the outer loops'
    plateau test and the evaluations' total seconds."""
    res = run.results
    return {
        "convnet": {
            n: {t: run.mean(n, target=t) for t in targets}
            for n in sorted(set(res.loc[res["arch"] == "convnet", "set"]))
        },
        "cross_arch": {a: {n: run.mean(n, a) for n in list(run.cross_methods) + [UNTRAINED]} for a in run.archs},
        "converse": {r["arm"]: r[run.target] for r in converse},
        "outer_loop_plateau": {r["set"]: bool(r["plateau"]) for _, r in loops.iterrows()},
        "eval_seconds_total": float(res["seconds"].sum()),
    }


def claims_frame(rows_: Sequence[Claim]) -> pd.DataFrame:
    """The rows' evidence as a small table (location, effects with their intervals, unmet regime checks) for the
    notebook; the verdicts are the claims ledger's."""

    def ev(r):
        return claims.Evidence.from_json(r.evidence) if r.evidence else None

    return pd.DataFrame(
        [
            {
                "location": r.location,
                "effects": "; ".join(e.text() for e in ev(r).effects) if ev(r) else r.verdict,
                "unmet regime checks": "; ".join(p.name for p in ev(r).preconditions if not p.met) if ev(r) else "",
            }
            for r in rows_
        ]
    )
