"""The DVC pipeline: dvc.lock is current, and the whole pipeline reruns at smoke scale in a copy."""

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import requires_data

from compendium.core import paths, volatile
from compendium.pipeline import faithful, sitecheck, stagedeps, timings

BIN = Path(sys.executable).parent


def _env(tmp_path):
    env = dict(os.environ)
    env.update(
        {
            "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",
            "DVC_NO_ANALYTICS": "1",
            "DVC_SITE_CACHE_DIR": str(tmp_path / "dvc-site"),
            "DVC_GLOBAL_CONFIG_DIR": str(tmp_path / "dvc-global"),
            "DVC_SYSTEM_CONFIG_DIR": str(tmp_path / "dvc-system"),
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
            "GIT_CONFIG_NOSYSTEM": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    env.pop(paths.OUTPUT_ROOT_ENV, None)
    return env


def _copy_env(tmp_path, proj):
    """The copy imports its own src/ (PYTHONPATH wins over the editable install)."""
    env = _env(tmp_path)
    env["PYTHONPATH"] = str(proj / "src")
    env.pop("COMPENDIUM_ROOT", None)
    return env


def _dvc(args, cwd, env, timeout=2700):
    return subprocess.run(
        [sys.executable, "-m", "dvc", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_committed_dvc_lock_is_up_to_date(tmp_path):
    """`dvc repro --dry --allow-missing`: code, params and notebooks match dvc.lock."""
    r = _dvc(["repro", "--dry", "--allow-missing"], paths.ROOT, _env(tmp_path), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Running stage" not in r.stdout, "dvc.lock is stale; run `make repro` and commit:\n" + r.stdout


def _copy_project(dst: Path) -> None:
    files = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=paths.ROOT,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for rel in filter(None, files):
        src = paths.ROOT / rel
        if src.is_file():
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / rel)
    shutil.copytree(paths.DATA, dst / "data")


def _declared_outputs(root: Path) -> list[Path]:
    from dvc.repo import Repo

    with Repo(str(root)) as repo:
        return [
            Path(str(o.fs_path)) for s in repo.index.stages for o in s.outs if not str(s.path_in_repo).endswith(".dvc")
        ]


#: Stages rerun from scratch after the first run: those that train what others read, one that reads a prior
#: (rela_budget) and one whose tables only the ledger reads (dd_labels).
IDENTICAL_RERUN = ("priors", "dd_teachers", "ssdd_teacher", "rela_budget", "dd_labels")
#: What differs between two identical runs, and no stage reads (dvc.yaml: no stage depends on these).
VOLATILE = ("reports/timings/", "reports/metrics/", "reports/notebooks/", "reports/html/")


def test_no_stage_reads_what_an_identical_rerun_changes():
    stages = yaml.safe_load((paths.DVC_YAML).read_text())["stages"]
    readers = {(n, d) for n, st in stages.items() for d in st.get("deps", []) if str(d).startswith(VOLATILE)}
    cost_tables = {(n, f"reports/timings/{u}") for n, ups in volatile.TIMING_READERS.items() for u in ups}
    assert readers <= cost_tables, sorted(readers - cost_tables)


def _lock_outs(root: Path, stages) -> dict:
    lock = yaml.safe_load((root / "dvc.lock").read_text())["stages"]
    return {o["path"]: o["md5"] for s in stages for o in lock[s]["outs"]}


@requires_data
@pytest.mark.slow
def test_whole_pipeline_at_smoke_scale_in_a_copy(tmp_path):
    proj = tmp_path / "proj"
    _copy_project(proj)
    p = yaml.safe_load((proj / "params.yaml").read_text())
    p["scale"] = "smoke"
    (proj / "params.yaml").write_text(yaml.safe_dump(p, sort_keys=False))
    env = _copy_env(tmp_path, proj)
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "copy"]):
        subprocess.run(["git", *cmd], cwd=proj, env=env, check=True, capture_output=True)
    t0 = time.perf_counter()
    r = _dvc(["repro"], proj, env)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    first = time.perf_counter() - t0
    outs = _declared_outputs(proj)
    assert outs
    for out in outs:
        assert out.exists(), f"declared output {out} is missing"
        if out.is_dir():
            assert any(f.stat().st_size > 0 for f in out.rglob("*") if f.is_file()), f"{out} is empty"
        else:
            assert out.stat().st_size > 0, f"{out} is empty"
    # nothing lands in reports/ that no stage declares (a tool's side folder, such as myst-nb's jupyter_execute/)
    reports = proj / "reports"
    declared = {o.relative_to(reports).parts[0] for o in outs if o.is_relative_to(reports)}
    kept = {
        ".gitignore",
        "faithful",
        "regime",
        timings.FILE,
    }  # in git, outside the DVC graph (regime: the studies' records)
    stray = sorted(p.name for p in reports.iterdir() if p.name not in declared | kept)
    assert not stray, f"undeclared products in reports/: {stray}"
    # what `make repro` does after `dvc repro`: the stages' minutes (kept in git) and the site
    for module in ("timings", "site"):
        r = subprocess.run(
            [sys.executable, "-m", f"compendium.pipeline.{module}"],
            cwd=proj,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert set(timings.read(reports)) == set(stagedeps.notebook_stages(proj / "dvc.yaml"))
    status = _dvc(["status", "--json"], proj, env).stdout  # what a rerun would act on, named if it reruns anything
    t0 = time.perf_counter()
    r2 = _dvc(["repro"], proj, env)
    assert (proj / "reports" / "metrics" / "data_overview.json").is_file()
    second = time.perf_counter() - t0
    assert r2.returncode == 0 and "Running stage" not in r2.stdout, (
        f"dvc status before the rerun: {status}\n{r2.stdout}"
    )
    print(f"smoke dvc repro: first {first:.1f} s, second {second:.1f} s")
    # a no-op rerun reads dvc.yaml and dvc.lock and checks hashes: 13 to 33 s by host and YAML reader; minutes would
    # mean it rehashes the data or the models
    assert second < 90
    # the results site the pipeline built, opened page by page in headless Chromium
    seen = sitecheck.check(proj / "reports" / "site", screenshot=tmp_path / "home.png")
    assert seen.pages > 40 and seen.images > 0 and not seen.problems, "\n".join(seen.problems[:20])
    print(f"site: {seen.pages} pages, {seen.links} local links, {seen.images} images, screenshot {seen.screenshot}")
    # an identical rerun, from scratch, of the stages that train what others read (and of IDENTICAL_RERUN's other two)
    # keeps the hash of every product another stage may read (checkpoints, targets, tables, figures); only the
    # timings, metrics, executed notebooks and pages change, which no stage reads: no stage goes stale. Nor does
    # the summary: it reads tables in git, never an executed notebook.
    before = _lock_outs(proj, IDENTICAL_RERUN)
    shutil.rmtree(proj / "build" / "resume", ignore_errors=True)  # recompute every call, do not replay
    for stage in IDENTICAL_RERUN:
        r3 = _dvc(["repro", "--force", "--single-item", stage], proj, env)
        assert r3.returncode == 0, r3.stdout[-4000:] + r3.stderr[-2000:]
    after = _lock_outs(proj, IDENTICAL_RERUN)
    changed = sorted(p for p in before if before[p] != after.get(p))
    assert changed and all(p.startswith(VOLATILE) for p in changed), f"changed by an identical rerun: {changed}"
    r4 = _dvc(["repro", "--dry"], proj, env)
    stale = set(re.findall(r"Running stage '([^']+)'", r4.stdout))
    assert r4.returncode == 0 and not stale, f"an identical rerun made these stages stale: {sorted(stale)}"
    # a clone without DVC's cache (no executed notebook, no checkpoint) reruns one changed stage and the
    # stages that read its tables, and nothing else
    subprocess.run(["git", "add", "-A"], cwd=proj, env=env, check=True, capture_output=True)
    subprocess.run(["git", "commit", "-q", "-m", "run"], cwd=proj, env=env, check=True, capture_output=True)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(proj), str(clone)], env=env, check=True, capture_output=True)
    shutil.copytree(paths.DATA, clone / "data")
    env_c = _copy_env(tmp_path, clone)
    r5 = _dvc(["repro", "--dry", "--allow-missing"], clone, env_c)
    assert r5.returncode == 0 and "Running stage" not in r5.stdout, r5.stdout[-3000:]
    p = yaml.safe_load((clone / "params.yaml").read_text())
    p["dd_kip"]["scales"]["smoke"]["eval_steps"] = p["dd_kip"]["scales"]["smoke"].get("eval_steps", 20) + 1
    (clone / "params.yaml").write_text(yaml.safe_dump(p, sort_keys=False))
    r6 = _dvc(["repro", "clean_notebooks"], clone, env_c)  # build/ is not in git: the stripped copies, seconds
    assert r6.returncode == 0, r6.stdout[-4000:] + r6.stderr[-2000:]
    r6 = _dvc(["repro", "--allow-missing"], clone, env_c)  # the whole pipeline: every stage that reads dd_kip
    ran = set(re.findall(r"Running stage '([^']+)'", r6.stdout))
    assert r6.returncode == 0, r6.stdout[-4000:] + r6.stderr[-2000:]
    # dd_kip and what reads its tables (dd_tables; dd_regime reads dd_tables' classic table), then the ledger and
    # the summary
    assert "dd_kip" in ran and ran <= {"dd_kip", "dd_tables", "dd_regime", "claims_ledger", "summary"}, sorted(ran)
    r7 = _dvc(["repro", "--dry", "--allow-missing"], clone, env_c)
    assert "Running stage" not in r7.stdout, r7.stdout[-3000:]
    # the README's sweep, command by command, in the run copy (committed above): what it says it reruns, and the
    # changed parameter and results in each command's output
    for cmd, comment, shown in readme_sweep():
        if cmd[0] == "dvc":
            r8 = _dvc(cmd[1:], proj, env)
        else:
            r8 = subprocess.run(cmd, cwd=proj, env=env, capture_output=True, text=True, timeout=900)
        assert r8.returncode == 0, f"{' '.join(cmd)}:\n{r8.stdout[-3000:]}{r8.stderr[-2000:]}"
        if cmd[:3] == ["dvc", "exp", "run"]:
            said = set(re.findall(r"[a-z_]+", comment.removeprefix("reruns")))
            assert set(re.findall(r"Running stage '([^']+)'", r8.stdout)) == said, r8.stdout[-3000:]
        for line in shown:
            assert line in r8.stdout, f"{' '.join(cmd)}: {line!r} not in\n{r8.stdout[-3000:]}"


def _param_keys(stage: dict) -> list[str]:
    keys = []
    for p in stage.get("params", []):
        keys += [p] if isinstance(p, str) else [k for ks in p.values() for k in ks]
    return keys


def stages_a_param_reruns(key: str, dvc: dict) -> set[str]:
    """The stages ``dvc exp run -S key=...`` reruns, read from a parsed dvc.yaml alone: those with a params dep on
    the key (or on a section above or below it), then every stage that reads an output of one of them, transitively
    (:func:`faithful.upstream`'s graph, turned round)."""
    changed = {
        n
        for n, st in dvc["stages"].items()
        if any(key == k or key.startswith(k + ".") or k.startswith(key + ".") for k in _param_keys(st))
    }
    up = faithful.upstream(faithful.read_stages(dvc))
    down = {n: {m for m, reads in up.items() if n in reads} for n in up}
    return faithful.ancestors(changed, down)


def test_readme_sweep_names_the_stages_dvc_reruns():
    """Each ``dvc exp run -S`` of the README's sweep says which stages it reruns; dvc.yaml's graph agrees (the
    whole-pipeline test runs it; this catches a new dependency in seconds)."""
    dvc = yaml.safe_load((paths.ROOT / "dvc.yaml").read_text())
    for cmd, comment, _ in readme_sweep():
        if cmd[:3] == ["dvc", "exp", "run"]:
            key = cmd[cmd.index("-S") + 1].split("=")[0]
            said = set(re.findall(r"[a-z_]+", comment.removeprefix("reruns")))
            assert stages_a_param_reruns(key, dvc) == said, f"README.md: {' '.join(cmd)} says it {comment}"


def readme_sweep() -> list[tuple[list[str], str, list[str]]]:
    """The README's "Compare two runs" block: per command (``$ ...``), its words (``python`` is this interpreter),
    its comment and the first cell of each table row the README shows under it (a parameter or result name)."""
    text = (paths.ROOT / "README.md").read_text()
    block = re.search(r"## Compare two runs.*?```console\n(.*?)```", text, re.S)
    assert block, "README.md: the 'Compare two runs' console block is missing"
    steps = []
    for line in block.group(1).splitlines():
        if line.startswith("$ "):
            cmd, _, comment = line[2:].partition("#")
            words = [w.strip("'") for w in re.findall(r"'[^']*'|\S+", cmd)]
            steps.append(([sys.executable if words[0] == "python" else words[0], *words[1:]], comment.strip(), []))
        elif steps and line.startswith("|") and not line.startswith("|:") and "parameter or result" not in line:
            steps[-1][2].append(line.strip("| ").split("|")[0].strip())
        elif steps and re.match(r"(params\.yaml|reports/\S+)\s+\S+", line):
            steps[-1][2].append(line.split()[1])  # dvc's diff rows: path, then the parameter or metric
    assert [s[0][:3] for s in steps][:1] == [["dvc", "exp", "run"]], steps
    return steps
