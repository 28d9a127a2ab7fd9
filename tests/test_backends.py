"""The backends of the one worker pool (compendium.core.backends): a stage's calls give the same results, in the
same order, on the local pool, one worker per GPU and submitit's jobs."""

import os

import pandas as pd
import pytest
import torch

from compendium.core import backends
from compendium.core.parallel import run_calls
from compendium.distill import runner, sets
from test_distill_runner import CFG, _toy

_STATE = {}


def _remember(value):
    _STATE["value"] = value


def _report(i):
    return i, _STATE.get("value"), torch.get_num_threads(), os.environ.get("CUDA_VISIBLE_DEVICES"), os.getpid()


def _fail_at(i, bad):
    if i == bad:
        raise ArithmeticError(f"call {i}")
    return i * i


@pytest.fixture
def submitit_here(tmp_path, monkeypatch):
    """The submitit backend with local jobs (subprocesses) in a temporary folder."""
    monkeypatch.setenv(backends.BACKEND_ENV, "submitit")
    monkeypatch.setenv(backends.SUBMITIT_ENV, f'{{"folder": "{tmp_path / "jobs"}", "cluster": "local"}}')
    return tmp_path


def test_the_backend_is_chosen_by_the_environment_and_a_bad_name_fails_before_any_call(monkeypatch):
    monkeypatch.delenv(backends.BACKEND_ENV, raising=False)
    assert backends.chosen() == "local"
    monkeypatch.setenv(backends.BACKEND_ENV, "ray")
    with pytest.raises(ValueError, match="COMPENDIUM_BACKEND='ray': choose one of local, gpus, submitit"):
        run_calls([(_report, (0,), {})], workers=0)
    monkeypatch.setenv(backends.BACKEND_ENV, "submitit")
    monkeypatch.setenv(backends.SUBMITIT_ENV, "{partition: gpu}")
    with pytest.raises(ValueError, match="COMPENDIUM_SUBMITIT is not JSON"):
        backends.submitit_settings()


def test_gpu_ids_follow_compendium_gpus_within_the_parents_visible_devices(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv(backends.GPUS_ENV, "0,1")
    assert backends.gpu_ids() == ["0", "1"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,6")
    assert backends.gpu_ids() == ["4", "6"]
    monkeypatch.setenv(backends.GPUS_ENV, "2")
    with pytest.raises(ValueError, match="shows 2 GPUs"):
        backends.gpu_ids()
    monkeypatch.setenv(backends.GPUS_ENV, "0,0")
    with pytest.raises(ValueError, match="distinct"):
        backends.gpu_ids()
    monkeypatch.delenv(backends.GPUS_ENV)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)
    with pytest.raises(RuntimeError, match="no GPU is visible; set COMPENDIUM_GPUS"):
        backends.gpu_ids()


def test_one_worker_per_gpu_each_sees_only_its_own_and_runs_the_initializer(monkeypatch):
    monkeypatch.setenv(backends.BACKEND_ENV, "gpus")
    monkeypatch.setenv(backends.GPUS_ENV, "0,1")  # ids only: no CUDA is touched by these calls
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    out = run_calls([(_report, (i,), {}) for i in range(6)], workers=0, initializer=_remember, initargs=("held",))
    assert [o[0] for o in out] == list(range(6)) and {o[1] for o in out} == {"held"} and {o[2] for o in out} == {1}
    by_pid = {}
    for o in out:
        by_pid.setdefault(o[4], set()).add(o[3])
    assert all(len(v) == 1 for v in by_pid.values())  # a worker keeps its GPU
    assert set().union(*by_pid.values()) <= {"0", "1"} and os.getpid() not in by_pid


def test_submitit_jobs_run_the_calls_in_subprocesses_in_order_with_resume(submitit_here):
    out = run_calls([(_report, (i,), {}) for i in range(3)], workers=0, initializer=_remember, initargs=("held",))
    assert [o[:3] for o in out] == [(i, "held", 1) for i in range(3)]
    assert os.getpid() not in {o[4] for o in out}
    stored = submitit_here / "resume"
    with pytest.raises(ArithmeticError, match="call 1"):
        run_calls([(_fail_at, (i, 1), {}) for i in range(3)], workers=2, resume_dir=stored)
    assert len(list(stored.glob("_fail_at-*.pt"))) == 2  # the two that finished are kept
    assert run_calls([(_fail_at, (i, 9), {}) for i in range(3)], workers=2, resume_dir=stored) == [0, 1, 4]


def _rows(workers):
    x, y = _toy()
    d = sets.from_real(x, y, torch.arange(0, 18, 2), 3, (0.3,), (0.3,), "random")
    jobs = [runner.Job({"method": "random", "k": k}, d, CFG, seed=k, cost=k) for k in range(3)]
    rows = pd.DataFrame(runner.evaluate_many(jobs, x, y, workers=workers))
    return rows.drop(columns=["seconds", "train seconds"])


def test_a_stages_rows_are_identical_on_every_backend(monkeypatch, tmp_path):
    monkeypatch.delenv(backends.BACKEND_ENV, raising=False)
    local = _rows(workers=2)
    here = _rows(workers=0)
    monkeypatch.setenv(backends.BACKEND_ENV, "gpus")
    monkeypatch.setenv(backends.GPUS_ENV, "0,1")
    gpus = _rows(workers=0)
    monkeypatch.setenv(backends.BACKEND_ENV, "submitit")
    monkeypatch.setenv(backends.SUBMITIT_ENV, f'{{"folder": "{tmp_path}", "cluster": "local"}}')
    jobs = _rows(workers=2)
    assert list(local["k"]) == [0, 1, 2]
    pd.testing.assert_frame_equal(local, gpus)
    pd.testing.assert_frame_equal(local, jobs)
    pd.testing.assert_frame_equal(local, here)
