"""The package in one-way wings: each wing imports only from the wings below it, there is no import cycle,
and no module of the package is imported inside a function (the import block shows every dependency)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import compendium

PKG = Path(compendium.__file__).resolve().parent
SRC = PKG.parent
# wing -> the wings it may import (besides itself)
BELOW = {
    "core": set(),
    "theory": {"core"},
    "ssl": {"core"},
    "rela": {"core", "ssl"},
    "distill": {"core", "theory"},
    "verdicts": {"core"},
    "pipeline": {"core", "theory", "ssl", "rela", "distill", "verdicts"},
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def wing(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def imports(path: Path):
    """(imported compendium module, line, inside a function) for every import statement of ``path``."""
    tree = ast.parse(path.read_text())
    inner = {
        id(n)
        for f in ast.walk(tree)
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        for n in ast.walk(f)
        if isinstance(n, (ast.Import, ast.ImportFrom))
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: relative import; the package uses absolute imports"
            base = node.module or ""
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        for name in names:
            if name == "compendium" or name.startswith("compendium."):
                while name not in MODULES and "." in name:
                    name = name.rsplit(".", 1)[0]
                yield name, node.lineno, id(node) in inner


def test_every_module_lives_in_a_wing():
    loose = [m for m in MODULES if m != "compendium" and wing(m) not in BELOW]
    assert not loose, f"modules outside the wings {sorted(BELOW)}: {loose}"


@pytest.mark.parametrize("module", sorted(MODULES), ids=str)
def test_imports_run_down_the_wings_only(module):
    here = wing(module)
    if here is None:
        return
    allowed = BELOW[here] | {here}
    bad = [f"line {line}: {name}" for name, line, _ in imports(MODULES[module]) if wing(name) not in allowed]
    assert not bad, f"{module} ({here}) imports from a wing above it or beside it: {bad}"


def test_no_package_import_hides_inside_a_function():
    hidden = [f"{m}:{line} {name}" for m, p in MODULES.items() for name, line, inner in imports(p) if inner]
    assert not hidden, "imports of the package inside functions (move them to the import block):\n" + "\n".join(hidden)


def test_there_is_no_import_cycle():
    graph = {m: {n for n, _, _ in imports(p) if n != m and n in MODULES} for m, p in MODULES.items()}
    # a package's __init__ is imported with each of its modules: count only module -> module edges
    graph = {m: {n for n in deps if MODULES[n].name != "__init__.py"} for m, deps in graph.items()}
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(m, stack):
        state[m] = 1
        for n in graph[m]:
            if state.get(n) == 1:
                cycle.extend(stack[stack.index(n) :] + [n])
                return True
            if n not in state and visit(n, stack + [n]):
                return True
        state[m] = 2
        return False

    assert not any(visit(m, [m]) for m in sorted(graph) if m not in state), f"import cycle: {' -> '.join(cycle)}"


@pytest.mark.parametrize("name", sorted(BELOW))
def test_importing_a_wing_loads_no_wing_above_it(name):
    """A fresh interpreter imports every module of the wing; no module of a wing it may not use is loaded."""
    mods = [m for m in MODULES if wing(m) == name]
    code = (
        "import importlib, sys\n"
        f"for m in {mods!r}: importlib.import_module(m)\n"
        "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('compendium.'))))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    loaded = {wing(m) for m in r.stdout.split()} - {None}
    extra = loaded - BELOW[name] - {name}
    assert not extra, f"importing the {name} wing loads {sorted(extra)}"
