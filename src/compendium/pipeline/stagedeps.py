"""Stage dependencies by construction: the source files a stage runs, read off the import graph.

A stage runs ``nbrun`` (and with it the stage's schema module) and its notebook, and each of those runs
every module it imports, transitively, and every package ``__init__`` on the way. :func:`stage_sources`
lists those files; :func:`problems` compares them with the ``src/`` deps that ``dvc.yaml`` declares, and
``python -m compendium.pipeline.stagedeps --write`` rewrites those deps from the graph, so a stage can
never miss a module it imports (DVC would then not rerun it when that module changes).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from functools import lru_cache
from pathlib import Path

from compendium.core import paths

PACKAGE = "compendium"
RUNNER = "compendium.pipeline.nbrun"  # what every stage's command runs


def _package_root() -> Path:
    return paths.SRC / PACKAGE


def module_file(module: str) -> Path | None:
    """The file of a module of the package (``None`` when there is none)."""
    base = paths.SRC.joinpath(*module.split("."))
    for f in (base.with_suffix(".py"), base / "__init__.py"):
        if f.is_file():
            return f
    return None


def _resolve(name: str) -> str | None:
    """The longest prefix of a dotted name that is a module of the package."""
    while name:
        if module_file(name) is not None:
            return name
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return None


def imported_modules(source: str) -> set[str]:
    """The package's modules that ``source`` imports (``from compendium.x import y`` counts ``x.y`` when
    ``y`` is a module, else ``x``)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [f"{node.module}.{a.name}" for a in node.names]
        for n in names:
            if n == PACKAGE or n.startswith(PACKAGE + "."):
                m = _resolve(n)
                if m is not None:
                    out.add(m)
    return out


@lru_cache(maxsize=None)
def _direct(module: str) -> frozenset[str]:
    f = module_file(module)
    return frozenset(imported_modules(f.read_text())) if f is not None else frozenset()


def closure(modules: set[str]) -> set[str]:
    """Every module the given ones import, transitively, with the packages that contain them."""
    todo, seen = list(modules), set()
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        parts = m.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # parent packages run their __init__
        todo += list(_direct(m))
    return seen


def notebook_source(path: Path) -> str:
    """The code cells of a notebook, magics and shell lines dropped."""
    nb = json.loads(Path(path).read_text())
    lines = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            src = "".join(cell["source"])
            lines += [ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    return "\n".join(lines)


def stage_sources(stage: str, notebook: Path | None = None) -> list[str]:
    """The package files stage ``stage`` runs (its notebook, by default ``notebooks/<stage>.ipynb``,
    the runner and the stage's schema, with what they import), relative to the project root, sorted."""
    roots = imported_modules(notebook_source(notebook or paths.NOTEBOOKS / f"{stage}.ipynb"))
    roots |= {RUNNER, f"{PACKAGE}.pipeline.schemas.{stage}"}
    files = {module_file(m) for m in closure(roots)}
    return sorted(str(f.relative_to(paths.ROOT)) for f in files if f is not None)


def notebook_stages(dvc_yaml: Path | None = None) -> list[str]:
    """The stages of ``dvc.yaml`` that run a notebook through nbrun."""
    text = (dvc_yaml or paths.DVC_YAML).read_text()
    return re.findall(rf"^\s+cmd: python -m {re.escape(RUNNER)} (\w+)\s*$", text, flags=re.M)


def _stage_block(text: str, stage: str) -> tuple[int, int]:
    m = re.search(rf"^  {re.escape(stage)}:\n", text, flags=re.M)
    if m is None:
        raise KeyError(f"dvc.yaml has no stage {stage!r}")
    nxt = re.search(r"^  \S", text[m.end() :], flags=re.M)
    return m.start(), (m.end() + nxt.start()) if nxt else len(text)


SRC_DEP = re.compile(r"^      - (src/compendium/\S+)\n", flags=re.M)


def declared_sources(text: str, stage: str) -> list[str]:
    a, b = _stage_block(text, stage)
    return SRC_DEP.findall(text[a:b])


#: Stages that run a module of the package rather than a notebook: their src/ deps are its imports.
MODULE_STAGES = {"clean_notebooks": f"{PACKAGE}.pipeline.nbclean", "summary": f"{PACKAGE}.pipeline.summary"}


def module_sources(module: str) -> list[str]:
    """The package files ``python -m <module>`` runs, relative to the project root, sorted."""
    files = {module_file(m) for m in closure({module})}
    return sorted(str(f.relative_to(paths.ROOT)) for f in files if f is not None)


def sources(stage: str) -> list[str]:
    """The package files ``stage`` runs: a notebook stage's (:func:`stage_sources`) or a module stage's."""
    return module_sources(MODULE_STAGES[stage]) if stage in MODULE_STAGES else stage_sources(stage)


def checked_stages(dvc_yaml: Path | None = None) -> list[str]:
    """The notebook stages of ``dvc.yaml`` and the module stages it declares."""
    text = (dvc_yaml or paths.DVC_YAML).read_text()
    return notebook_stages(dvc_yaml) + [
        s for s in MODULE_STAGES if re.search(rf"^  {re.escape(s)}:\n", text, flags=re.M)
    ]


def problems(dvc_yaml: Path | None = None) -> list[str]:
    """Each stage whose declared ``src/`` deps differ from the files it runs."""
    path = dvc_yaml or paths.DVC_YAML
    text = path.read_text()
    out = []
    for stage in checked_stages(path):
        want, have = set(sources(stage)), set(declared_sources(text, stage))
        if want - have:
            out.append(f"{stage}: runs but does not depend on {sorted(want - have)}")
        if have - want:
            out.append(f"{stage}: depends on files it does not run {sorted(have - want)}")
    return out


def rewrite(text: str, stages: list[str]) -> str:
    """``text`` (dvc.yaml) with each stage's ``src/`` deps replaced by :func:`stage_sources`, placed where
    the first of them was (after the notebook)."""
    for stage in stages:
        a, b = _stage_block(text, stage)
        block = text[a:b]
        first = SRC_DEP.search(block)
        if first is None:
            raise ValueError(f"stage {stage!r} declares no src/ deps to replace")
        new = "".join(f"      - {f}\n" for f in sources(stage))
        block = block[: first.start()] + new + SRC_DEP.sub("", block[first.start() :])
        text = text[:a] + block + text[b:]
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Check (or --write) every notebook stage's src/ deps in dvc.yaml against the files it imports."
    )
    ap.add_argument("--write", action="store_true", help="rewrite the deps in dvc.yaml")
    args = ap.parse_args(argv)
    if args.write:
        paths.DVC_YAML.write_text(rewrite(paths.DVC_YAML.read_text(), checked_stages()))
    found = problems()
    for p in found:
        print(p, file=sys.stderr)
    if found:
        print("fix: python -m compendium.pipeline.stagedeps --write", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
