"""benchmarks/bench_levers.py: its quick run measures every lever but the compile (CPU bf16 included), and writes the
rows it prints."""

import importlib.util
import json
import math
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_levers.py"

pytestmark = pytest.mark.usefixtures("one_thread")


def test_quick_run_has_every_lever_but_the_compile(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_levers", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path / "levers.json"
    rows = mod.main(["--quick", "--out", str(out)])
    got = [(r["lever"], r["arm"]) for r in rows]
    assert (
        got
        == [
            ("compile", "eager"),
            ("recovery_batch", "one batch of 10"),
            ("recovery_batch", "one batch of 100"),
            ("recovery_layout", "contiguous"),
            ("recovery_layout", "channels_last"),
            ("avg_pool", "contiguous"),
            ("avg_pool", "channels_last"),
            ("avg_pool", "contiguous"),
            ("avg_pool", "channels_last"),
        ]
        + [("cpu_bf16", "fp32"), ("cpu_bf16", "bf16 autocast")] * 3
    )
    assert [r["config"].split(",")[0] for r in rows if r["lever"] == "cpu_bf16"] == ["byol step"] * 2 + [
        "simclr step"
    ] * 2 + ["supervised step"] * 2
    assert all(math.isfinite(r["ms"]) and r["ms"] > 0 for r in rows)
    batch = {r["arm"]: r for r in rows if r["lever"] == "recovery_batch"}
    assert batch["one batch of 100"]["ms_per_10_images"] == pytest.approx(batch["one batch of 100"]["ms"] / 10)
    saved = json.loads(out.read_text())
    assert saved["rows"] == rows and saved["meta"]["quick"] is True
