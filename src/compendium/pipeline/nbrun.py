"""Run one pipeline stage: ``python -m compendium.pipeline.nbrun <stage>``.

1. Load ``params.yaml``, validate every section against its schema and resolve the stage's
   section at the selected scale; check the data files the stage reads. Any problem stops
   here, before a kernel starts.
2. Execute the cleaned notebook (``build/nb/<stage>.ipynb``, made by the ``clean_notebooks``
   stage) with papermill, the resolved parameters injected, in a fresh staging folder
   (``build/staging/<stage>-<random>``, one per run) that the notebook's :class:`compendium.pipeline.report.Reporter`
   writes to.
3. Render the executed notebook to HTML with nbconvert (inputs shown unless ``--hide-input``;
   cells tagged ``hide-input`` always lose their input). The page styles, the same for every page,
   live once in ``html/notebook.css``.
4. Only when all of that succeeded, replace the stage's previous products in the output root
   (``reports/``) by the new ones, and move its heavy products (checkpoints, targets, sets) to the models
   root (``models/``; ``models/faithful/`` for the faithful profile, :func:`artifacts_destination`), where the
   stages downstream read them. The notebook sees the output root as ``COMPENDIUM_PUBLISHED_ROOT``
   (:func:`compendium.core.paths.published_root`): the upstream stages' tables and claim rows are there.

Progress: the library's progress lines (epochs with throughput and time left, arms, syntheses;
:mod:`compendium.core.progress`), from the kernel and its worker processes, go to
``build/progress/<stage>.log`` and are streamed to this console as they come (``--quiet``: not
streamed). They are not cell outputs, so the pages show results, not logs.

While it runs the stage holds ``build/locks/<stage>.lock`` (a second run of the same stage stops at
once, naming the process). Every call the notebook runs through
:func:`compendium.core.parallel.run_calls` (training arms, evaluations) is stored as it completes in
``build/resume/<stage>/<fingerprint>`` (:func:`resume_folder`): a run that was interrupted (Ctrl-C, a
killed process, a failing cell) and is started again with the same inputs computes only the calls it
had not finished, to the same results. The folder is removed once the stage has published.

A failing cell makes the command exit non-zero with papermill's message naming the cell; the
partly executed notebook is kept in ``build/failed/<stage>.ipynb`` for debugging, and nothing
is written under ``reports/``, so no half-written output looks valid. The stage's outputs are
declared ``persist: true`` in dvc.yaml, so DVC does not delete the previous products before
the run either: a failed run (bad params, damaged data, a failing cell) loses nothing already
computed, and ``dvc status`` still shows the stage as stale.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import yaml

from compendium.core import data, paths, resume
from compendium.core.progress import PROGRESS_ENV, Follower
from compendium.pipeline import params, stagedeps
from compendium.pipeline.publish import PublishError, publish, recover
from compendium.verdicts import funding

KERNEL = "compendium"  # registered into .venv by `make setup` (ipykernel install --sys-prefix)


def kernel_name() -> str:
    """The compendium's kernel where registered, else the environment's own ``python3``."""
    from jupyter_client.kernelspec import KernelSpecManager

    return KERNEL if KERNEL in KernelSpecManager().find_kernel_specs() else "python3"


def render_html(executed: Path, html: Path, hide_input: bool = False) -> str:
    import nbformat
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    cfg = Config()
    cfg.TagRemovePreprocessor.enabled = True
    cfg.TagRemovePreprocessor.remove_input_tags = (
        {"hide-input", "injected-parameters"} if hide_input else {"hide-input"}
    )
    cfg.TagRemovePreprocessor.remove_cell_tags = {"remove-cell"}
    exporter = HTMLExporter(config=cfg, exclude_input=hide_input, exclude_input_prompt=True, exclude_output_prompt=True)
    nb = nbformat.read(executed, as_version=4)
    body, _ = exporter.from_notebook_node(nb)
    body, css = split_css(body)
    html.parent.mkdir(parents=True, exist_ok=True)
    html.write_text(body, encoding="utf-8")
    return css


SHARED_CSS = "notebook.css"


def split_css(body: str) -> tuple[str, str]:
    """nbconvert's page styles (the ``<style>`` blocks of ``<head>``, ~260 KB, the same for every notebook)
    moved out of the page into one shared stylesheet, ``html/notebook.css``, that the page links to; the
    output cells' own styles (in ``<body>``) stay. Returns the page and the stylesheet's text."""
    import re

    cut = body.find("<body")
    if cut < 0:
        return body, ""
    head = body[:cut]
    blocks = re.findall(r"<style[^>]*>.*?</style>", head, flags=re.S)
    if not blocks:
        return body, ""
    css = "\n".join(re.sub(r"^<style[^>]*>|</style>$", "", b) for b in blocks)
    first = head.index(blocks[0])
    for b in blocks:
        head = head.replace(b, "", 1)
    head = head[:first] + f'<link rel="stylesheet" href="{SHARED_CSS}">' + head[first:]
    return head + body[cut:], css


def write_shared_css(html_dir: Path, css: str) -> None:
    """Write ``notebook.css`` beside the pages (only when its text changes; not a stage product)."""
    if not css:
        return
    path = html_dir / SHARED_CSS
    if not path.is_file() or path.read_text(encoding="utf-8") != css:
        html_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(css, encoding="utf-8")


def stage_products(output_root: Path, stage: str) -> list[Path]:
    """Where a stage's products live under the output root (files and folders)."""
    return [
        output_root / paths.HTML / f"{stage}.html",
        output_root / paths.EXECUTED / f"{stage}.ipynb",
        output_root / paths.METRICS / f"{stage}.json",
        output_root / paths.CLAIMS / f"{stage}.csv",
        output_root / paths.FIGURES / stage,
        output_root / paths.TABLES / stage,
        output_root / paths.PLOTS / stage,
        output_root / paths.TIMINGS / f"{stage}.json",
        output_root / paths.TIMINGS / stage,
    ]


def stage_artifact_folders(stage: str, artifacts_dest: Path) -> list[Path]:
    """The stage's folders of heavy products (its dvc.yaml outs under ``models/``), under ``artifacts_dest``:
    a run replaces their whole contents, so they hold exactly what the last run wrote (a file an earlier run
    wrote and this one did not is removed, as DVC would count it in the folder's hash)."""
    stages = yaml.safe_load(paths.DVC_YAML.read_text()).get("stages", {}) if paths.DVC_YAML.is_file() else {}
    outs = [o if isinstance(o, str) else next(iter(o)) for o in stages.get(stage, {}).get("outs", [])]
    return [
        Path(artifacts_dest) / Path(*Path(o).parts[1:])
        for o in outs
        if Path(o).parts[:1] == (paths.MODELS.name,) and len(Path(o).parts) > 1
    ]


class StageLocked(RuntimeError):
    """Another process is running the same stage."""


def _can_write(folder: Path) -> bool:
    """Whether a file can be created in ``folder`` (tried, so that read-only mounts and immutable
    folders count even for root)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def _nearest_existing(path: Path) -> Path:
    """The folder that must be writable to create or replace ``path``: its nearest existing ancestor."""
    d = path.parent
    while not d.exists():
        d = d.parent
    return d


def unwritable(output_root: Path, stage: str, staging: Path | None = None) -> None:
    """Raise :class:`PublishError` when a folder the stage's products go to (or the staged files would
    go to) cannot be written, naming it."""
    staged = sorted(f for f in staging.rglob("*") if f.is_file()) if staging is not None else []
    targets = [output_root / f.relative_to(staging) for f in staged] if staging is not None else []
    old = [
        f
        for p in stage_products(output_root, stage)
        for f in ([p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file()) if p.is_dir() else [])
    ]
    folders = {_nearest_existing(t) for t in [*targets, *old, *stage_products(output_root, stage)]}
    folders |= {p for p in stage_products(output_root, stage) if p.is_dir()}
    blocked = sorted(str(d) for d in folders if not (d.is_dir() and _can_write(d)))
    if blocked:
        kept = f"the new products are kept in {staging}" if staging is not None else "nothing was computed"
        raise PublishError(
            f"stage {stage!r} cannot publish: {', '.join(blocked)} is not writable. Nothing was "
            f"replaced; {kept}. Make the folder writable and rerun the stage."
        )


def journal_file(stage: str) -> Path:
    """The journal of a stage's publication in progress (:mod:`compendium.pipeline.publish`)."""
    return paths.BUILD / "publish" / f"{stage}.json"


def _publish(
    staging: Path, output_root: Path, stage: str, artifacts: Path | None = None, artifacts_dest: Path | None = None
) -> list[Path]:
    """Put the staged products (and the staged ``artifacts`` folder's files, into ``artifacts_dest``) in place of
    the stage's previous ones, as one step (only called on success).

    Every destination is checked first: a folder that cannot be written stops the publication before
    anything is replaced (:class:`PublishError`, naming the folder; the new products stay in ``staging``).
    Then :func:`compendium.pipeline.publish.publish` swaps them in with a journal: the previous run's files
    that this run did not write (pages, and checkpoints in the stage's own folders under ``artifacts_dest``:
    :func:`stage_artifact_folders`) are removed in the same step, and after any failure or kill the products
    are all the previous ones or all the new ones."""
    art = sorted(f for f in artifacts.rglob("*") if f.is_file()) if artifacts is not None and artifacts.is_dir() else []
    new = sorted(f for f in staging.rglob("*") if f.is_file() and (artifacts is None or artifacts not in f.parents))
    targets = [output_root / f.relative_to(staging) for f in new]
    art_targets = [artifacts_dest / f.relative_to(artifacts) for f in art] if art else []
    mine = stage_products(output_root, stage)
    if artifacts_dest is not None:
        mine += stage_artifact_folders(stage, artifacts_dest)
    old = [f for p in mine for f in ([p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file()))]
    stale = sorted(set(old) - set(targets) - set(art_targets))
    unwritable(output_root, stage, staging)
    blocked = sorted({str(d) for d in map(_nearest_existing, art_targets) if not _can_write(d)})  # each one's folder
    if blocked:
        raise PublishError(
            f"stage {stage!r} cannot publish its artifacts: {', '.join(blocked)} is not writable. Nothing was "
            f"replaced; the new products are kept in {staging}. Make the folder writable and rerun the stage."
        )
    moved = publish([*zip(art, art_targets), *zip(new, targets)], stale, journal_file(stage))
    for p in stage_products(output_root, stage):
        if p.is_dir():
            for d in sorted((x for x in p.rglob("*") if x.is_dir()), reverse=True):
                if not any(d.iterdir()):
                    d.rmdir()
    return moved


def _proc_stat(pid: int) -> tuple[str, list[str]]:
    """``/proc/<pid>/stat`` (Linux): the command name and the fields after it (state, ppid, ...)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()


def process_start(pid: int) -> str:
    """When process ``pid`` started, as the kernel counts it (Linux: field 22 of ``/proc/<pid>/stat``, clock ticks
    since boot), or ``"-"`` where the system does not say. With the PID it names one process, never a later one
    that reuses the number."""
    try:
        return _proc_stat(pid)[1][19]
    except (OSError, ValueError, IndexError):
        return "-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def stage_lock(stage: str):
    """Hold ``build/locks/<stage>.lock`` for the run: a second run of the same stage (a hand run during
    ``dvc repro``) stops at once with a message naming the process that holds it. A lock left by a
    process that no longer exists is taken over, and so is one whose PID a later process reuses (the lock
    records the holder's start time, :func:`process_start`)."""
    lock = paths.BUILD / "locks" / f"{stage}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            try:
                pid, born, started = lock.read_text().split(maxsplit=2)
                pid = int(pid)
            except (OSError, ValueError):
                pid, born, started = -1, "-", "?"
                try:  # just created by a run that has not written its PID yet: held
                    if time.time() - lock.stat().st_mtime < 5:
                        raise StageLocked(
                            f"stage {stage!r} is starting in another process; wait for it to finish "
                            f"or stop it. The lock is {lock}."
                        ) from None
                except FileNotFoundError:
                    continue
            same = born == "-" or process_start(pid) in ("-", born)  # not a later process with a reused PID
            if pid > 0 and _pid_alive(pid) and same:
                raise StageLocked(
                    f"stage {stage!r} is already running in process {pid} (since {started.strip()}); "
                    f"wait for it to finish or stop it. The lock is {lock}."
                ) from None
            lock.unlink(missing_ok=True)  # left by a process that is gone
            continue
        with os.fdopen(fd, "w") as f:
            f.write(f"{os.getpid()} {process_start(os.getpid())} {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        break
    try:
        yield lock
    finally:
        lock.unlink(missing_ok=True)


def _hash_path(h, p: Path) -> None:
    """Feed ``p`` (a file, or every file under a folder, in sorted order, with its relative name) to ``h``."""
    files = [p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file()) if p.is_dir() else []
    h.update(f"{p}:{'missing' if not p.exists() else len(files)}\n".encode())
    for f in files:
        h.update(f"{f.relative_to(p) if f != p else f.name}\n".encode())
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)


def stage_inputs(stage: str, notebook: Path, models_root: Path | None = None) -> list[Path]:
    """What a run of ``stage`` reads: its dvc.yaml deps (notebook, src files, data, upstream models),
    else, for a stage dvc.yaml does not declare, its notebook and the src files it imports. With
    ``models_root`` (a run that reads and publishes its artifacts there, not in ``models/``) the upstream
    models are those under it."""
    stages = yaml.safe_load(paths.DVC_YAML.read_text()).get("stages", {}) if paths.DVC_YAML.is_file() else {}
    if stage in stages:
        deps = [_models_dep(str(d), models_root) for d in stages[stage].get("deps", [])]
    else:
        deps = [paths.ROOT / f for f in stagedeps.stage_sources(stage, Path(notebook))]
    return [Path(notebook), *deps]


def _models_dep(dep: str, models_root: Path | None) -> Path:
    """A dvc.yaml dep as a path: one under ``models/`` moved under ``models_root`` when given."""
    rel = Path(dep)
    if models_root is not None and rel.parts[:1] == (paths.MODELS.name,):
        return Path(models_root) / Path(*rel.parts[1:])
    return paths.ROOT / rel


def resume_folder(stage: str, values: dict, notebook: Path, output_root: Path, models_root: Path | None = None) -> Path:
    """``build/resume/<stage>/<fingerprint>``: where a run of the stage stores each completed call
    (:mod:`compendium.core.resume`), so that the same run, interrupted and started again, goes on
    from the calls it had finished. The fingerprint covers the resolved parameters, the output root,
    and the contents of every input (:func:`stage_inputs`: code, notebook, data, upstream models),
    so a change to any of them starts afresh rather than reuse a result computed from other inputs.

    A run into another output root than ``reports/`` (the faithful profile, a seed-set rerun) keeps its
    calls in ``build/resume/<stage>@<root tag>/``: the pipeline's run of the same stage, which clears the
    other fingerprints of its folder, leaves them alone (and the other way round)."""
    key = {"stage": stage, "values": values, "output_root": str(Path(output_root).resolve())}
    if models_root is not None:
        key["models_root"] = str(Path(models_root).resolve())
    h = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode())
    for p in stage_inputs(stage, notebook, models_root):
        _hash_path(h, p)
    folder = stage
    if Path(output_root).resolve() != paths.REPORTS.resolve():
        folder += "@" + hashlib.sha256(str(Path(output_root).resolve()).encode()).hexdigest()[:10]
    return paths.BUILD / "resume" / folder / h.hexdigest()[:20]


def unwritable_artifacts(dest: Path, stage: str) -> None:
    """Raise :class:`PublishError` before any compute when the artifacts folder (``models/``) or a folder under
    it cannot be written, naming it: the run would otherwise compute and then fail to publish."""
    folders = [_nearest_existing(dest / "x")] + (
        sorted(d for d in dest.rglob("*") if d.is_dir()) if dest.is_dir() else []
    )
    blocked = [str(d) for d in folders if not _can_write(d)]
    if blocked:
        raise PublishError(
            f"stage {stage!r} could not publish its artifacts: {', '.join(blocked)} is not writable. Nothing was "
            "computed; make the folder writable and rerun the stage."
        )


def artifacts_destination(output_root: Path, models_root: Path | None = None) -> Path:
    """Where a run publishes its heavy products (checkpoints, targets) and reads its upstream ones
    (``COMPENDIUM_MODELS_ROOT``, :func:`compendium.core.paths.find_artifact`): ``models_root`` when given (the
    faithful profile: ``models/faithful/``), else ``models/`` for the pipeline (output root ``reports/``),
    else the ``artifacts/`` folder beside another output root. Never under ``reports/``'s own products."""
    if models_root is not None:
        return Path(models_root)
    return (
        paths.MODELS if Path(output_root).resolve() == paths.REPORTS.resolve() else Path(output_root) / paths.ARTIFACTS
    )


def failure_cause(e: BaseException) -> str:
    """What stopped a stage's notebook, in words, with the likely cause where the error does not say it."""
    name = type(e).__name__
    if name == "DeadKernelError":
        return (
            "stopped: its kernel died (most often the machine ran out of memory: see `dmesg`, or run at a smaller "
            "scale or with fewer workers)"
        )
    if isinstance(e, KeyboardInterrupt):
        return "was interrupted (SIGINT or SIGTERM, or the process that started it ended)"
    if name == "PapermillExecutionError":
        return "failed in a cell"
    return f"failed ({name}: {str(e)[:200]})"


SHELLS = {"sh", "bash", "dash", "zsh", "fish", "ksh"}


def _launcher() -> tuple[int, int]:
    """(parent PID, and where the parent is a shell that ``dvc`` ran the command through, the shell's parent PID;
    else 0). Either changes when the process that launched this one ends."""
    parent = os.getppid()
    try:
        comm, rest = _proc_stat(parent)
        return parent, int(rest[1]) if comm in SHELLS else 0
    except (OSError, ValueError, IndexError):
        return parent, 0


def _stop_on_signals_and_orphaning(poll: float = 1.0) -> None:
    """SIGTERM stops the stage as Ctrl-C does (the kernel and its workers are shut down, nothing is published),
    and so does the end of the process that started this one (``dvc repro`` killed): a stage never goes on
    training, and publishing, with no one waiting for it."""
    import signal
    import threading

    def stop(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, stop)
    launcher = _launcher()

    def watch():
        while True:
            time.sleep(poll)
            if _launcher() != launcher:
                os.kill(os.getpid(), signal.SIGTERM)
                return

    threading.Thread(target=watch, daemon=True, name="nbrun-orphan-watch").start()


def run_stage(
    stage: str,
    params_file: Path | None = None,
    output_root: Path | None = None,
    notebook: Path | None = None,
    scale: str | None = None,
    hide_input: bool = False,
    timeout: int | None = None,
    progress: bool = True,
    models_root: Path | None = None,
) -> list[Path]:
    """Run ``stage`` and return the paths it wrote under ``output_root`` (default ``reports/``).
    The progress lines of the run (:mod:`compendium.core.progress`) go to ``build/progress/<stage>.log``,
    not into the pages, and with ``progress`` they are streamed to this process's console as they come.
    ``models_root``: where the artifacts go and the upstream ones are read (:func:`artifacts_destination`)."""
    import papermill as pm

    output_root = Path(output_root) if output_root is not None else paths.REPORTS
    notebook = Path(notebook) if notebook is not None else paths.BUILD / "nb" / f"{stage}.ipynb"
    if not notebook.is_file():
        source = paths.NOTEBOOKS / f"{stage}.ipynb"
        if not source.is_file():
            raise FileNotFoundError(f"no notebook for stage {stage!r}: {source} is missing")
        notebook = source
    module = params.stage_module(stage)
    values = params.stage_params(stage, params_file, scale)
    planned = funding.unmet(stage, values)  # the seeds the committed power plan funds at cpu, before any compute
    if planned:
        raise params.ParamsError(
            f"{params_file or paths.PARAMS}: stage {stage} runs fewer seeds than the power plan "
            "funds:\n" + "\n".join(f"  - {stage}.{p}" for p in planned)
        )
    data.verify(tuple(getattr(module, "DATA", ())))

    with stage_lock(stage):
        done = recover(journal_file(stage))  # a publication that a kill cut short: finished or rolled back
        if done:
            print(f"[nbrun] stage {stage!r}: {done}", flush=True)
        unwritable(output_root, stage)  # a read-only products folder stops the run before any compute
        # a folder of this run's own: two runs of one stage (a hand run during `dvc repro`) never share it
        (paths.BUILD / "staging").mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f"{stage}-", dir=paths.BUILD / "staging"))
        executed = staging / paths.EXECUTED / f"{stage}.ipynb"
        executed.parent.mkdir(parents=True)
        # heavy products (checkpoints, targets) go to models/ for the pipeline, elsewhere beside the output root
        artifacts_dest = artifacts_destination(output_root, models_root)
        unwritable_artifacts(artifacts_dest, stage)
        # an earlier run of this stage that was interrupted left its completed calls here, if its inputs were these
        resume_dir = resume_folder(stage, values, notebook, output_root, models_root)
        for other in resume_dir.parent.iterdir() if resume_dir.parent.is_dir() else ():
            if other != resume_dir:
                shutil.rmtree(other, ignore_errors=True)  # from other inputs: never reused
        if resume_dir.is_dir() and any(resume_dir.iterdir()):
            print(
                f"[nbrun] stage {stage!r}: resuming; {sum(1 for _ in resume_dir.rglob('*.pt'))} completed calls "
                f"of an interrupted run with the same inputs are in {resume_dir}",
                flush=True,
            )
        progress_file = paths.BUILD / "progress" / f"{stage}.log"
        progress_file.parent.mkdir(parents=True, exist_ok=True)
        progress_file.write_text("")
        env_before = {
            k: os.environ.get(k)
            for k in (
                paths.OUTPUT_ROOT_ENV,
                paths.MODELS_ROOT_ENV,
                "COMPENDIUM_STAGE",
                paths.SCALE_ENV,
                "TQDM_DISABLE",
                resume.RESUME_ENV,
                PROGRESS_ENV,
                paths.PUBLISHED_ROOT_ENV,
            )
        }
        os.environ[resume.RESUME_ENV] = str(resume_dir)
        os.environ[PROGRESS_ENV] = str(progress_file)
        os.environ[paths.OUTPUT_ROOT_ENV] = str(staging)
        os.environ[paths.MODELS_ROOT_ENV] = str(artifacts_dest)
        os.environ[paths.PUBLISHED_ROOT_ENV] = str(output_root.resolve())  # the upstream stages' tables and claims
        os.environ["COMPENDIUM_STAGE"] = stage
        os.environ[paths.SCALE_ENV] = str(values.get("scale", ""))
        os.environ["TQDM_DISABLE"] = "1"
        t0 = time.perf_counter()
        try:
            with Follower(progress_file, "  ", out=sys.stdout if progress else io.StringIO()):
                pm.execute_notebook(
                    str(notebook),
                    str(executed),
                    parameters=values,
                    kernel_name=kernel_name(),
                    log_output=False,
                    progress_bar=False,
                    cwd=str(paths.ROOT),
                    execution_timeout=timeout,
                )
        except BaseException as e:  # a failing cell, a dead kernel, an interrupt: nothing is published
            failed = paths.BUILD / "failed" / f"{stage}.ipynb"
            failed.parent.mkdir(parents=True, exist_ok=True)
            if executed.is_file():
                shutil.copy2(executed, failed)
            shutil.rmtree(staging, ignore_errors=True)
            print(
                f"[nbrun] stage {stage!r} {failure_cause(e)}; the partly executed notebook is {failed}; "
                f"nothing was written under {output_root}; the completed calls stay in {resume_dir} for the "
                "next run",
                file=sys.stderr,
            )
            raise
        finally:
            for k, v in env_before.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        css = render_html(executed, staging / paths.HTML / f"{stage}.html", hide_input=hide_input)
        unwritable(output_root, stage, staging)  # before the artifacts move: all or nothing
        try:  # checkpoints and pages in one step: all new, or all old
            moved = _publish(staging, output_root, stage, staging / paths.ARTIFACTS, artifacts_dest)
        except PublishError as e:
            print(f"[nbrun] {e}", file=sys.stderr)
            raise
        write_shared_css(output_root / paths.HTML, css)
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(resume_dir.parent, ignore_errors=True)  # published: nothing left to resume
        print(
            f"[nbrun] stage {stage!r} ({values.get('scale', '')}) done in {time.perf_counter() - t0:.1f} s; "
            f"{len(moved)} files under {output_root}",
            flush=True,
        )
        return moved


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Run one notebook stage of the pipeline.")
    ap.add_argument("stage")
    ap.add_argument("--params", type=Path, default=None, help="params file (default: params.yaml)")
    ap.add_argument("--output-root", type=Path, default=None, help="default: reports/")
    ap.add_argument("--notebook", type=Path, default=None, help="default: build/nb/<stage>.ipynb")
    ap.add_argument("--scale", choices=params.SCALES, default=None, help="override params.yaml's scale")
    ap.add_argument("--hide-input", action="store_true", help="render the HTML without code")
    ap.add_argument("--timeout", type=int, default=None, help="per-cell timeout in seconds")
    ap.add_argument("--quiet", action="store_true", help="do not stream the progress lines to the console")
    ap.add_argument(
        "--models-root",
        type=Path,
        default=None,
        help="where artifacts go and upstream ones are read (default: models/ for reports/, "
        "else <output-root>/artifacts)",
    )
    args = ap.parse_args(argv)
    _stop_on_signals_and_orphaning()
    try:
        run_stage(
            args.stage,
            args.params,
            args.output_root,
            args.notebook,
            args.scale,
            args.hide_input,
            args.timeout,
            progress=not args.quiet,
            models_root=args.models_root,
        )
    except (params.ParamsError, data.DataError, StageLocked, PublishError) as e:
        print(f"[nbrun] {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # papermill's error names the failing cell
        if type(e).__name__ in ("PapermillExecutionError", "DeadKernelError"):
            print(f"[nbrun] {e}", file=sys.stderr)
            return 1
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
