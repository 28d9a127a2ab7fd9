"""The tree is formatted and linted by ruff, configured in pyproject.toml (notebooks are left out there)."""

import subprocess
import sys

from compendium.core import paths


def _ruff(*args):
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=paths.ROOT, capture_output=True, text=True)


def test_the_tree_passes_the_linter():
    r = _ruff("check", "--no-cache", ".")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_the_tree_is_formatted():
    r = _ruff("format", "--check", "--no-cache", ".")
    assert r.returncode == 0, "run `ruff format .`:\n" + r.stdout[-4000:] + r.stderr[-2000:]


def test_the_linter_reads_the_project_configuration(tmp_path):
    """The same linter fails on a line over the configured 120 characters (so a clean tree means something)."""
    bad = tmp_path / "bad.py"
    bad.write_text("x = 1\n" + "y = '" + "a" * 130 + "'\n")
    r = _ruff("check", "--no-cache", "--config", str(paths.ROOT / "pyproject.toml"), str(bad))
    assert r.returncode != 0 and "E501" in r.stdout
