"""A damaged DVC cache object that ``dvc checkout`` restores is caught before the artifact is used."""

import os
import subprocess
import sys

import pytest

from compendium.core import integrity, paths


def _run(args, cwd):
    env = dict(
        os.environ,
        DVC_NO_ANALYTICS="1",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@t",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@t",
    )
    r = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


@pytest.mark.slow
def test_a_corrupted_cache_object_restored_by_checkout_is_refused(tmp_path, monkeypatch):
    proj = tmp_path / "p"
    proj.mkdir()
    _run(["git", "init", "-q"], proj)
    _run([sys.executable, "-m", "dvc", "init", "-q"], proj)
    make = (
        "import pathlib; d = pathlib.Path('models/x'); d.mkdir(parents=True); (d / 'a.pt').write_bytes(b'weights' * 9)"
    )
    _run(
        [sys.executable, "-m", "dvc", "stage", "add", "-q", "-n", "make", "-o", "models/x", f'python -c "{make}"'], proj
    )
    _run([sys.executable, "-m", "dvc", "repro", "-q"], proj)
    art = proj / "models" / "x" / "a.pt"
    integrity.verify(art, proj)  # as recorded
    # the cache object of a.pt is damaged on disk; dvc checkout --force restores it as it is
    obj = next(p for p in (proj / ".dvc" / "cache" / "files" / "md5").rglob("*") if p.is_file() and p.suffix != ".dir")
    os.chmod(obj, 0o644)
    obj.write_bytes(b"damaged" * 9)
    art.unlink()
    _run([sys.executable, "-m", "dvc", "checkout", "--force", "-q"], proj)
    assert art.read_bytes() == b"damaged" * 9
    with pytest.raises(integrity.IntegrityError, match="a.pt is not the file dvc.lock recorded"):
        integrity.verify(art, proj)
    # find_artifact, which every stage reads its upstream artifacts through, checks it too
    monkeypatch.setattr(paths, "ROOT", proj)
    monkeypatch.setenv(paths.MODELS_ROOT_ENV, str(proj / "models"))
    with pytest.raises(integrity.IntegrityError):
        paths.find_artifact("x/a.pt")


def test_a_file_no_recorded_output_covers_is_not_checked(tmp_path):
    (tmp_path / "dvc.lock").write_text("stages: {}\n")
    (tmp_path / "f.pt").write_bytes(b"x")
    integrity.verify(tmp_path / "f.pt", tmp_path)
    assert integrity.recorded_md5(tmp_path / "f.pt", tmp_path) is None
