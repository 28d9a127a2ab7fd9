"""The clean copies of the notebooks that the pipeline runs, made by the one ``clean_notebooks`` stage.

Each notebook stage executes ``build/nb/<stage>.ipynb``: ``notebooks/<stage>.ipynb`` with its outputs,
execution counts and volatile metadata stripped (``nbstripout -t --extra-keys metadata.language_info``), so
that opening and saving a notebook in Jupyter changes no stage's dependency. One stage cleans every
notebook: one DVC stage for 33 notebooks instead of 33 (a fresh ``dvc repro`` spent about 3.8 of its minutes
on the 33 stages' own checks, against seconds for the stripping). An unchanged notebook gives a
byte-identical copy, so the stages downstream of it stay up to date when another notebook changes.

The stage's ``deps`` list the notebooks in pipeline order (upstream first): :func:`pipeline_order` reads it,
for the tools that walk the stages in that order.

    python -m compendium.pipeline.nbclean            # every notebook the stage lists, into build/nb/
    python -m compendium.pipeline.nbclean priors     # one of them
"""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from compendium.core import paths

#: The stage in ``dvc.yaml`` that makes the clean copies.
STAGE = "clean_notebooks"
#: ``nbstripout``'s command line for the same copy (``-t``: the stripped notebook on standard output);
#: :func:`strip` gives its bytes in this process (``tests/test_nbclean.py`` compares them).
STRIP = ("-m", "nbstripout", "-t", "--extra-keys", "metadata.language_info")
#: The metadata ``nbstripout`` removes by default (its ``main``), and the language's version, which differs by host.
EXTRA_KEYS = (
    "metadata.signature",
    "metadata.widgets",
    "cell.metadata.collapsed",
    "cell.metadata.ExecuteTime",
    "cell.metadata.execution",
    "cell.metadata.heading_collapsed",
    "cell.metadata.hidden",
    "cell.metadata.scrolled",
    "metadata.language_info",
)


def strip(src: Path) -> str:
    """The text of notebook ``src`` without outputs, execution counts and :data:`EXTRA_KEYS`: what
    ``python`` :data:`STRIP` ``src`` prints (with no ``filter.nbstripout`` keys in git's config), without a
    process per notebook (one took 3 s here, most of the stage's two minutes for 36 notebooks)."""
    import io
    import warnings

    import nbformat
    from nbstripout import strip_output

    with warnings.catch_warnings():  # as nbstripout: nbformat's validation warnings are not errors here
        warnings.simplefilter("ignore", category=UserWarning)
        nb = nbformat.read(src, as_version=nbformat.NO_CONVERT)
        nb = strip_output(nb, keep_output=False, keep_count=False, keep_id=False, extra_keys=list(EXTRA_KEYS))
        out = io.StringIO()
        nbformat.write(nb, out)
    return out.getvalue()


def pipeline_order(dvc_yaml: Path | None = None) -> list[str]:
    """The notebook stages in the order the ``clean_notebooks`` stage lists their notebooks (upstream first)."""
    stage = yaml.safe_load(Path(dvc_yaml or paths.DVC_YAML).read_text())["stages"][STAGE]
    return [Path(d).stem for d in stage["deps"] if str(d).startswith("notebooks/") and str(d).endswith(".ipynb")]


def clean(stage: str, out_dir: Path | None = None) -> Path:
    """Strip ``notebooks/<stage>.ipynb`` into ``<out_dir>/<stage>.ipynb`` (default ``build/nb/``) and return it."""
    src = paths.NOTEBOOKS / f"{stage}.ipynb"
    if not src.is_file():
        raise FileNotFoundError(f"{src} does not exist: no notebook for stage {stage!r}")
    out = Path(out_dir or paths.BUILD / "nb") / f"{stage}.ipynb"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".ipynb.tmp")
    tmp.write_text(strip(src), encoding="utf-8", newline="\n")
    tmp.replace(out)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stages", nargs="*", help="notebook stages to clean (default: every one the stage lists)")
    args = ap.parse_args(argv)
    stages = args.stages or pipeline_order()
    for st in stages:
        print(f"[nbclean] {clean(st).relative_to(paths.ROOT)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
