"""Stage deps by construction (compendium.pipeline.stagedeps): dvc.yaml's src/ deps are the files each
stage imports, transitively."""

import csv

import nbformat
import yaml

from compendium.core import paths, volatile
from compendium.pipeline import stagedeps


def test_imports_resolve_to_modules_of_the_package():
    src = (
        "import os\nfrom compendium.core import models, paths as p\nfrom compendium.core.models import build\n"
        "import compendium.verdicts.claims\nfrom torch import nn\n"
    )
    assert stagedeps.imported_modules(src) == {
        "compendium.core.models",
        "compendium.core.paths",
        "compendium.verdicts.claims",
    }


def test_closure_follows_imports_and_adds_the_packages_on_the_way():
    c = stagedeps.closure({"compendium.verdicts.ledger"})
    assert {
        "compendium",
        "compendium.verdicts",
        "compendium.verdicts.claims",
        "compendium.core.tables",
        "compendium.core.plateau",
    } <= c
    assert "compendium.rela.experiment" not in c


def test_a_stage_runs_its_notebook_imports_nbrun_and_its_schema():
    files = stagedeps.stage_sources("dd_kip")
    assert "src/compendium/pipeline/nbrun.py" in files and "src/compendium/pipeline/schemas/dd_kip.py" in files
    assert "src/compendium/distill/kernel.py" in files and "src/compendium/__init__.py" in files
    assert not any("schemas/dd_dwa" in f for f in files)


def test_rewrite_replaces_the_src_deps_of_a_stage_only(tmp_path):
    text = paths.DVC_YAML.read_text()
    broken = text.replace("      - src/compendium/distill/kernel.py\n", "", 1)
    assert any(p.startswith("dd_kip:") for p in _problems_of(broken, tmp_path / "dvc.yaml"))
    fixed = stagedeps.rewrite(broken, ["dd_kip"])
    assert stagedeps.declared_sources(fixed, "dd_kip") == stagedeps.stage_sources("dd_kip")
    assert stagedeps.declared_sources(fixed, "dd_dwa") == stagedeps.declared_sources(broken, "dd_dwa")


def _problems_of(text, p):
    p.write_text(text)
    return stagedeps.problems(p)


def test_every_stage_depends_on_exactly_the_files_it_runs():
    found = stagedeps.problems()
    assert not found, "\n".join(found) + "\nfix: python -m compendium.pipeline.stagedeps --write"


def test_every_product_of_a_notebook_stage_survives_a_failed_run():
    """Outputs (reports and checkpoints under models/) are `persist`: DVC does not delete them before the
    stage runs, so a run that fails (bad params, a failing cell) loses nothing already computed."""
    import yaml

    stages = yaml.safe_load(paths.DVC_YAML.read_text())["stages"]
    loose = []
    for name, st in stages.items():
        if "nbrun" not in str(st.get("cmd", "")):
            continue
        for out in st.get("outs", []) + st.get("metrics", []) + st.get("plots", []):
            path, opts = (out, {}) if isinstance(out, str) else next(iter(out.items()))
            if not (opts or {}).get("persist"):
                loose.append(f"{name}: {path}")
    assert not loose, "outputs DVC would delete before the stage runs: " + ", ".join(loose)


def test_timings_are_declared_outputs_that_no_stage_depends_on():
    """A stage's wall-clock times go to reports/timings/<stage>.json (Reporter.timings), declared
    uncached and persistent, and no stage depends on them except the cost tables named in
    volatile.TIMING_READERS: an identical rerun of a stage then leaves every other stage downstream up to date."""
    stages = yaml.safe_load(paths.DVC_YAML.read_text())["stages"]
    writers = [n for n in stages if (paths.NOTEBOOKS / f"{n}.ipynb").is_file() and "rep.timings(" in _code(n)]
    assert {"priors", "dd_teachers", "ssdd_teacher"} <= set(writers)
    for name in writers:
        outs = {next(iter(o)) if isinstance(o, dict) else o: o for o in stages[name]["outs"]}
        f = f"reports/timings/{name}.json"
        assert f in outs and outs[f][f] == {"cache": False, "persist": True}, f"dvc.yaml: {name} lacks {f}"
    readers = {
        (n, str(d).split("/")[2])
        for n, s in stages.items()
        for d in s.get("deps", [])
        if str(d).startswith("reports/timings")
    }
    allowed = {(n, u) for n, ups in volatile.TIMING_READERS.items() for u in ups}
    assert readers <= allowed, f"stages depending on timings beyond the cost tables: {sorted(readers - allowed)}"


def test_no_table_another_stage_reads_holds_a_wall_clock_column():
    """Every committed stage table is free of wall-clock and memory columns (Reporter.table moves them to
    reports/timings/<stage>/), and each stage's timings folder is a declared, persistent, uncached output of
    that stage: an identical rerun then rewrites reports/tables/ byte for byte."""
    stages = yaml.safe_load(paths.DVC_YAML.read_text())["stages"]
    bad = []
    for f in sorted((paths.REPORTS / paths.TABLES).glob("*/*.csv")):
        with open(f) as fh:
            bad += [f"{f.relative_to(paths.REPORTS)}: {c}" for c in volatile.volatile_columns(next(csv.reader(fh), []))]
    assert not bad, "wall-clock columns in tables other stages read: " + "; ".join(bad)
    folders = {d.name for d in (paths.REPORTS / paths.TIMINGS).iterdir() if d.is_dir()}
    declared = {
        name
        for name, st in stages.items()
        for o in st.get("outs", [])
        if (next(iter(o)) if isinstance(o, dict) else o) == f"reports/timings/{name}"
    }
    assert folders == declared, f"timings folders {sorted(folders ^ declared)}: committed xor declared"
    assert all(any((paths.REPORTS / paths.TIMINGS / n).glob("*.csv")) for n in declared)


def _code(stage: str) -> str:
    nb = nbformat.read(paths.NOTEBOOKS / f"{stage}.ipynb", as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code")


def test_a_change_to_one_family_stales_only_the_stages_that_run_it():
    """Editing a ReLA or SSL module (a new arm, a schedule) must not make a theory or labelled-distillation
    stage stale: the runner and the shared schemas import no family's code."""
    for stage in stagedeps.notebook_stages():
        if stage.startswith(("theory_", "dd_", "data_")):
            wings = {f.split("/")[2] for f in stagedeps.stage_sources(stage) if f.count("/") >= 3}
            assert not wings & {"rela", "ssl"}, f"{stage} runs ReLA / SSL code: {sorted(wings)}"
        if stage.startswith(("theory_", "rela_", "priors", "data_")):
            assert not any("/distill/" in f for f in stagedeps.stage_sources(stage)), stage
    runner = stagedeps.stage_sources("data_overview")
    assert not any(f"/{w}/" in f for f in runner for w in ("rela", "ssl", "distill", "theory")), runner
