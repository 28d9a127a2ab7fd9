"""The CPU bf16 benchmark's account on the manual's page on running at scale."""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_cpu_bf16 as B  # noqa: E402


def test_the_page_states_the_committed_measurement():
    results = json.loads((ROOT / "benchmarks" / "bench_cpu_bf16.json").read_text())
    assert B.page_block(results) in (ROOT / "docs" / "at-scale.md").read_text(), (
        "stale: python benchmarks/bench_cpu_bf16.py --from-json benchmarks/bench_cpu_bf16.json --page docs/at-scale.md"
    )


def test_the_block_gives_the_speed_up_per_isa_cap_and_the_paired_difference():
    speed = [
        {"isa cap": cap, "config": "byol step", "arm": arm, "ms": ms}
        for cap, f, b in (("this CPU", 45.0, 30.0), ("AVX2 only", 50.0, 100.0))
        for arm, ms in (("fp32", f), ("bf16 autocast", b))
    ]
    numbers = [
        {"seed": s, "arm": arm, "probe acc": a}
        for s, (b, f) in enumerate(((0.60, 0.61), (0.62, 0.62), (0.58, 0.60)))
        for arm, a in (("bf16 autocast", b), ("fp32", f))
    ]
    meta = {"cpu": "X", "amx": False, "avx512_bf16": True, "torch": "t"}
    block = B.page_block({"meta": meta, "speed": speed, "numbers": numbers})
    assert block.startswith(B.START) and block.endswith(B.END) and "Measured on X (AVX512-BF16)" in block
    assert "| byol step | 45.0 / 30.0 (1.50x) | 50.0 / 100.0 (0.50x) |" in block
    assert "| 2 | 58.0 | 60.0 | -2.0 |" in block and "Mean difference -1.0 points" in block


def test_another_hosts_speed_is_shown_beside_the_emulated_caps():
    speed = [
        {"isa cap": "this CPU", "config": "byol step", "arm": arm, "ms": ms}
        for arm, ms in (("fp32", 45.0), ("bf16 autocast", 30.0))
    ]
    numbers = [{"seed": 0, "arm": arm, "probe acc": 0.6} for arm in ("bf16 autocast", "fp32")]
    host = {
        "cpu": "Y",
        "amx": False,
        "avx512_bf16": False,
        "capability": "AVX2",
        "speed": [
            {"config": "byol step", "arm": "fp32", "ms": 100.0},
            {"config": "byol step", "arm": "bf16 autocast", "ms": 120.0},
        ],
    }
    meta = {"cpu": "X", "amx": False, "avx512_bf16": True, "torch": "t"}
    block = B.page_block({"meta": meta, "speed": speed, "numbers": numbers, "other hosts": [host]})
    assert "On another host, Y (no native bf16; torch's CPU capability AVX2)" in block
    assert "| byol step | 100.0 | 120.0 | 0.83x |" in block
    assert "On another host" not in B.page_block({"meta": meta, "speed": speed, "numbers": numbers})
