"""Every numeric stage parameter is bounded on both sides, params.yaml fits the bounds at every scale, and
an absurd value is refused before any compute, naming its key."""

import math

import pytest
import yaml

from compendium.pipeline import params
from compendium.pipeline.schemas import SEED_MAX
from compendium.pipeline.spec import ParamsError

NUMERIC = ("int", "float")


def _item_kind(kind: str) -> str:
    while kind.startswith("list["):
        kind = kind[5:-1]
    return kind


def _numeric_keys():
    return [
        (stage, key, p)
        for stage, spec in params.schemas().items()
        for key, p in spec.items()
        if _item_kind(p.kind) in NUMERIC
    ]


def test_there_are_numeric_keys_to_check():
    assert len(_numeric_keys()) > 300


@pytest.mark.parametrize("stage,key,p", _numeric_keys(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_numeric_key_has_both_bounds(stage, key, p):
    where = f"{stage}.{key} in src/compendium/pipeline/schemas/{stage}.py (or a shared dict of schemas/__init__.py)"
    if p.choices is not None and p.low is None and p.high is None:
        # a finite set of numbers bounds the key on both sides
        assert p.choices and all(
            isinstance(c, (int, float)) and not isinstance(c, bool) and math.isfinite(c) for c in p.choices
        ), f"{where}: choices {p.choices} must be finite numbers"
        return
    assert p.low is not None, f"{where}: no low bound; give Param a low="
    assert p.high is not None, f"{where}: no high bound; give Param a high= that is sane for its meaning"
    assert math.isfinite(p.low) and math.isfinite(p.high), f"{where}: bounds must be finite, got {p.low}, {p.high}"
    assert p.low <= p.high, f"{where}: low {p.low} > high {p.high}"


def test_seed_keys_share_one_ceiling():
    """A seed (not a count of seeds such as theory_samples.seeds) is at most SEED_MAX, which every RNG takes."""
    seeds = [
        (s, k, p.high)
        for s, k, p in _numeric_keys()
        if (p.kind == "int" and (k == "seed" or k.endswith("_seed")))
        or (p.kind == "list[int]" and (k == "seeds" or k.endswith("_seeds")))
    ]
    assert seeds
    assert all(high == SEED_MAX for _, _, high in seeds), [x for x in seeds if x[2] != SEED_MAX]


@pytest.mark.parametrize("scale", params.SCALES)
def test_params_yaml_validates_for_every_stage_at_every_scale(scale):
    for stage in params.schemas():
        values = params.stage_params(stage, scale=scale)
        assert values["scale"] == scale


def _refused(tmp_path, stage, path, value, scale=None):
    """Set ``path`` (keys inside ``stage``'s section) to ``value`` in a copy of params.yaml; return the message."""
    data = params.load()
    node = data[stage]
    for k in path[:-1]:
        node = node.setdefault(k, {})
    node[path[-1]] = value
    f = tmp_path / "params.yaml"
    f.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ParamsError) as e:
        params.stage_params(stage, f, scale=scale)
    return str(e.value)


@pytest.mark.parametrize(
    "stage,key,value",
    [
        ("rela_budget", "probe_epochs", 10_000_000),
        ("rela_budget", "batch_size", 10_000_000),
        ("rela_smoke", "probe_epochs", 10_000_000),
        ("rela_smoke", "batch_size", 1_000_000),
        ("rela_methods", "probe_lr", 1e6),
        ("rela_arch", "weight_decay", 1e3),
        ("priors", "sup_batch_size", 10_000_000),
        ("dd_coresets", "eval_steps", 10**9),
        ("dd_coresets", "test_n", 1_000_000),
        ("ssdd_eval", "pre_epochs", 10**8),
        ("theory_targets", "mc_samples", 10**12),
        ("theory_samples", "seed", 2**40),
    ],
)
def test_an_absurd_value_is_refused_naming_the_key(tmp_path, stage, key, value):
    msg = _refused(tmp_path, stage, [key], value)
    assert f"{stage}.{key}: {value!r} is above the maximum" in msg


def test_an_absurd_list_item_is_refused_naming_the_key_and_index(tmp_path):
    msg = _refused(tmp_path, "rela_budget", ["seeds"], [0, 2**40])
    assert "rela_budget.seeds[1]: " in msg and "above the maximum" in msg


def test_an_absurd_scale_override_is_refused_naming_the_scale(tmp_path):
    msg = _refused(tmp_path, "rela_budget", ["scales", "paper", "probe_epochs"], 10_000_000, scale="cpu")
    assert "rela_budget.scales.paper.probe_epochs: 10000000 is above the maximum" in msg
