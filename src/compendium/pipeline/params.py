"""``params.yaml``: loading, validation against each stage's schema, and the scale switch.

Layout of ``params.yaml`` (one section per stage, DVC's example-get-started style)::

    scale: cpu                 # smoke | cpu | paper | faithful: the one switch for the whole pipeline
    data_overview:             # a stage's section: its defaults (the `cpu` values) ...
      seed: 0
      grid_per_class: 8
      scales:                  # ... and per-scale overrides of some of its keys
        smoke: {grid_per_class: 2}

A stage sees its section with the overrides of the selected scale applied
(:func:`resolve`). DVC tracks ``scale`` and the whole section, so switching the scale
(``dvc exp run -S scale=smoke``, or editing the file and ``dvc repro``) reruns every stage.

Each stage declares its keys in ``compendium/pipeline/schemas/<stage>.py``; :func:`validate` reports
every unknown key, missing key or section, wrong type, out-of-range value and unknown scale
at once, naming the key, before any compute starts.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import pkgutil
from pathlib import Path

import torch
import yaml

from compendium.core import paths, prior_roles
from compendium.pipeline import schemas as stage_schemas
from compendium.pipeline.spec import Param, ParamsError, describe

SCALES = ("smoke", "cpu", "paper", "faithful")
SCALE_KEY = "scale"
#: the stage that makes the trained priors; its `dataset` and `cross_dataset` name them (role:<role> resolves there)
PRIORS = "priors"
OVERRIDES_KEY = "scales"


def _suggest(key: str, known) -> str:
    close = difflib.get_close_matches(key, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def schemas() -> dict[str, dict[str, Param]]:
    """Every stage's schema, discovered from ``compendium.pipeline.schemas.<module>``."""
    out: dict[str, dict[str, Param]] = {}
    for info in sorted(pkgutil.iter_modules(stage_schemas.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):  # shared by several stages' schemas, not a stage's own
            continue
        mod = importlib.import_module(f"{stage_schemas.__name__}.{info.name}")
        out[mod.SECTION] = mod.SCHEMA
    return out


def stage_module(section: str):
    """The schema module of a stage, ``compendium.pipeline.schemas.<section>`` (it may also declare ``DATA``,
    the datasets it reads, and ``check``, its checks across keys)."""
    name = f"{stage_schemas.__name__}.{section}"
    if not section.isidentifier() or section.startswith("_") or importlib.util.find_spec(name) is None:
        raise ParamsError(f"no stage named {section!r}; known: {sorted(schemas())}")
    mod = importlib.import_module(name)
    if mod.SECTION != section:
        raise ParamsError(f"{name} declares SECTION {mod.SECTION!r}; it must be {section!r}")
    return mod


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader that refuses a key given twice in one mapping (plain YAML keeps the last one
    silently; DVC refuses the file)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


def load(path: Path | str | None = None) -> dict:
    path = Path(path) if path is not None else paths.PARAMS
    if not path.is_file():
        raise ParamsError(f"{path}: file is missing")
    try:
        data = yaml.load(path.read_text(), Loader=_UniqueKeyLoader)
    except yaml.YAMLError as e:
        raise ParamsError(f"{path}: not valid YAML: {e}") from e
    if not isinstance(data, dict):
        raise ParamsError(f"{path}: expected a mapping of sections, got {describe(data)}")
    return data


def validate(
    params: dict, schema: dict[str, dict[str, Param]] | None = None, where: str = "params.yaml", require=None
) -> None:
    """Raise :class:`ParamsError` listing every problem of ``params`` against ``schema``.

    Every section present is checked in full; ``require`` names the sections that must be
    present (default: all of them). A stage run requires only its own section, so a stage that
    is being added does not stop the others.
    """
    schema = schemas() if schema is None else schema
    required = set(schema) if require is None else set(require)
    errs: list[str] = []
    if SCALE_KEY not in params:
        errs.append(f"{SCALE_KEY}: missing (one of {list(SCALES)})")
    elif params[SCALE_KEY] not in SCALES:
        errs.append(f"{SCALE_KEY}: unknown scale {params[SCALE_KEY]!r}; choose one of {list(SCALES)}")
    known_top = {SCALE_KEY, *schema}
    for key in params:
        if key not in known_top:
            errs.append(f"{key}: unknown section{_suggest(key, known_top)}; known: {sorted(known_top)}")
    for section, spec in schema.items():
        if section not in params:
            if section in required:
                errs.append(f"{section}: missing section")
            continue
        body = params[section]
        if not isinstance(body, dict):
            errs.append(f"{section}: expected a mapping, got {describe(body)}")
            continue
        errs += _check_keys(section, body, spec, require_all=True)
        overrides = body.get(OVERRIDES_KEY, {})
        if not isinstance(overrides, dict):
            errs.append(f"{section}.{OVERRIDES_KEY}: expected a mapping of scale -> overrides")
            continue
        for scale, over in overrides.items():
            if scale not in SCALES:
                errs.append(f"{section}.{OVERRIDES_KEY}.{scale}: unknown scale; choose one of {list(SCALES)}")
            elif not isinstance(over, dict):
                errs.append(f"{section}.{OVERRIDES_KEY}.{scale}: expected a mapping, got {describe(over)}")
            else:
                errs += _check_keys(f"{section}.{OVERRIDES_KEY}.{scale}", over, spec, require_all=False)
    if errs:
        raise ParamsError(f"{where} has {len(errs)} problem(s):\n" + "\n".join(f"  - {e}" for e in errs))


def _check_keys(prefix: str, body: dict, spec: dict[str, Param], require_all: bool) -> list[str]:
    errs = []
    for key, value in body.items():
        if key == OVERRIDES_KEY and require_all:
            continue
        if key not in spec:
            errs.append(f"{prefix}.{key}: unknown key{_suggest(key, spec)}")
            continue
        errs += spec[key].check(f"{prefix}.{key}", value)
    if require_all:
        errs += [f"{prefix}.{key}: missing" for key in spec if key not in body]
    return errs


def _at_scale(params: dict, section: str) -> dict:
    body = dict(params[section])
    overrides = body.pop(OVERRIDES_KEY, {}) or {}
    body.update(overrides.get(params[SCALE_KEY], {}) or {})
    return body


def resolve(params: dict, section: str) -> dict:
    """The flat parameters of ``section`` at the selected scale (validate first), each trained prior named by its
    role (``role:strong``, ``role:same-dataset``, ``role:cross-dataset``) replaced by the file the ``priors`` stage
    makes for it at that scale (:func:`compendium.core.prior_roles.resolve_roles`)."""
    body = _at_scale(params, section)
    if PRIORS in params:
        made = body if section == PRIORS else _at_scale(params, PRIORS)
        if "dataset" in made and "cross_dataset" in made:
            body = prior_roles.resolve_roles(body, made["dataset"], made["cross_dataset"])
    return body


def shadowed(params: dict, section: str, reference: dict | None) -> list[str]:
    """The keys of ``section`` whose base value differs from ``reference`` (the last commit's ``params.yaml``) while
    the selected scale sets them again under ``scales``, which wins: an override such as
    ``dvc exp run -S rela_budget.budgets=...`` at ``scale: smoke`` would otherwise change nothing, silently. Each
    problem names the key to set instead."""
    if not reference or not isinstance(reference.get(section), dict) or section not in params:
        return []
    scale = params.get(SCALE_KEY)
    body, ref = params[section], reference[section]
    over = (body.get(OVERRIDES_KEY) or {}).get(scale) or {}
    return [
        f"{key}: set to {body[key]!r} (the last commit has {ref.get(key)!r}), but scale {scale!r} sets it again "
        f"under {section}.{OVERRIDES_KEY}.{scale}.{key} ({over[key]!r}), which wins; set "
        f"{section}.{OVERRIDES_KEY}.{scale}.{key} instead (dvc exp run -S "
        f"'{section}.{OVERRIDES_KEY}.{scale}.{key}=...')"
        for key in over
        if key in body and key != OVERRIDES_KEY and body[key] != ref.get(key, body[key])
    ]


def committed_params(path: Path | None = None) -> dict | None:
    """``params.yaml`` as the last commit holds it (None outside a git work tree, or where it is not committed)."""
    import subprocess

    path = Path(path or paths.PARAMS)
    try:
        out = subprocess.run(
            ["git", "show", f"HEAD:./{path.name}"], cwd=path.parent, capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    try:
        data = yaml.safe_load(out.stdout)
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


def stage_params(section: str, path: Path | str | None = None, scale: str | None = None) -> dict:
    """Load, validate and resolve one stage's parameters (optionally forcing a scale), then run the
    stage's own cross-key check: a schema module may define ``check(values) -> list[str]``, each
    problem naming its key (without the section) and the fix.

    The result also holds ``scale``: every notebook's parameters cell declares it. For the project's own
    ``params.yaml`` at the scale it selects (``path`` and ``scale`` None, as ``dvc repro`` and ``dvc exp run`` run a
    stage), a key changed since the last commit that the selected scale sets again is an error naming the key to
    set instead (:func:`shadowed`); a forced scale (the faithful runner, a test) reads the base values as the
    ``cpu`` scale's, which they are."""
    params = load(path)
    if scale is not None:
        params[SCALE_KEY] = scale
    where = str(path or paths.PARAMS)
    validate(params, where=where, require={section})
    if section not in params:
        raise ParamsError(f"{section}: missing section")
    values = {SCALE_KEY: params[SCALE_KEY], **resolve(params, section)}
    check = getattr(stage_module(section), "check", None)
    problems = check(values) if check is not None else []
    if path is None and scale is None:  # the project's params.yaml at its own scale: a shadowed override is an error
        problems += shadowed(params, section, committed_params())
    if values.get("device") == "cuda" and not torch.cuda.is_available():
        problems.append("device: 'cuda' is requested but this machine has no CUDA device; use 'auto' or 'cpu'")
    if problems:
        raise ParamsError(
            f"{where} has {len(problems)} problem(s) at scale {values[SCALE_KEY]!r}:\n"
            + "\n".join(f"  - {section}.{e}" for e in problems)
        )
    return values


def main(argv: list[str] | None = None) -> int:
    """``python -m compendium.pipeline.params [FILE] [--scale S]``: check a params file, print each stage."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(description="Check params.yaml against the stage schemas.")
    ap.add_argument("file", nargs="?", type=Path, default=None)
    ap.add_argument("--scale", choices=SCALES, default=None)
    args = ap.parse_args(argv)
    try:
        for section in schemas():
            print(section, stage_params(section, args.file, args.scale))
    except ParamsError as e:
        print(e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
