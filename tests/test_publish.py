"""A stage's products are published as one step: after a failure or a kill at any rename they are all old
(or, once committed, all new), with no temporary or backup file left behind."""

import errno
import os

import pytest

from compendium.pipeline import publish as P

OLD = {"models/t/a.pt": "old a", "reports/s/b.csv": "old b", "reports/s/stale.csv": "old c"}
NEW = {"models/t/a.pt": "new a", "reports/s/b.csv": "new b", "reports/s/d.png": "new d"}


def _scene(tmp_path):
    root, staging = tmp_path / "root", tmp_path / "staging"
    for rel, text in OLD.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    for rel, text in NEW.items():
        (staging / rel).parent.mkdir(parents=True, exist_ok=True)
        (staging / rel).write_text(text)
    moves = [(staging / rel, root / rel) for rel in NEW]
    return root, moves, [root / "reports/s/stale.csv"], tmp_path / "journal.json"


def _state(root):
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def _count_renames(tmp_path):
    root, moves, removals, journal = _scene(tmp_path / "count")
    calls = []
    real = os.replace
    P.os.replace = lambda a, b: calls.append(1) or real(a, b)
    try:
        P.publish(moves, removals, journal)
    finally:
        P.os.replace = real
    return len(calls)


def test_a_publication_puts_every_new_file_in_place_and_removes_the_stale_ones(tmp_path):
    root, moves, removals, journal = _scene(tmp_path)
    P.publish(moves, removals, journal)
    assert _state(root) == NEW and not journal.exists()


def _failing_replace(k, exc):
    real, n = os.replace, [0]

    def replace(a, b):
        n[0] += 1
        if n[0] == k:
            raise exc
        return real(a, b)

    return replace


def test_a_failure_at_any_rename_leaves_every_old_product_in_place(tmp_path, monkeypatch):
    for k in range(1, _count_renames(tmp_path) + 1):
        root, moves, removals, journal = _scene(tmp_path / f"k{k}")
        monkeypatch.setattr(P.os, "replace", _failing_replace(k, OSError(errno.EPERM, "immutable")))
        with pytest.raises(P.PublishError):
            P.publish(moves, removals, journal)
        monkeypatch.undo()
        assert _state(root) == OLD, k  # all old, nothing half-published, no temporary left
        assert not journal.exists()


def test_a_kill_at_any_rename_is_rolled_back_or_finished_by_the_next_run(tmp_path, monkeypatch):
    for k in range(1, _count_renames(tmp_path) + 1):
        root, moves, removals, journal = _scene(tmp_path / f"k{k}")
        monkeypatch.setattr(P.os, "replace", _failing_replace(k, KeyboardInterrupt()))
        with pytest.raises(KeyboardInterrupt):
            P.publish(moves, removals, journal)
        monkeypatch.undo()
        P.recover(journal)  # the next run of the stage starts with this
        assert _state(root) in (OLD, NEW), k
        assert not journal.exists() and P.recover(journal) is None


def test_a_kill_after_the_commit_is_finished_by_the_next_run(tmp_path, monkeypatch):
    root, moves, removals, journal = _scene(tmp_path)
    monkeypatch.setattr(P, "_finish", lambda entries: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        P.publish(moves, removals, journal)
    monkeypatch.undo()
    assert "completed" in P.recover(journal)
    assert _state(root) == NEW


def test_destinations_on_another_filesystem_are_copied_then_swapped(tmp_path, monkeypatch):
    root, moves, removals, journal = _scene(tmp_path)
    staging = moves[0][0].parents[2]
    real = os.replace

    def replace(a, b):  # a rename out of the staging folder crosses devices, as onto a scratch disk
        if staging in type(staging)(a).parents:
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real(a, b)

    monkeypatch.setattr(P.os, "replace", replace)
    P.publish(moves, removals, journal)
    assert _state(root) == NEW
