"""The ``paper`` profile's expected time per stage on one GPU: an extrapolation from measured steps.

No stage has run at ``scale: paper`` end to end. This module states what each one should take on one modern GPU
from three measured things:

* the stage's minutes at ``cpu`` scale on this project's 2-core machines (the summary's ``stage_minutes``),
  with the ``cpu`` values of ``params.yaml``, which the committed ``dvc.lock`` says they ran with;
* the ratio of the work of its dominant loop at ``paper`` over ``cpu`` scale, from the resolved parameters of
  both (the cost models of :data:`compendium.pipeline.faithful.WORK`: epochs x images, iterations x loops,
  seeds x student steps, ...);
* the seconds per step of that loop (:data:`compendium.pipeline.faithful.BENCH_LOOP`), measured with
  ``benchmarks/bench_steps.py`` on 2 cores at the ``cpu`` profile's shapes and on one GPU at the papers' shapes
  (3 x 32 x 32 inputs, width-128 ConvNets, full-width ResNet-18, batch 256 where the papers use it).

A stage's GPU estimate is ``cpu minutes x work ratio x (GPU s/step at paper shapes / CPU s/step at cpu
shapes)``. Stages without a GPU case keep their 2-core time times the work ratio: those whose tensors the
library builds on the CPU (the unrolled DD / GTN / text DD loops, KRR-ST / SSDD, the theory stages), and an upper
bound for ``dd_labels``' and ``dd_mnemonics``' learners, which run on the GPU but have no bench case. Everything that is not the dominant loop (data loading,
test passes, figures) is scaled with it, so the estimate is coarse, about a factor of two either way; it is the
time table the README states until the profile has run on a GPU.

    python -m compendium.pipeline.paper_estimate [--write]   # prints; --write: benchmarks/paper_estimate.md
                                                             # and the README's time table

Example::

    >>> gpu_minutes(10.0, 100.0, 0.002, 0.02)   # 10 cpu minutes, 100x the work, a loop 10x faster per step
    100.0
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from compendium.core import paths
from compendium.pipeline import faithful as F

SCALE = "paper"
ESTIMATE_MD = paths.ROOT / "benchmarks" / "paper_estimate.md"
START, END = "<!-- paper-time:start -->", "<!-- paper-time:end -->"   # the README's time table


@dataclass(frozen=True)
class PaperEstimate:
    stage: str
    keys: str                    # the dominant loop's cost model
    ratio: float                 # its work at paper / cpu scale
    cpu_minutes: float | None    # measured at cpu scale on 2 cores
    case: str                    # the bench case standing for the loop ("" when it stays on the CPU)
    cpu_step: float | None       # s/step on 2 cores, cpu shapes
    gpu_step: float | None       # s/step on the GPU, paper shapes
    minutes: float | None        # the estimate on one GPU


def gpu_minutes(cpu_minutes: float, ratio: float, gpu_step: float | None, cpu_step: float | None) -> float:
    """``cpu_minutes x ratio``, times the per-step cost of the GPU at paper shapes over the CPU's at cpu shapes
    where both are measured (else the CPU time: the loop stays on the CPU)."""
    scale = gpu_step / cpu_step if gpu_step and cpu_step else 1.0
    return cpu_minutes * ratio * scale


def step_times(rows: list[dict], *, shape: str, on_gpu: bool) -> dict[tuple[str, str], float]:
    """``{(loop, variant): seconds per step}`` of the bench rows at ``shape`` timed on the GPU (``on_gpu``) or
    on the CPU."""
    return {(r["loop"], r["variant"]): float(r["seconds_per_step"]) for r in rows
            if r.get("shape") == shape and r.get("seconds_per_step") and (r.get("device") != "cpu") == on_gpu}


def estimate(stages: list[str], paper_values: dict[str, dict], cpu: dict[str, F.Measured], cpu_rows: list[dict],
             gpu_rows: list[dict]) -> list[PaperEstimate]:
    """One :class:`PaperEstimate` per stage (``minutes`` None where the stage has no measured cpu time)."""
    c = step_times(cpu_rows, shape="cpu", on_gpu=False)
    g = step_times(gpu_rows, shape="paper", on_gpu=True)
    out = []
    for st in stages:
        m = cpu.get(st)
        r, keys = F.ratio(st, m.values if m else {}, paper_values.get(st, {}))
        case = F.BENCH_LOOP.get(st)
        cs, gs = (c.get(case), g.get(case)) if case else (None, None)
        mins = None if m is None or m.minutes is None else gpu_minutes(m.minutes, r, gs, cs)
        out.append(PaperEstimate(st, keys, r, m.minutes if m else None, "/".join(case) if case and cs and gs else "",
                                 cs if case else None, gs if case else None, mins))
    return out


def _s(x: float | None) -> str:
    return "–" if x is None else f"{x:.3g} s"


def markdown(rows: list[PaperEstimate], gpu: str) -> str:
    """The time table: per stage its loop, work ratio, measured cpu minutes, step times and the GPU estimate."""
    lines = ["# The paper profile: expected time per stage on one GPU", "",
             "Generated by `python -m compendium.pipeline.paper_estimate --write`; do not edit by hand.", "",
             "**An extrapolation, not a measurement** (no stage has run at `scale: paper` end to end):",
             "`cpu minutes x work ratio (paper / cpu, the dominant loop's cost model) x (GPU s/step at the papers'",
             f"shapes / 2-core s/step at the cpu shapes)`, the step times from `benchmarks/bench_steps.py` on {gpu}",
             "and on 2 cores. Stages without a GPU case (loop `–`) keep their 2-core time times the work ratio: the",
             "library builds the unrolled family's and KRR-ST / SSDD's tensors on the CPU, and `dd_labels`' and",
             "`dd_mnemonics`' learners, which do run on the GPU, have no bench case (an upper bound for those).",
             "Expect a factor of two either way; `compendium.pipeline.paper_estimate` explains the model.", "",
             "| stage | dominant loop (keys scaled) | work ratio | cpu, 2 cores (measured) | loop | s/step, 2 cores | "
             "s/step, GPU | paper, one GPU (estimated) |",
             "|---|---|---:|---:|---|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r.stage} | {r.keys} | {r.ratio:,.1f}x | {F.fmt_minutes(r.cpu_minutes)} | {r.case or '–'} | "
                     f"{_s(r.cpu_step)} | {_s(r.gpu_step)} | {F.fmt_minutes(r.minutes)} |")
    known = [r.minutes for r in rows if r.minutes is not None]
    on_cpu = sum(r.minutes for r in rows if r.minutes is not None and not r.case)
    lines += ["", f"**Total: about {sum(known) / 60:,.0f} hours on one GPU**, {on_cpu / 60:,.0f} of them in stages "
              "without a GPU case (their 2-core time).", ""]
    return "\n".join(lines)


def readme_block(rows: list[PaperEstimate], gpu: str) -> str:
    """The README's time table (between :data:`START` and :data:`END`): per stage its estimate on one GPU."""
    known = [r for r in rows if r.minutes is not None]
    lines = [START, "", f"| stage | loop timed on {gpu} | paper, one GPU (estimated) |", "|---|---|---:|"]
    lines += [f"| `{r.stage}` | {r.case or '– (its 2-core time)'} | {F.fmt_minutes(r.minutes)} |" for r in known]
    lines += ["", f"About **{sum(r.minutes for r in known) / 60:,.0f} hours** in all, "
              f"{sum(r.minutes for r in known if not r.case) / 60:,.0f} of them in stages without a GPU case, at their "
              f"2-core time (`{ESTIMATE_MD.relative_to(paths.ROOT)}`: the model and its inputs per stage).", "", END]
    return "\n".join(lines)


def measured_now(stages: list[str], raw: dict, minutes: dict[str, float]) -> dict[str, F.Measured]:
    """Each stage's cpu minutes (the summary's ``stage_minutes``) with the cpu values of ``raw``, the params the
    committed ``dvc.lock`` says they ran with (the same files a fresh clone has, so the table is the same there)."""
    return {st: F.Measured(minutes.get(st), F.cpu_values(raw, st), "reports/summary/headlines.json") for st in stages}


def current() -> tuple[list[PaperEstimate], str]:
    """The estimate from the repository as it stands: the stages of ``dvc.yaml`` in pipeline order (the module
    stages left out), their measured cpu minutes, the params' paper values and the bench files; and the GPU."""
    stages = F.read_stages(yaml.safe_load(paths.DVC_YAML.read_text()))
    order = [st for st in F.dag_order(stages, F.upstream(stages)) if st not in F.MODULE_STAGES]
    values = {st: F.stage_values(st, SCALE) for st in order}
    head = paths.REPORTS / "summary" / "headlines.json"
    minutes = json.loads(head.read_text()).get("stage_minutes", {}) if head.is_file() else {}
    cpu = measured_now(order, yaml.safe_load(paths.PARAMS.read_text()), minutes)
    gpu_rows = F.read_bench(F.BENCH_GPU)
    names = sorted({r["device"] for r in gpu_rows if r.get("device") not in (None, "cpu")})
    return estimate(order, values, cpu, F.read_bench(F.BENCH_CPU), gpu_rows), " / ".join(names) or "a GPU"


def rewrite_readme(readme: Path) -> None:
    """Replace the README's time table with :func:`readme_block` of :func:`current`."""
    text = readme.read_text()
    if START not in text or END not in text:
        raise ValueError(f"{readme} has no {START} ... {END} block")
    old = text[text.index(START): text.index(END) + len(END)]
    readme.write_text(text.replace(old, readme_block(*current())))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="The paper profile's expected time per stage on one GPU (extrapolated).")
    ap.add_argument("--write", action="store_true", help=f"write {ESTIMATE_MD.relative_to(paths.ROOT)} and the "
                                                         "README's time table")
    args = ap.parse_args(argv)
    rows, gpu = current()
    text = markdown(rows, gpu)
    print(text)
    if args.write:
        ESTIMATE_MD.write_text(text)
        rewrite_readme(paths.ROOT / "README.md")
        print(f"[paper_estimate] wrote {ESTIMATE_MD} and the README's time table")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
