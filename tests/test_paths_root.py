"""Which project a stage works in: the one DVC runs it in."""

import os
import subprocess
import sys


def _root_seen(cwd, **env):
    e = {k: v for k, v in os.environ.items() if k not in ("COMPENDIUM_ROOT", "DVC_ROOT", "DVC_STAGE")}
    r = subprocess.run(
        [sys.executable, "-c", "from compendium.core import paths; print(paths.ROOT)"],
        cwd=cwd,
        env={**e, **env},
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_a_queued_experiment_reads_and_writes_its_own_copy_not_the_parent_repository(tmp_path):
    """``dvc exp run --queue`` runs each experiment in a temporary copy but sets DVC_ROOT to the parent repository:
    a stage command works in the copy it runs in, so two experiments side by side never share products."""
    parent, copy = tmp_path / "repo", tmp_path / "repo" / ".dvc" / "tmp" / "exps" / "tmpabc"
    for d in (parent, copy):
        (d / ".dvc").mkdir(parents=True, exist_ok=True)
        (d / "dvc.yaml").write_text("stages: {}\n")
    assert _root_seen(copy / ".dvc", DVC_ROOT=str(parent), DVC_STAGE="s") == str(copy.resolve())
    assert _root_seen(copy, DVC_ROOT=str(parent)) == str(parent.resolve())  # not a stage command: DVC_ROOT
    assert _root_seen(tmp_path, COMPENDIUM_ROOT=str(parent), DVC_ROOT=str(copy), DVC_STAGE="s") == str(parent.resolve())
