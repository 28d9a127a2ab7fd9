"""Run one training call on several GPUs (or CPU processes) under ``torchrun``, from a single-process caller.

A stage's notebook runs in one process; its long trainings (the ``dd_teachers`` teachers, the BYOL priors)
support DistributedDataParallel when ``torchrun`` started the process (:func:`compendium.core.device.init_distributed`:
every rank draws the same global batch order and trains on its own slice of each batch; DDP averages the
gradients). :func:`call` bridges the two: it writes the call's arguments to a temporary folder, starts
``torchrun --standalone --nproc_per_node N -m compendium.core.launch FOLDER``, and returns rank 0's result.
Every rank stores its result; the caller checks that the ranks' networks ended with identical parameters (they
must, after DDP's all-reduce) and raises otherwise. With ``nproc`` 1 the function is called in this process.

Example::

    from compendium.core import launch
    from compendium.distill import evaluate as E
    r = launch.call(E.whole_dataset_upper_bound, (x, y, tx, ty, cfg, 0), dict(mean=m, std=s, return_model=True),
                    nproc=torch.cuda.device_count())
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

import torch
from torch import nn

from compendium.core.device import init_distributed


class LaunchError(RuntimeError):
    """A distributed call that failed or whose ranks disagree."""


def _name(fn: Callable) -> str:
    mod, qual = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not mod or "<" in qual or mod == "__main__":
        raise ValueError(f"{fn!r} cannot run under torchrun: pass a function importable by module and name")
    return f"{mod}:{qual}"


def _resolve(name: str) -> Callable:
    mod, qual = name.split(":")
    obj: Any = importlib.import_module(mod)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


def modules_of(result) -> dict[str, nn.Module]:
    """The networks in a call's result (the result itself, or the values of a dict), by key."""
    if isinstance(result, nn.Module):
        return {"": result}
    if isinstance(result, dict):
        return {k: v for k, v in result.items() if isinstance(v, nn.Module)}
    return {}


def ranks_agree(results: list) -> list[str]:
    """The networks (key, parameter) whose values differ between the ranks' results; [] when they agree."""
    out = []
    first = modules_of(results[0])
    for r in results[1:]:
        for key, net in modules_of(r).items():
            for (name, a), b in zip(first[key].state_dict().items(), net.state_dict().values()):
                if a.shape != b.shape or not torch.equal(a.cpu(), b.cpu()):
                    out.append(f"{key or 'result'}.{name}")
    return sorted(set(out))


def call(fn: Callable, args: tuple = (), kwargs: dict | None = None, nproc: int = 1, timeout: float | None = None):
    """``fn(*args, **kwargs)``; with ``nproc`` > 1 in ``nproc`` processes under ``torchrun`` (one per GPU where
    there are GPUs, gloo processes on the CPU otherwise), returning rank 0's result (moved to the CPU)."""
    kwargs = dict(kwargs or {})
    if nproc < 1:
        raise ValueError(f"nproc must be >= 1, got {nproc}")
    if nproc == 1:
        return fn(*args, **kwargs)
    if torch.cuda.is_available() and torch.cuda.device_count() < nproc:
        raise ValueError(f"nproc = {nproc} processes, but this machine has {torch.cuda.device_count()} GPU(s)")
    with tempfile.TemporaryDirectory(prefix="compendium-launch-") as tmp:
        torch.save({"fn": _name(fn), "args": args, "kwargs": kwargs}, Path(tmp) / "call.pt")
        env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
        cmd = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            f"--nproc_per_node={nproc}",
            "-m",
            "compendium.core.launch",
            tmp,
        ]
        r = subprocess.run(cmd, env=env, timeout=timeout)
        if r.returncode != 0:
            raise LaunchError(
                f"{_name(fn)} under torchrun ({nproc} processes) exited with {r.returncode}; its ranks' "
                "messages are above"
            )
        results = [torch.load(Path(tmp) / f"rank{k}.pt", weights_only=False) for k in range(nproc)]
    bad = ranks_agree(results)
    if bad:
        raise LaunchError(
            f"{_name(fn)}: the ranks ended with different parameters ({', '.join(bad[:5])}); "
            "the training loop did not synchronise them"
        )
    return results[0]


def _to_cpu(result):
    for net in modules_of(result).values():
        net.cpu()
    return result


def main(argv: list[str] | None = None) -> int:
    folder = Path((argv if argv is not None else sys.argv[1:])[0])
    spec = torch.load(folder / "call.pt", weights_only=False)
    rank, world = init_distributed()
    try:
        result = _resolve(spec["fn"])(*spec["args"], **spec["kwargs"])
        torch.save(_to_cpu(result), folder / f"rank{rank}.pt")
    finally:
        if world > 1:
            torch.distributed.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
