"""A published artifact is the one ``dvc.lock`` recorded, checked before it is used.

DVC records each stage output's hash in ``dvc.lock``; for a folder (``models/priors``) that hash names a
manifest in DVC's cache listing every file's md5. A file that no longer matches (a damaged cache object
that ``dvc checkout`` restored, a file edited or replaced by hand) would otherwise be loaded as if it
were the stage's product. :func:`verify` compares a file with its recorded md5 and raises
:class:`IntegrityError` naming it and the fix; a file that no recorded output covers, or whose manifest
the cache does not hold (a clone without the cache, the faithful profile's own folder), is not checked.
:func:`compendium.core.paths.find_artifact` calls it for every published artifact it returns.

Example::

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp()); (root / "models").mkdir()
    >>> _ = (root / "models" / "a.pt").write_bytes(b"weights")
    >>> md5 = file_md5(root / "models" / "a.pt")
    >>> _ = (root / "dvc.lock").write_text(f"stages:\\n  s:\\n    outs:\\n    - path: models/a.pt\\n      md5: {md5}")
    >>> verify(root / "models" / "a.pt", root)
    >>> _ = (root / "models" / "a.pt").write_bytes(b"damaged")
    >>> verify(root / "models" / "a.pt", root)
    Traceback (most recent call last):
    ...
    compendium.core.integrity.IntegrityError: .../models/a.pt is not the file dvc.lock recorded ...
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

import yaml


class IntegrityError(RuntimeError):
    """A published artifact differs from what ``dvc.lock`` recorded."""


def file_md5(path: Path, chunk: int = 1 << 22) -> str:
    h = hashlib.md5()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


@lru_cache(maxsize=8)
def _lock_outs(lock: Path, mtime: float) -> dict[str, str]:
    """``dvc.lock``'s outputs: path (relative to the root) -> md5 (a folder's ends in ``.dir``)."""
    stages = (yaml.safe_load(lock.read_text()) or {}).get("stages", {})
    return {o["path"]: o["md5"] for s in stages.values() for o in s.get("outs", []) if o.get("md5")}


def _cache_dir(root: Path) -> Path:
    """DVC's cache: ``cache.dir`` of ``.dvc/config`` (relative to ``.dvc/``) where set, else ``.dvc/cache``."""
    config = root / ".dvc" / "config"
    if config.is_file():
        section = None
        for line in config.read_text().splitlines():
            s = line.strip()
            if s.startswith("["):
                section = s.strip("[]").strip().strip("'\"")
            elif section == "cache" and s.replace(" ", "").startswith("dir="):
                return (root / ".dvc" / s.split("=", 1)[1].strip()).resolve()
    return root / ".dvc" / "cache"


def recorded_md5(file: Path, root: Path) -> str | None:
    """The md5 that ``dvc.lock`` recorded for ``file`` (through the folder's manifest in the cache), or ``None``
    where no recorded output covers it or the cache lacks the manifest."""
    lock = root / "dvc.lock"
    if not lock.is_file():
        return None
    try:
        rel = Path(file).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None
    for out, md5 in _lock_outs(lock, lock.stat().st_mtime).items():
        if rel == out and not md5.endswith(".dir"):
            return md5
        if rel.startswith(out.rstrip("/") + "/") and md5.endswith(".dir"):
            manifest = _cache_dir(root) / "files" / "md5" / md5[:2] / md5[2:]
            if not manifest.is_file():
                return None
            inner = rel[len(out.rstrip("/")) + 1 :]
            return next((e["md5"] for e in json.loads(manifest.read_text()) if e.get("relpath") == inner), None)
    return None


@lru_cache(maxsize=512)
def _checked(file: str, mtime_ns: int, size: int, root: str) -> None:
    expected = recorded_md5(Path(file), Path(root))
    if expected is None:
        return
    actual = file_md5(Path(file))
    if actual != expected:
        raise IntegrityError(
            f"{file} is not the file dvc.lock recorded (md5 {actual}, recorded {expected}): a damaged DVC cache "
            "object or a file changed by hand. Rerun the stage that makes it (`dvc repro --force <stage>`), or "
            "restore it from a good copy of the cache (`dvc checkout --force`)"
        )


def verify(file: Path, root: Path) -> None:
    """Raise :class:`IntegrityError` when ``file`` differs from the md5 ``dvc.lock`` recorded for it (checked once
    per file version)."""
    file = Path(file)
    if file.is_file():
        st = file.stat()
        _checked(str(file), st.st_mtime_ns, st.st_size, str(root))
