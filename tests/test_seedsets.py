from compendium.pipeline import params, seedsets


def test_shift_seeds_moves_every_seed_and_keeps_counts():
    tree = {"scale": "cpu",
            "a": {"seed": 0, "seeds": [0, 1], "meta_seeds": [2], "nas_seed": 0, "full_seeds": 3,
                  "scales": {"smoke": {"seeds": [0]}, "paper": {"seeds": 30}}},
            "b": {"seeds": 10, "lr": 0.1, "flag": True}}
    out = seedsets.shift_seeds(tree, 1000)
    a = out["a"]
    assert a["seed"] == 1000 and a["seeds"] == [1000, 1001] and a["meta_seeds"] == [1002] and a["nas_seed"] == 1000
    assert a["full_seeds"] == 3 and a["scales"]["paper"]["seeds"] == 30  # counts stay
    assert a["scales"]["smoke"]["seeds"] == [1000]
    assert out["b"] == tree["b"] and tree["a"]["seeds"] == [0, 1]  # the input is not changed


def test_the_shifted_params_file_validates_and_its_seed_sets_are_disjoint(tmp_path):
    p = params.load()
    f = seedsets.write_params(1000, tmp_path)
    shifted = params.load(f)
    for stage in ("rela_budget", "dd_coresets", "ssdd_eval", "dd_gtn"):
        old, new = params.resolve(p, stage), params.resolve(shifted, stage)
        for k, v in old.items():
            if k.endswith("seeds") and isinstance(v, list):
                assert not set(v) & set(new[k]), (stage, k)


def test_a_verdict_that_flips_on_the_disjoint_seeds_is_inconclusive(tmp_path):
    import json

    from compendium.pipeline import claims, report

    def row(loc, verdict, **kw):
        return claims.Claim("ReLA", "v", loc, "c", "x", verdict=verdict, ours="1", **kw)

    nt = claims.not_tested([claims.reached("iterations", 1, 2, "2 iterations")])
    main = [row("a", "holds"), row("b", "holds"), row("c", "fails"), row("d", "holds")]
    rerun = [row("a", "holds"), row("b", "inconclusive"), row("c", "holds"), claims.Claim("ReLA", "v", "d", "c", "x", ours="1", **nt)]
    report.Reporter("s", root=tmp_path / "main").claims(main)
    report.Reporter("s", root=tmp_path / "rerun").claims(rerun)
    tree = {"scale": "cpu", "s": {"seeds": [0, 1, 2], "iterations": 10}}
    used = seedsets.shift_seeds(tree, 1000)   # the parameters the rerun ran with
    (tmp_path / "rerun" / "claims" / "run.json").write_text(
        json.dumps({"offset": 1000, "stages": ["s"], "params": {"s": seedsets.fingerprint(used, "s")}}))
    ledger = claims.read_all(tmp_path / "main" / "claims")
    out, changed = seedsets.combine(ledger, tmp_path / "rerun" / "claims", tree)
    v = dict(zip(out["location"], out["verdict"]))
    assert v == {"a": "holds", "b": "inconclusive", "c": "inconclusive", "d": claims.NOT_TESTED}
    assert out.set_index("location").loc["d", "tested"] == "no"
    assert "seeds + 1000" in out.set_index("location").loc["b", "condition"]
    assert sorted(changed["location"]) == ["b", "c", "d"]
    # without a rerun the ledger is unchanged
    same, none = seedsets.combine(ledger, tmp_path / "absent")
    assert same.equals(ledger) and none.empty

    # the stage's parameters changed since the rerun: its rows are no replicate, the ledger keeps this run's verdicts
    changed_tree = {"scale": "cpu", "s": {"seeds": [0, 1, 2], "iterations": 1000}}
    assert seedsets.current_stages(tmp_path / "rerun" / "claims", changed_tree) == (set(), {"s"})
    same, none = seedsets.combine(ledger, tmp_path / "rerun" / "claims", changed_tree)
    assert same.equals(ledger) and none.empty
    # a rerun without fingerprints (the parameters it used unknown) counts for nothing
    (tmp_path / "rerun" / "claims" / "run.json").write_text(json.dumps({"offset": 1000, "stages": ["s"]}))
    assert seedsets.combine(ledger, tmp_path / "rerun" / "claims", tree)[0].equals(ledger)


def test_a_stage_fingerprint_covers_its_upstream_sections():
    dvc = {"stages": {"a": {"cmd": "x", "outs": ["models/a"]}, "b": {"cmd": "y", "deps": ["models/a/f.pt"], "outs": [{"r/b": {}}]},
                      "c": {"cmd": "z", "deps": ["r/b"]}, "d": {"cmd": "w"}}}
    assert seedsets.upstream("c", dvc) == {"a", "b"} and seedsets.upstream("a", dvc) == set()
    tree = {"scale": "cpu", "a": {"seed": 1}, "b": {}, "c": {}, "d": {"x": 1}}
    fp = seedsets.fingerprint(tree, "c", dvc)
    assert seedsets.fingerprint({**tree, "d": {"x": 2}}, "c", dvc) == fp          # an unrelated section
    assert seedsets.fingerprint({**tree, "a": {"seed": 2}}, "c", dvc) != fp       # an upstream one
    assert seedsets.fingerprint({**tree, "scale": "smoke"}, "c", dvc) != fp
