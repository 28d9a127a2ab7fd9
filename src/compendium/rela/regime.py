"""Where self-supervised pre-training learns on 2 cores: the regime study behind ReLA's Tables 1-3 and Figs. 4-5.

ReLA's claims (camera-ready Sec. 5, Table 1) are about a budget gap: BYOL at 10% of its full budget is far
below BYOL at the full budget (24.4 points on CIFAR-10), and ReLA closes most of that gap. A test of them
needs a regime in which (a) BYOL at the full budget is well above the untrained network it starts from and
(b) BYOL at 10% has learnt something, i.e. is above the untrained network by its interval, so that there
is a gap to close and an SSL phase worth having. This module measures, per network width and seed, the
probe of BYOL's frozen features against its training epochs, from the untrained network (epoch 0) on:

* :class:`Plan`: the widths, seeds, epochs and probe points of the study, and the probe's settings (the
  default pipeline's: Adam, standardised features, 30 epochs on a fixed subset of the training set,
  tested on the 10,000 test images), each probe read on two feature views (the globally pooled features
  the pipeline's students use, and the flattened last map) and two label counts;
* :func:`curve`: one (width, seed) run: BYOL for ``plan.epochs`` epochs with a constant learning rate,
  probed at ``plan.probe_at``; resumable from its per-epoch checkpoint;
* :func:`run_pieces`: every missing curve, each written to its own CSV as it finishes, so the study
  advances in pieces across sessions (``python -m compendium.rela.regime --hours 2``, with the plan of
  params.yaml's ``rela_regime`` section; the ``rela_regime`` stage shows the committed curves);
* :func:`regimes` and :func:`choose`: per width and full budget E (in epochs), the paired per-seed
  differences BYOL(E) - untrained and BYOL(E / 10) - untrained with 95% t intervals, and the cheapest
  regime that meets both goals.

A budget r of an E-epoch run trains r * E epochs' worth of steps on fresh random subsets at the same
constant learning rate (:class:`compendium.ssl.train.BudgetSampler`), so BYOL at 10% of E is read off the
same curve at E / 10 epochs: the same number of steps of the same optimiser on the same distribution of
batches (in expectation; the subsets differ from the epochs' permutations). This is the study's one
approximation; the pipeline's runs in the chosen regime measure the 10% arm directly.

Example:
    >>> Plan(widths=(16,), seeds=(0, 1), epochs=4, probe_at=(1, 2, 4)).curves()
    [(16, 0), (16, 1)]
"""

from __future__ import annotations

from collections.abc import Mapping

import argparse
import hashlib
import json
import math
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import pandas as pd
import torch
import yaml
from scipy import stats as scipy_stats

from compendium.core import augment, data, models, paths, probe
from compendium.core.stats import t_interval
from compendium.core.progress import say
from compendium.ssl import methods, train

RECORDS = paths.REPORTS / "regime" / "rela_byol"  # one CSV per (width, seed) curve, committed
CHECKPOINTS = paths.ROOT / "build" / "regime" / "rela_byol"
VIEWS = ("pooled", "flat")


@dataclass(frozen=True)
class Plan:
    widths: tuple = (16, 32)
    seeds: tuple = (0, 1, 2)
    epochs: int = 30
    probe_at: tuple = (1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 25, 30)
    depth: int = 3
    norm: str = "batch"
    batch_size: int = 128
    lr: float = 1e-3
    weight_decay: float = 0.01
    cpu_bf16: bool = True
    probe_train: tuple = (10000, 1000)  # labelled images the probe trains on (nested subsets of one draw)
    probe_epochs: int = 30
    probe_lr: float = 0.01
    probe_batch_size: int = 256
    dataset: str = "fashion-mnist"
    #: further seeds of one width, each a curve stopped at ``confirm_epochs`` (probed at ``probe_at`` up to there): the
    #: seeds a candidate regime (:func:`candidate`) needs. The learning rate is constant, so such a curve is the first
    #: ``confirm_epochs`` of the curve the plan's ``epochs`` would give.
    confirm_width: int = 0
    confirm_seeds: tuple = ()
    confirm_epochs: int = 0

    def __post_init__(self):
        if not self.probe_at or max(self.probe_at) > self.epochs or min(self.probe_at) < 1:
            raise ValueError(f"probe_at {self.probe_at} must lie in 1..epochs={self.epochs}")
        if not self.widths or not self.seeds:
            raise ValueError("a regime study needs at least one width and one seed")
        if self.confirm_seeds and not (self.confirm_width >= 1 and 1 <= self.confirm_epochs <= self.epochs):
            raise ValueError(
                f"confirm_seeds need confirm_width >= 1 and confirm_epochs in 1..epochs={self.epochs} "
                f"(got {self.confirm_width}, {self.confirm_epochs})"
            )
        if self.confirm_seeds and not any(e <= self.confirm_epochs for e in self.probe_at):
            raise ValueError(f"no epoch of probe_at {self.probe_at} is within confirm_epochs={self.confirm_epochs}")

    @classmethod
    def from_params(cls, values: dict) -> "Plan":
        """The plan of a ``rela_regime`` parameter section (other keys ignored; lists become tuples)."""
        fields = set(cls.__dataclass_fields__)
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items() if k in fields})

    def curves(self) -> list[tuple[int, int]]:
        """Every (width, seed) curve: each width with each seed, then the confirmation seeds' curves."""
        full = [(w, s) for w in self.widths for s in self.seeds]
        return full + [(self.confirm_width, s) for s in self.confirm_seeds if (self.confirm_width, s) not in full]

    def for_curve(self, width: int, seed: int) -> Plan:
        """The plan one curve runs: a confirmation curve stops at ``confirm_epochs``."""
        if seed in self.seeds and width in self.widths or (width, seed) not in self.curves():
            return self
        return replace(
            self,
            epochs=self.confirm_epochs,
            probe_at=tuple(e for e in self.probe_at if e <= self.confirm_epochs),
            confirm_seeds=(),
        )

    def settings(self) -> dict:
        """What a curve's result depends on besides its width and seed (compared on resume); which curves stop
        early (the confirmation seeds) is not such a setting."""
        d = asdict(self)
        for k in ("widths", "seeds", "confirm_width", "confirm_seeds", "confirm_epochs"):
            d.pop(k)
        d["probe_at"], d["probe_train"] = list(self.probe_at), list(self.probe_train)
        return d


def record_file(width: int, seed: int, root: Path = RECORDS) -> Path:
    return Path(root) / f"width{width}_seed{seed}.csv"


PLAN_FILE = "plan.json"  # beside the records: the settings every curve of the folder was made with


def check_records(plan: Plan, root: Path = RECORDS) -> None:
    """Refuse a records folder made with other settings than ``plan``'s (its widths and seeds may differ: a
    curve is one (width, seed))."""
    f = Path(root) / PLAN_FILE
    if f.is_file():
        made = json.loads(f.read_text())
        if made != plan.settings():
            diff = sorted(k for k in set(made) | set(plan.settings()) if made.get(k) != plan.settings().get(k))
            raise ValueError(
                f"{root} holds curves made with other settings ({', '.join(diff)}) than params.yaml's "
                f"rela_regime section: move that folder away, or set those keys back, before running"
            )


def _probes(
    backbone: models.Backbone, plan: Plan, images, labels, test_images, test_labels, mean, std, seed: int
) -> dict:
    """Final probe accuracy per feature view and label count: ``{f"{view}@{n}": acc}``."""
    views = {"pooled": backbone, "flat": models.Backbone(torch.nn.Sequential(*list(backbone.body)[:-1]), 0, "flat")}
    out = {}
    for view, bb in views.items():
        f_tr = probe.extract_features(bb, images, mean, std)
        f_te = probe.extract_features(bb, test_images, mean, std)
        for n in plan.probe_train:
            res = probe.linear_probe(
                f_tr[:n],
                labels[:n],
                f_te,
                test_labels,
                10,
                epochs=plan.probe_epochs,
                lr=plan.probe_lr,
                batch_size=plan.probe_batch_size,
                seed=seed,
                standardize=True,
            )
            out[f"{view}@{n}"] = res.final
    return out


def curve(width: int, seed: int, plan: Plan, checkpoint: str = "", datasets: tuple | None = None) -> pd.DataFrame:
    """BYOL (Grill et al., NeurIPS 2020) on the whole training set from a Conv-``depth`` of ``width``
    (BatchNorm, globally pooled features) seeded by ``seed``, probed before training (the untrained network,
    BatchNorm statistics estimated from the data) and after each epoch in ``plan.probe_at``. One row per
    (epoch, view, labels) with the probe accuracy and the cumulative training seconds. ``datasets``:
    (train, test) image sets instead of Fashion-MNIST's (tests)."""
    if plan.dataset != "fashion-mnist":
        raise ValueError(f"the regime study runs on fashion-mnist, not {plan.dataset!r}")
    tr, te = datasets or (data.load_dataset(plan.dataset, "train"), data.load_dataset(plan.dataset, "test"))
    mean, std = [data.FASHION_MNIST_MEAN], [data.FASHION_MNIST_STD]
    keep = torch.randperm(len(tr.images), generator=torch.Generator().manual_seed(12345))[: max(plan.probe_train)]
    p_images, p_labels = tr.images[keep], tr.labels[keep]
    torch.manual_seed(seed)
    bb = models.build(
        "convnet", in_channels=1, image_size=28, width=width, depth=plan.depth, norm=plan.norm, global_pool=True
    )
    rows = []

    def add(epoch: int, seconds: float, accs: dict) -> None:
        for key, acc in accs.items():
            view, _, n = key.partition("@")
            rows.append(
                {
                    "width": width,
                    "seed": seed,
                    "epoch": epoch,
                    "view": view,
                    "labels": int(n),
                    "probe": acc,
                    "train seconds": seconds,
                }
            )

    untrained = models.build(
        "convnet", in_channels=1, image_size=28, width=width, depth=plan.depth, norm=plan.norm, global_pool=True
    )
    untrained.load_state_dict(bb.state_dict())
    probe.recalibrate_bn(untrained, tr.images, mean, std)
    add(0, 0.0, _probes(untrained, plan, p_images, p_labels, te.images, te.labels, mean, std, seed))

    def on_epoch(epoch: int, model) -> dict:
        if epoch not in plan.probe_at:
            return {}
        return {
            f"probe {k}": v
            for k, v in _probes(bb, plan, p_images, p_labels, te.images, te.labels, mean, std, seed).items()
        }

    model = methods.build("byol", bb, head_mult=1.0)
    cfg = train.PretrainConfig(
        epochs=plan.epochs,
        batch_size=plan.batch_size,
        lr=plan.lr,
        weight_decay=plan.weight_decay,
        budget=1.0,
        seed=seed,
        device="cpu",
        log_prefix=f"byol w{width} s{seed}",
        checkpoint=checkpoint,
        cpu_bf16=plan.cpu_bf16,
    )
    hist = train.pretrain(
        model, tr.images, cfg, augment.preset("byol", size=28, small_images=True), mean, std, on_epoch=on_epoch
    )
    seconds = 0.0
    for rec in hist.epochs:
        seconds += rec["seconds"]
        accs = {k[len("probe ") :]: v for k, v in rec.items() if k.startswith("probe ")}
        if accs:
            add(int(rec["epoch"]), seconds, accs)
    return pd.DataFrame(rows)


def run_pieces(
    plan: Plan,
    hours: float = 0.0,
    root: Path = RECORDS,
    checkpoints: Path = CHECKPOINTS,
    only: list[tuple[int, int]] | None = None,
) -> list[Path]:
    """Run every curve of ``plan`` without a record (cheapest width first), writing each record as it
    finishes; start no new curve after ``hours`` (0: no limit). An interrupted curve resumes from its
    checkpoint. Returns the records written."""
    check_records(plan, root)
    Path(root).mkdir(parents=True, exist_ok=True)
    (Path(root) / PLAN_FILE).write_text(json.dumps(plan.settings(), indent=1, sort_keys=True) + "\n")
    t0, written = time.perf_counter(), []
    todo = [c for c in sorted(plan.curves()) if not record_file(*c, root).is_file() and (only is None or c in only)]
    say(f"regime study: {len(todo)} of {len(plan.curves())} curves to run")
    for width, seed in todo:
        if hours and time.perf_counter() - t0 > hours * 3600:
            say(f"regime study: {hours} h spent; run again to go on")
            break
        own = plan.for_curve(width, seed)
        ckpt = Path(checkpoints) / f"width{width}_seed{seed}_e{own.epochs}_{_settings_tag(plan)}.pt"
        df = curve(width, seed, own, checkpoint=str(ckpt))
        out = record_file(width, seed, root)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        df.to_csv(tmp, index=False)
        tmp.replace(out)
        written.append(out)
        ckpt.unlink(missing_ok=True)
        say(f"regime study: wrote {out}")
    return written


def _settings_tag(plan: Plan) -> str:
    return hashlib.sha256(json.dumps(plan.settings(), sort_keys=True).encode()).hexdigest()[:10]


def load(root: Path = RECORDS) -> pd.DataFrame:
    """Every committed curve of the study (empty frame when none)."""
    files = sorted(Path(root).glob("width*_seed*.csv"))
    return (
        pd.concat([pd.read_csv(f) for f in files], ignore_index=True)
        if files
        else pd.DataFrame(columns=["width", "seed", "epoch", "view", "labels", "probe", "train seconds"])
    )


def in_plan(curves: pd.DataFrame, plan: Plan) -> pd.DataFrame:
    """The rows of ``curves`` whose (width, seed) is one of ``plan``'s curves."""
    keep = set(plan.curves())
    return curves[[(int(w), int(s)) in keep for w, s in zip(curves["width"], curves["seed"])]]


def status(plan: Plan, curves: pd.DataFrame) -> pd.DataFrame:
    """Per width: the curves committed and planned, and the epochs each is planned to (the confirmation seeds'
    shorter ones listed apart).

        >>> plan = Plan(widths=(16,), seeds=(0,), epochs=4, probe_at=(1, 4), confirm_width=16, confirm_seeds=(1, 2),
        ...             confirm_epochs=2)
        >>> status(plan, pd.DataFrame({"width": [16, 16], "seed": [0, 1]})).values.tolist()
        [[16, 4, 1, 1], [16, 2, 1, 2]]
    """
    made = {(int(w), int(s)) for w, s in zip(curves["width"], curves["seed"])}
    groups: dict[tuple[int, int], list] = {}
    for w, s in plan.curves():
        groups.setdefault((w, plan.for_curve(w, s).epochs), []).append((w, s))
    return pd.DataFrame(
        [
            {"width": w, "epochs": e, "curves committed": sum(c in made for c in cs), "curves planned": len(cs)}
            for (w, e), cs in groups.items()
        ]
    )


@dataclass(frozen=True)
class Goals:
    full_gain: float = 0.10  # BYOL at the full budget above the untrained network, lower 95% bound
    low_gain: float = 0.0  # BYOL at 10% above the untrained network, lower 95% bound
    budget: float = 0.1  # the headline budget of ReLA's Table 1


def regimes(curves: pd.DataFrame, goals: Goals | None = None) -> pd.DataFrame:
    """Per (view, labels, width, full budget E): the paired gains of BYOL(E) and BYOL(budget * E) over the
    untrained network across seeds, with intervals, the budget gap BYOL(E) - BYOL(budget * E), the
    training minutes of E epochs (mean over seeds), and whether both goals are met."""
    goals = goals or Goals()
    rows = []
    for (view, n, width), g in curves.groupby(["view", "labels", "width"]):
        acc = g.pivot_table(index="seed", columns="epoch", values="probe")
        secs = g.groupby("epoch")["train seconds"].mean()
        epochs = [e for e in acc.columns if e > 0]
        for E in epochs:
            low = round(E * goals.budget, 6)
            low = int(low) if low == int(low) else low
            if low not in acc.columns or low == 0:
                continue
            full_m, full_lo, full_hi = t_interval(acc[E] - acc[0])
            low_m, low_lo, low_hi = t_interval(acc[low] - acc[0])
            gap_m, gap_lo, gap_hi = t_interval(acc[E] - acc[low])
            rows.append(
                {
                    "view": view,
                    "labels": int(n),
                    "width": int(width),
                    "full epochs": int(E),
                    "seeds": int(acc[[0, E, low]].dropna().shape[0]),
                    "untrained": float(acc[0].mean()),
                    "BYOL full": float(acc[E].mean()),
                    "BYOL 10%": float(acc[low].mean()),
                    "full gain": full_m,
                    "full gain lo": full_lo,
                    "full gain hi": full_hi,
                    "10% gain": low_m,
                    "10% gain lo": low_lo,
                    "10% gain hi": low_hi,
                    "gap": gap_m,
                    "gap lo": gap_lo,
                    "gap hi": gap_hi,
                    "train minutes": float(secs.get(E, math.nan)) / 60,
                    "meets goals": bool(full_lo >= goals.full_gain and low_lo > goals.low_gain),
                }
            )
    return pd.DataFrame(rows)


def choose(table: pd.DataFrame, view: str = "pooled", labels: int = 10000) -> pd.Series | None:
    """The cheapest regime (fewest training minutes) of ``view`` and ``labels`` that meets both goals,
    or None when none of the measured ones does."""
    ok = table[(table["view"] == view) & (table["labels"] == labels) & table["meets goals"]]
    return None if ok.empty else ok.sort_values(["train minutes", "width"]).iloc[0]


def nearest(table: pd.DataFrame, view: str = "pooled", labels: int = 10000) -> dict:
    """What the measured regimes offer when none meets both goals: the one with the largest lower bound of the full
    budget's gain, and the cheapest one whose low budget clears the untrained network (the second goal alone);
    None where there is none."""
    t = table[(table["view"] == view) & (table["labels"] == labels)].dropna(subset=["full gain lo"])
    low_ok = t[t["10% gain lo"] > 0].sort_values(["train minutes", "width"])
    return {
        "largest full gain": None if t.empty else t.sort_values("full gain lo").iloc[-1],
        "cheapest with the low budget above untrained": None if low_ok.empty else low_ok.iloc[0],
    }


def seeds_to_clear(mean: float, lo: float, hi: float, seeds: int, goal: float, most: int = 200) -> int | None:
    """The seeds at which a paired gain of ``mean`` with the 95% t interval [``lo``, ``hi``] over ``seeds`` seeds would
    have its lower bound at ``goal`` or above, if its mean and spread held (the spread read back from the interval);
    None where its mean does not clear ``goal``, its spread is unmeasured (fewer than 2 seeds) or it needs more than
    ``most``.

        >>> seeds_to_clear(0.11, 0.086, 0.134, 5, 0.10)   # +11 [+8.6, +13.4] on 5 seeds: its SD is 1.9 points
        17
        >>> seeds_to_clear(0.09, 0.08, 0.10, 5, 0.10) is None
        True
    """
    if not (math.isfinite(lo) and math.isfinite(hi)) or seeds < 2 or mean <= goal:
        return None
    sd = (hi - lo) / 2 * math.sqrt(seeds) / float(scipy_stats.t.ppf(0.975, seeds - 1))
    for n in range(max(seeds, 2), most + 1):
        if mean - float(scipy_stats.t.ppf(0.975, n - 1)) * sd / math.sqrt(n) >= goal:
            return n
    return None


def candidate(table: pd.DataFrame, goals: Goals | None = None) -> pd.Series | None:
    """Of the measured regimes, on any probe view and label count, whose MEANS meet the goals and whose spread
    is measured, the one whose further curves cost least (one that meets them by its interval costs none), with
    ``seeds needed`` (the seeds at which both lower bounds would clear their goals if the means and spreads held,
    :func:`seeds_to_clear`) and ``added minutes`` (the further curves' BYOL training). None where there is none."""
    goals = goals or Goals()
    if not len(table):
        return None
    t = table[(table["full gain"] >= goals.full_gain) & (table["10% gain"] > goals.low_gain)].copy()
    t = t.dropna(subset=["full gain lo", "10% gain lo"])
    if t.empty:
        return None

    def need(r) -> float:
        full = seeds_to_clear(r["full gain"], r["full gain lo"], r["full gain hi"], int(r["seeds"]), goals.full_gain)
        low_goal = goals.low_gain + 1e-9  # "above", strictly
        low = seeds_to_clear(r["10% gain"], r["10% gain lo"], r["10% gain hi"], int(r["seeds"]), low_goal)
        return math.nan if full is None or low is None else float(max(full, low))

    t["seeds needed"] = t.apply(need, axis=1)
    t = t.dropna(subset=["seeds needed"])
    t["added minutes"] = (t["seeds needed"] - t["seeds"]) * t["train minutes"]
    return None if t.empty else t.sort_values(["added minutes", "train minutes"]).iloc[0]


def candidate_text(r) -> str:
    """:func:`candidate`'s row in words: its setting, its gains, and the seeds it would need (none where its lower
    bounds already clear the goals)."""
    more = int(r["seeds needed"]) - int(r["seeds"])
    where = f"{r['view']} features with {int(r['labels']):,} probe labels, {_regime_text(r)}"
    if more <= 0 or bool(r.get("meets goals", False)):
        return f"{where}: meets both goals by its lower bounds"
    return (
        f"{where}: its means meet the goals; "
        f"if they and their spread held, {int(r['seeds needed'])} seeds ({more} more curves, BYOL training about "
        f"{float(r['train minutes']):.0f} min of one core each, {float(r['added minutes']) / 60:.1f} h in all) "
        "would bring both lower bounds to them"
    )


#: the ReLA stages whose comparisons train BYOL (+ReLA) at a budget: each is judged in the study's regime or not
STAGES = ("rela_budget", "rela_arch", "rela_methods", "rela_ablations")


def stage_setting(values: Mapping) -> dict:
    """A ReLA stage's setting in the study's terms, from its resolved parameters: the probe's features (``pooled``
    with ``global_pool``), its labels (``probe_train``), the width, the full budget in epochs and the headline
    budget (``headline_budget``, else ``budget``)."""
    return {
        "view": "pooled" if values.get("global_pool", True) else "flat",
        "labels": int(values.get("probe_train") or 0),
        "width": int(values["width"]),
        "full epochs": int(values["epochs"]),
        "budget": float(values.get("headline_budget", values.get("budget", 0.1))),
    }


def confirmation(table: pd.DataFrame, target: Mapping | None, goals: Goals | None = None) -> str:
    """The regime a confirmation plan was fixed for (``target``: ``view``, ``labels``, ``width``, ``full epochs``)
    as its curves measure it, and whether it meets the goals by its lower bounds; "" without a target or a row.

        >>> t = pd.DataFrame([{"view": "pooled", "labels": 1000, "width": 16, "full epochs": 20, "full gain": 0.097,
        ...     "full gain lo": 0.088, "full gain hi": 0.106, "10% gain": 0.035, "10% gain lo": 0.028,
        ...     "10% gain hi": 0.042, "seeds": 22, "meets goals": False}])
        >>> confirmation(t, {"view": "pooled", "labels": 1000, "width": 16, "full epochs": 20})[-35:]
        '(22 seeds): does not meet the goals'
    """
    if not target or not len(table):
        return ""
    hit = table[
        (table["view"] == target["view"])
        & (table["labels"] == int(target["labels"]))
        & (table["width"] == int(target["width"]))
        & (table["full epochs"] == int(target["full epochs"]))
    ]
    if len(hit) != 1:
        return ""
    r = hit.iloc[0]
    verdict = "meets both goals by its lower bounds" if bool(r["meets goals"]) else "does not meet the goals"
    return (
        f"the confirmation plan's regime, fixed before its curves ({r['view']} features with "
        f"{int(r['labels']):,} probe labels): {_regime_text(r)}: {verdict}"
    )


def confirmation_failed(text: str) -> bool:
    """Whether :func:`confirmation`'s ``text`` says its plan ran and its regime does not meet the goals. Then no
    further candidate is offered: the seeds the candidate was found on over-stated it (the confirmation's
    own first seeds did), and another candidate read off them is the next fork of the same path."""
    return bool(text) and text.endswith("does not meet the goals")


def way_on(table: pd.DataFrame, goals: Goals, confirm: Mapping | None = None) -> str:
    """In words, where the study stands when no regime meets the goals on the stages' probe: the confirmation
    plan's outcome, else the candidate (:func:`candidate_text`), else that none is measured."""
    conf = confirmation(table, confirm, goals)
    if conf:
        return conf + (", so no regime on two cores is known" if confirmation_failed(conf) else "")
    cand = candidate(table, goals) if len(table) else None
    return candidate_text(cand) if cand is not None else "none: no measured setting's means meet the goals"


def stage_regimes(
    table: pd.DataFrame, settings: Mapping[str, Mapping], goals: Goals | None = None, confirm: Mapping | None = None
) -> pd.DataFrame:
    """Per stage (``settings``: stage -> :func:`stage_setting`), the study's row for its setting: the gains with
    their intervals and whether it meets the goals; ``measured`` False where the study has no curve at that
    setting (another width, label count or budget, or a full budget off its grid). ``nearest``: the measured
    regime with the largest lower bound of the full budget's gain on the stage's features and labels; ``chosen``:
    the cheapest that meets both goals there (:func:`choose`; "" when none does); ``candidate``: where none does,
    the cheapest measured regime, on any features and labels, whose means meet them (:func:`candidate_text`; "" when
    none); ``confirmation``: the regime ``confirm`` names as its curves measure it (:func:`confirmation`);
    ``goal full`` / ``goal low``.

        >>> t = pd.DataFrame([{"view": "pooled", "labels": 1000, "width": 16, "full epochs": 10, "full gain": 0.1,
        ...     "full gain lo": 0.08, "full gain hi": 0.12, "10% gain": 0.01, "10% gain lo": -0.01, "10% gain hi": 0.03,
        ...     "seeds": 5, "train minutes": 3.0, "meets goals": False}])
        >>> s = {"view": "pooled", "labels": 1000, "width": 16, "full epochs": 10, "budget": 0.1}
        >>> r = stage_regimes(t, {"a": s, "b": {**s, "full epochs": 3}}).set_index("stage")
        >>> bool(r.at["a", "measured"]), bool(r.at["b", "measured"]), r.at["b", "nearest"]
        (True, False, 'width 16, 10 epochs: full +10.0 [+8.0, +12.0], 10% +1.0 [-1.0, +3.0] (5 seeds)')
    """
    goals = goals or Goals()
    gains = ["full gain", "full gain lo", "full gain hi", "10% gain", "10% gain lo", "10% gain hi"]
    # the same for every stage: the confirmation's outcome, and the candidate unless that confirmation failed
    confirmed = confirmation(table, confirm, goals)
    cand = candidate(table, goals) if len(table) and not confirmation_failed(confirmed) else None
    way = "" if cand is None else candidate_text(cand)
    rows = []
    for stage, st in settings.items():
        same = table[(table["view"] == st["view"]) & (table["labels"] == st["labels"])] if len(table) else table
        hit = same[(same["width"] == st["width"]) & (same["full epochs"] == st["full epochs"])] if len(same) else same
        ok = len(hit) == 1 and abs(st["budget"] - goals.budget) < 1e-9
        best = nearest(table, st["view"], st["labels"])["largest full gain"] if len(same) else None
        row = {"stage": stage, **st, "measured": ok, "seeds": int(hit["seeds"].iloc[0]) if ok else 0}
        row |= {g: float(hit[g].iloc[0]) if ok else float("nan") for g in gains}
        row["meets goals"] = bool(ok and hit["meets goals"].iloc[0])
        row["nearest"] = "" if best is None else _regime_text(best)
        chosen = choose(table, st["view"], st["labels"]) if len(table) else None
        row["chosen"] = "" if chosen is None else _regime_text(chosen)
        row["confirmation"], row["candidate"] = confirmed, way
        row["goal full"], row["goal low"] = goals.full_gain, goals.low_gain
        rows.append(row)
    return pd.DataFrame(rows)


def _regime_text(r) -> str:
    return (
        f"width {int(r['width'])}, {int(r['full epochs'])} epochs: full {100 * r['full gain']:+.1f} "
        f"[{100 * r['full gain lo']:+.1f}, {100 * r['full gain hi']:+.1f}], 10% {100 * r['10% gain']:+.1f} "
        f"[{100 * r['10% gain lo']:+.1f}, {100 * r['10% gain hi']:+.1f}] ({int(r['seeds'])} seeds)"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hours", type=float, default=0.0, help="start no new curve after this many hours (0: no limit)")
    ap.add_argument("--widths", type=int, nargs="*", help="only these widths of the plan")
    ap.add_argument("--seeds", type=int, nargs="*", help="only these seeds of the plan")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (1: run two in parallel on 2 cores)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    plan = Plan.from_params(yaml.safe_load(paths.PARAMS.read_text())["rela_regime"])
    only = [
        (w, s)
        for w, s in plan.curves()
        if (not args.widths or w in args.widths) and (not args.seeds or s in args.seeds)
    ]
    run_pieces(plan, hours=args.hours, only=only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
