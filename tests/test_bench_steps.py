"""benchmarks/bench_steps.py: one cheap loop end to end (BYOL, cpu shape, --quick), and the library modules it
uses import none of the pipeline-only packages (papermill, dvc, nbformat: absent on the GPU machines)."""

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "bench_steps.py"

pytestmark = pytest.mark.usefixtures("one_thread")


def _bench():
    spec = importlib.util.spec_from_file_location("bench_steps", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_steps"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_byol_quick_row(tmp_path, capsys):
    bench = _bench()
    out = tmp_path / "rows.json"
    rows = bench.main(["--quick", "--only", "byol", "--device", "cpu", "--threads", "1", "--out", str(out)])
    assert len(rows) == 1
    row = rows[0]
    assert set(bench.ROW_KEYS) <= set(row) and "error" not in row
    assert (row["loop"], row["shape"], row["device"], row["steps"]) == ("byol", "cpu", "cpu", 1)
    assert math.isfinite(row["seconds_per_step"]) and row["seconds_per_step"] > 0
    assert row["peak_cuda_mib"] is None
    assert json.loads(out.read_text()) == rows
    printed = capsys.readouterr().out
    assert "| loop | shape |" in printed and "| byol | cpu | byol |" in printed


def test_gtn_meta_step_grows_with_its_inner_steps():
    """The GTN case at the cpu shapes: T = 5 (cpu) and T = 32 (faithful) inner steps, the longer unroll dearer."""
    bench = _bench()
    rows = bench.main(["--quick", "--only", "gtn", "--device", "cpu", "--threads", "1"])
    by = {r["variant"]: r for r in rows}
    assert set(by) == {"gtn T5", "gtn T32"} and all("error" not in r for r in rows)
    assert by["gtn T32"]["seconds_per_step"] > 2 * by["gtn T5"]["seconds_per_step"] > 0


def test_failing_case_is_a_row(monkeypatch):
    bench = _bench()

    def broken(shape, dev, quick):
        raise RuntimeError("no such device")

    monkeypatch.setitem(bench.BUILDERS, "dd", broken)
    lines = []
    rows = bench.run_all(["dd"], ["cpu"], bench.torch.device("cpu"), quick=True, printer=lines.append)
    assert rows[0]["seconds_per_step"] is None and "no such device" in rows[0]["error"]
    assert "error: RuntimeError" in lines[-1]


def test_no_pipeline_only_imports():
    code = (
        "import importlib.util, sys; spec = importlib.util.spec_from_file_location('b', sys.argv[1]); "
        "m = importlib.util.module_from_spec(spec); sys.modules['b'] = m; spec.loader.exec_module(m); "
        "m.import_library(); print(m.forbidden_modules())"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, str(SCRIPT)],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
    )
    assert r.stdout.strip().splitlines()[-1] == "[]"


def test_count_isolates_one_steps_operators_and_flops(tmp_path):
    bench = _bench()
    torch = bench.torch
    a, b = torch.randn(64, 32), torch.randn(32, 16)

    def run(n):  # a set-up matmul, then one matmul and one add per step
        x = a @ b
        for _ in range(n):
            x = (a @ b) + x
        return 0.0

    case = bench.Case("toy", "cpu", "toy", "", run)
    ops, flops = bench.count(case)
    assert (ops, flops) == (2, 2 * 64 * 32 * 16)  # aten.mm + aten.add; the FLOP counter counts the matmul only
    rows = bench.count_all(["dd"], ["cpu"], quick=True, out=tmp_path / "c.json", printer=lambda s: None)
    assert rows[0]["ops_per_step"] > 1000 and rows[0]["flops_per_step"] > 0  # DD's unrolled step: many operators
    assert json.loads((tmp_path / "c.json").read_text()) == rows
