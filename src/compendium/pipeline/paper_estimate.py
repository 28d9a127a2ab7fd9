"""The ``paper`` profile's expected time per stage on one GPU: an extrapolation from measured steps.

No stage has run at ``scale: paper`` end to end. This module states what each one should take on one modern GPU
from three measured things:

* the stage's minutes at ``cpu`` scale on this project's 2-core machines (``reports/stage_minutes.json``),
  with the ``cpu`` values of ``params.yaml``, which the committed ``dvc.lock`` says they ran with;
* the ratio of the work of its dominant loop at ``paper`` over ``cpu`` scale, from the resolved parameters of
  both (the cost models of :data:`compendium.pipeline.faithful.WORK`: epochs x images, iterations x loops,
  seeds x student steps, ...);
* the seconds per step of that loop (:data:`compendium.pipeline.faithful.BENCH_LOOP`), measured with
  ``benchmarks/bench_steps.py`` on 2 cores at the ``cpu`` profile's shapes and on one GPU at the papers' shapes
  (3 x 32 x 32 inputs, width-128 ConvNets, full-width ResNet-18, batch 256 where the papers use it).

A stage's GPU estimate is ``cpu minutes x work ratio x (GPU s/step at paper shapes / CPU s/step at cpu
shapes)``. A loop no GPU has timed takes a *modelled* GPU step instead, where ``bench_steps.py --count`` has
counted its operators and FLOPs on the CPU (:class:`StepModel`: a per-operator latency plus FLOPs at a sustained
rate, fitted to the loops the GPU did time; its leave-one-out error is on the page). Stages with neither keep their
2-core time times the work ratio: the time itself for the loops that stay on the CPU (text DD, the NAS trainings,
the theory stages), an upper bound for those that run on the GPU without a timing or a count of their dominant
loop (LD's meta-learner, LS, KRR-ST / SSDD's pool, ``dd_mnemonics``' learners). Everything that is not the dominant
loop (data loading,
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
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml
from scipy.optimize import nnls

from compendium.core import paths
from compendium.pipeline import faithful as F
from compendium.pipeline import timings

SCALE = "paper"
ESTIMATE_MD = paths.ROOT / "benchmarks" / "paper_estimate.md"
#: the manual's page that shows the time table (between :data:`START` and :data:`END`)
PAGE = paths.ROOT / "docs" / "at-scale.md"
COUNTS = paths.ROOT / "benchmarks" / "bench_counts.json"  # benchmarks/bench_steps.py --count (operators, FLOPs)
#: Stages with a counted bench case but no GPU timing: (the part of :data:`compendium.pipeline.faithful.WORK` the
#: case stands for, the case). The GPU step is modelled only where that part is the stage's dominant one at paper
#: scale (at ``paper`` both stages' pools outgrow them, so neither applies there yet).
MODELLED_LOOP: dict[str, tuple[str, tuple[str, str]]] = {
    "dd_unrolled": ("iterations x steps x epochs", ("dd", "dd")),
    "ssdd_distill": ("steps (outer, per set)", ("krr", "ssdd")),
}
START, END = "<!-- paper-time:start -->", "<!-- paper-time:end -->"  # the README's time table


@dataclass(frozen=True)
class StepModel:
    """A GPU step's seconds as ``operators x seconds_per_op + flops / flops_per_second``: each ATen operator costs at
    least a kernel launch and PyTorch's dispatch on the host, and the arithmetic runs at a sustained rate. Fitted by
    :func:`fit_step_model` to the loops a GPU timed; ``loo`` holds each fitted point's relative error when the model
    is fitted without it (leave-one-out), the measure of how far a prediction can be trusted. Example::

        >>> m = StepModel(1e-5, 1e13, 3, (0.1, -0.2))
        >>> round(m.predict(1000, 1e11), 6)   # 1,000 launches and 0.1 TFLOP
        0.02
    """

    seconds_per_op: float
    flops_per_second: float  # math.inf: the FLOPs term fitted to zero
    points: int
    loo: tuple[float, ...]

    def predict(self, ops: float, flops: float) -> float:
        return ops * self.seconds_per_op + (
            flops / self.flops_per_second if math.isfinite(self.flops_per_second) else 0.0
        )


def _nnls_fit(ops: np.ndarray, flops: np.ndarray, seconds: np.ndarray) -> tuple[float, float]:
    """Non-negative least squares of the relative error: ``(ops a + flops b) / t ~ 1``; (a, b)."""
    a, _ = nnls(np.stack([ops / seconds, flops / seconds], 1), np.ones(len(seconds)))
    return float(a[0]), float(a[1])


def fit_step_model(gpu_rows: list[dict], count_rows: list[dict]) -> StepModel | None:
    """The :class:`StepModel` of the GPU of ``gpu_rows`` (``bench_steps.py`` timings, the CPU-timed rows left out)
    from every (loop, variant, shape) that also has a count in ``count_rows``; None with fewer than 3 such."""
    counts = {
        (r["loop"], r["variant"], r["shape"]): (r["ops_per_step"], r["flops_per_step"])
        for r in count_rows
        if r.get("ops_per_step")
    }
    pts = [
        (*counts[k], float(r["seconds_per_step"]))
        for r in gpu_rows
        if r.get("device") not in (None, "cpu")
        and r.get("seconds_per_step")
        and (k := (r["loop"], r["variant"], r["shape"])) in counts
    ]
    if len(pts) < 3:
        return None
    o, f, t = (np.array(c, dtype=float) for c in zip(*pts))
    a, b = _nnls_fit(o, f, t)
    loo = []
    for i in range(len(t)):
        keep = np.arange(len(t)) != i
        ai, bi = _nnls_fit(o[keep], f[keep], t[keep])
        loo.append(float((o[i] * ai + f[i] * bi) / t[i] - 1.0))
    return StepModel(a, 1.0 / b if b > 0 else math.inf, len(t), tuple(loo))


def modelled_steps(model: StepModel | None, count_rows: list[dict], shape: str = SCALE) -> dict[tuple[str, str], float]:
    """``{(loop, variant): modelled GPU seconds per step}`` of every counted case at ``shape``."""
    if model is None:
        return {}
    return {
        (r["loop"], r["variant"]): model.predict(r["ops_per_step"], r["flops_per_step"])
        for r in count_rows
        if r.get("shape") == shape and r.get("ops_per_step")
    }


@dataclass(frozen=True)
class PaperEstimate:
    stage: str
    keys: str  # the dominant loop's cost model
    ratio: float  # its work at paper / cpu scale
    cpu_minutes: float | None  # measured at cpu scale on 2 cores
    case: str  # the bench case standing for the loop ("" when it stays on the CPU)
    cpu_step: float | None  # s/step on 2 cores, cpu shapes
    gpu_step: float | None  # s/step on the GPU, paper shapes
    minutes: float | None  # the estimate on one GPU
    modelled: bool = False  # gpu_step from the StepModel, not timed
    peak_mib: float | None = None  # the loop's peak CUDA memory at the papers' shapes, where a GPU timed it


def gpu_minutes(cpu_minutes: float, ratio: float, gpu_step: float | None, cpu_step: float | None) -> float:
    """``cpu_minutes x ratio``, times the per-step cost of the GPU at paper shapes over the CPU's at cpu shapes
    where both are measured (else the CPU time: the loop stays on the CPU)."""
    scale = gpu_step / cpu_step if gpu_step and cpu_step else 1.0
    return cpu_minutes * ratio * scale


def estimate(
    stages: list[str],
    paper_values: dict[str, dict],
    cpu: dict[str, F.Measured],
    cpu_rows: list[dict],
    gpu_rows: list[dict],
    modelled: dict[tuple[str, str], float] | None = None,
) -> list[PaperEstimate]:
    """One :class:`PaperEstimate` per stage (``minutes`` None where the stage has no measured cpu time). A stage of
    :data:`MODELLED_LOOP` whose case no GPU timed takes its GPU step from ``modelled`` (:func:`modelled_steps`) when
    the case's part is the stage's dominant one."""
    c = F.step_times(cpu_rows, shape="cpu", on_gpu=False)
    g = F.step_times(gpu_rows, shape="paper", on_gpu=True)
    mem = peak_memory(gpu_rows)
    out = []
    for st in stages:
        m = cpu.get(st)
        r, keys = F.ratio(st, m.values if m else {}, paper_values.get(st, {}))
        case, by_model = F.BENCH_LOOP.get(st), False
        cs, gs = (c.get(case), g.get(case)) if case else (None, None)
        part, mcase = MODELLED_LOOP.get(st, ("", None))
        if gs is None and mcase in (modelled or {}) and keys.startswith(part):
            case = mcase
            cs, gs, by_model = c.get(case), modelled[case], True
        mins = None if m is None or m.minutes is None else gpu_minutes(m.minutes, r, gs, cs)
        out.append(
            PaperEstimate(
                st,
                keys,
                r,
                m.minutes if m else None,
                "/".join(case) if case and cs and gs else "",
                cs if case else None,
                gs if case else None,
                mins,
                by_model and bool(cs),
                mem.get(case) if case and cs and gs and not by_model else None,
            )
        )
    return out


def peak_memory(gpu_rows: list[dict], shape: str = "paper") -> dict[tuple[str, str], float]:
    """``{(loop, variant): peak CUDA MiB}`` of the GPU rows of ``benchmarks/bench_steps.py`` at ``shape`` (the
    largest where a case was timed twice)."""
    out: dict[tuple[str, str], float] = {}
    for r in gpu_rows:
        if r.get("shape") == shape and r.get("device") not in (None, "cpu") and r.get("peak_cuda_mib"):
            k = (r["loop"], r["variant"])
            out[k] = max(out.get(k, 0.0), float(r["peak_cuda_mib"]))
    return out


def _mib(x: float | None) -> str:
    return "–" if x is None else (f"{x / 1024:.1f} GiB" if x >= 1024 else f"{x:.0f} MiB")


def _loop(r: PaperEstimate) -> str:
    return f"{r.case} (modelled)" if r.modelled else r.case


def _s(x: float | None) -> str:
    return "–" if x is None else f"{x:.3g} s"


def model_lines(
    model: StepModel | None,
    gpu: str,
    modelled: dict[tuple[str, str], float] | None = None,
    cpu_rows: list[dict] | None = None,
) -> list[str]:
    """The page's account of the :class:`StepModel` (or why there is none), and the modelled GPU step of each
    counted loop no GPU timed, beside its 2-core step at the ``cpu`` shapes."""
    if model is None:
        return [
            "No step model: fewer than three loops have both a GPU timing and a count "
            "(`benchmarks/bench_steps.py --count`).",
            "",
        ]
    loo = sorted(abs(e) for e in model.loo)
    rate = (
        "no FLOPs term"
        if not math.isfinite(model.flops_per_second)
        else f"{model.flops_per_second / 1e12:,.1f} TFLOP/s"
    )
    return [
        f"**Step model** ({gpu}, fitted to the {model.points} loop shapes it timed and `bench_steps.py --count` "
        f"counted): {model.seconds_per_op * 1e6:.1f} µs per ATen operator plus the FLOPs at {rate}. "
        f"Leave-one-out relative error of those {model.points}: median {100 * loo[len(loo) // 2]:.0f}%, "
        f"largest {100 * loo[-1]:.0f}%. The small networks of these papers are launch-bound on a GPU, so a "
        "step's operator count, not its FLOPs, sets most of its time. Loops marked *(modelled)* take their GPU "
        "step from this model.",
        "",
    ] + _modelled_table(modelled or {}, cpu_rows or [])


def _modelled_table(modelled: dict[tuple[str, str], float], cpu_rows: list[dict]) -> list[str]:
    timed = F.step_times(cpu_rows, shape="cpu", on_gpu=False)
    own = {case for case in modelled if case in {c for _, c in MODELLED_LOOP.values()}}
    if not own:
        return []
    lines = [
        "| counted loop, not timed on a GPU | s/step, 2 cores (cpu shapes) | s/step, GPU (paper shapes, modelled) |",
        "|---|---:|---:|",
    ]
    lines += [f"| {'/'.join(c)} | {_s(timed.get(c))} | {_s(modelled[c])} |" for c in sorted(own)]
    return lines + [""]


def markdown(
    rows: list[PaperEstimate],
    gpu: str,
    model: StepModel | None = None,
    modelled: dict[tuple[str, str], float] | None = None,
    cpu_rows: list[dict] | None = None,
) -> str:
    """The time table: per stage its loop, work ratio, measured cpu minutes, step times and the GPU estimate."""
    lines = [
        "# The paper profile: expected time per stage on one GPU",
        "",
        "Generated by `python -m compendium.pipeline.paper_estimate --write`; do not edit by hand.",
        "",
        "**An extrapolation, not a measurement** (no stage has run at `scale: paper` end to end):",
        "`cpu minutes x work ratio (paper / cpu, the dominant loop's cost model) x (GPU s/step at the papers'",
        f"shapes / 2-core s/step at the cpu shapes)`, the step times from `benchmarks/bench_steps.py` on {gpu}",
        "and on 2 cores. Stages without a GPU case (loop `–`) keep their 2-core time times the work ratio: the",
        "time itself where the loops stay on the CPU (text DD, the NAS trainings), an upper bound where they run",
        "on the GPU without a GPU timing (the unrolled DD / LD / GTN loops, LS, KRR-ST / SSDD, `dd_labels`' and",
        "`dd_mnemonics`' learners).",
        "Expect a factor of two either way; `compendium.pipeline.paper_estimate` explains the model.",
        "",
        *model_lines(model, gpu, modelled, cpu_rows),
        "| stage | dominant loop (keys scaled) | work ratio | cpu, 2 cores (measured) | loop | s/step, 2 cores | "
        "s/step, GPU | paper, one GPU (estimated) |",
        "|---|---|---:|---:|---|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.stage} | {r.keys} | {r.ratio:,.1f}x | {F.fmt_minutes(r.cpu_minutes)} | {_loop(r) or '–'} | "
            f"{_s(r.cpu_step)} | {_s(r.gpu_step)} | {F.fmt_minutes(r.minutes)} |"
        )
    known = [r.minutes for r in rows if r.minutes is not None]
    on_cpu = sum(r.minutes for r in rows if r.minutes is not None and not r.case)
    lines += [
        "",
        f"**Total: about {sum(known) / 60:,.0f} hours on one GPU**, {on_cpu / 60:,.0f} of them in stages "
        "without a GPU case (their 2-core time).",
        "",
    ]
    return "\n".join(lines)


def readme_block(rows: list[PaperEstimate], gpu: str) -> str:
    """The paper profile's time table on the manual's page on running at scale (between :data:`START` and
    :data:`END`): per stage its estimate on one GPU and its loop's peak GPU memory at the papers' shapes."""
    known = [r for r in rows if r.minutes is not None]
    lines = [
        START,
        "",
        f"| stage | loop timed on {gpu} | paper, one GPU (estimated) | the loop's peak GPU memory (measured) |",
        "|---|---|---:|---:|",
    ]
    lines += [
        f"| `{r.stage}` | {_loop(r) or '– (its 2-core time)'} | {F.fmt_minutes(r.minutes)} | {_mib(r.peak_mib)} |"
        for r in known
    ]
    lines += [
        "",
        f"About **{sum(r.minutes for r in known) / 60:,.0f} hours** in all, "
        f"{sum(r.minutes for r in known if not r.case) / 60:,.0f} of them in stages without a GPU case, at their "
        f"2-core time (`{ESTIMATE_MD.relative_to(paths.ROOT)}`: the model and its inputs per stage).",
        "",
        END,
    ]
    return "\n".join(lines)


def measured_now(stages: list[str], raw: dict, minutes: dict[str, float]) -> dict[str, F.Measured]:
    """Each stage's cpu minutes (``reports/stage_minutes.json``) with the cpu values of ``raw``, the params the
    committed ``dvc.lock`` says they ran with (the same files a fresh clone has, so the table is the same there)."""
    return {st: F.Measured(minutes.get(st), F.cpu_values(raw, st), f"reports/{timings.FILE}") for st in stages}


def read_counts(path: Path = COUNTS) -> list[dict]:
    """The rows of ``bench_steps.py --count`` (none when the file is absent)."""
    return json.loads(path.read_text()) if path.is_file() else []


def current() -> tuple[list[PaperEstimate], str, StepModel | None]:
    """The estimate from the repository as it stands: the stages of ``dvc.yaml`` in pipeline order (the module
    stages left out), their measured cpu minutes, the params' paper values and the bench files; the GPU; and the
    step model fitted to the GPU's timings and the counts."""
    stages = F.read_stages(yaml.safe_load(paths.DVC_YAML.read_text()))
    order = [st for st in F.dag_order(stages, F.upstream(stages)) if st not in F.MODULE_STAGES]
    values = {st: F.stage_values(st, SCALE) for st in order}
    cpu = measured_now(order, yaml.safe_load(paths.PARAMS.read_text()), timings.minutes())
    gpu_rows, counts = F.read_bench(F.BENCH_GPU), read_counts()
    names = sorted({r["device"] for r in gpu_rows if r.get("device") not in (None, "cpu")})
    model = fit_step_model(gpu_rows, counts)
    rows = estimate(order, values, cpu, F.read_bench(F.BENCH_CPU), gpu_rows, modelled_steps(model, counts))
    return rows, " / ".join(names) or "a GPU", model


def rewrite_readme(readme: Path) -> None:
    """Replace the time table of ``readme`` (the manual's page on running at scale) with :func:`readme_block` of
    :func:`current`."""
    text = readme.read_text()
    if START not in text or END not in text:
        raise ValueError(f"{readme} has no {START} ... {END} block")
    old = text[text.index(START) : text.index(END) + len(END)]
    rows, gpu, _ = current()
    readme.write_text(text.replace(old, readme_block(rows, gpu)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="The paper profile's expected time per stage on one GPU (extrapolated).")
    ap.add_argument(
        "--write", action="store_true", help=f"write {ESTIMATE_MD.relative_to(paths.ROOT)} and the README's time table"
    )
    args = ap.parse_args(argv)
    rows, gpu, model = current()
    text = markdown(rows, gpu, model, modelled_steps(model, read_counts()), F.read_bench(F.BENCH_CPU))
    print(text)
    if args.write:
        ESTIMATE_MD.write_text(text)
        rewrite_readme(PAGE)
        print(f"[paper_estimate] wrote {ESTIMATE_MD} and the time table of {PAGE.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
