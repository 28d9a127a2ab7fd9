"""Resume a long stage from its last completed call: each call's result is stored, atomically, under a
key derived from the call, and the same call asked again returns the stored result instead of running.
:func:`compendium.core.parallel.run_calls` uses it when given a ``resume_dir``.

What counts as the same call (:func:`call_key`): the same function (its module and qualified name;
its code is *not* part of the key) with arguments and keyword arguments that pickle to the same bytes,
every tensor among them counted by its type, dtype, shape, ``requires_grad`` and values (wherever it
lives and however it is laid out in memory), sets by their sorted elements, plus a ``context`` the
caller adds (what a worker initializer sets up, e.g. a test set, which the arguments do not carry).
Equal objects that pickle differently (a dict built in another order, one object passed twice where
another run passed two equal copies) give another key: the call is then run again, never a wrong
result returned. A folder of results belongs to one version of the code: clear it after a change.

Storage: ``<dir>/<function>-<sha256>.pt`` (``torch.save`` of the key, the function's name and the
result), written to a temporary file and renamed, so an interruption never leaves half a result under
a key; a failed call writes nothing. A stored file that does not load or holds another key is ignored
with a warning (and replaced when the call runs again).

Nothing is unpickled that this machine's runs did not write: a result can be any Python object, so it is
stored with pickle (``torch.load(weights_only=True)`` cannot read a DataFrame), and every stored file
carries an HMAC-SHA256 tag under a key that lives outside the project (:func:`signing_key`). A file
without a valid tag (planted, copied from another machine, or damaged) is refused before it is
unpickled, with a warning naming it, and the call runs again (:func:`save_signed`, :func:`load_signed`;
the per-epoch training checkpoints use the same pair).

The folder: an explicit one, else the environment variable ``COMPENDIUM_RESUME_DIR`` (:func:`env_dir`),
which a stage runner sets for the notebook's kernel, e.g. ``build/resume/<stage>/<fingerprint>``.

Within one long call (a training run) :func:`checkpoint_file` names the per-epoch checkpoint that
:func:`compendium.ssl.train.pretrain` resumes from exactly, so an interrupted call goes on from its
last completed epoch rather than from zero.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import os
import pickle
import re
import tempfile
import warnings
from pathlib import Path
from typing import Any, Callable

import torch

RESUME_ENV = "COMPENDIUM_RESUME_DIR"
_FORMAT = "compendium.core.resume/1"
KEY_ENV = "COMPENDIUM_SIGNING_KEY"  # a file holding the key; default: ~/.cache/compendium/signing.key
_MAGIC = b"compendium-signed/1\n"
_TAG = 32  # bytes of an HMAC-SHA256 tag


class UntrustedFile(ValueError):
    """A stored file without a valid tag under this machine's key: it is never unpickled."""


def signing_key() -> bytes:
    """This machine's key for the stored results' tags: the file named by ``COMPENDIUM_SIGNING_KEY``, else
    ``$XDG_CACHE_HOME/compendium/signing.key`` (``~/.cache/...``), made on first use (32 random bytes, readable
    by its owner only). It lives outside the project, so a project folder copied or downloaded from elsewhere
    brings resume files this machine refuses."""
    env = os.environ.get(KEY_ENV, "").strip()
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    path = Path(env) if env else cache / "compendium" / "signing.key"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(os.urandom(32))
        except FileExistsError:  # another process made it first
            pass
    key = path.read_bytes()
    if len(key) < 16:
        raise UntrustedFile(f"the signing key {path} is shorter than 16 bytes: delete it (a new one is made)")
    return key


def save_signed(obj: Any, path: str | os.PathLike) -> Path:
    """``torch.save`` of ``obj`` to ``path`` with this machine's tag, atomically (a temporary file, renamed)."""
    buf = io.BytesIO()
    torch.save(obj, buf)
    payload = buf.getvalue()
    tag = hmac.new(signing_key(), payload, hashlib.sha256).digest()
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=p.name + ".", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(_MAGIC + tag + payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return p


def load_signed(path: str | os.PathLike, map_location: Any = "cpu") -> Any:
    """What :func:`save_signed` stored at ``path``; :class:`UntrustedFile` (before any unpickling) when its tag
    is missing or does not match this machine's key."""
    raw = Path(path).read_bytes()
    head, tag, payload = raw[: len(_MAGIC)], raw[len(_MAGIC) : len(_MAGIC) + _TAG], raw[len(_MAGIC) + _TAG :]
    if head != _MAGIC or len(tag) != _TAG:
        raise UntrustedFile(f"{path} carries no tag of this project's runs: it is not loaded")
    if not hmac.compare_digest(tag, hmac.new(signing_key(), payload, hashlib.sha256).digest()):
        raise UntrustedFile(f"{path}: its tag does not match this machine's key (written elsewhere, or damaged)")
    # the tag is ours: this machine's own run wrote these bytes (a result may be any object, so not weights_only)
    return torch.load(io.BytesIO(payload), map_location=map_location, weights_only=False)


class _Missing:
    """The marker :func:`load` returns for a call with no usable stored result."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()


def env_dir() -> Path | None:
    """The folder named by ``COMPENDIUM_RESUME_DIR``, or None (resume off) when it is unset or empty."""
    v = os.environ.get(RESUME_ENV, "").strip()
    return Path(v) if v else None


def checkpoint_file(name: str) -> str:
    """The per-epoch checkpoint of the training ``name`` (unique within the stage run) in the resume
    folder, ``""`` (no checkpoint) when resume is off: the value of ``PretrainConfig.checkpoint``."""
    folder = env_dir()
    if folder is None:
        return ""
    (folder / "checkpoints").mkdir(parents=True, exist_ok=True)
    return str(folder / "checkpoints" / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)[:120]}.ckpt")


def _tensor_bytes(t: torch.Tensor) -> bytes:
    t = t.detach()
    if t.layout != torch.strided:
        t = t.to_dense()
    t = t.cpu().contiguous()
    if t.is_quantized:
        t = t.int_repr()
    if t.is_complex():
        t = torch.view_as_real(t).contiguous()
    return t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""


class _KeyPickler(pickle._Pickler):
    """Pickles for a key: tensors by type, dtype, shape, ``requires_grad`` and a digest of their values;
    sets and frozensets by their elements in a stable order (the digest of each), as string hashing
    differs between processes. (The pure-Python pickler: the C one skips ``reducer_override`` for sets.)"""

    def persistent_id(self, obj: Any):
        if isinstance(obj, torch.Tensor):
            return (
                "tensor",
                type(obj).__module__ + "." + type(obj).__qualname__,
                str(obj.dtype),
                tuple(obj.shape),
                bool(obj.requires_grad),
                hashlib.sha256(_tensor_bytes(obj)).hexdigest(),
            )
        return None

    def reducer_override(self, obj: Any):
        if type(obj) in (set, frozenset):
            return type(obj), (sorted(obj, key=digest),)
        return NotImplemented


def digest(obj: Any) -> str:
    """A sha256 hex digest of ``obj`` as the module docstring says a call's arguments are counted."""
    buf = io.BytesIO()
    _KeyPickler(buf, protocol=4).dump(obj)
    return hashlib.sha256(buf.getvalue()).hexdigest()


def function_name(fn: Callable) -> str:
    """``module.qualname`` of ``fn`` (for a callable without them, its type's)."""
    mod = getattr(fn, "__module__", None) or type(fn).__module__
    qual = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return f"{mod}.{qual}"


def call_key(fn: Callable, args: tuple, kwargs: dict, context: Any = None) -> str:
    """The key of the call ``fn(*args, **kwargs)`` made with ``context`` set up (module docstring).
    :func:`~compendium.core.parallel.run_calls` passes the :func:`digest` of its context, made once."""
    try:
        return digest((_FORMAT, function_name(fn), fn, tuple(args), sorted(kwargs.items()), context))
    except Exception as e:
        raise ValueError(
            f"cannot derive a resume key for a call of {function_name(fn)}: its arguments do not "
            f"pickle ({type(e).__name__}: {e}). Pass module-level functions and picklable "
            f"arguments, or run without a resume folder"
        ) from e


def path_for(folder: str | os.PathLike, fn: Callable, key: str) -> Path:
    """Where the result of the call with ``key`` is stored under ``folder``."""
    name = re.sub(r"[^A-Za-z0-9_.]+", "_", function_name(fn).rsplit(".", 1)[-1])[:60]
    return Path(folder) / f"{name}-{key}.pt"


def load(folder: str | os.PathLike, fn: Callable, key: str) -> Any:
    """The stored result of the call with ``key``, or :data:`MISSING` (none stored, or a file that does
    not load or holds another call: a warning names it, and the call runs again)."""
    p = path_for(folder, fn, key)
    if not p.is_file():
        return MISSING
    try:
        stored = load_signed(p)
        if not (isinstance(stored, dict) and stored.get("format") == _FORMAT and stored.get("key") == key):
            raise ValueError("it holds another call's result or another format")
    except Exception as e:
        warnings.warn(
            f"ignoring the stored result {p} ({type(e).__name__}: {str(e):.200}); the call runs again and replaces it",
            RuntimeWarning,
            stacklevel=2,
        )
        return MISSING
    return stored["result"]


def store(folder: str | os.PathLike, fn: Callable, key: str, result: Any) -> Path:
    """Store ``result`` as the call with ``key``'s, atomically (a temporary file in the folder, renamed)."""
    return save_signed(
        {"format": _FORMAT, "key": key, "function": function_name(fn), "result": result}, path_for(folder, fn, key)
    )
