import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import nbformat
import papermill as pm
import pytest
from conftest import requires_data
from nbformat.v4 import new_code_cell, new_notebook

from compendium.core import paths
from compendium.pipeline import nbrun, params


def _notebook(path, cells):
    nb = new_notebook(
        cells=[new_code_cell(c) for c in cells],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nb.cells[0].metadata["tags"] = ["parameters"]
    nbformat.write(nb, path)
    return path


@pytest.fixture
def fake_stage(monkeypatch):
    monkeypatch.setattr(params, "stage_module", lambda s: types.SimpleNamespace(DATA=()))
    monkeypatch.setattr(params, "stage_params", lambda *a, **k: {"scale": "smoke", "x": 2})


@pytest.mark.slow
def test_a_good_stage_publishes_everything_at_once(tmp_path, fake_stage):
    nb = _notebook(
        tmp_path / "good.ipynb",
        [
            "scale = 'cpu'\nx = 0",
            "import pandas as pd\nfrom compendium.pipeline import report\nrep = report.Reporter('good_stage')\n"
            "rep.table(pd.DataFrame({'x': [x]}), 't')\nrep.metrics({'x': x})\nprint('x is', x)",
        ],
    )
    out = tmp_path / "reports"
    written = nbrun.run_stage("good_stage", output_root=out, notebook=nb, progress=False)
    assert (out / "metrics/good_stage.json").read_text().strip().endswith("}")
    assert '"x": 2' in (out / "metrics/good_stage.json").read_text()
    assert (out / "tables/good_stage/t.csv").is_file() and (out / "tables/good_stage/t.md").is_file()
    html = (out / "html/good_stage.html").read_text()
    assert "x is 2" in html
    assert (out / "notebooks/good_stage.ipynb").is_file()
    assert len(written) == 5
    assert not list((paths.BUILD / "staging").glob("good_stage-*"))  # this run's staging folder is gone


@pytest.mark.slow
def test_two_runs_of_one_stage_stage_apart(tmp_path, monkeypatch, fake_stage):
    """A second run of a stage (a hand run during `dvc repro`) gets a staging folder of its own."""
    seen = []
    real = nbrun.tempfile.mkdtemp
    monkeypatch.setattr(nbrun.tempfile, "mkdtemp", lambda **kw: seen.append(real(**kw)) or seen[-1])
    nb = _notebook(
        tmp_path / "nb.ipynb",
        ["x = 1", "from compendium.pipeline import report\nreport.Reporter('good_stage').metrics({'x': x})"],
    )
    for i in range(2):
        nbrun.run_stage("good_stage", output_root=tmp_path / f"out{i}", notebook=nb, progress=False)
    assert len(set(seen)) == 2 and all(paths.BUILD / "staging" in Path(p).parents for p in seen)


@pytest.mark.slow
def test_a_failing_cell_names_the_cell_and_leaves_no_output(tmp_path, fake_stage):
    nb = _notebook(
        tmp_path / "bad.ipynb",
        [
            "scale = 'cpu'\nx = 0",
            "from compendium.pipeline import report\nreport.Reporter('bad_stage').metrics({'x': x})",
            "raise ValueError('boom in cell three')",
        ],
    )
    out = tmp_path / "reports"
    with pytest.raises(pm.PapermillExecutionError) as e:
        nbrun.run_stage("bad_stage", output_root=out, notebook=nb, progress=False)
    assert "boom in cell three" in str(e.value) and "ValueError" in str(e.value)
    assert e.value.cell_index is not None
    assert not out.exists() or not any(p.is_file() for p in out.rglob("*"))
    assert (paths.BUILD / "failed" / "bad_stage.ipynb").is_file()
    # previous products of the stage survive a failed run (dvc.yaml declares them persist)
    old = out / "metrics" / "bad_stage.json"
    old.parent.mkdir(parents=True)
    old.write_text('{"old": 1}')
    with pytest.raises(pm.PapermillExecutionError):
        nbrun.run_stage("bad_stage", output_root=out, notebook=nb, progress=False)
    assert old.read_text() == '{"old": 1}'


def test_publish_replaces_only_this_stage(tmp_path):
    out, staging = tmp_path / "reports", tmp_path / "staging"
    for rel in ("figures/s/old.png", "figures/other/keep.png", "metrics/s.json"):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text("old")
    (staging / "figures/s").mkdir(parents=True)
    (staging / "figures/s/new.png").write_text("new")
    moved = nbrun._publish(staging, out, "s")
    assert moved == [out / "figures/s/new.png"]
    assert not (out / "figures/s/old.png").exists() and not (out / "metrics/s.json").exists()
    assert (out / "figures/other/keep.png").read_text() == "old"


def test_publish_leaves_a_stage_models_folder_holding_exactly_what_this_run_wrote(tmp_path):
    """A file an earlier run put in one of the stage's own models/ folders (dvc.yaml: dd_labels owns
    models/distilled/labels) and this run did not write is removed with the publication, since DVC would
    count it in the folder's hash; other stages' models stay."""
    out, staging, models = tmp_path / "reports", tmp_path / "staging", tmp_path / "models"
    for rel in ("distilled/labels/ld_rr_seed3.pt", "distilled/labels/ld_rr_seed0.pt", "teachers/t.pt"):
        (models / rel).parent.mkdir(parents=True, exist_ok=True)
        (models / rel).write_text("old")
    (staging / "tables/dd_labels").mkdir(parents=True)
    (staging / "tables/dd_labels/results.csv").write_text("new")
    (staging / "artifacts/distilled/labels").mkdir(parents=True)
    (staging / "artifacts/distilled/labels/ld_rr_seed0.pt").write_text("new")
    nbrun._publish(staging, out, "dd_labels", staging / "artifacts", models)
    assert sorted(p.relative_to(models).as_posix() for p in models.rglob("*") if p.is_file()) == [
        "distilled/labels/ld_rr_seed0.pt",
        "teachers/t.pt",
    ]
    assert (models / "distilled/labels/ld_rr_seed0.pt").read_text() == "new"


def test_publish_into_an_unwritable_folder_replaces_nothing_and_keeps_the_new_products(tmp_path, monkeypatch):
    out, staging = tmp_path / "reports", tmp_path / "staging"
    for rel in ("html/s.html", "tables/s/t.csv", "metrics/s.json"):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text("old")
    for rel in ("html/s.html", "tables/s/t.csv", "metrics/s.json"):
        (staging / rel).parent.mkdir(parents=True, exist_ok=True)
        (staging / rel).write_text("new")
    real = nbrun._can_write
    monkeypatch.setattr(nbrun, "_can_write", lambda d: d != out / "tables" / "s" and real(d))  # a read-only folder
    with pytest.raises(nbrun.PublishError, match=r"tables/s is not writable.*kept in"):
        nbrun._publish(staging, out, "s")
    assert all((out / rel).read_text() == "old" for rel in ("html/s.html", "tables/s/t.csv", "metrics/s.json"))
    assert all((staging / rel).read_text() == "new" for rel in ("html/s.html", "tables/s/t.csv", "metrics/s.json"))
    monkeypatch.setattr(nbrun, "_can_write", real)
    nbrun._publish(staging, out, "s")
    assert all((out / rel).read_text() == "new" for rel in ("html/s.html", "tables/s/t.csv", "metrics/s.json"))


def test_a_read_only_products_folder_stops_the_run_before_any_compute(tmp_path, monkeypatch, fake_stage):
    out = tmp_path / "reports"
    (out / "tables/good_stage").mkdir(parents=True)
    monkeypatch.setattr(nbrun, "_can_write", lambda d: d != out / "tables" / "good_stage")
    ran = []
    monkeypatch.setattr(nbrun.tempfile, "mkdtemp", lambda **kw: ran.append(1))
    with pytest.raises(nbrun.PublishError, match="nothing was computed"):
        nbrun.run_stage("good_stage", output_root=out, notebook=_notebook(tmp_path / "nb.ipynb", ["x = 1"]))
    assert not ran


def test_a_second_run_of_a_stage_is_refused_while_the_first_holds_it(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "BUILD", tmp_path / "build")
    with nbrun.stage_lock("s") as lock:
        assert lock.read_text().split()[0] == str(nbrun.os.getpid())
        with pytest.raises(nbrun.StageLocked, match=rf"already running in process {nbrun.os.getpid()}"):
            with nbrun.stage_lock("s"):
                pass
        with nbrun.stage_lock("other"):  # another stage runs beside it
            pass
    assert not lock.exists()
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("999999999 2026-01-01 00:00:00\n")  # left by a process that is gone
    with nbrun.stage_lock("s"):
        assert lock.read_text().split()[0] == str(nbrun.os.getpid())


def test_bad_params_stop_before_any_kernel(tmp_path, capsys):
    f = tmp_path / "params.yaml"
    raw = params.load()
    raw["data_overview"]["grid_per_clas"] = 3
    raw["data_overview"]["dpi"] = 999
    import yaml

    f.write_text(yaml.safe_dump(raw))
    assert nbrun.main(["data_overview", "--params", str(f), "--output-root", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "data_overview.grid_per_clas: unknown key" in err and "data_overview.dpi: 999 is above" in err
    assert not (tmp_path / "r").exists()


def test_unknown_stage_and_missing_data_are_clear(tmp_path, monkeypatch, capsys):
    with pytest.raises(FileNotFoundError, match="no notebook"):
        nbrun.run_stage("no_such_stage")
    monkeypatch.setattr(paths, "DATA", tmp_path / "empty")
    assert nbrun.main(["data_overview", "--output-root", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "is missing" in err and "make setup" in err and "train-images-idx3-ubyte" in err


@requires_data
@pytest.mark.slow
def test_data_overview_stage_at_smoke_scale(tmp_path):
    out = tmp_path / "reports"
    nbrun.run_stage(
        "data_overview",
        output_root=out,
        scale="smoke",
        notebook=paths.NOTEBOOKS / "data_overview.ipynb",
        progress=False,
    )
    for rel in (
        "html/data_overview.html",
        "notebooks/data_overview.ipynb",
        "metrics/data_overview.json",
        "figures/data_overview/samples_per_class.png",
        "figures/data_overview/class_balance.pdf",
        "tables/data_overview/split_sizes.csv",
        "tables/data_overview/pixel_stats.md",
        "plots/data_overview/class_balance_fashion_mnist.csv",
    ):
        assert (out / rel).stat().st_size > 0, rel
    import json

    m = json.loads((out / "metrics/data_overview.json").read_text())
    assert m["fashion_mnist"]["train_size"] == 60000 and m["fashion_mnist"]["split_sizes_ok"] is True


def test_split_css_moves_the_page_styles_to_one_stylesheet():
    page = (
        "<html><head><meta charset='utf-8'><style type='text/css'>a{color:red}</style>"
        "<style>b{x:1}</style><title>t</title></head><body><style scoped>td{y:2}</style><p>hi</p></body></html>"
    )
    body, css = nbrun.split_css(page)
    assert css == "a{color:red}\nb{x:1}"
    assert f'<link rel="stylesheet" href="{nbrun.SHARED_CSS}">' in body
    assert "a{color:red}" not in body and "<style scoped>td{y:2}</style>" in body  # cell styles stay
    assert body.index("<link") < body.index("<title>")
    assert nbrun.split_css("<html><body>x</body></html>") == ("<html><body>x</body></html>", "")


@pytest.mark.slow
def test_progress_streams_to_the_console_and_stays_out_of_the_page(tmp_path, fake_stage, capsys):
    """Library progress lines (core.progress.say, from the kernel and from its worker processes) reach
    the runner's console while the stage runs, and neither the executed notebook nor its page holds them."""
    nb = _notebook(
        tmp_path / "nb.ipynb",
        [
            "x = 1",
            "from compendium.core.parallel import run_calls\nfrom compendium.core.progress import say\n"
            "n = 1 + 1\nsay(f'[demo] epoch {n}/2  kernel line')\nrun_calls([(say, (f'[demo] worker {n} line',), {})], "
            "workers=1)\n"
            "print('a result for the page')",
        ],
    )
    out = tmp_path / "reports"
    nbrun.run_stage("good_stage", output_root=out, notebook=nb, progress=True)
    console = capsys.readouterr().out
    assert "  [demo] epoch 2/2  kernel line" in console and "  [demo] worker 2 line" in console
    page = (out / "html/good_stage.html").read_text()
    executed = (out / "notebooks/good_stage.ipynb").read_text()
    assert "a result for the page" in page
    # the code shows the f-strings; the printed lines (with n filled in) are nowhere on the page or in the notebook
    for text in (page, executed):
        assert "epoch 2/2" not in text and "worker 2 line" not in text


def test_a_stage_that_runs_fewer_seeds_than_the_power_plan_funds_is_refused_before_it_computes(tmp_path, monkeypatch):
    import pandas as pd

    from compendium.verdicts import funding

    plan = pd.DataFrame(
        [
            {
                "id": "x.claim",
                "records": "theory_ssdd",
                "seeds_planned": "80",
                "funded": funding.FUNDED,
                "seeds_key": "problems",
            }
        ]
    )
    monkeypatch.setattr(funding, "read", lambda path=funding.FILE: plan)
    ran = []
    monkeypatch.setattr(nbrun, "stage_lock", lambda stage: ran.append(stage))  # reached only after the check
    with pytest.raises(params.ParamsError, match=r"theory_ssdd\.problems: 50 seeds, but the committed power plan"):
        nbrun.run_stage("theory_ssdd", output_root=tmp_path, scale="cpu")
    assert ran == []


def test_a_lock_whose_pid_a_later_process_reuses_is_taken_over(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "BUILD", tmp_path / "build")
    lock = paths.BUILD / "locks" / "s.lock"
    lock.parent.mkdir(parents=True)
    me = nbrun.os.getpid()
    lock.write_text(f"{me} {nbrun.process_start(me)} 2026-01-01 00:00:00\n")  # held by this very process
    with pytest.raises(nbrun.StageLocked, match=f"already running in process {me}"):
        with nbrun.stage_lock("s"):
            pass
    if nbrun.process_start(me) != "-":  # where the system tells a process's start time
        lock.write_text(f"{me} 1 2026-01-01 00:00:00\n")  # the same PID, but a process that started at boot
        with nbrun.stage_lock("s"):
            assert lock.read_text().split()[:2] == [str(me), nbrun.process_start(me)]


@pytest.mark.slow
def test_a_dead_kernel_is_named_and_keeps_its_partial_notebook(tmp_path, fake_stage, capsys):
    nb = _notebook(
        tmp_path / "dies.ipynb",
        ["x = 0", "print('before the crash')", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"],
    )
    out = tmp_path / "reports"
    with pytest.raises(Exception) as e:
        nbrun.run_stage("dying_stage", output_root=out, notebook=nb, progress=False)
    assert type(e.value).__name__ in ("DeadKernelError", "PapermillExecutionError")
    err = capsys.readouterr().err
    assert "kernel died" in err or "failed in a cell" in err
    assert (paths.BUILD / "failed" / "dying_stage.ipynb").is_file()
    assert not out.exists() or not any(p.is_file() for p in out.rglob("*"))


_RUNNER = """
import sys, types
from compendium.pipeline import nbrun, params
params.stage_module = lambda s: types.SimpleNamespace(DATA=())
params.stage_params = lambda *a, **k: {"scale": "smoke", "x": 2}
sys.exit(nbrun.main(["long_stage", "--notebook", sys.argv[1], "--output-root", sys.argv[2], "--quiet"]))
"""

_SPAWNER = """
import shlex, subprocess, sys, time
cmd = [sys.executable, *sys.argv[2:]]
if sys.argv[1] == "shell":  # as dvc runs a stage's command: through a shell, which need not exec it
    cmd = ["/bin/sh", "-c", shlex.join(cmd) + "; true"]
subprocess.Popen(cmd)
time.sleep(600)
"""


def _long_notebook(tmp_path):
    marker = tmp_path / "ticks"
    nb = _notebook(
        tmp_path / "long.ipynb",
        [
            "x = 0",
            f"import time\nfor i in range(600):\n    open({str(marker)!r}, 'a').write('.')\n    time.sleep(0.1)",
            "from compendium.pipeline import report\nreport.Reporter('long_stage').metrics({'x': x})",
        ],
    )
    return nb, marker


def _stops_ticking(marker, timeout=30.0):
    """The notebook's ticks stop within ``timeout`` seconds (its kernel is gone)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        n = marker.stat().st_size
        time.sleep(1.5)
        if marker.stat().st_size == n:
            return True
    return False


def _wait_for(marker, timeout=60.0):
    deadline = time.time() + timeout
    while not (marker.is_file() and marker.stat().st_size > 3) and time.time() < deadline:
        time.sleep(0.2)
    assert marker.is_file(), "the notebook never started"


@pytest.mark.slow
def test_sigterm_stops_the_notebook_and_publishes_nothing(tmp_path):
    nb, marker = _long_notebook(tmp_path)
    (tmp_path / "run.py").write_text(_RUNNER)
    out = tmp_path / "reports"
    p = subprocess.Popen([sys.executable, str(tmp_path / "run.py"), str(nb), str(out)], cwd=paths.ROOT)
    _wait_for(marker)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=60) == 130
    assert _stops_ticking(marker)
    assert not out.exists() or not any(f.is_file() for f in out.rglob("*"))


@pytest.mark.slow
@pytest.mark.parametrize("via", ["direct", "shell"])
def test_a_stage_whose_launcher_dies_stops_instead_of_publishing(tmp_path, via):
    nb, marker = _long_notebook(tmp_path)
    (tmp_path / "run.py").write_text(_RUNNER)
    (tmp_path / "spawn.py").write_text(_SPAWNER)
    out = tmp_path / "reports"
    parent = subprocess.Popen(
        [sys.executable, str(tmp_path / "spawn.py"), via, str(tmp_path / "run.py"), str(nb), str(out)], cwd=paths.ROOT
    )
    _wait_for(marker)
    parent.kill()  # dvc killed without a chance to forward anything
    parent.wait()
    assert _stops_ticking(marker)
    assert not out.exists() or not any(f.is_file() for f in out.rglob("*"))


def test_a_read_only_models_subfolder_stops_the_run_before_any_compute(tmp_path, monkeypatch, fake_stage):
    models = tmp_path / "models"
    (models / "targets").mkdir(parents=True)
    marker = tmp_path / "ran"
    nb = _notebook(tmp_path / "nb.ipynb", ["x = 0", f"open({str(marker)!r}, 'w').write('ran')"])
    real = nbrun._can_write
    monkeypatch.setattr(nbrun, "_can_write", lambda d: d != models / "targets" and real(d))
    with pytest.raises(nbrun.PublishError, match=r"models/targets is not writable. Nothing was computed"):
        nbrun.run_stage("ro_stage", output_root=tmp_path / "reports", notebook=nb, progress=False, models_root=models)
    assert not marker.exists()


@pytest.mark.slow
def test_a_publication_cut_short_is_rolled_back_before_the_next_run(tmp_path, monkeypatch, fake_stage):
    """A kill between two renames of the publication leaves its journal; the next run restores the previous
    products first, then publishes its own whole."""
    out = tmp_path / "reports"
    nb = _notebook(
        tmp_path / "nb.ipynb",
        ["x = 0", "from compendium.pipeline import report\nrep = report.Reporter('cut_stage')\nrep.metrics({'x': x})"],
    )
    monkeypatch.setattr(params, "stage_params", lambda *a, **k: {"scale": "smoke", "x": 1})
    nbrun.run_stage("cut_stage", output_root=out, notebook=nb, progress=False)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    from compendium.pipeline import publish as P

    real, n = P.os.replace, [0]

    def killed_midway(a, b):
        n[0] += 1
        if n[0] == 6:
            raise KeyboardInterrupt
        return real(a, b)

    monkeypatch.setattr(params, "stage_params", lambda *a, **k: {"scale": "smoke", "x": 2})
    monkeypatch.setattr(P.os, "replace", killed_midway)
    with pytest.raises(KeyboardInterrupt):
        nbrun.run_stage("cut_stage", output_root=out, notebook=nb, progress=False)
    monkeypatch.setattr(P.os, "replace", real)
    assert nbrun.journal_file("cut_stage").is_file()
    assert P.recover(nbrun.journal_file("cut_stage"))
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before  # all old again
    nbrun.run_stage("cut_stage", output_root=out, notebook=nb, progress=False)
    assert '"x": 2' in (out / "metrics" / "cut_stage.json").read_text()
