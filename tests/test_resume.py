"""Resuming an interrupted stage (compendium.core.resume through compendium.core.parallel.run_calls and
compendium.distill.runner.evaluate_many): only the calls not finished run again, to the same results."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from compendium.core import resume
from compendium.core.parallel import run_calls
from compendium.distill import runner, sets
from test_distill_runner import CFG, _toy  # the same toy set and student


def _job(i: int, log: str, scale: float = 1.0) -> dict:
    """A seeded result; records that it ran (a file in ``log``); call 2 fails while ``log``/fail exists
    (an interruption: the failure is outside the arguments, so the rerun asks for the same call)."""
    Path(log, f"ran-{i}-{os.getpid()}-{len(os.listdir(log))}").touch()
    if i == 2 and Path(log, "fail").exists():
        raise RuntimeError("interrupted")
    g = torch.Generator().manual_seed(i)
    return {"i": i, "x": scale * torch.randn(5, generator=g), "mean": float(torch.rand(1, generator=g))}


def _ran(log: Path) -> list[int]:
    out = sorted(int(p.name.split("-")[1]) for p in log.glob("ran-*"))
    for p in log.glob("ran-*"):
        p.unlink()
    return out


def _same(a: list[dict], b: list[dict]) -> bool:
    return len(a) == len(b) and all(
        x.keys() == y.keys() and all(torch.equal(x[k], y[k]) if torch.is_tensor(x[k]) else x[k] == y[k] for k in x)
        for x, y in zip(a, b)
    )


@pytest.mark.parametrize("workers", [0, 2])
def test_an_interrupted_call_list_resumes_at_the_missing_calls_to_the_same_results(tmp_path, workers):
    log, store = tmp_path / "log", tmp_path / "resume"
    log.mkdir()
    calls = [(_job, (i, str(log)), {"scale": 2.0}) for i in range(5)]
    reference = run_calls(calls, workers=0)
    _ran(log)

    (log / "fail").touch()
    with pytest.raises(RuntimeError, match="interrupted"):
        run_calls(calls, workers=workers, costs=[5, 4, 3, 2, 1], resume_dir=store)
    stored = sorted(p.name for p in store.iterdir())
    # a failed call stores nothing (no partial or temporary file); with workers the others still finish
    assert all(p.endswith(".pt") for p in stored)
    assert len(stored) == (2 if workers == 0 else 4)
    ran_first = _ran(log)

    (log / "fail").unlink()
    again = run_calls(calls, workers=workers, costs=[5, 4, 3, 2, 1], resume_dir=store)
    assert _ran(log) == sorted(set(range(5)) - ({0, 1} if workers == 0 else {0, 1, 3, 4}))
    assert ran_first == ([0, 1, 2] if workers == 0 else [0, 1, 2, 3, 4])
    assert _same(again, reference)
    # a third run computes nothing and still gives the same results
    assert _same(run_calls(calls, workers=workers, resume_dir=store), reference) and _ran(log) == []
    # resume off: as without the mechanism, nothing stored
    if workers == 0:
        assert _same(run_calls(calls, workers=0), reference) and _ran(log) == [0, 1, 2, 3, 4]


def test_results_stored_with_workers_are_the_results_without_and_the_keys_do_not_depend_on_workers(tmp_path):
    log = tmp_path / "log"
    log.mkdir()
    calls = [(_job, (i, str(log)), {}) for i in range(4)]
    pooled = run_calls(calls, workers=2, resume_dir=tmp_path / "a")
    here = run_calls(calls, workers=0, resume_dir=tmp_path / "b")
    assert _same(pooled, here)
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == sorted(p.name for p in (tmp_path / "b").iterdir())
    _ran(log)
    assert _same(run_calls(calls, workers=0, resume_dir=tmp_path / "a"), pooled) and _ran(log) == []


def test_changing_an_argument_changes_the_key():
    x = torch.arange(12.0).reshape(3, 4)
    base = resume.call_key(_job, (1, "log"), {"scale": 1.0, "t": x}, context=("test", x))
    y = x.clone()
    y[2, 3] += 1e-6
    others = [
        resume.call_key(_job, (2, "log"), {"scale": 1.0, "t": x}, context=("test", x)),
        resume.call_key(_job, (1, "log"), {"scale": 1.5, "t": x}, context=("test", x)),
        resume.call_key(_job, (1, "log"), {"scale": 1.0, "t": y}, context=("test", x)),
        resume.call_key(_job, (1, "log"), {"scale": 1.0, "t": x.double()}, context=("test", x)),
        resume.call_key(_job, (1, "log"), {"scale": 1.0, "t": x.reshape(4, 3)}, context=("test", x)),
        resume.call_key(_job, (1, "log"), {"scale": 1.0, "t": x}, context=("test", y)),
        resume.call_key(_ran, (1, "log"), {"scale": 1.0, "t": x}, context=("test", x)),
        resume.call_key(_job, (1, "log"), {"scale": 1.0}, context=("test", x)),
    ]
    assert len({base, *others}) == len(others) + 1
    # the same call: equal values in other memory, keyword order, a non-contiguous tensor of equal values
    t = torch.arange(12.0).reshape(4, 3).t()
    assert resume.call_key(_job, (1, "log"), {"t": x.clone(), "scale": 1.0}, context=("test", x.clone())) == base
    assert resume.digest(t) == resume.digest(t.contiguous())
    with pytest.raises(ValueError, match="resume key.*_job.*pickle"):
        resume.call_key(_job, (lambda: 0,), {})


def test_the_key_is_the_same_in_another_process_with_another_string_hash_seed():
    code = (
        "import torch; from compendium.core import resume; "
        "print(resume.call_key(resume.digest, ({'b', 'a', 'c'}, torch.ones(3)), {'k': frozenset({'x', 'y'})}))"
    )
    keys = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        keys.add(
            subprocess.run(
                [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
            ).stdout.strip()
        )
    assert len(keys) == 1 and len(keys.pop()) == 64


def test_a_corrupt_or_foreign_stored_result_is_ignored_and_recomputed(tmp_path):
    log, store = tmp_path / "log", tmp_path / "resume"
    log.mkdir()
    calls = [(_job, (i, str(log)), {}) for i in range(2)]
    reference = run_calls(calls, workers=0, resume_dir=store)
    _ran(log)
    p0 = resume.path_for(store, _job, resume.call_key(_job, *calls[0][1:], context=resume.digest((None, ()))))
    p1 = resume.path_for(store, _job, resume.call_key(_job, *calls[1][1:], context=resume.digest((None, ()))))
    assert p0.is_file() and p1.is_file()
    p0.write_bytes(p0.read_bytes()[:40])  # truncated, as by a full disk
    resume.store(store, _job, "another", {"i": 99}).replace(p1)  # a file that holds another call's result
    with pytest.warns(RuntimeWarning, match=r"ignoring the stored result .*_job-"):
        again = run_calls(calls, workers=0, resume_dir=store)
    assert _same(again, reference) and _ran(log) == [0, 1]
    # the recomputed results replaced the bad files
    assert _same(run_calls(calls, workers=0, resume_dir=store), reference) and _ran(log) == []


def test_the_resume_folder_comes_from_the_environment_when_not_given(monkeypatch, tmp_path):
    monkeypatch.delenv(resume.RESUME_ENV, raising=False)
    assert resume.env_dir() is None
    monkeypatch.setenv(resume.RESUME_ENV, str(tmp_path / "stage"))
    assert resume.env_dir() == tmp_path / "stage"


def test_evaluate_many_resumes_from_stored_rows_with_any_number_of_workers(tmp_path, monkeypatch):
    monkeypatch.delenv(resume.RESUME_ENV, raising=False)
    x, y = _toy()
    d = sets.from_real(x, y, torch.arange(0, 18, 2), 3, (0.3,), (0.3,), "random")
    jobs = [runner.Job({"method": "random", "k": k}, d, CFG, seed=k, cost=k) for k in range(3)]
    plain = runner.evaluate_many(jobs, x, y, workers=0)
    first = runner.evaluate_many(jobs[:2], x, y, workers=2, resume_dir=tmp_path / "r")  # interrupted after 2
    assert len(list((tmp_path / "r").iterdir())) == 2
    monkeypatch.setenv(resume.RESUME_ENV, str(tmp_path / "r"))
    rows = runner.evaluate_many(jobs, x, y, workers=0)
    assert rows[:2] == first  # stored rows, timings included: not trained again
    drop = ("seconds", "train seconds")
    assert [{k: v for k, v in r.items() if k not in drop} for r in rows] == [
        {k: v for k, v in r.items() if k not in drop} for r in plain
    ]
    assert len(list((tmp_path / "r").iterdir())) == 3
    # another test set is another call
    runner.evaluate_many(jobs[:1], x[:9], y[:9], workers=0)
    assert len(list((tmp_path / "r").iterdir())) == 4
