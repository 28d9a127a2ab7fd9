"""bf16 autocast on the CPU against fp32, on CPUs with and without native bf16, and its effect on the numbers.

The ReLA stages pre-train under bf16 autocast on the CPU (``cpu_bf16: true``) because oneDNN's AMX / AVX512-BF16
kernels make the BYOL step about 1.5x faster. On a CPU without them bf16 is emulated. This script measures:

* **speed**: ``bench_levers.cpu_bf16`` (a BYOL step, a SimCLR step, a supervised ConvNet step; one thread) in a
  subprocess per oneDNN ISA cap: this CPU as it is, ``ONEDNN_MAX_CPU_ISA=AVX512_CORE`` (AVX512 without BF16) and
  ``ONEDNN_MAX_CPU_ISA=AVX2`` with ``ATEN_CPU_CAPABILITY=avx2`` (an AVX2-only laptop's kernels, on this CPU);
* **numbers**: BYOL pre-trained on 5,000 Fashion-MNIST training images (Conv-3 width 16, 10 epochs, batch 128)
  under bf16 autocast and under fp32 from the same seeds, each probed linearly on its pooled features (the
  whole test set): the paired difference per seed, which is what a CPU without native bf16 changes now that it
  runs fp32 (:func:`compendium.core.device.cpu_bf16_native`).

    python benchmarks/bench_cpu_bf16.py [--quick] [--out benchmarks/bench_cpu_bf16.json] [--page docs/at-scale.md]

``--page`` rewrites the page's block between :data:`START` and :data:`END` from the results (:func:`page_block`).
``--add-host`` measures only the speed on this CPU as it is and adds it to an existing results file's
``other hosts`` (a CPU of another kind than the one the caps were emulated on: a real AVX2-only machine, say),
which the page shows beside the emulated caps.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
START, END = "<!-- cpu-bf16:start -->", "<!-- cpu-bf16:end -->"
CAPS = {
    "this CPU": {},
    "AVX512 without BF16": {"ONEDNN_MAX_CPU_ISA": "AVX512_CORE"},
    "AVX2 only": {"ONEDNN_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"},
}


def cpu_name() -> str:
    """The CPU's model name as Linux reports it (else the platform's machine type)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def speed(steps: int, caps: dict | None = None) -> list[dict]:
    rows = []
    for cap, env in (CAPS if caps is None else caps).items():
        code = (
            "import json, torch; torch.set_num_threads(1); import bench_levers as B; "
            f"print(json.dumps(B.cpu_bf16({steps})))"
        )
        env = {**os.environ, **env}
        out = subprocess.run([sys.executable, "-c", code], cwd=HERE, env=env, capture_output=True, text=True)
        out.check_returncode()
        for r in json.loads(out.stdout.strip().splitlines()[-1]):
            rows.append({"isa cap": cap, "config": r["config"], "arm": r["arm"], "ms": r["ms"]})
    return rows


def numbers(seeds: int, epochs: int, n: int) -> list[dict]:
    from compendium.core import augment, data, models
    from compendium.core.probe import extract_features, linear_probe
    from compendium.ssl import methods, train

    tr, te = data.load_fashion_mnist("train"), data.load_fashion_mnist("test")
    mean, std = (data.FASHION_MNIST_MEAN,), (data.FASHION_MNIST_STD,)
    x = tr.images[torch.randperm(len(tr.labels), generator=torch.Generator().manual_seed(0))[:n]]
    views = augment.preset("byol", size=28, small_images=True)
    rows = []
    for seed in range(seeds):
        for bf in (True, False):
            torch.manual_seed(seed)
            model = methods.build("byol", models.convnet(1, 28, width=16, depth=3, norm="batch", global_pool=True))
            cfg = train.PretrainConfig(
                epochs=epochs, batch_size=128, device="cpu", log_prefix="", cpu_bf16=bf, seed=seed
            )
            hist = train.pretrain(model, x, cfg, views, mean, std)
            f_tr = extract_features(model.backbone, tr.images[:10000], mean, std)
            f_te = extract_features(model.backbone, te.images, mean, std)
            acc = linear_probe(f_tr, tr.labels[:10000], f_te, te.labels, 10, epochs=30, seed=seed, standardize=True)
            rows.append(
                {
                    "seed": seed,
                    "arm": "bf16 autocast" if bf else "fp32",
                    "native bf16": train.autocasts(torch.device("cpu"), cfg) if bf else None,
                    "final loss": hist.epochs[-1]["loss"],
                    "probe acc": acc.final,
                }
            )
    return rows


def _native(meta: dict) -> str:
    return "AMX" if meta["amx"] else "AVX512-BF16" if meta["avx512_bf16"] else "no native bf16"


def this_host(steps: int) -> dict:
    """This CPU as it is (no cap): its name, bf16 units, torch's CPU capability and the speed rows."""
    rows = speed(steps, caps={"this CPU": {}})
    return {
        "cpu": cpu_name(),
        "amx": bool(torch.cpu._is_amx_tile_supported()),
        "avx512_bf16": bool(torch.cpu._is_avx512_bf16_supported()),
        "capability": torch.backends.cpu.get_cpu_capability(),
        "speed": [{k: v for k, v in r.items() if k != "isa cap"} for r in rows],
    }


def page_block(results: dict) -> str:
    """The manual's account of ``results`` (this script's JSON): per step and ISA cap the fp32 and bf16 times and
    bf16's speed-up; per seed the probe accuracy under each precision and their paired difference."""
    from scipy import stats

    meta = results["meta"]
    caps = list(dict.fromkeys(r["isa cap"] for r in results["speed"]))
    configs = list(dict.fromkeys(r["config"] for r in results["speed"]))
    ms = {(r["isa cap"], r["config"], r["arm"]): r["ms"] for r in results["speed"]}
    native = _native(meta)
    lines = [
        START,
        "",
        f"Measured on {meta['cpu']} ({native}), torch {meta['torch']}, one thread (ms per step, fp32 / bf16 "
        "autocast, and bf16's speed-up):",
        "",
        "| step | " + " | ".join(caps) + " |",
        "|---|" + "---:|" * len(caps),
    ]
    for c in configs:
        cells = []
        for cap in caps:
            f, b = ms[(cap, c, "fp32")], ms[(cap, c, "bf16 autocast")]
            cells.append(f"{f:.1f} / {b:.1f} ({f / b:.2f}x)")
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    for host in results.get("other hosts", []):
        hms = {(r["config"], r["arm"]): r["ms"] for r in host["speed"]}
        lines += [
            "",
            f"On another host, {host['cpu']} ({_native(host)}; torch's CPU capability {host['capability']}), this CPU "
            "as it is, one thread:",
            "",
            "| step | fp32 (ms) | bf16 autocast (ms) | bf16's speed-up |",
            "|---|---:|---:|---:|",
        ]
        for c in configs:
            if (c, "fp32") in hms:
                f, b = hms[(c, "fp32")], hms[(c, "bf16 autocast")]
                lines.append(f"| {c} | {f:.1f} | {b:.1f} | {f / b:.2f}x |")
    by_seed: dict[int, dict[str, float]] = {}
    for r in results["numbers"]:
        by_seed.setdefault(r["seed"], {})[r["arm"]] = 100 * r["probe acc"]
    d = [v["bf16 autocast"] - v["fp32"] for v in by_seed.values()]
    lines += [
        "",
        "| seed | probe, bf16 autocast (%) | probe, fp32 (%) | bf16 − fp32 (points) |",
        "|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {s} | {v['bf16 autocast']:.1f} | {v['fp32']:.1f} | {v['bf16 autocast'] - v['fp32']:+.1f} |"
        for s, v in sorted(by_seed.items())
    ]
    mean = sum(d) / len(d)
    if len(d) > 1:
        sd = (sum((x - mean) ** 2 for x in d) / (len(d) - 1)) ** 0.5
        h = float(stats.t.ppf(0.975, len(d) - 1)) * sd / len(d) ** 0.5
        interval = f"95% interval [{mean - h:+.1f}, {mean + h:+.1f}]"
        lines += ["", f"Mean difference {mean:+.1f} points, {interval} ({len(d)} seeds, paired)."]
    return "\n".join(lines + ["", END])


def write_page(page: Path, results: dict) -> None:
    text = page.read_text()
    if START not in text or END not in text:
        raise ValueError(f"{page} has no {START} ... {END} block")
    old = text[text.index(START) : text.index(END) + len(END)]
    page.write_text(text.replace(old, page_block(results)))


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke check: few steps, one seed, one epoch")
    ap.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    ap.add_argument("--page", type=Path, default=None, help="rewrite this page's block from the results")
    ap.add_argument("--from-json", type=Path, default=None, help="take the results from this JSON instead of measuring")
    ap.add_argument(
        "--add-host",
        type=Path,
        default=None,
        help="measure the speed on this CPU alone and add it to this results file's other hosts",
    )
    args = ap.parse_args(argv)
    if args.add_host:
        torch.set_num_threads(1)
        out = json.loads(args.add_host.read_text())
        host = this_host(3 if args.quick else 20)
        key = (host["cpu"], host["capability"])
        out["other hosts"] = [h for h in out.get("other hosts", []) if (h["cpu"], h["capability"]) != key] + [host]
        args.add_host.write_text(json.dumps(out, indent=1) + "\n")
        if args.page:
            write_page(args.page, out)
        return out
    if args.from_json:
        out = json.loads(args.from_json.read_text())
        if args.page:
            write_page(args.page, out)
        return out
    torch.set_num_threads(1)
    q = args.quick
    out = {
        "meta": {
            "torch": torch.__version__,
            "cpu": cpu_name(),
            "amx": bool(torch.cpu._is_amx_tile_supported()),
            "avx512_bf16": bool(torch.cpu._is_avx512_bf16_supported()),
            "quick": q,
        },
        "speed": speed(3 if q else 20),
        "numbers": numbers(1 if q else 3, 1 if q else 10, 512 if q else 5000),
    }
    for r in out["speed"] + out["numbers"]:
        print(" | ".join(f"{k}: {v:.4f}" if isinstance(v, float) else f"{k}: {v}" for k, v in r.items()), flush=True)
    if args.out:
        args.out.write_text(json.dumps(out, indent=1) + "\n")
    if args.page:
        write_page(args.page, out)
    return out


if __name__ == "__main__":
    main()
