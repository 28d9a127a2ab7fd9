"""The manual's recipes (docs/extending.md), performed as written in a copy of the repository.

A labelled distillation method: its code taken from the page, the registry line and the parameter added as the page
says, the deps rewritten by the page's command; the stage runs at ``scale: smoke``, the method is found in its tables,
on its site page and in ``dd_tables``' comparison table, and the ledger judges the records it is in. A trained prior:
``params.yaml`` alone changes; ``priors`` and ``rela_budget`` run at smoke and the ledger judges the prior in the
claim that speaks of every prior. Each counts the files the recipe touched."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from compendium.core import paths

DOC = paths.ROOT / "docs" / "extending.md"
REGISTRY = "src/compendium/distill/methods/matching.py"


def recipe() -> dict[str, str]:
    """The page's blocks: the method's file (path and code) and the registry's two lines."""
    text = DOC.read_text()
    method = re.search(r"```python\n# (src/compendium/distill/methods/\w+\.py)\n(.*?)```", text, re.S)
    reg = re.search(r"```python\n(from compendium\.distill\.methods\.\w+ import \w+)\n\n(METHODS = .*?)\n```", text)
    assert method and reg, f"{DOC}: the recipe's code blocks are not where this test reads them"
    params = re.search(r"`dd_matching\.methods: \[([a-z_, ]+)\]`", text)
    assert params, f"{DOC}: the recipe's params.yaml line is missing"
    return {
        "file": method.group(1),
        "code": method.group(2),
        "import": reg.group(1),
        "registry": reg.group(2),
        "methods": params.group(1),
    }


def _git(cwd: Path, *args: str) -> str:
    cmd = ["git", "-c", "user.email=test@example.org", "-c", "user.name=test", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=True).stdout


def copy_repository(dest: Path) -> Path:
    """The tracked files of this checkout (as they are on disk) in a fresh git repository, ``data/`` linked."""
    files = _git(paths.ROOT, "ls-files", "-z").split("\0")
    for f in filter(None, files):
        src = paths.ROOT / f
        if src.is_file():
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / f)
    (dest / "data").symlink_to(paths.DATA.resolve())
    _git(dest, "init", "-q")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "copy")
    return dest


def edit(copy: Path, section: str, key: str, value) -> None:
    f = copy / "params.yaml"
    lines = f.read_text().splitlines(keepends=True)
    start = next(i for i, x in enumerate(lines) if x.startswith(f"{section}:"))
    for i in range(start + 1, len(lines)):
        if lines[i].startswith(f"  {key}:"):
            head, _, comment = lines[i].partition("#")
            lines[i] = f"  {key}: {json.dumps(value)}" + (f"   #{comment}" if comment else "\n")
            break
    else:
        raise AssertionError(f"params.yaml: {section}.{key} not found")
    f.write_text("".join(lines))
    assert yaml.safe_load(f.read_text())[section][key] == value


def _run(copy: Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(copy / "src"), "COMPENDIUM_ROOT": str(copy)}
    env.pop("DVC_ROOT", None)
    return subprocess.run(
        [sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def run_stage(copy: Path, root: Path, stage: str) -> None:
    """``stage`` at ``scale: smoke`` in ``copy``, publishing into ``root`` (reports/ and models/)."""
    run = _run(
        copy,
        "-c",
        "from pathlib import Path; from compendium.pipeline import nbrun; "
        f"nbrun.run_stage({stage!r}, scale='smoke', output_root=Path({str(root / 'reports')!r}), "
        f"models_root=Path({str(root / 'models')!r}), progress=False)",
    )
    assert run.returncode == 0, f"{stage}:\n" + run.stdout[-3000:] + run.stderr[-3000:]


def committed_records(copy: Path, root: Path) -> None:
    """The committed tables and claim rows of every stage under ``root``, as a fresh clone has them: the ledger
    reads every stage's records, and the stages the recipe reruns replace their own."""
    for folder in (paths.TABLES, paths.CLAIMS):
        shutil.copytree(copy / "reports" / folder, root / "reports" / folder)


def ledger_claims(copy: Path, root: Path) -> pd.DataFrame:
    """``claims_ledger`` over the records under ``root``: its claims, checked to be the registry's, every one."""
    run_stage(copy, root, "claims_ledger")
    claims = pd.read_csv(root / "reports" / "claims.csv")
    committed = pd.read_csv(copy / "reports" / "claims.csv")
    assert sorted(claims["id"]) == sorted(committed["id"])  # no claim lost, none undeclared
    return claims


@pytest.mark.slow
def test_adding_a_labelled_method_as_the_manual_says_touches_four_files_and_reaches_the_tables_site_and_ledger(
    tmp_path,
):
    r = recipe()
    copy = copy_repository(tmp_path / "repo")
    # 1. the method's file, as the page gives it
    (copy / r["file"]).write_text(r["code"])
    # 2. its registry line
    reg = copy / REGISTRY
    old = re.search(r"METHODS = registry\(.*\)", reg.read_text()).group()
    reg.write_text(reg.read_text().replace(old, f"{r['import']}\n\n{r['registry']}"))
    # 3. its name in the stage's parameters
    params = copy / "params.yaml"
    line = re.search(r"(?m)^dd_matching:.*\n(?:  .*\n)*?(  methods: \[[^\]]*\])", params.read_text())
    assert line, "params.yaml: dd_matching.methods not found"
    params.write_text(params.read_text().replace(line.group(1), f"  methods: [{r['methods']}]", 1))
    # 4. the stage's deps, by the page's command
    out = _run(copy, "-m", "compendium.pipeline.stagedeps", "--write")
    assert out.returncode == 0, out.stderr
    touched = sorted(line[3:] for line in _git(copy, "status", "--porcelain", "-uall").splitlines())
    assert touched == sorted(["dvc.yaml", "params.yaml", REGISTRY, r["file"]])
    assert f"- {r['file']}" in (copy / "dvc.yaml").read_text()

    name = re.search(r'name, label.* = "(\w+)", "([^"]+)"', r["code"])
    key, label = name.group(1), name.group(2)
    root = tmp_path / "out"
    committed_records(copy, root)
    run_stage(copy, root, "dd_matching")
    results = pd.read_csv(root / "reports" / "tables" / "dd_matching" / "results.csv")
    mine = results[results["method"] == label]
    assert set(mine["ipc"]) == {1, 10} and mine["acc"].between(0, 1).all()  # evaluated at every ipc of smoke
    assert (root / "models" / "distilled" / "matching" / f"{key}_ipc1.pt").is_file()

    from compendium.pipeline import site

    page = site.html_stage_page("dd_matching", (root / "reports" / "html" / "dd_matching.html").read_text())
    assert label in page
    # downstream: the method has its row in the comparison tables, and the ledger judges the records it is in
    run_stage(copy, root, "dd_tables")
    classic = pd.read_csv(root / "reports" / "tables" / "dd_tables" / "classic.csv")
    assert label in set(classic["method"])
    ledger_claims(copy, root)


@pytest.mark.slow
def test_adding_a_trained_prior_as_the_manual_says_touches_params_alone_and_reaches_the_stage_site_and_ledger(tmp_path):
    block = re.search(r"```yaml\n# params.yaml\n(.*?)```", DOC.read_text(), re.S)
    assert block, f"{DOC}: the trained prior's params.yaml block is missing"
    copy = copy_repository(tmp_path / "repo")
    for section, keys in yaml.safe_load(block.group(1)).items():
        for key, value in keys.items():
            edit(copy, section, key, value)
    touched = sorted(line[3:] for line in _git(copy, "status", "--porcelain", "-uall").splitlines())
    assert touched == ["params.yaml"]
    (entry,) = yaml.safe_load(block.group(1))["priors"]["extra_priors"]
    name = entry["name"]
    root = tmp_path / "out"
    committed_records(copy, root)
    for stage in ("priors", "rela_budget"):
        run_stage(copy, root, stage)
    assert (root / "models" / "priors" / f"{name}.pt").is_file()
    assert (root / "models" / "prior_replicates" / f"{name}_seed1.pt").is_file()  # smoke's replicate seed
    trained = pd.read_csv(root / "reports" / "tables" / "priors" / "byol_priors.csv")
    assert {name, f"{name} seed 1"} <= set(trained["prior"])
    runs = pd.read_csv(root / "reports" / "tables" / "rela_budget" / "runs.csv")
    mine = runs[runs["prior"].astype(str).str.endswith(f"{name}.pt")]
    assert set(mine["budget"]) == set(runs.loc[runs["prior"].notna(), "budget"])  # at every budget

    from compendium.pipeline import site

    page = site.html_stage_page("rela_budget", (root / "reports" / "html" / "rela_budget.html").read_text())
    assert name in page
    # the ledger judges it where a claim speaks of every prior
    claims = ledger_claims(copy, root)
    row = claims[claims["id"] == "rela.table-1.byol-rela-beats-byol"].iloc[0]
    evidence = pd.read_csv(root / "reports" / "tables" / "claims_ledger" / "evidence.csv").set_index("id")
    assert name in evidence.loc[row["id"], "evidence"]
