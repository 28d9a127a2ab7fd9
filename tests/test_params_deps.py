"""Which stages a changed parameter stales, asked of DVC itself in a copy of the repository: a key only the judge
reads stales the judge alone; a training stage's own key stales that stage, not the judge that reads its tables
(the judge reads a set stage's ``dataset`` only, per key)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from test_extending import copy_repository, edit


def stages_with_changed_params(copy) -> set[str]:
    """The stages whose own parameters differ from dvc.lock (``dvc status``'s changed params; missing models and
    executed notebooks, absent in a copy, are left aside)."""
    out = subprocess.run(
        [sys.executable, "-m", "dvc", "status", "--json"], cwd=copy, capture_output=True, text=True, check=True
    ).stdout
    found = set()
    for stage, changes in json.loads(out or "{}").items():
        for change in changes if isinstance(changes, list) else []:
            deps = change.get("changed deps", {}) if isinstance(change, dict) else {}
            if any(str(k).startswith("params.yaml") for k in deps):
                found.add(stage.split(":")[-1])
    return found


@pytest.mark.slow
def test_a_judge_only_key_stales_the_judge_alone_and_a_stages_own_key_no_judge(tmp_path):
    copy = copy_repository(tmp_path / "repo")
    assert stages_with_changed_params(copy) == set()  # the committed lock records every stage's parameters
    edit(copy, "claims_ledger", "gap_goal", 0.8)  # how the judge reads "nearly reaches"
    assert stages_with_changed_params(copy) == {"claims_ledger"}
    subprocess.run(["git", "checkout", "params.yaml"], cwd=copy, check=True)
    edit(copy, "dd_matching", "dpi", 100)  # a training stage's figure resolution
    assert stages_with_changed_params(copy) == {"dd_matching"}
    subprocess.run(["git", "checkout", "params.yaml"], cwd=copy, check=True)
    edit(copy, "dd_matching", "dataset", "digits")  # what the judge does read of it
    assert stages_with_changed_params(copy) == {"dd_matching", "claims_ledger"}
