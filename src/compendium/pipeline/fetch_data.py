"""Obtain the shipped datasets into ``data/`` (the set-up command's data step).

``python -m compendium.pipeline.fetch_data`` is idempotent: files that already match
:data:`compendium.core.data.MANIFEST` are left alone, so a second run only re-hashes.

Fashion-MNIST comes, in order of preference, from

1. Debian's ``dataset-fashion-mnist`` package where it is installed
   (``/usr/share/datasets/fashion-mnist``);
2. the same package fetched with ``apt-get download`` and unpacked with ``dpkg-deb -x`` into
   ``build/downloads`` (no root needed; ``apt-get update`` is tried once when root);
3. torchvision's download (machines without apt).

The ``.gz`` files differ byte-wise between these sources but decompress to the same IDX bytes,
which is what lands in ``data/`` and what ``data.dvc`` pins. The digits come from the copy
bundled with scikit-learn, written as IDX files too. The text corpus (text dataset distillation)
is six category files of Debian's ``fortunes`` package, copied byte for byte from the installed
package (``/usr/share/games/fortunes``) or from the ``.deb`` fetched with ``apt-get download``.
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
from pathlib import Path

from compendium.core import paths
from compendium.core.data import MANIFEST, check_file, verify, write_idx

DEBIAN_DIR = Path("/usr/share/datasets/fashion-mnist")
DEBIAN_PACKAGE = "dataset-fashion-mnist"
FMNIST_STEMS = (
    "train-images-idx3-ubyte",
    "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte",
    "t10k-labels-idx1-ubyte",
)


def log(msg: str) -> None:
    print(f"[fetch_data] {msg}", flush=True)


def _gz_dir_complete(d: Path) -> bool:
    return all((d / f"{s}.gz").is_file() for s in FMNIST_STEMS)


def _from_debian_download(downloads: Path) -> Path | None:
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        return None
    target = downloads / "debian"
    unpacked = target / "root" / DEBIAN_DIR.relative_to("/")
    if _gz_dir_complete(unpacked):
        return unpacked
    target.mkdir(parents=True, exist_ok=True)

    def download() -> bool:
        r = subprocess.run(["apt-get", "download", DEBIAN_PACKAGE], cwd=target, capture_output=True, text=True)
        if r.returncode != 0:
            log(f"apt-get download failed: {r.stderr.strip().splitlines()[-1:]}")
        return r.returncode == 0

    ok = download()
    if not ok and hasattr(os, "geteuid") and os.geteuid() == 0:
        log("running apt-get update once and retrying")
        subprocess.run(["apt-get", "update", "-qq"], capture_output=True)
        ok = download()
    debs = sorted(target.glob(f"{DEBIAN_PACKAGE}_*.deb"))
    if not ok or not debs:
        return None
    subprocess.run(["dpkg-deb", "-x", str(debs[-1]), str(target / "root")], check=True)
    return unpacked if _gz_dir_complete(unpacked) else None


def _from_torchvision(downloads: Path) -> Path | None:
    try:
        from torchvision.datasets import FashionMNIST
    except ImportError:
        return None
    try:
        FashionMNIST(str(downloads / "torchvision"), train=True, download=True)
        FashionMNIST(str(downloads / "torchvision"), train=False, download=True)
    except Exception as e:  # network errors vary by platform
        log(f"torchvision download failed: {e}")
        return None
    d = downloads / "torchvision" / "FashionMNIST" / "raw"
    return d if _gz_dir_complete(d) else None


def fetch_fashion_mnist(data_dir: Path, downloads: Path) -> None:
    rels = [f"fashion-mnist/{s}" for s in FMNIST_STEMS]
    if all(check_file(r, data_dir) is None for r in rels):
        log("fashion-mnist: present and verified")
        return
    source = None
    if _gz_dir_complete(DEBIAN_DIR):
        source = DEBIAN_DIR
        log(f"fashion-mnist: from the installed Debian package ({source})")
    if source is None:
        source = _from_debian_download(downloads)
        if source is not None:
            log(f"fashion-mnist: from Debian's {DEBIAN_PACKAGE} package (apt-get download)")
    if source is None:
        source = _from_torchvision(downloads)
        if source is not None:
            log("fashion-mnist: downloaded with torchvision")
    if source is None:
        raise SystemExit(
            "fashion-mnist: no source worked (Debian package, apt-get download, "
            "torchvision). Install `dataset-fashion-mnist` or allow the download."
        )
    out = data_dir / "fashion-mnist"
    out.mkdir(parents=True, exist_ok=True)
    for stem in FMNIST_STEMS:
        tmp = out / f"{stem}.tmp"
        with gzip.open(source / f"{stem}.gz", "rb") as src, open(tmp, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 22)
        os.replace(tmp, out / stem)


def fetch_digits(data_dir: Path) -> None:
    rels = ["digits/digits-images-idx3-ubyte", "digits/digits-labels-idx1-ubyte"]
    if all(check_file(r, data_dir) is None for r in rels):
        log("digits: present and verified")
        return
    from sklearn.datasets import load_digits

    d = load_digits()
    log(f"digits: exported from scikit-learn's bundled copy ({d.images.shape[0]} images)")
    write_idx(data_dir / rels[0], d.images.astype("uint8"))  # values 0..16
    write_idx(data_dir / rels[1], d.target.astype("uint8"))


FORTUNES_PACKAGE = "fortunes"
FORTUNES_DIR = Path("/usr/share/games/fortunes")


def _fortune_rels() -> list[str]:
    return [r for r in MANIFEST if r.split("/")[0] == "fortunes"]


def _from_fortunes_download(downloads: Path, names: list[str]) -> Path | None:
    """Debian's ``fortunes`` package via ``apt-get download`` + ``dpkg-deb -x`` (no root needed)."""
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        return None
    target = downloads / "debian-fortunes"
    unpacked = target / "root" / FORTUNES_DIR.relative_to("/")
    if all((unpacked / n).is_file() for n in names):
        return unpacked
    target.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["apt-get", "download", FORTUNES_PACKAGE], cwd=target, capture_output=True, text=True)
    if r.returncode != 0 and hasattr(os, "geteuid") and os.geteuid() == 0:
        log("running apt-get update once and retrying")
        subprocess.run(["apt-get", "update", "-qq"], capture_output=True)
        r = subprocess.run(["apt-get", "download", FORTUNES_PACKAGE], cwd=target, capture_output=True, text=True)
    debs = sorted(target.glob(f"{FORTUNES_PACKAGE}_*.deb"))
    if r.returncode != 0 or not debs:
        log(f"apt-get download {FORTUNES_PACKAGE} failed: {r.stderr.strip().splitlines()[-1:]}")
        return None
    subprocess.run(["dpkg-deb", "-x", str(debs[-1]), str(target / "root")], check=True)
    return unpacked if all((unpacked / n).is_file() for n in names) else None


def fetch_fortunes(data_dir: Path, downloads: Path) -> None:
    """The category files of :data:`MANIFEST` (``fortunes/<category>``), copied unchanged."""
    rels = _fortune_rels()
    if all(check_file(r, data_dir) is None for r in rels):
        log("fortunes: present and verified")
        return
    names = [r.split("/", 1)[1] for r in rels]
    source = FORTUNES_DIR if all((FORTUNES_DIR / n).is_file() for n in names) else None
    if source is not None:
        log(f"fortunes: from the installed Debian package ({source})")
    else:
        source = _from_fortunes_download(downloads, names)
        if source is not None:
            log(f"fortunes: from Debian's {FORTUNES_PACKAGE} package (apt-get download)")
    if source is None:
        raise SystemExit(
            "fortunes: no source worked (installed package, apt-get download). "
            f"Install Debian's `{FORTUNES_PACKAGE}` package (1:1.99.1-7.3) or allow apt-get download."
        )
    out = data_dir / "fortunes"
    out.mkdir(parents=True, exist_ok=True)
    for n in names:
        tmp = out / f"{n}.tmp"
        shutil.copyfile(source / n, tmp)
        os.replace(tmp, out / n)
    bad = [f"{r} {p}" for r in rels if (p := check_file(r, data_dir))]
    if bad:
        raise SystemExit(
            "fortunes: the package's files differ from the manifest (another package version?): " + "; ".join(bad)
        )


def unexpected_files(data_dir: Path) -> list[Path]:
    known = {data_dir / r for r in MANIFEST}
    return sorted(p for p in data_dir.rglob("*") if p.is_file() and p not in known)


def _committed_text(dvc_file: Path) -> str | None:
    """``data.dvc`` as committed in git's HEAD, or None outside git."""
    r = subprocess.run(["git", "show", f"HEAD:./{dvc_file.name}"], cwd=dvc_file.parent, capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def dvc_commit(data_dir: Path) -> None:
    """Put the verified ``data/`` into DVC's cache so that ``dvc status``/``dvc repro`` work on a
    fresh clone that has no remote.

    ``data.dvc`` must come out as committed in git: a plain ``dvc repro`` over damaged files
    re-saves the data source with the damaged hash, and this restores it once the files are
    repaired. If the verified files do not give the committed ``data.dvc``, stop and say so.
    """
    dvc_file = data_dir.parent / f"{data_dir.name}.dvc"
    cmd = [sys.executable, "-m", "dvc"]
    cwd = data_dir.parent
    if not dvc_file.is_file():
        log(f"{dvc_file.name} does not exist yet: dvc add {data_dir.name}")
        subprocess.run(cmd + ["add", "-q", data_dir.name], cwd=cwd, check=True)
        return
    before = dvc_file.read_text()
    reference = _committed_text(dvc_file) or before
    subprocess.run(cmd + ["commit", "-q", "-f", dvc_file.name], cwd=cwd, check=True)
    after = dvc_file.read_text()
    if after != reference:
        dvc_file.write_text(before)
        raise SystemExit(
            f"data/ does not match the committed {dvc_file.name} although every file "
            "matches the manifest in compendium/core/data.py: the manifest or data.dvc is out of date."
        )
    if before != after:
        log(f"{dvc_file.name} had recorded damaged data; restored it")
    log(f"data/ matches {dvc_file.name} and is in DVC's cache")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=paths.DATA)
    ap.add_argument("--downloads", type=Path, default=paths.BUILD / "downloads")
    ap.add_argument(
        "--dvc", action="store_true", help="afterwards put data/ into DVC's cache, checked against data.dvc"
    )
    args = ap.parse_args(argv)
    args.data_dir.mkdir(parents=True, exist_ok=True)
    fetch_fashion_mnist(args.data_dir, args.downloads)
    fetch_digits(args.data_dir)
    fetch_fortunes(args.data_dir, args.downloads)
    extra = unexpected_files(args.data_dir)
    if extra:
        print(
            "unexpected files under data/ (data.dvc would not match): "
            + ", ".join(str(p) for p in extra)
            + "\nMove them out of data/.",
            file=sys.stderr,
        )
        return 1
    verify(root=args.data_dir)
    log("all files verified against the manifest")
    if args.dvc:
        dvc_commit(args.data_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
