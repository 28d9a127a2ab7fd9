"""How long `dvc repro` takes from scratch: a fresh clone, an empty DVC cache, every stage run once, in one go.

`run` clones this repository's HEAD into ``--dir``, sets it up (`make setup`; ``--venv`` copies an existing
virtual environment first, so that the set-up only re-points the editable install and the kernel instead of
downloading torch), then runs `dvc repro` there and logs its start and end (epoch seconds) to ``--log``. The
clone's DVC cache starts empty and it has no run-cache, so every stage executes. Set-up time is not counted.

A run that stopped at a failing stage and was resumed (`dvc repro` again in the same clone, after the fix)
is summarised from all its logs: the wall time is the sum of the parts, less the failed attempt of the
stage (its notebook's duration, which the runner logs).

`summarize` reads the log(s) and the clone's measured stage minutes (`reports/stage_minutes.json`, papermill's
duration of each notebook) and writes `benchmarks/repro_from_scratch.json` and `.md`: the wall minutes of
`dvc repro`, the sum of the notebooks' minutes, and what is left (DVC's hashing and checks, the notebook-cleaning
stages, kernel start-up), with the commit and the machine.

    python benchmarks/repro_from_scratch.py run --dir ../fresh [--venv .venv] [--log fresh_run.log]
    python benchmarks/repro_from_scratch.py summarize --dir ../fresh --log fresh_run.log [resumed.log ...]

Nothing else should run on the machine meanwhile: the minutes are wall time on its cores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "repro_from_scratch"
START, END = "repro_start", "repro_end"


def run(target: Path, venv: Path | None, log: Path) -> int:
    """Clone HEAD into ``target``, set it up, run `dvc repro` there with start / end lines in ``log``."""
    if target.exists():
        raise SystemExit(f"{target} exists: pass a new --dir (the run must start from a fresh clone)")
    subprocess.run(["git", "clone", "-q", str(ROOT), str(target)], check=True)
    if venv is not None:
        shutil.copytree(venv, target / ".venv", symlinks=True)
    subprocess.run(["make", "setup"], cwd=target, check=True)
    env = {
        **os.environ,
        "PATH": f"{target / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(target / "src"),
        "DVC_NO_ANALYTICS": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    with open(log, "w") as fh:
        fh.write(f"{START} {time.time():.0f}\n")
        fh.flush()
        rc = subprocess.run(
            [str(target / ".venv" / "bin" / "python"), "-m", "dvc", "repro"],
            cwd=target,
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
        ).returncode
        fh.write(f"{END} {time.time():.0f} rc {rc}\n")
    subprocess.run(
        [str(target / ".venv" / "bin" / "python"), "-m", "compendium.pipeline.timings"],
        cwd=target,
        env=env,
        check=False,
    )
    return rc


def parse_log(text: str) -> dict:
    """Start, end (epoch seconds) and exit status of `dvc repro` from a run's log; the stages in the order
    DVC ran them; where it failed, the failing stage and its notebook's seconds (the runner's
    ``[nbrun] stage '<name>' (<scale>) done in <s> s`` line; 0 when the notebook itself did not finish)."""
    start = re.search(rf"^(?:{START}|start) (\d+)", text, re.M)
    end = re.search(rf"^(?:{END} (\d+) rc (-?\d+)|dvc_rc (-?\d+) end (\d+))", text, re.M)
    if not (start and end):
        raise SystemExit("the log has no start / end line: did `dvc repro` finish?")
    end_s, rc = (end.group(1), end.group(2)) if end.group(1) else (end.group(4), end.group(3))
    stages = re.findall(r"^Running stage '([^']+)'", text, re.M)
    out = {"start": int(start.group(1)), "end": int(end_s), "rc": int(rc), "stages": stages}
    failed = re.search(r"^ERROR: failed to reproduce '([^']+)'", text, re.M)
    if failed:
        done = re.search(rf"^\[nbrun\] stage '{re.escape(failed.group(1))}' \([^)]*\) done in ([\d.]+) s", text, re.M)
        out.update(failed_stage=failed.group(1), failed_seconds=float(done.group(1)) if done else 0.0)
    return out


def summarize(target: Path, logs: list[Path], note: str = "") -> dict:
    """The run's record: wall minutes (summed over the logs of a resumed run, less each failed attempt),
    the notebooks' minutes and the rest, per stage minutes."""
    parts = [parse_log(log.read_text()) for log in logs]
    if parts[-1]["rc"] != 0:
        raise SystemExit(f"the last part ended with exit status {parts[-1]['rc']}: resume it before summarizing")
    minutes = {
        k: float(v["minutes"]) for k, v in json.loads((target / "reports" / "stage_minutes.json").read_text()).items()
    }
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=target, capture_output=True, text=True
    ).stdout.strip()
    discarded = sum(p.get("failed_seconds", 0.0) for p in parts) / 60
    wall = sum(p["end"] - p["start"] for p in parts) / 60 - discarded
    rec = {
        "commit": commit,
        "rc": parts[-1]["rc"],
        "wall_minutes": round(wall, 1),
        "notebook_minutes": round(sum(minutes.values()), 1),
        "other_minutes": round(wall - sum(minutes.values()), 1),
        "parts": len(parts),
        "failed_attempts": [
            f"{p['failed_stage']} ({p['failed_seconds'] / 60:.1f} min, not counted)"
            for p in parts
            if "failed_stage" in p
        ],
        "stages_run": len({s for p in parts for s in p["stages"]}),
        "notebook_stages": len(minutes),
        "longest_stage": max(minutes, key=minutes.get),
        "longest_stage_minutes": max(minutes.values()),
        "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(parts[0]["start"])),
        "machine": f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}, Python "
        f"{sys.version.split()[0]}",
        "stage_minutes": dict(sorted(minutes.items(), key=lambda kv: -kv[1])),
    }
    if note:
        rec["note"] = note
    return rec


def markdown(rec: dict) -> str:
    lines = [
        "# `dvc repro` from scratch",
        "",
        f"A fresh clone of {rec['commit']} with an empty DVC cache, every stage run once, started "
        f"{rec['started']} on {rec['machine']}; written by `python benchmarks/repro_from_scratch.py`."
        + (f" {rec['note']}" if rec.get("note") else " Nothing else ran on the machine."),
        "",
        "| | minutes |",
        "|---|---:|",
        f"| `dvc repro`, wall time (exit status {rec['rc']}, {rec['stages_run']} stages"
        + (
            f"; {rec['parts']} parts, resumed after {', '.join(rec['failed_attempts'])}"
            if rec["failed_attempts"]
            else f"; {rec['parts']} parts"
            if rec["parts"] > 1
            else ""
        )
        + f") | {rec['wall_minutes']:.1f} |",
        f"| the {rec['notebook_stages']} notebooks (papermill's durations) | {rec['notebook_minutes']:.1f} |",
        f"| the rest (DVC's checks and hashing, notebook cleaning, kernel start-up) | {rec['other_minutes']:.1f} |",
        f"| longest stage: `{rec['longest_stage']}` | {rec['longest_stage_minutes']:.1f} |",
        "",
        "| stage | minutes |",
        "|---|---:|",
    ]
    lines += [f"| `{k}` | {v:.2f} |" for k, v in rec["stage_minutes"].items()]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--dir", type=Path, required=True)
    r.add_argument("--venv", type=Path, default=None)
    r.add_argument("--log", type=Path, default=Path("repro_from_scratch.log"))
    s = sub.add_parser("summarize")
    s.add_argument("--dir", type=Path, required=True)
    s.add_argument("--log", type=Path, nargs="+", required=True)
    s.add_argument("--note", default="", help="what else happened during the run (load beside it, interruptions)")
    a = ap.parse_args(argv)
    if a.cmd == "run":
        rc = run(a.dir.resolve(), a.venv.resolve() if a.venv else None, a.log.resolve())
        if rc:
            return rc
        a.log = [a.log.resolve()]
    rec = summarize(a.dir.resolve(), a.log, getattr(a, "note", ""))
    OUT.with_suffix(".json").write_text(json.dumps(rec, indent=1) + "\n")
    OUT.with_suffix(".md").write_text(markdown(rec))
    print(markdown(rec))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
