"""The faithful profile: its parameters at every stage, and its runner (compendium.pipeline.faithful): the DAG
order from dvc.yaml, the done records that skip a finished stage and redo a changed one, the --hours stop, the
artifacts root it publishes to and reads from, and the time estimate."""

import json
import types

import nbformat
import pytest
import yaml
from nbformat.v4 import new_code_cell, new_notebook

from compendium.core import paths
from compendium.distill import runner
from compendium.pipeline import faithful, nbrun, params, timings

# --- the parameters ---------------------------------------------------------------------------------------


def test_every_section_resolves_and_passes_its_checks_at_faithful_scale():
    for section in params.schemas():
        values = params.stage_params(section, scale="faithful")
        assert values["scale"] == "faithful"
        assert set(values) == set(params.schemas()[section]) | {"scale"}


def _faithful_overrides() -> dict[str, dict]:
    raw = params.load()
    return {
        s: b["scales"]["faithful"]
        for s, b in raw.items()
        if isinstance(b, dict) and "faithful" in (b.get("scales") or {})
    }


#: keys that set the datasets and the networks: the faithful profile keeps the cpu scale's
NETWORK_OR_DATA = (
    "dataset",
    "data_root",
    "cross_dataset",
    "width",
    "depth",
    "norm",
    "global_pool",
    "arch",
    "archs",
    "students",
    "teachers",
    "priors",
    "head_mult",
    "hidden",
    "filters",
    "length",
    "noise_dim",
    "learners",
    "test_n",
    "eval_batch",
    "eval_batch_hard",
    "batch_size",
    "batch_real",
    "real_batch",
    "target_batch",
)


def _restores_paper_students(section: str, key: str, value) -> bool:
    """A student list the cpu scale cut for time and faithful restores: the cpu's students plus some of the
    paper's (at the cpu's widths, which stay in their own keys)."""
    if key != "students":
        return False
    cpu = params.stage_params(section, scale="cpu")[key]
    paper = params.stage_params(section, scale="paper")[key]
    return set(cpu) <= set(value) <= set(paper)


def test_faithful_keeps_the_cpu_datasets_and_networks():
    for section, over in _faithful_overrides().items():
        bad = [
            k
            for k in over
            if (k in NETWORK_OR_DATA or "width" in k or k.endswith(("_mult", "_depth", "_patch", "_stride")))
            and not _restores_paper_students(section, k, over[k])
        ]
        assert not bad, f"{section}.scales.faithful changes the network or data keys {bad}: faithful keeps the cpu's"


def test_faithful_runs_the_papers_lengths_where_the_cpu_scale_cuts_them():
    v = {s: params.stage_params(s, scale="faithful") for s in params.schemas()}
    cpu = {s: params.stage_params(s, scale="cpu") for s in params.schemas()}
    # ReLA (rela.md 2.2 / 7.10): 100 epochs, three budgets, the camera-ready switch; BYOL* is the same-dataset prior
    for s in ("rela_smoke", "rela_budget", "rela_arch", "rela_methods", "rela_ablations"):
        assert v[s]["epochs"] == 100 and v[s]["schedule"] == "switch" and v[s]["probe_epochs"] == 100
    assert v["priors"]["byol_epochs"] == v["rela_budget"]["epochs"]
    assert cpu["priors"]["byol_epochs"] == cpu["rela_budget"]["epochs"]
    assert v["rela_budget"]["budgets"] == [0.1, 0.2, 0.5] and v["rela_budget"]["variant_schedule"] == "switch_scaled"
    assert v["rela_ablations"]["lambdas"] == [0.2, 0.4, 0.6, 0.8, 1.0]
    assert v["rela_ablations"]["fractions"] == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    # DC / DSA / DM (dd-baselines.md 4), SRe2L / DWA (dwa.md 2.7), SSDD (ssdd.md 2.5)
    m = v["dd_matching"]
    assert (m["iterations"], m["dm_iterations"], m["loops_ipc10"], m["loops_ipc50"]) == (
        1000,
        20000,
        [10, 50],
        [50, 10],
    )
    assert (v["dd_dc_arch"]["iterations"], v["dd_dc_arch"]["loops"], v["dd_dc_arch"]["ipc"]) == (1000, [1, 1], 1)
    assert v["dd_inversion"]["iterations"] == v["dd_dwa"]["iterations"] == v["dd_dwa"]["cross_iterations"] == 1000
    assert v["ssdd_distill"]["steps"] == 30000 and v["ssdd_eval"]["pre_epochs"] == 1000
    # no faithful iteration count is below the cpu one (but TDD's 3 inner epochs, the paper's: the cpu runs 5)
    for s, over in _faithful_overrides().items():
        for k, x in over.items():
            if k.endswith(("steps", "iterations", "epochs")) and (s, k) != ("dd_text", "epochs"):
                assert x >= cpu[s][k], f"{s}.{k}: faithful {x} < cpu {cpu[s][k]}"


def test_faithful_compares_arms_on_at_least_three_seeds():
    for s in _faithful_overrides():
        v = params.stage_params(s, scale="faithful")
        # replicate_seeds: the seeds of BYOL* beside the priors stage's own `seed` (its run is BYOL* there too)
        short = {
            k: x
            for k, x in v.items()
            if (k == "seeds" or k.endswith("_seeds")) and isinstance(x, list) and len(x) + (k == "replicate_seeds") < 3
        }
        assert not short, f"{s} at faithful scale: {short}"


def test_the_ledger_stage_reads_the_rows_of_its_own_output_root():
    src = "".join(
        "".join(c["source"]) for c in json.loads((paths.NOTEBOOKS / "claims_ledger.ipynb").read_text())["cells"]
    )
    assert "paths.REPORTS" not in src
    assert "paths.published_root()" in src and "ledger.read_stage_rows(written)" in src


# --- the DAG ----------------------------------------------------------------------------------------------

DVC = {
    "stages": {
        "clean_notebooks": {
            "cmd": "x",
            "deps": ["notebooks/a.ipynb", "notebooks/b.ipynb"],
            "outs": ["build/nb/a.ipynb", "build/nb/b.ipynb"],
        },
        "c": {
            "cmd": "c",
            "deps": ["build/nb/c.ipynb", "src/c.py", "models/a", "reports/tables/b"],
            "outs": ["reports/notebooks/c.ipynb", {"reports/claims/c.csv": {"cache": False}}],
        },
        "a": {"cmd": "a", "deps": ["build/nb/a.ipynb", "src/a.py", "data"], "outs": [{"models/a": {"persist": True}}]},
        "b": {"cmd": "b", "deps": ["build/nb/b.ipynb", "models/a/prior.pt"], "outs": ["reports/tables/b"]},
        "ledger": {"cmd": "l", "deps": ["reports/claims/c.csv"], "outs": ["reports/claims.csv"]},
        "summary": {
            "cmd": "s",
            "deps": ["reports/claims.csv", "reports/notebooks/c.ipynb"],
            "metrics": [{"reports/summary/x.json": {"cache": False}}],
        },
    }
}


def test_the_dag_comes_from_deps_and_outs_upstream_first():
    stages = faithful.read_stages(DVC)
    assert "clean_notebooks" not in stages
    up = faithful.upstream(stages)
    assert up == {"c": {"a", "b"}, "a": set(), "b": {"a"}, "ledger": {"c"}, "summary": {"ledger", "c"}}
    assert faithful.dag_order(stages, up) == ["a", "b", "c", "ledger", "summary"]
    assert faithful.select(faithful.dag_order(stages, up), up, ["c"]) == ["a", "b", "c"]
    assert faithful.select(faithful.dag_order(stages, up), up, ["c"], only=True) == ["c"]
    with pytest.raises(ValueError, match="unknown stage"):
        faithful.select(["a"], up, ["nope"])
    loop = {"x": faithful.Stage("x", ("o/y",), ("o/x",)), "y": faithful.Stage("y", ("o/x",), ("o/y",))}
    with pytest.raises(ValueError, match="cycle"):
        faithful.dag_order(loop, faithful.upstream(loop))


def test_the_real_pipeline_order():
    stages = faithful.read_stages(yaml.safe_load(paths.DVC_YAML.read_text()))
    up = faithful.upstream(stages)
    order = faithful.dag_order(stages, up)
    assert "clean_notebooks" not in order and set(order) == set(stages)
    pos = {s: i for i, s in enumerate(order)}
    assert all(pos[u] < pos[s] for s in order for u in up[s])
    assert (
        {"priors"} <= up["rela_budget"] and {"dd_teachers"} <= up["dd_coresets"] and "ssdd_teacher" in up["ssdd_eval"]
    )
    assert up["claims_ledger"] >= {
        "rela_budget",
        "rela_arch",
        "rela_methods",
        "rela_ablations",
        "dd_kip",
        "dd_text",
        "ssdd_eval",
        "theory_samples",
    }
    assert order[-1] == "summary" and pos["claims_ledger"] < pos["summary"]


# --- done records: skip and redo --------------------------------------------------------------------------


@pytest.fixture
def chain(tmp_path, monkeypatch):
    """Three stages a -> b -> c with source files in a scratch project root, and a fake run function."""
    monkeypatch.setattr(paths, "ROOT", tmp_path / "proj")
    for n in "abc":
        f = tmp_path / "proj" / "src" / f"{n}.py"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(f"x = '{n}'\n")
    dvc = {
        "stages": {
            "a": {"deps": ["src/a.py"], "outs": ["models/a"]},
            "b": {"deps": ["src/b.py", "models/a"], "outs": ["reports/tables/b"]},
            "c": {"deps": ["src/c.py", "reports/tables/b"], "outs": ["reports/claims/c.csv"]},
        }
    }
    stages = faithful.read_stages(dvc)
    up = faithful.upstream(stages)
    calls = []
    values = {"a": {"epochs": 100}, "b": {"iterations": 1000}, "c": {}}
    ns = types.SimpleNamespace(root=tmp_path / "out", calls=calls, values=values, proj=tmp_path / "proj")

    def go(**kw):
        return faithful.run(
            faithful.dag_order(stages, up),
            stages,
            up,
            ns.root,
            tmp_path / "models",
            run_fn=lambda st, r, m: calls.append(st),
            values_fn=lambda st: dict(values[st]),
            **kw,
        )

    ns.go = go
    return ns


def test_a_rerun_skips_the_stages_whose_records_match(chain):
    assert chain.go()["ran"] == ["a", "b", "c"]
    rec = json.loads((chain.root / "done" / "b.json").read_text())
    assert rec["params"] == {"iterations": 1000} and rec["scale"] == "faithful" and "src/b.py" in rec["sources"]
    assert set(rec["upstream"]) == {"a"} and rec["minutes"] >= 0
    chain.calls.clear()
    out = chain.go()
    assert chain.calls == [] and out["skipped"] == ["a", "b", "c"]


def test_changed_params_redo_the_stage_and_everything_downstream(chain):
    chain.go()
    chain.calls.clear()
    chain.values["b"]["iterations"] = 20000
    chain.go()
    assert chain.calls == ["b", "c"]


def test_changed_code_redoes_the_stage_and_downstream_only(chain):
    chain.go()
    chain.calls.clear()
    (chain.proj / "src" / "c.py").write_text("x = 'changed'\n")
    chain.go()
    assert chain.calls == ["c"]
    chain.calls.clear()
    (chain.proj / "src" / "a.py").write_text("x = 'changed'\n")
    chain.go()
    assert chain.calls == ["a", "b", "c"]


def test_a_failing_stage_writes_no_record_and_the_rerun_starts_there(chain):
    def boom(st, r, m):
        chain.calls.append(st)
        if st == "b":
            raise RuntimeError("cell 3 failed")

    with pytest.raises(RuntimeError):
        faithful.run(
            ["a", "b", "c"],
            faithful.read_stages(
                {
                    "stages": {
                        "a": {"deps": ["src/a.py"], "outs": ["models/a"]},
                        "b": {"deps": ["models/a"], "outs": ["r/b"]},
                        "c": {"deps": ["r/b"], "outs": ["r/c"]},
                    }
                }
            ),
            {"a": set(), "b": {"a"}, "c": {"b"}},
            chain.root,
            chain.root,
            run_fn=boom,
            values_fn=lambda st: {},
        )
    assert chain.calls == ["a", "b"]
    assert (chain.root / "done" / "a.json").is_file() and not (chain.root / "done" / "b.json").exists()


def test_status_names_what_changed_and_what_follows_from_it(chain):
    chain.go()
    chain.values["a"]["epochs"] = 200
    stages = faithful.read_stages(
        {
            "stages": {
                "a": {"deps": ["src/a.py"], "outs": ["models/a"]},
                "b": {"deps": ["src/b.py", "models/a"], "outs": ["reports/tables/b"]},
                "c": {"deps": ["src/c.py", "reports/tables/b"], "outs": ["x"]},
            }
        }
    )
    rows = faithful.status_rows(
        ["a", "b", "c"], stages, faithful.upstream(stages), chain.root, lambda st: dict(chain.values[st])
    )
    assert rows[0][:2] == ("a", "to run") and "params epochs" in rows[0][2]
    assert [r[1] for r in rows[1:]] == ["after upstream", "after upstream"]


def test_hours_stops_before_a_new_stage_and_fit_before_one_too_long(chain):
    t = [0.0]

    def clock():
        return t[0]

    def slow(st, r, m):
        chain.calls.append(st)
        t[0] += 40 * 60  # 40 minutes a stage

    stages = faithful.read_stages({"stages": {s: {"deps": [f"src/{s}.py"], "outs": [f"o/{s}"]} for s in "abc"}})
    up = {s: set() for s in "abc"}
    out = faithful.run(
        ["a", "b", "c"],
        stages,
        up,
        chain.root,
        chain.root,
        run_fn=slow,
        values_fn=lambda st: {},
        hours=1.0,
        clock=clock,
    )
    assert chain.calls == ["a", "b"] and out["left"] == ["c"]  # c would start at 80 min >= 60
    chain.calls.clear()
    out = faithful.run(
        ["a", "b", "c"],
        stages,
        up,
        chain.root,
        chain.root,
        run_fn=slow,
        values_fn=lambda st: {},
        hours=1.0,
        clock=clock,
    )
    assert chain.calls == ["c"] and out["skipped"] == ["a", "b"]  # the next piece goes on
    for f in (chain.root / "done").glob("*.json"):
        f.unlink()
    chain.calls.clear()
    out = faithful.run(
        ["a", "b", "c"],
        stages,
        up,
        chain.root,
        chain.root,
        run_fn=slow,
        values_fn=lambda st: {},
        hours=1.0,
        clock=clock,
        fit=True,
        estimates={"a": 40, "b": 40, "c": 40},
    )
    assert chain.calls == ["a"] and out["left"] == ["b", "c"]  # b would end at 80 min > 60


# --- the artifacts root -----------------------------------------------------------------------------------


def test_the_faithful_run_publishes_and_reads_artifacts_under_models_faithful(tmp_path):
    assert faithful.MODELS_ROOT == paths.MODELS / "faithful" and faithful.ROOT == paths.REPORTS / "faithful"
    # the pipeline's own choice is unchanged
    assert nbrun.artifacts_destination(paths.REPORTS) == paths.MODELS
    assert nbrun.artifacts_destination(tmp_path / "r") == tmp_path / "r" / paths.ARTIFACTS
    assert (
        nbrun.artifacts_destination(paths.REPORTS / "faithful", paths.MODELS / "faithful") == paths.MODELS / "faithful"
    )


def test_stage_inputs_read_upstream_models_from_the_models_root(tmp_path):
    nb = tmp_path / "nb.ipynb"
    default = nbrun.stage_inputs("dd_coresets", nb)
    moved = nbrun.stage_inputs("dd_coresets", nb, tmp_path / "mf")
    assert paths.ROOT / "models" / "teachers" in default and paths.ROOT / "models" / "teachers" not in moved
    assert tmp_path / "mf" / "teachers" in moved
    assert [p for p in default if "models" not in p.parts] == [p for p in moved if p.parent != tmp_path / "mf"]


def test_the_resume_folder_of_another_output_root_is_its_own(tmp_path):
    nb = tmp_path / "nb.ipynb"
    nb.write_text("{}")
    pipeline = nbrun.resume_folder("theory_ssdd", {"x": 1}, nb, paths.REPORTS)
    other = nbrun.resume_folder("theory_ssdd", {"x": 1}, nb, paths.REPORTS / "faithful", paths.MODELS / "faithful")
    assert pipeline.parent == paths.BUILD / "resume" / "theory_ssdd"  # unchanged for the pipeline
    assert other.parent.name.startswith("theory_ssdd@") and other.parent.parent == paths.BUILD / "resume"
    again = nbrun.resume_folder("theory_ssdd", {"x": 1}, nb, paths.REPORTS / "faithful", paths.MODELS / "faithful")
    assert again == other


def test_published_root_follows_nbrun_then_the_artifacts_folder_then_reports(monkeypatch, tmp_path):
    monkeypatch.delenv(paths.PUBLISHED_ROOT_ENV, raising=False)
    monkeypatch.delenv(paths.MODELS_ROOT_ENV, raising=False)
    assert paths.published_root() == paths.REPORTS
    monkeypatch.setenv(paths.MODELS_ROOT_ENV, str(tmp_path / "r" / paths.ARTIFACTS))
    assert paths.published_root() == tmp_path / "r"
    monkeypatch.setenv(paths.MODELS_ROOT_ENV, str(paths.MODELS / "faithful"))
    assert paths.published_root() == paths.REPORTS  # a models root alone says nothing
    monkeypatch.setenv(paths.PUBLISHED_ROOT_ENV, str(paths.REPORTS / "faithful"))
    assert paths.published_root() == paths.REPORTS / "faithful"
    assert runner.published_tables() == paths.REPORTS / "faithful" / paths.TABLES


@pytest.mark.slow
def test_a_stage_run_with_a_models_root_publishes_its_artifacts_there(tmp_path, monkeypatch):
    """The kernel sees the output root as the published root and the models root as COMPENDIUM_MODELS_ROOT;
    the artifacts land in the models root, none beside the products."""
    monkeypatch.setattr(params, "stage_module", lambda s: types.SimpleNamespace(DATA=()))
    monkeypatch.setattr(params, "stage_params", lambda *a, **k: {"scale": "faithful", "x": 2})
    upstream = tmp_path / "models" / "up" / "w.txt"
    upstream.parent.mkdir(parents=True)
    upstream.write_text("from upstream")
    nb = tmp_path / "art.ipynb"
    cells = [
        "x = 0",
        "import os\nfrom compendium.core import paths\nfrom compendium.pipeline import report\n"
        "rep = report.Reporter('art_stage')\n"
        "rep.metrics({'published': str(paths.published_root()), 'up': paths.find_artifact('up/w.txt').read_text()})\n"
        "f = paths.artifacts_out() / 'made' / 'm.txt'\nf.parent.mkdir(parents=True)\nf.write_text('ckpt')",
    ]
    book = new_notebook(
        cells=[new_code_cell(c) for c in cells],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    book.cells[0].metadata["tags"] = ["parameters"]
    nbformat.write(book, nb)
    out = tmp_path / "reports" / "faithful"
    nbrun.run_stage("art_stage", output_root=out, notebook=nb, progress=False, models_root=tmp_path / "models")
    m = json.loads((out / "metrics" / "art_stage.json").read_text())
    assert m["published"] == str(out.resolve()) and m["up"] == "from upstream"
    assert (tmp_path / "models" / "made" / "m.txt").read_text() == "ckpt"
    assert not (out / paths.ARTIFACTS).exists() and not list(out.rglob("m.txt"))


# --- the estimate -----------------------------------------------------------------------------------------


def test_the_ratio_is_that_of_the_loop_that_grows_most():
    cpu = {
        "iterations": 10,
        "dm_iterations": 25,
        "loops_ipc10": [2, 5],
        "loops_ipc50": [1, 1],
        "ipcs": [1, 10, 50],
        "methods": ["dc", "dsa", "dm"],
        "seeds": [0, 1],
        "eval_steps": 75,
    }
    fai = {
        **cpu,
        "iterations": 1000,
        "dm_iterations": 20000,
        "loops_ipc10": [10, 50],
        "loops_ipc50": [50, 10],
        "seeds": [0, 1, 2],
        "eval_steps": 2000,
    }
    r, keys = faithful.ratio("dd_matching", cpu, fai)
    dc_cpu = 2 * 10 * (1 * 11 + 2 * 15 + 1 * 11)
    dc_fai = 2 * 1000 * (1 * 11 + 10 * 60 + 50 * 20)
    assert r == pytest.approx(dc_fai / dc_cpu) and keys.startswith("iterations x")
    assert faithful.ratio("theory_ssdd", {}, {}) == (1.0, "none (no faithful override: its cpu values stand)")
    budget = {
        "epochs": 10,
        "grid_seeds": 3,
        "seeds": [0, 1, 2],
        "priors": ["a", "b", "c", "d"],
        "budgets": [0.1, 0.2],
        "headline_budget": 0.1,
        "full_seeds": 3,
        "variant_schedule": "switch",
    }
    big = {**budget, "epochs": 100, "budgets": [0.1, 0.2, 0.5]}
    assert faithful.ratio("rela_budget", budget, big)[0] == pytest.approx(
        100 * (15 * 0.8 + 3 + 0.3) / (10 * (15 * 0.3 + 3 + 0.3))
    )


def test_gtn_work_counts_its_runs_at_their_cap_with_the_plateau_stop_on():
    """With the plateau stop on, ``iterations`` is a cap that every ``cpu`` run of the committed ledger reached
    (500 rows per run in ``meta_loss``): the cpu work is runs x cap x T, not the least a run could do."""
    cpu = {
        "meta_seeds": [0, 1, 2],
        "variant_seeds": [0, 1, 2],
        "curricula": ["full", "shuffled", "noise"],
        "inner_steps": 5,
        "iterations": 500,
        "plateau_every": 25,
        "min_iterations": 200,
        "proxy_steps": 300,
        "proxy_sets": ["dc", "dsa", "dm"],
        "random_proxy_seeds": [0, 1, 2],
    }
    fai = {**cpu, "inner_steps": 32, "iterations": 3000, "plateau_every": 0}
    r, keys = faithful.ratio("dd_gtn", cpu, fai)
    assert r == pytest.approx((12 * 32 * 3000) / (12 * 5 * 500)) and keys.startswith("meta runs")
    assert faithful.BENCH_LOOP["dd_gtn"] == ("gtn", "gtn T32")


def test_the_measured_minutes_come_with_the_parameters_they_were_measured_with(tmp_path):
    reports = tmp_path / "reports"
    (reports / paths.EXECUTED).mkdir(parents=True)
    (reports / timings.FILE).write_text(
        json.dumps(
            {
                "dd_kip": {"minutes": 2.0, "parameters": {"iterations": 1}},
                "dd_labels": {"minutes": 1.0, "parameters": {"rr_steps": 10}},
            }
        )
    )
    (reports / paths.EXECUTED / "dd_kip.ipynb").write_text(
        json.dumps(
            {
                "metadata": {
                    "papermill": {
                        "duration": 300.0,
                        "parameters": {
                            "iterations": 5,
                            "seeds": [0, 1],
                            "eval_steps": 75,
                            "krr_seeds": [0],
                            "kernels": ["fc"],
                        },
                    }
                }
            }
        )
    )
    got = faithful.measured(["dd_kip", "dd_labels", "nope"], reports=reports)
    assert got["dd_kip"].minutes == 5.0 and got["dd_kip"].values["iterations"] == 5  # the notebook is newer
    assert got["dd_labels"].minutes == 1.0 and got["dd_labels"].values == {"rr_steps": 10}  # the record's last run
    assert "stage_minutes.json" in got["dd_labels"].source
    assert got["nope"].minutes is None
    rows = faithful.estimate_rows(
        ["dd_kip"],
        {"dd_kip": {"iterations": 50, "seeds": [0, 1], "eval_steps": 75, "krr_seeds": [0], "kernels": ["fc"]}},
        got,
    )
    assert rows[0].ratio == 10.0 and rows[0].minutes == 50.0
    md = faithful.estimate_markdown(rows, got)
    assert "extrapolation, not a measurement" in md and "| dd_kip |" in md and "Total: about 1 hours" in md


def test_a_stage_run_at_faithful_with_the_same_parameters_shows_its_measured_minutes():
    v = {"iterations": 50, "seeds": [0, 1], "eval_steps": 75, "krr_seeds": [0], "kernels": ["fc"]}
    cpu = {"dd_kip": faithful.Measured(5.0, dict(v, iterations=5), "x")}
    done = {"dd_kip": {"params": v, "minutes": 7.5}}
    row = faithful.estimate_rows(["dd_kip"], {"dd_kip": v}, cpu, done)[0]
    assert row.minutes == 7.5 and row.ratio == 1.5 and row.keys == faithful.MEASURED_KEYS
    stale = {"dd_kip": {"params": dict(v, iterations=40), "minutes": 7.5}}  # other parameters: extrapolated
    row = faithful.estimate_rows(["dd_kip"], {"dd_kip": v}, cpu, stale)[0]
    assert row.minutes == 50.0 and row.keys != faithful.MEASURED_KEYS


def test_the_cli_dry_run_lists_the_stages_with_estimates(tmp_path, capsys):
    assert faithful.main(["--dry-run", "--stages", "dd_coresets", "--root", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "dd_teachers" in out and "dd_coresets" in out and "est." in out and "to run" in out
    assert "rela_budget" not in out and not (tmp_path / "r").exists()


def test_gpu_extrapolation_divides_by_the_measured_speedup():
    row = lambda loop, variant, dev, s, shape="cpu": {
        "loop": loop,
        "variant": variant,
        "device": dev,  # noqa: E731
        "seconds_per_step": s,
        "shape": shape,
    }
    cpu = [row("byol", "byol", "cpu", 0.06), row("dc", "dc", "cpu", 33.0), row("dd", "dd", "cpu", 0.18)]
    gpu = [
        row("byol", "byol", "GPU X", 0.01),
        row("dc", "dc", "GPU X", 2.0),
        row("dd", "dd", "cpu", 0.12),
        row("byol", "byol", "GPU X", 0.5, shape="paper"),
    ]
    F = faithful
    sp = F.bench_speedups(cpu, gpu)
    assert sp["priors"] == pytest.approx(6.0) and sp["dd_matching"] == pytest.approx(16.5)
    assert "dd_unrolled" not in sp  # no GPU case: its 2-core time stands
    rows = [F.Estimate("priors", "k", 2.0, 10.0, 60.0), F.Estimate("dd_unrolled", "k", 3.0, 10.0, 30.0)]
    text = "\n".join(F.gpu_section(rows, sp, "GPU X"))
    assert "| priors | byol/byol | 6.0x | 60.0 min | 10.0 min |" in text
    assert "| dd_unrolled | none (CPU) | 1.0x | 30.0 min | 30.0 min |" in text
    assert "about 0.7 hours**, 0.5 of them" in text


def test_the_readme_block_states_the_totals_and_the_stages_that_ran():
    F = faithful
    rows = [F.Estimate("priors", "k", 2.0, 10.0, 120.0), F.Estimate("dd_unrolled", "k", 3.0, 10.0, 60.0)]
    recs = {"dd_unrolled": {"minutes": 45.0, "finished": "2026-01-01 00:00:00"}, "claims_ledger": {"minutes": 0.1}}
    block = F.readme_block(rows, {"priors": 4.0}, recs)
    assert block.startswith(F.README_START) and block.endswith(F.README_END)
    assert "about 3 hours on 2 cores" in block and "about 2 on one GPU, 1 of them" in block
    assert "| `dd_unrolled` | 45.0 min | 2026-01-01 00:00:00 |" in block and "claims_ledger" not in block
    assert "No stage has run" in F.readme_block(rows, {}, {})


def test_the_readme_states_the_faithful_summary_of_the_repository_as_it_stands():
    readme = faithful.SCALES_PAGE.read_text()
    assert faithful.current_readme_block() in readme, (
        "the README's faithful summary is stale: python -m compendium.pipeline.faithful --dry-run --write"
    )


def test_a_records_code_hashes_are_the_entries_dvc_lock_holds_for_those_deps():
    """The runner hashes a stage's code as DVC does (md5 of each src file, of the clean notebook, of the pinned
    requirements), so a done record and an up-to-date dvc.lock agree on the code a stage ran."""
    lock = yaml.safe_load((paths.ROOT / "dvc.lock").read_text())["stages"]
    stages = faithful.read_stages(yaml.safe_load(paths.DVC_YAML.read_text()))
    for st in ("theory_pca", "dd_kip"):
        mine = faithful.sources_digest(stages[st])
        theirs = {d["path"]: d["md5"] for d in lock[st]["deps"]}
        assert any(p.startswith("build/nb/") for p in mine) and "requirements-lock.txt" in mine
        assert mine == {p: theirs[p] for p in mine}, f"{st}: dvc.lock is not up to date, or the hashes differ"
