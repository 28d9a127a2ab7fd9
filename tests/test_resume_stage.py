"""A pipeline stage killed midway and started again resumes from the calls it had completed
(compendium.pipeline.nbrun's resume folder) and publishes the same numbers as an uninterrupted run."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import yaml
from conftest import requires_data

from compendium.core import paths, volatile

STAGE = "dd_labels"  # reads only data/, trains many students through runner.evaluate_many


def _project(root: Path) -> dict:
    """A project root that shares code, notebooks and data with this checkout, at smoke scale."""
    root.mkdir()
    for name in ("src", "notebooks", "data"):
        (root / name).symlink_to(paths.ROOT / name)
    (root / "dvc.yaml").write_text(paths.DVC_YAML.read_text())
    p = yaml.safe_load(paths.PARAMS.read_text())
    p["scale"] = "smoke"
    (root / "params.yaml").write_text(yaml.safe_dump(p, sort_keys=False))
    env = {**os.environ, "COMPENDIUM_ROOT": str(root), "PYTHONPATH": str(paths.SRC), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop(paths.OUTPUT_ROOT_ENV, None)
    return env


def _nbrun(root: Path, env: dict, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "compendium.pipeline.nbrun", STAGE, *extra],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _numbers(metrics: Path) -> dict:
    """The metrics without what an identical rerun does not reproduce (timings)."""

    def strip(d):
        if not isinstance(d, dict):
            return d
        drop = set(volatile.volatile_keys(d)) | {k for k in d if "images/s" in str(k)}
        return {k: strip(v) for k, v in d.items() if k not in drop}

    return strip(json.loads(metrics.read_text()))


def _kill_tree(run: subprocess.Popen) -> None:
    """SIGKILL the process group of ``run`` and of each process it started. jupyter_client starts the kernel
    in a session of its own, and the kernel's spawned evaluation workers are in the kernel's group: killing
    ``run``'s group alone leaves the kernel until it notices its parent gone, and leaves the workers orphaned,
    holding the output pipe (ProcessPoolExecutor workers do not watch their parent). A group signal reaches
    every member, including one being forked, so no worker started meanwhile escapes."""
    groups = {os.getpgid(run.pid)}
    for child in psutil.Process(run.pid).children(recursive=True):
        try:
            groups.add(os.getpgid(child.pid))
        except ProcessLookupError:
            pass
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            pass


@requires_data
@pytest.mark.slow
def test_a_killed_stage_resumes_from_its_completed_calls_to_the_same_metrics(tmp_path):
    root = tmp_path / "proj"
    env = _project(root)
    ref = _nbrun(root, env, "--output-root", str(tmp_path / "reference"))
    out, _ = ref.communicate(timeout=900)
    assert ref.returncode == 0, out[-4000:]
    reference = _numbers(tmp_path / "reference" / paths.METRICS / f"{STAGE}.json")

    run = _nbrun(root, env)
    resume_root = root / "build" / "resume" / STAGE
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and run.poll() is None and len(list(resume_root.glob("*/*.pt"))) < 2:
        time.sleep(0.2)
    assert run.poll() is None, "the stage finished before it could be interrupted"
    _kill_tree(run)  # the stage, its kernel and the kernel's workers, as a killed job
    run.communicate(timeout=120)
    done = len(list(resume_root.glob("*/*.pt")))
    assert done >= 2
    assert not (root / "reports" / paths.METRICS / f"{STAGE}.json").exists(), "a killed run published"
    assert (root / "build" / "locks" / f"{STAGE}.lock").exists()  # left by the killed process

    again = _nbrun(root, env)
    out, _ = again.communicate(timeout=900)
    assert again.returncode == 0, out[-4000:]
    assert f"resuming; {done} completed calls" in out
    assert _numbers(root / "reports" / paths.METRICS / f"{STAGE}.json") == reference
    assert not resume_root.exists(), "the resume folder outlived the published run"
