"""Where tensors run: ``auto`` picks CUDA when present (the local rank's GPU under ``torchrun``), else
the CPU; :func:`init_distributed` joins the process group when ``torchrun`` started the process."""

from __future__ import annotations

import os

import torch


#: oneDNN ISA caps (``ONEDNN_MAX_CPU_ISA``) below native bf16: under them bf16 kernels are emulated
_NO_BF16_ISA = {"SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX512_CORE", "AVX512_CORE_VNNI"}


def cpu_bf16_native() -> bool:
    """Whether this CPU runs bf16 matrix products natively: AMX or AVX512-BF16, as torch reports the CPU, and
    not capped below them by ``ONEDNN_MAX_CPU_ISA``. Where it does not, bf16 is emulated:
    ``benchmarks/bench_cpu_bf16.py`` measured the BYOL and SimCLR steps within about 15% of fp32 there (1.4-1.6x
    faster with native bf16) and a supervised ConvNet step up to 4.5x slower, so fp32 loses little time and keeps
    full precision."""
    cap = os.environ.get("ONEDNN_MAX_CPU_ISA", "").strip().upper()
    if cap in _NO_BF16_ISA:
        return False
    return bool(torch.cpu._is_amx_tile_supported() or torch.cpu._is_avx512_bf16_supported())


def pick_device(device: str = "auto") -> torch.device:
    if device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda", _local_rank()) if _distributed() else torch.device("cuda")
        return torch.device("cpu")
    return torch.device(device)


def _distributed() -> bool:
    return torch.distributed.is_available() and torch.distributed.is_initialized()


def _local_rank() -> int:
    return int(os.environ.get("LOCAL_RANK", 0))


def distributed_rank() -> tuple[int, int]:
    """(rank, world) of this process's group; (0, 1) outside ``torchrun`` (it joins nothing)."""
    if _distributed():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    return 0, 1


def sync_buffers(module: torch.nn.Module) -> None:
    """Under ``torchrun``: give every rank rank 0's buffers (BatchNorm running statistics, which each rank
    updates from its own slice of the batch), as DistributedDataParallel does before each forward; so an
    evaluation or a saved network is the same on every rank. Outside it: nothing."""
    if _distributed() and torch.distributed.get_world_size() > 1:
        for b in module.buffers():
            torch.distributed.broadcast(b, 0)


def init_distributed() -> tuple[int, int]:
    """Under ``torchrun``: join the process group (NCCL on CUDA, gloo on CPU); returns (rank, world)."""
    if "WORLD_SIZE" in os.environ and int(os.environ["WORLD_SIZE"]) > 1 and not _distributed():
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        if backend == "nccl":
            torch.cuda.set_device(_local_rank())
        torch.distributed.init_process_group(backend)
    return distributed_rank()
