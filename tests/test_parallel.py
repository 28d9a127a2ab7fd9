"""The one worker pool (compendium.core.parallel)."""

import math
import os

import pytest
import torch

from compendium.core.parallel import run_calls

_STATE = {}


def _remember(value):
    _STATE["value"] = value


def _report(i):
    return i, _STATE.get("value"), torch.get_num_threads(), os.getpid()


def test_results_come_in_call_order_from_single_threaded_workers_with_the_initializer():
    out = run_calls(
        [(_report, (i,), {}) for i in range(4)],
        workers=2,
        costs=[0, 3, 1, 2],
        initializer=_remember,
        initargs=("held",),
    )
    assert [o[0] for o in out] == [0, 1, 2, 3]
    assert all(o[1] == "held" and o[2] == 1 for o in out)
    assert all(o[3] != os.getpid() for o in out)


def test_zero_workers_run_here_and_functions_are_called_with_args_and_kwargs():
    assert run_calls([(math.pow, (2.0, 3.0), {}), (round, (2.567,), {"ndigits": 1})], workers=0) == [8.0, 2.6]
    assert run_calls([(_report, (0,), {})], workers=0)[0][3] == os.getpid()


def test_a_call_that_is_not_a_function_fails_before_any_work():
    with pytest.raises(ValueError, match="call 1 is not"):
        run_calls([(math.sqrt, (4.0,), {}), ("sqrt", (4.0,), {})], workers=2)
    with pytest.raises(ValueError, match="workers"):
        run_calls([], workers=-1)
    with pytest.raises(ValueError, match="costs"):
        run_calls([(math.sqrt, (4.0,), {})], costs=[1, 2])


def _fail_odd(i):
    if i % 2:
        raise ArithmeticError(f"call {i}")
    return i


def test_with_a_resume_folder_the_first_failure_in_call_order_is_raised_after_the_rest_are_stored(tmp_path):
    with pytest.raises(ArithmeticError, match="call 1"):
        run_calls([(_fail_odd, (i,), {}) for i in range(5)], workers=2, costs=[0, 0, 0, 9, 0], resume_dir=tmp_path)
    assert len(list(tmp_path.glob("_fail_odd-*.pt"))) == 3 and len(list(tmp_path.iterdir())) == 3
    # no folder: no file anywhere, the same results as before
    assert run_calls([(_fail_odd, (i,), {}) for i in (0, 2, 4)], workers=0) == [0, 2, 4]
    assert run_calls([(_fail_odd, (i,), {}) for i in (0, 2, 4)], workers=0, resume_dir=tmp_path) == [0, 2, 4]


def _local_result(i):
    return lambda: i  # does not pickle


def test_calls_that_cannot_be_kept_for_resume_still_run(tmp_path):
    with pytest.warns(RuntimeWarning, match="without resume"):  # an argument that does not pickle
        assert run_calls([(len, ([lambda: 0],), {})], workers=0, resume_dir=tmp_path) == [1]
    with pytest.warns(RuntimeWarning, match="not kept for resume"):
        out = run_calls([(_local_result, (4,), {})], workers=0, resume_dir=tmp_path)
    assert out[0]() == 4 and not list(tmp_path.glob("*.pt"))
