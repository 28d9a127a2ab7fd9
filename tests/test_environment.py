"""The dependency lists agree with each other and with the developer guide's pins."""

import re

import yaml

from compendium.core import paths


def _pins(lines):
    return {l.split("==")[0].lower(): l.split("==")[1] for l in lines if re.match(r"^[A-Za-z0-9_.-]+==", l)}


def test_environment_yml_lists_exactly_the_pip_pins():
    req = _pins((paths.ROOT / "requirements.txt").read_text().split())
    env = yaml.safe_load((paths.ROOT / "environment.yml").read_text())
    pip_list = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert _pins(pip_list) == req
    assert req["torch"] == "2.15.0" and req["torchvision"] == "0.29.2"


def test_lock_agrees_with_the_direct_pins():
    req = _pins((paths.ROOT / "requirements.txt").read_text().split())
    lock = _pins((paths.ROOT / "requirements-lock.txt").read_text().split())
    for name, version in req.items():
        assert lock.get(name) == version, name


def test_installed_versions_are_the_pinned_ones():
    from importlib.metadata import version

    req = _pins((paths.ROOT / "requirements.txt").read_text().split())
    for name in ("torch", "torchvision", "dvc", "papermill", "nbval"):
        assert version(name) == req[name], name
