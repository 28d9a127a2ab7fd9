"""A stage's products put in place as one step: all new, or (after any failure or kill) all old.

A stage writes its checkpoints and its pages into a staging folder; :func:`publish` then replaces the
previous products with them as a transaction with a journal, the way a database commits:

1. **prepare**: each new file is first placed beside its destination under a temporary name (renamed
   there when staging and destination share a filesystem, copied otherwise, so ``models/`` or ``build/``
   on another disk work), and the journal (``build/publish/<stage>.json``) lists every step. Nothing
   the reader sees has changed yet; a failure here removes the temporaries.
2. **swap**: each destination that exists is renamed to a backup beside it, and the new file renamed
   into its place; each stale product (one this run did not write) is renamed to a backup too.
3. **commit**: the journal is marked done, then the backups are deleted and the journal removed.

Any error during the swap rolls every step back (backups renamed into place, new files removed) and
raises :class:`PublishError`; a kill leaves the journal, and the next run of the stage finishes the
commit (if it was marked done) or rolls back (:func:`recover`) before it starts. Every rename is within
one folder, so each is atomic.

Example::

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "staged").mkdir(); _ = (root / "staged" / "a.txt").write_text("new")
    >>> out = root / "out"; out.mkdir(); _ = (out / "a.txt").write_text("old")
    >>> publish([(root / "staged" / "a.txt", out / "a.txt")], [], root / "journal.json")
    [PosixPath('.../out/a.txt')]
    >>> (out / "a.txt").read_text(), sorted(p.name for p in out.iterdir())
    ('new', ['a.txt'])
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import shutil
from pathlib import Path


class PublishError(RuntimeError):
    """The new products cannot be put in place; the previous ones are untouched (or were restored)."""


def _fsync_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _place_beside(src: Path, dst: Path, token: str) -> Path:
    """``src`` moved (or, across filesystems, copied) to a temporary name in ``dst``'s folder."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temporary(dst, token)
    try:
        os.replace(src, tmp)
    except OSError as e:
        if e.errno != errno.EXDEV:
            raise
        shutil.copy2(src, tmp)  # another filesystem: copy, then the swap renames within the destination's
    return tmp


def _temporary(dst: Path, token: str) -> Path:
    return dst.with_name(f".{dst.name}.new-{token}")


def _backup(dst: Path, token: str) -> Path:
    return dst.with_name(f".{dst.name}.old-{token}")


def _rollback(entries: list[dict]) -> list[str]:
    """Undo every swap that happened, whole or half (newest first), and remove every temporary; an entry tells
    its own state: a backup beside it was swapped out, a new file still under its temporary name was not swapped
    in. Returns what could not be undone."""
    left = []
    for e in reversed(entries):
        dst, bak, new = Path(e["dst"]), Path(e["backup"]), e.get("new")
        try:
            if bak.exists():
                os.replace(bak, dst)
            elif new is not None and not Path(new).exists():
                dst.unlink(missing_ok=True)  # swapped in, and no file was there before this publication
            if new is not None:
                Path(new).unlink(missing_ok=True)
        except OSError as err:
            left.append(f"{dst} ({err})")
    return left


def _swap(entries: list[dict], journal: Path) -> None:
    """Swap every entry in; on any error or interrupt roll back what was swapped."""
    done = 0
    try:
        for e in entries:
            dst, bak = Path(e["dst"]), Path(e["backup"])
            if dst.exists():
                os.replace(dst, bak)
            if e.get("new"):
                os.replace(e["new"], dst)
            done += 1
    except Exception as err:
        left = _rollback(entries)
        journal.unlink(missing_ok=True)
        detail = f"; could not restore: {', '.join(left)}" if left else "; the previous products are back in place"
        raise PublishError(f"publishing failed at {entries[done]['dst']} ({err}){detail}") from err


def publish(moves: list[tuple[Path, Path]], removals: list[Path], journal: Path) -> list[Path]:
    """Replace, as one step, each destination of ``moves`` ((new file, destination) pairs) by its new file and
    remove each file of ``removals``; return the destinations. See the module docstring for the guarantees."""
    token = secrets.token_hex(4)
    journal.parent.mkdir(parents=True, exist_ok=True)
    entries = [
        {"dst": str(d), "new": str(_temporary(Path(d), token)), "backup": str(_backup(Path(d), token))}
        for _, d in moves
    ] + [{"dst": str(f), "new": None, "backup": str(_backup(Path(f), token))} for f in removals]
    try:
        _fsync_write(journal, json.dumps({"state": "placing", "entries": entries}))
        for src, dst in moves:
            _place_beside(Path(src), Path(dst), token)
        _fsync_write(journal, json.dumps({"state": "swapping", "entries": entries}))
    except Exception as err:
        _remove_temporaries(entries)
        journal.unlink(missing_ok=True)
        raise PublishError(f"could not stage the new products beside their destinations ({err}); nothing replaced")
    _swap(entries, journal)
    try:
        _fsync_write(journal, json.dumps({"state": "done", "entries": entries}))
    except Exception as err:  # the commit mark cannot be written: back to the previous products
        left = _rollback(entries)
        journal.unlink(missing_ok=True)
        raise PublishError(f"could not commit the publication ({err}){'; ' + ', '.join(left) if left else ''}")
    _finish(entries)
    journal.unlink(missing_ok=True)
    return [Path(d) for _, d in moves]


def _remove_temporaries(entries: list[dict]) -> None:
    for e in entries:
        if e.get("new"):
            Path(e["new"]).unlink(missing_ok=True)


def _finish(entries: list[dict]) -> None:
    for e in entries:
        Path(e["backup"]).unlink(missing_ok=True)


def recover(journal: Path) -> str | None:
    """After a kill: finish a publication the journal marks done, or roll back one it does not. Returns what was
    done (``None`` when there was no journal)."""
    if not journal.is_file():
        return None
    try:
        state = json.loads(journal.read_text())
    except (OSError, ValueError):
        journal.unlink(missing_ok=True)
        return "an unreadable journal was removed"
    entries = state.get("entries", [])
    if state.get("state") == "placing":  # killed before anything was replaced
        _remove_temporaries(entries)
        journal.unlink(missing_ok=True)
        return "an interrupted publication had replaced nothing; its temporary files were removed"
    if state.get("state") == "done":
        _finish(entries)
        journal.unlink(missing_ok=True)
        return "a publication that had completed was cleaned up"
    left = _rollback(entries)  # interrupted while swapping: back to the previous products
    if left:
        raise PublishError(f"could not roll back an interrupted publication ({journal}): {', '.join(left)}")
    journal.unlink(missing_ok=True)
    return "an interrupted publication was rolled back: the previous products are in place"
