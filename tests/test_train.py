import pytest
import torch

from compendium.core import models
from compendium.rela import schedule as rela_schedule
from compendium.ssl import methods as M
from compendium.ssl import train


def views(x, g):
    """Two noisy flipped views (a stand-in for the batched augmentations)."""
    flip = torch.rand(x.shape[0], generator=g, device=x.device) < 0.5
    v1 = torch.where(flip.view(-1, 1, 1, 1), x.flip(-1), x)
    v2 = x + 0.05 * torch.randn(x.shape, generator=g, device=x.device)
    return v1, v2


def _data(n=64):
    g = torch.Generator().manual_seed(0)
    return torch.randint(0, 256, (n, 1, 12, 12), dtype=torch.uint8, generator=g)


def _byol(seed=0):
    torch.manual_seed(seed)
    return M.build("byol", models.convnet(1, 12, width=8, depth=2, norm="batch"), head_mult=1 / 32)


def _params(m):
    return torch.cat([p.detach().flatten() for p in m.parameters()])


def test_seeded_runs_are_identical_and_resume_matches(tmp_path):
    cfg = train.PretrainConfig(epochs=2, batch_size=16, budget=0.5, seed=3, device="cpu")
    a = _byol()
    ha = train.pretrain(a, _data(), cfg, views, 0.5, 0.25)
    b = _byol()
    train.pretrain(b, _data(), cfg, views, 0.5, 0.25)
    assert torch.equal(_params(a), _params(b))
    assert len(ha.steps) == 2 * 2 and len(ha.epochs) == 2
    # interrupted after one epoch, then resumed from the checkpoint
    ck = tmp_path / "ck.pt"
    c = _byol()
    train.pretrain(
        c,
        _data(),
        train.PretrainConfig(epochs=1, batch_size=16, budget=0.5, seed=3, device="cpu", checkpoint=str(ck)),
        views,
        0.5,
        0.25,
    )
    d = _byol()
    hd = train.pretrain(
        d,
        _data(),
        train.PretrainConfig(epochs=2, batch_size=16, budget=0.5, seed=3, device="cpu", checkpoint=str(ck)),
        views,
        0.5,
        0.25,
    )
    assert torch.equal(_params(a), _params(d))
    assert [s["loss"] for s in hd.steps] == [s["loss"] for s in ha.steps]


def test_rela_phase_then_ssl_phase_and_switch_logged():
    m = M.ReLA(_byol(), target_dim=4)
    targets = torch.randn(64, 4)
    sched = rela_schedule.make("epochs", w=0.5, epochs=4)
    h = train.pretrain(
        m,
        _data(),
        train.PretrainConfig(epochs=4, batch_size=16, device="cpu"),
        views,
        0.5,
        0.25,
        targets=targets,
        schedule=sched,
    )
    lams = [s["lam"] for s in h.steps]
    assert lams[:8] == [1.0] * 8 and lams[8:] == [0.0] * 8
    assert all("rela_loss" in s and "ssl_loss" not in s for s in h.steps[:8])
    assert all("ssl_loss" in s and "rela_loss" not in s for s in h.steps[8:])
    sw = rela_schedule.make("switch")
    h2 = train.pretrain(
        M.ReLA(_byol(), target_dim=4),
        _data(),
        train.PretrainConfig(epochs=1, batch_size=16, device="cpu"),
        views,
        0.5,
        0.25,
        targets=targets,
        schedule=sw,
    )
    assert h2.switch_step is None and all(s["lam"] == 1.0 for s in h2.steps)


def test_ddp_two_processes_on_cpu_agree(tmp_path):
    import os
    import subprocess
    import sys

    env = dict(os.environ, OMP_NUM_THREADS="1")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc_per_node",
            "2",
            "--master_port",
            "29533",
            "-m",
            "compendium.rela.ddp_check",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    a, b = torch.load(tmp_path / "rank0.pt"), torch.load(tmp_path / "rank1.pt")
    assert a["world"] == 2 and a["steps"] == 2 * 4
    for pa, pb in zip(a["params"], b["params"]):
        assert torch.allclose(pa, pb, atol=1e-6)


@pytest.mark.slow
def test_compiled_step_matches_eager_on_cpu():
    """torch.compile (the speed switch) trains the same model along the same loss trajectory."""
    cfg = dict(epochs=2, batch_size=16, budget=0.5, seed=3, device="cpu")
    a, b = _byol(), _byol()
    ha = train.pretrain(a, _data(), train.PretrainConfig(**cfg), views, 0.5, 0.25)
    hb = train.pretrain(b, _data(), train.PretrainConfig(**cfg, compile=True), views, 0.5, 0.25)
    # Compare the loss trajectories, not the weights: fused kernels round differently, and Adam turns
    # the rounding noise of exactly-zero gradients (conv biases before BN) into full +-lr steps.
    la, lb = torch.tensor([s["loss"] for s in ha.steps]), torch.tensor([s["loss"] for s in hb.steps])
    assert len(la) == 4 and torch.allclose(la, lb, rtol=1e-3, atol=1e-4), (la, lb)


def test_cpu_bf16_autocasts_the_step_only_when_asked(monkeypatch):
    """``cpu_bf16``: the CPU step runs under bf16 autocast (a different trajectory from fp32, still finite
    and seeded); without it the CPU runs fp32; CUDA autocasts either way."""
    monkeypatch.setattr(train, "cpu_bf16_native", lambda: True)  # as on the machines the lock was made on
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert not train.autocasts(cpu, train.PretrainConfig())
    assert train.autocasts(cpu, train.PretrainConfig(cpu_bf16=True))
    assert not train.autocasts(cpu, train.PretrainConfig(cpu_bf16=True, bf16=False))
    assert train.autocasts(cuda, train.PretrainConfig())
    runs = {}
    for key, bf in (("fp32", False), ("bf16", True), ("bf16 again", True)):
        m = _byol()
        cfg = train.PretrainConfig(epochs=1, batch_size=16, device="cpu", log_prefix="", cpu_bf16=bf)
        hist = train.pretrain(m, _data(), cfg, views, [0.5], [0.25])
        runs[key] = (hist.epochs[-1]["loss"], _params(m))
        assert all(p.dtype == torch.float32 for p in m.parameters())
    assert runs["bf16"][0] == runs["bf16 again"][0] and torch.equal(runs["bf16"][1], runs["bf16 again"][1])
    assert not torch.equal(runs["fp32"][1], runs["bf16"][1])
    assert abs(runs["fp32"][0] - runs["bf16"][0]) < 0.05 * abs(runs["fp32"][0]) + 0.05


def test_a_cpu_without_native_bf16_runs_fp32_whatever_cpu_bf16_says(monkeypatch, capsys):
    from compendium.core import device

    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "avx2")  # oneDNN capped below bf16: as on an AVX2-only laptop
    assert not device.cpu_bf16_native()
    monkeypatch.setattr(train, "_SAID", {"no native bf16": False})
    cpu, cfg = torch.device("cpu"), train.PretrainConfig(cpu_bf16=True)
    assert not train.autocasts(cpu, cfg) and not train.autocasts(cpu, cfg)
    assert capsys.readouterr().out.count("no native bf16") == 1  # said once
    assert train.autocasts(torch.device("cuda"), cfg)
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_AMX")
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: True)
    assert device.cpu_bf16_native()
