"""Nothing is chosen on the test set: the two tuned settings of the compendium (DD's baselines' step size, GTN's
real-data arm's rate and momentum) are chosen on images held out of the training set, and no call of a tuner is
given test data. (DD-Ranking picks its learning rate and best epoch on the test set; this compendium does not.)"""

import ast

from compendium.core import paths

TUNERS = {"best_constant_lr", "tune_real"}


def _calls(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name in TUNERS:
                yield node


def test_no_tuner_is_given_test_data():
    seen = 0
    for f in sorted((paths.SRC / "compendium").rglob("*.py")) + sorted(paths.NOTEBOOKS.glob("*.ipynb")):
        src = f.read_text()
        if f.suffix == ".ipynb":
            import json

            src = "\n".join("".join(c["source"]) for c in json.loads(src)["cells"] if c["cell_type"] == "code")
        for call in _calls(ast.parse(src)):
            seen += 1
            names = {
                n.id if isinstance(n, ast.Name) else n.attr
                for a in [*call.args, *(k.value for k in call.keywords)]
                for n in ast.walk(a)
                if isinstance(n, (ast.Name, ast.Attribute))
            }
            assert not any("test" in n.lower() for n in names), f"{f}: {ast.unparse(call)}"
            assert any("val" in n.lower() for n in names), (
                f"{f}: a tuner without a validation split: {ast.unparse(call)}"
            )
    assert seen >= 2  # both tuners are called somewhere


def test_validation_splits_are_held_out_of_the_training_set():
    import torch

    from compendium.distill.unrolled import dd_experiment, gtn_experiment

    for d in (dd_experiment.load_splits(0, 200, 100), gtn_experiment.load_splits(200, 100)):
        fit = d.X_u8 if hasattr(d, "X_u8") else d.fit_x
        assert len(d.x_val) == 200 and len(fit) + 200 == len(d.tr.labels)  # val and fit partition the training set
        assert d.x_test.shape[0] == 100 and not torch.equal(d.x_val[:100], d.x_test)


def test_the_best_test_accuracy_over_training_is_recorded_never_read():
    """``evaluate`` keeps the best of its periodic test evaluations (``best acc``, what DC's and DD-Ranking's code
    report) beside the final one; no check, table or notebook reads it: every verdict uses the final accuracy."""
    readers = []
    for f in sorted((paths.SRC / "compendium").rglob("*.py")) + sorted(paths.NOTEBOOKS.glob("*.ipynb")):
        if f.name in ("evaluate.py", "runner.py"):
            continue
        text = f.read_text()
        if any(k in text for k in ('"best acc"', "'best acc'", "best_acc")):
            readers.append(f.name)
    assert not readers
