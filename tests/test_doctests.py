"""Every example in the library's docstrings runs and prints what it shows."""

import doctest
import importlib
import pkgutil

import pytest

import compendium

MODULES = sorted(m.name for m in pkgutil.walk_packages(compendium.__path__, "compendium."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    mod = importlib.import_module(name)
    r = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert r.failed == 0, (
        f"{name}: {r.failed} of {r.attempted} examples failed (python -m doctest -v on it shows which)"
    )
